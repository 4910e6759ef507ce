//! The keyspace: 16 databases, each a [`Dict`] of values plus a dict of
//! expiry times, with lazy expiry on access and a counted active-expire cycle.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dict::Dict;
use crate::lru::Access;
use crate::value::Value;

/// Redis's default `databases`.
pub const DATABASES_COUNT: usize = 16;

/// Active expiry: keys sampled per database per cycle (ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP).
pub const ACTIVE_EXPIRE_KEYS_PER_LOOP: usize = 20;
/// Active expiry: a database is sampled again while more than this percent of
/// its sample was expired (ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE).
pub const ACTIVE_EXPIRE_ACCEPTABLE_STALE_PERCENT: usize = 10;
/// Active expiry: the counted budget of one cycle, in sampled keys. Redis
/// bounds the slow cycle by 25% of CPU time; we bound it by work so that the
/// cycle is a function of the seed.
pub const ACTIVE_EXPIRE_BUDGET_KEYS: usize = 400;

/// One database.
#[derive(Debug)]
pub struct Db {
    pub keys: Dict<Value>,
    /// Absolute expiry times in unix milliseconds.
    pub expires: Dict<u64>,
    /// This database's index, as SELECT, MOVE and SWAPDB name it (0-based).
    pub id: usize,
    /// How lookups stamp a key's LRU clock or LFU counter (the keys dict's
    /// meta word); set through [`Keyspace::set_access`].
    access: Access,
    /// Draws the LFU counter's probabilistic increments; seeded, so the
    /// counters (and what LFU eviction picks) are a function of the seed.
    lfu_rng: ChaCha8Rng,
    /// The snapshot read open on this database, if any: every change to a
    /// key goes through its barrier first (see
    /// [`crate::snapshot_read::barrier`]).
    pub snapshot: Option<Box<crate::snapshot_read::Pinned>>,
}

