//! The eviction pool: Redis's approximated LRU / LFU / volatile-TTL
//! (evict.c `evictionPoolPopulate`).
//!
//! Redis does not keep keys ordered by last access: that would cost memory
//! and time on every access. It samples `maxmemory-samples` keys at random
//! from every database and keeps the best candidates seen so far in a pool
//! of [`POOL_SIZE`] entries, sorted by "idle score" (idle time for LRU,
//! 255 minus the counter for LFU, earlier expiry for volatile-ttl). Each
//! eviction takes the best entry that still exists. The pool survives
//! between evictions, so good candidates accumulate over successive
//! samplings; with 5 samples the result is close to true LRU (see the LRU
//! simulation in Redis's docs), with 10 very close.
//!
//! seedkv samples with the engine's seeded RNG ([`crate::dict::Dict::random_key`],
//! uniform over the entries), so what gets evicted is a function of the seed.

use rand::RngCore;

use crate::config::MaxmemoryPolicy;
use crate::db::Db;
use crate::lru::Access;

/// Redis's EVPOOL_SIZE.
pub const POOL_SIZE: usize = 16;

/// One candidate: a key of database `db` with its score (higher evicts
/// first).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    score: u64,
    db: usize,
    key: Box<[u8]>,
}

/// The best candidates seen so far, in ascending score order (the best at
/// the end), at most [`POOL_SIZE`].
#[derive(Debug, Default)]
pub struct EvictionPool {
    candidates: Vec<Candidate>,
}

/// The keys a policy may evict: every key, or only keys with a TTL.
pub fn volatile_only(policy: MaxmemoryPolicy) -> bool {
    matches!(
        policy,
        MaxmemoryPolicy::VolatileLru
            | MaxmemoryPolicy::VolatileLfu
            | MaxmemoryPolicy::VolatileRandom
            | MaxmemoryPolicy::VolatileTtl
    )
}

/// A key's eviction score under `policy` (Redis's `idle` in the pool).
fn score(policy: MaxmemoryPolicy, access: &Access, meta: u32, expire_at_ms: u64) -> u64 {
    match policy {
        MaxmemoryPolicy::VolatileTtl => u64::MAX - expire_at_ms,
        MaxmemoryPolicy::AllkeysLfu | MaxmemoryPolicy::VolatileLfu => {
            255 - u64::from(access.lfu_counter(meta))
        }
        _ => access.idle_ms(meta),
    }
}

impl EvictionPool {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.candidates.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.candidates.is_empty()
    }

    /// Samples `samples` keys of `db` (from its TTL dict for volatile
    /// policies; at most as many as it holds) and offers each to the pool.
    pub fn populate(
        &mut self,
        db_index: usize,
        db: &Db,
        policy: MaxmemoryPolicy,
        samples: u32,
        rng: &mut dyn RngCore,
    ) {
        debug_assert!(policy != MaxmemoryPolicy::NoEviction);
        let access = db.access();
        let dict_len = if volatile_only(policy) {
            db.expires.len()
        } else {
            db.len()
        };
        // Like Redis's dictGetSomeKeys, never more draws than keys: a huge
        // maxmemory-samples costs at most one pass's worth of the dict.
        let draws = (samples as usize).min(dict_len);
        for _ in 0..draws {
            let key = if volatile_only(policy) {
                db.expires.random_key(rng)
            } else {
                db.keys.random_key(rng)
            };
            let Some(key) = key else { return };
            let meta = db.access_meta(key).unwrap_or(0);
            let expire_at_ms = db.get_expire(key).unwrap_or(u64::MAX);
            self.offer(Candidate {
                score: score(policy, access, meta, expire_at_ms),
                db: db_index,
                key: key.into(),
            });
        }
        debug_assert!(self.candidates.len() <= POOL_SIZE);
        debug_assert!(self.candidates.windows(2).all(|w| w[0].score <= w[1].score));
    }

    /// Redis's insertion: a candidate worse than every entry of a full
    /// pool is dropped; otherwise it goes in score order, pushing out the
    /// worst entry when the pool is full. Unlike Redis, a key already in
    /// the pool is not added twice (sampling with replacement can draw it
    /// again), so a pool never holds a ghost of a key it just evicted.
    fn offer(&mut self, candidate: Candidate) {
        if self
            .candidates
            .iter()
            .any(|c| c.db == candidate.db && c.key == candidate.key)
        {
            return;
        }
        let k = self
            .candidates
            .iter()
            .position(|c| c.score >= candidate.score)
            .unwrap_or(self.candidates.len());
        if self.candidates.len() < POOL_SIZE {
            self.candidates.insert(k, candidate);
        } else if k > 0 {
            self.candidates.remove(0);
            self.candidates.insert(k - 1, candidate);
        }
    }

    /// The best candidate, removed from the pool.
    pub fn pop_best(&mut self) -> Option<(usize, Box<[u8]>)> {
        self.candidates.pop().map(|c| (c.db, c.key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(score: u64, key: &str) -> Candidate {
        Candidate {
            score,
            db: 0,
            key: key.as_bytes().into(),
        }
    }

    #[test]
    fn keeps_the_best_sixteen_in_order() {
        let mut pool = EvictionPool::default();
        for i in 0..40u64 {
            // Scores in a scrambled order.
            let score = (i * 17) % 40;
            pool.offer(candidate(score, &format!("k{score}")));
        }
        assert_eq!(pool.len(), POOL_SIZE);
        let mut popped = Vec::new();
        while let Some((_, key)) = pool.pop_best() {
            popped.push(String::from_utf8(key.into()).unwrap());
        }
        let expected: Vec<String> = (24..40).rev().map(|s| format!("k{s}")).collect();
        assert_eq!(popped, expected);
    }

    #[test]
    fn a_key_enters_once() {
        let mut pool = EvictionPool::default();
        pool.offer(candidate(5, "a"));
        pool.offer(candidate(9, "a"));
        assert_eq!(pool.len(), 1);
        assert!(pool.pop_best().is_some());
        assert!(pool.is_empty());
    }

    #[test]
    fn a_full_pool_drops_worse_candidates() {
        let mut pool = EvictionPool::default();
        for s in 10..26u64 {
            pool.offer(candidate(s, &format!("k{s}")));
        }
        pool.offer(candidate(3, "worse"));
        assert_eq!(pool.len(), POOL_SIZE);
        assert!(pool.candidates.iter().all(|c| &*c.key != b"worse"));
        pool.offer(candidate(100, "best"));
        assert_eq!(pool.pop_best().unwrap().1.as_ref(), b"best");
    }
}