impl Db {
    pub fn new(id: usize, seed: u64) -> Db {
        Db {
            keys: Dict::new(seed ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            expires: Dict::new(seed.rotate_left(17) ^ id as u64),
            id,
            access: Access::default(),
            lfu_rng: ChaCha8Rng::seed_from_u64(seed ^ 0x4C46_5500 ^ id as u64),
            snapshot: None,
        }
    }

    /// The access state lookups stamp keys with.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// The LRU clock or LFU word of `key` (see [`crate::lru`]); never
    /// touches it (OBJECT IDLETIME/FREQ, eviction sampling).
    pub fn access_meta(&self, key: &[u8]) -> Option<u32> {
        self.keys.meta(key)
    }

    /// Overwrites the LRU clock or LFU word of `key` (RESTORE's IDLETIME
    /// and FREQ); returns whether the key exists.
    pub fn set_access_meta(&mut self, key: &[u8], meta: u32) -> bool {
        match self.keys.get_mut_with_meta(key) {
            Some((_, m)) => {
                *m = meta;
                true
            }
            None => false,
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether `key` exists and is logically expired at `now_ms`.
    pub fn is_expired(&self, key: &[u8], now_ms: u64) -> bool {
        matches!(self.expires.get(key), Some(&when) if self.expired_at(when, now_ms))
    }

    /// Whether a key expiring at `when_ms` is expired at `now_ms`: from its
    /// expiry millisecond on, as in Redis.
    fn expired_at(&self, when_ms: u64, now_ms: u64) -> bool {
        when_ms <= now_ms
    }

    /// Deletes `key` if it is expired. Returns the value removed, which the
    /// caller frees (and counts as an expired key).
    pub fn expire_if_needed(&mut self, key: &[u8], now_ms: u64) -> Option<Value> {
        if self.is_expired(key, now_ms) {
            self.remove(key)
        } else {
            None
        }
    }

    /// The live value at `key` (no lazy deletion; use after
    /// `expire_if_needed`, or from read paths that must not mutate).
    pub fn get(&self, key: &[u8]) -> Option<&Value> {
        self.keys.get(key)
    }

    /// The value at `key`, marking it accessed (Redis's `lookupKey`) unless
    /// the running command looks without touching.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Value> {
        if self.snapshot.is_some() {
            self.snapshot_before_mut(key);
        }
        if !self.access.touch {
            return self.keys.get_mut(key);
        }
        let (value, meta) = self.keys.get_mut_with_meta(key)?;
        *meta = self.access.touched(*meta, &mut self.lfu_rng);
        Some(value)
    }

    pub fn contains(&self, key: &[u8]) -> bool {
        self.keys.contains_key(key)
    }

    /// Stores `value` at `key`. The TTL is cleared unless `keep_ttl`.
    /// Returns the previous value for the caller to free.
    ///
    /// A new key starts with a fresh LRU clock or LFU_INIT_VAL; an
    /// overwritten key keeps its LFU counter (Redis's `dbOverwrite`), or
    /// takes the current LRU clock (a new object in Redis).
    pub fn set(&mut self, key: &[u8], value: Value, keep_ttl: bool) -> Option<Value> {
        self.snapshot_barrier(key);
        if !keep_ttl {
            self.expires.remove(key);
        }
        let (lfu, lru_clock) = (self.access.lfu, self.access.lru_clock);
        let new_meta = self.access.new_key_meta();
        self.keys.upsert_with_meta(key, value, new_meta, |meta| {
            if !lfu {
                *meta = lru_clock;
            }
        })
    }

    /// Removes `key` and its TTL.
    pub fn remove(&mut self, key: &[u8]) -> Option<Value> {
        self.snapshot_barrier(key);
        let (_, v) = self.keys.remove(key)?;
        self.expires.remove(key);
        Some(v)
    }

    /// Sets the absolute expiry of an existing key.
    pub fn set_expire(&mut self, key: &[u8], when_ms: u64) {
        debug_assert!(self.keys.contains_key(key));
        self.snapshot_barrier(key);
        match self.expires.get_mut(key) {
            Some(w) => *w = when_ms,
            None => {
                self.expires.insert(key.into(), when_ms);
            }
        }
    }

    pub fn get_expire(&self, key: &[u8]) -> Option<u64> {
        self.expires.get(key).copied()
    }

    /// Removes a TTL; returns whether there was one.
    pub fn persist(&mut self, key: &[u8]) -> bool {
        self.snapshot_barrier(key);
        self.expires.remove(key).is_some()
    }

    /// Empties the database, returning its contents to be freed.
    pub fn take(&mut self) -> (Dict<Value>, Dict<u64>) {
        self.snapshot_before_take();
        (self.keys.take(), self.expires.take())
    }

    /// One database's share of the active-expire cycle: samples up to
    /// `budget_keys` keys with a TTL, deleting the expired ones into `freed` (with their keys).
    /// Returns the number of keys sampled (the work done).
    pub fn active_expire(
        &mut self,
        now_ms: u64,
        rng: &mut dyn RngCore,
        budget_keys: usize,
        freed: &mut Vec<(Vec<u8>, Value)>,
    ) -> usize {
        let mut sampled_total = 0;
        while sampled_total < budget_keys && !self.expires.is_empty() {
            let sample = ACTIVE_EXPIRE_KEYS_PER_LOOP
                .min(self.expires.len())
                .min(budget_keys - sampled_total);
            let mut expired = 0;
            for _ in 0..sample {
                let Some(key) = self.expires.random_key(rng) else {
                    break;
                };
                let when = *self.expires.get(key).expect("sampled key exists");
                if self.expired_at(when, now_ms) {
                    let key = key.to_vec();
                    if let Some(v) = self.remove(&key) {
                        freed.push((key, v));
                    }
                    expired += 1;
                }
            }
            sampled_total += sample;
            if expired * 100 <= sample * ACTIVE_EXPIRE_ACCEPTABLE_STALE_PERCENT {
                break;
            }
        }
        sampled_total
    }
}

/// All databases.
#[derive(Debug)]
pub struct Keyspace {
    pub dbs: Vec<Db>,
    /// Keys removed because they expired (INFO stats `expired_keys`).
    pub expired_keys: u64,
    /// The access state every database holds a copy of.
    access: Access,
}

impl Keyspace {
    pub fn new(seed: u64) -> Keyspace {
        Keyspace {
            dbs: (0..DATABASES_COUNT).map(|i| Db::new(i, seed)).collect(),
            expired_keys: 0,
            access: Access::default(),
        }
    }

    /// Sets how lookups stamp keys from now on. Cheap when nothing changed
    /// (the common case: the clock moves once a second).
    pub fn set_access(&mut self, access: Access) {
        if access == self.access {
            return;
        }
        self.access = access;
        for db in self.dbs.iter_mut() {
            db.access = access;
        }
    }

    /// SWAPDB: exchanges the contents (keys and TTLs) of two databases.
    /// Each database keeps its index; swapping a database with itself does
    /// nothing.
    pub fn swap_dbs(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        let (low, high) = (a.min(b), a.max(b));
        let (left, right) = self.dbs.split_at_mut(high);
        let (x, y) = (&mut left[low], &mut right[0]);
        std::mem::swap(&mut x.keys, &mut y.keys);
        std::mem::swap(&mut x.expires, &mut y.expires);
        // An open snapshot read follows the contents it reads.
        std::mem::swap(&mut x.snapshot, &mut y.snapshot);
    }
}
