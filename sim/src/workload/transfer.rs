//! Bank transfers: money moves between accounts and the total never changes,
//! so every reader that sees all balances at one instant sees the same sum.
//! That holds only if each transfer is atomic, which is what this workload
//! is for: it moves money the ways Redis offers atomicity, and one way it
//! does not.
//!
//! - **Accounts** `acct:0 ..` ([`ACCOUNTS_COUNT`]), each starting at
//!   [`INITIAL_BALANCE`]: every client's first batch is one MSETNX of all of
//!   them (the first to run creates them all, the others change nothing),
//!   so the total is [`TOTAL`] from the moment they exist.
//! - **Transfers** of 1 ..= [`AMOUNT_MAX`] between two accounts:
//!   MULTI / DECRBY / INCRBY / EXEC; an optimistic WATCH loop (WATCH a b,
//!   GET a, GET b; then MULTI, SET a, SET b, EXEC, retried on a null EXEC
//!   up to [`WATCH_RETRIES_MAX`] times); and an EVAL script or an FCALL
//!   of the `bank` library's `bank_transfer` (once the engine runs
//!   scripts: the first batch probes EVAL and loads the library, see
//!   [`Transfer`]).
//! - **Readers**: MGET of every account (one command is atomic too), GETs
//!   inside MULTI/EXEC, and a script (EVAL, or FCALL_RO of `bank_read`)
//!   that GETs each.
//! - **Unprotected pairs**: DECRBY and INCRBY pipelined without MULTI, on a
//!   pool of their own (`acct:loose:0 ..`) read by MGET and MULTI. Other
//!   clients' commands may run between the two: a reader of that pool may
//!   see money in flight, and the checkers must accept it (a pipeline gives
//!   no isolation).
//! - **Leases**: one WATCH round in three first sets `acct:lease:<client>`
//!   with a 1 ..= [`LEASE_MS_MAX`] ms PX and watches it too, then waits up
//!   to twice that before its EXEC: when the lease expired in between, the
//!   EXEC must fail (Redis 7.0 fails an EXEC whose watched key expired).
//!
//! `check::transfer` judges the readers (from the client histories alone)
//! and replays every `acct:` key through the engine's execution order;
//! `check::atomicity::GroupAtomicity` checks that no EXEC or script
//! interleaves with another client. Nothing else writes an `acct:` key.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use seedkv_engine::resp::Frame;

use super::{Request, Workload, WorkloadKind};

/// Accounts in each pool, their opening balance, and the total.
pub const ACCOUNTS_COUNT: u32 = 5;
pub const INITIAL_BALANCE: i64 = 1000;
pub const TOTAL: i64 = ACCOUNTS_COUNT as i64 * INITIAL_BALANCE;
/// Largest amount one transfer moves.
pub const AMOUNT_MAX: i64 = 100;
/// A null EXEC is retried this many times at most, then the transfer is
/// dropped.
pub const WATCH_RETRIES_MAX: u32 = 8;
/// Longest lease TTL; the wait before EXEC is up to twice that.
pub const LEASE_MS_MAX: u64 = 3;
/// Longest pause between batches (outside a lease wait).
pub const TRANSFER_THINK_NS_MAX: u64 = 200_000;

/// Transfers the script way: KEYS = [from, to], ARGV = [amount]; replies
/// the two new balances.
pub const TRANSFER_SCRIPT: &str = "local a = redis.call('DECRBY', KEYS[1], ARGV[1]) \
     local b = redis.call('INCRBY', KEYS[2], ARGV[1]) return {a, b}";
/// Reads every key of KEYS, one GET each; replies the values in order.
pub const READ_SCRIPT: &str =
    "local t = {} for i, k in ipairs(KEYS) do t[i] = redis.call('GET', k) end return t";

/// The same two scripts as a function library (Redis 7.0 functions):
/// `bank_transfer` is [`TRANSFER_SCRIPT`], `bank_read` is [`READ_SCRIPT`]
/// declared `no-writes` (so that FCALL_RO runs it). Every client loads it
/// with REPLACE: the same code, whoever loads it last.
pub const BANK_LIBRARY: &str = "#!lua name=bank\n\
redis.register_function('bank_transfer', function(keys, args) \
local a = redis.call('DECRBY', keys[1], args[1]) \
local b = redis.call('INCRBY', keys[2], args[1]) return {a, b} end)\n\
redis.register_function{function_name='bank_read', callback=function(keys, args) \
local t = {} for i, k in ipairs(keys) do t[i] = redis.call('GET', k) end return t end, \
flags={'no-writes'}}";
/// The functions of [`BANK_LIBRARY`].
pub const TRANSFER_FUNCTION: &str = "bank_transfer";
pub const READ_FUNCTION: &str = "bank_read";

/// The key of account `i` of the protected pool.
pub fn account_key(i: u32) -> Vec<u8> {
    format!("acct:{i}").into_bytes()
}

/// The key of account `i` of the unprotected (pipelined) pool.
pub fn loose_key(i: u32) -> Vec<u8> {
    format!("acct:loose:{i}").into_bytes()
}

/// The lease key of client `client`.
pub fn lease_key(client: u32) -> Vec<u8> {
    format!("acct:lease:{client}").into_bytes()
}

/// Which pool an `acct:` key belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    Protected,
    Loose,
}

/// The pool and index of an account key; `None` for anything else (a
/// lease, another namespace).
pub fn parse_account(key: &[u8]) -> Option<(Pool, u32)> {
    let rest = key.strip_prefix(b"acct:")?;
    let (pool, digits) = match rest.strip_prefix(b"loose:") {
        Some(d) => (Pool::Loose, d),
        None => (Pool::Protected, rest),
    };
    if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let i: u32 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    (i < ACCOUNTS_COUNT).then_some((pool, i))
}

/// Every key of a pool, in index order (what readers read).
pub fn pool_keys(pool: Pool) -> Vec<Vec<u8>> {
    (0..ACCOUNTS_COUNT)
        .map(|i| match pool {
            Pool::Protected => account_key(i),
            Pool::Loose => loose_key(i),
        })
        .collect()
}

/// Where a WATCH round is.
#[derive(Clone, Debug)]
enum Round {
    /// No round in progress.
    Idle,
    /// WATCH and the GETs were sent; their replies fill `balances`.
    Watching {
        from: Vec<u8>,
        to: Vec<u8>,
        amount: i64,
        retries: u32,
        lease_ms: Option<u64>,
        balances: [Option<i64>; 2],
        /// A reply was lost or unexpected: the round is abandoned.
        broken: bool,
    },
    /// MULTI .. EXEC was sent; the EXEC's reply decides.
    Committing {
        from: Vec<u8>,
        to: Vec<u8>,
        amount: i64,
        retries: u32,
        lease_ms: Option<u64>,
    },
}

/// A WATCH round to start again: `(from, to, amount, retries so far,
/// lease_ms)`.
type Retry = (Vec<u8>, Vec<u8>, i64, u32, Option<u64>);

pub struct Transfer {
    client: u32,
    /// Both MSETNX replies came (the accounts exist).
    opened: [bool; 2],
    /// The EVAL probe's answer: `None` until it came; scripts are used only
    /// when the engine ran it.
    scripts: Option<bool>,
    /// Whether the engine loaded [`BANK_LIBRARY`] (FUNCTION LOAD's reply);
    /// the functions are called only then. A reconnect loads it again.
    functions: Option<bool>,
    round: Round,
    /// A WATCH round whose EXEC came back null, to start again.
    retry: Option<Retry>,
}

fn amount(rng: &mut ChaCha8Rng) -> i64 {
    rng.gen_range(1..=AMOUNT_MAX)
}

/// Two distinct accounts of `pool`.
fn pair(rng: &mut ChaCha8Rng, pool: Pool) -> (Vec<u8>, Vec<u8>) {
    let a = rng.gen_range(0..ACCOUNTS_COUNT);
    let b = (a + rng.gen_range(1..ACCOUNTS_COUNT)) % ACCOUNTS_COUNT;
    let keys = pool_keys(pool);
    (keys[a as usize].clone(), keys[b as usize].clone())
}

fn int_arg(n: i64) -> Vec<u8> {
    n.to_string().into_bytes()
}

fn bulk_i64(frame: &Frame) -> Option<i64> {
    match frame {
        Frame::Bulk(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

impl Transfer {
    pub fn new(client: u32) -> Transfer {
        Transfer {
            client,
            opened: [false; 2],
            scripts: None,
            functions: None,
            round: Round::Idle,
            retry: None,
        }
    }

    fn open(&self, batch: &mut Vec<Request>) {
        for (p, pool) in [Pool::Protected, Pool::Loose].into_iter().enumerate() {
            if self.opened[p] {
                continue;
            }
            let mut r = vec![b"MSETNX".to_vec()];
            for key in pool_keys(pool) {
                r.push(key);
                r.push(int_arg(INITIAL_BALANCE));
            }
            batch.push(r);
        }
        if self.scripts.is_none() {
            batch.push(eval(READ_SCRIPT, pool_keys(Pool::Protected), &[]));
        }
        if self.functions.is_none() {
            batch.push(vec![
                b"FUNCTION".to_vec(),
                b"LOAD".to_vec(),
                b"REPLACE".to_vec(),
                BANK_LIBRARY.as_bytes().to_vec(),
            ]);
        }
    }

    fn multi_transfer(rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let (from, to) = pair(rng, Pool::Protected);
        let x = int_arg(amount(rng));
        batch.push(vec![b"MULTI".to_vec()]);
        batch.push(vec![b"DECRBY".to_vec(), from, x.clone()]);
        batch.push(vec![b"INCRBY".to_vec(), to, x]);
        batch.push(vec![b"EXEC".to_vec()]);
    }

    /// A transfer by script: EVAL, or FCALL when the library is loaded.
    fn script_transfer(&self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let (from, to) = pair(rng, Pool::Protected);
        let amount = [int_arg(amount(rng))];
        if self.functions == Some(true) && rng.gen_bool(0.5) {
            batch.push(fcall(TRANSFER_FUNCTION, false, vec![from, to], &amount));
        } else {
            batch.push(eval(TRANSFER_SCRIPT, vec![from, to], &amount));
        }
    }

    /// A read of the protected pool by script: EVAL, or FCALL_RO.
    fn script_read(&self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let keys = pool_keys(Pool::Protected);
        if self.functions == Some(true) && rng.gen_bool(0.5) {
            batch.push(fcall(READ_FUNCTION, true, keys, &[]));
        } else {
            batch.push(eval(READ_SCRIPT, keys, &[]));
        }
    }

    fn multi_read(pool: Pool, batch: &mut Vec<Request>) {
        batch.push(vec![b"MULTI".to_vec()]);
        for key in pool_keys(pool) {
            batch.push(vec![b"GET".to_vec(), key]);
        }
        batch.push(vec![b"EXEC".to_vec()]);
    }

    fn mget(pool: Pool, batch: &mut Vec<Request>) {
        let mut r = vec![b"MGET".to_vec()];
        r.extend(pool_keys(pool));
        batch.push(r);
    }

    /// Starts a WATCH round (a lease one time in three).
    fn watch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let (from, to) = pair(rng, Pool::Protected);
        let lease_ms = rng
            .gen_bool(1.0 / 3.0)
            .then(|| rng.gen_range(1..=LEASE_MS_MAX));
        self.send_watch(from, to, amount(rng), 0, lease_ms, batch);
    }

    fn send_watch(
        &mut self,
        from: Vec<u8>,
        to: Vec<u8>,
        amount: i64,
        retries: u32,
        lease_ms: Option<u64>,
        batch: &mut Vec<Request>,
    ) {
        let mut watch = vec![b"WATCH".to_vec()];
        if let Some(ms) = lease_ms {
            let lease = lease_key(self.client);
            batch.push(vec![
                b"SET".to_vec(),
                lease.clone(),
                b"held".to_vec(),
                b"PX".to_vec(),
                ms.to_string().into_bytes(),
            ]);
            watch.push(lease);
        }
        watch.push(from.clone());
        watch.push(to.clone());
        batch.push(watch);
        batch.push(vec![b"GET".to_vec(), from.clone()]);
        batch.push(vec![b"GET".to_vec(), to.clone()]);
        self.round = Round::Watching {
            from,
            to,
            amount,
            retries,
            lease_ms,
            balances: [None, None],
            broken: false,
        };
    }

    /// The WATCH replies are in: commit, or give the round up.
    fn commit(&mut self, batch: &mut Vec<Request>) {
        let round = std::mem::replace(&mut self.round, Round::Idle);
        let Round::Watching {
            from,
            to,
            amount,
            retries,
            lease_ms,
            balances: [Some(a), Some(b)],
            broken: false,
        } = round
        else {
            // A reply was lost (the connection, and its WATCH, are gone)
            // or unexpected: nothing to commit; drop the watch if any.
            batch.push(vec![b"UNWATCH".to_vec()]);
            return;
        };
        batch.push(vec![b"MULTI".to_vec()]);
        batch.push(vec![b"SET".to_vec(), from.clone(), int_arg(a - amount)]);
        batch.push(vec![b"SET".to_vec(), to.clone(), int_arg(b + amount)]);
        batch.push(vec![b"EXEC".to_vec()]);
        self.round = Round::Committing {
            from,
            to,
            amount,
            retries,
            lease_ms,
        };
    }
}

/// `EVAL script numkeys keys... args...`.
pub fn eval(script: &str, keys: Vec<Vec<u8>>, args: &[Vec<u8>]) -> Request {
    let mut r = vec![
        b"EVAL".to_vec(),
        script.as_bytes().to_vec(),
        keys.len().to_string().into_bytes(),
    ];
    r.extend(keys);
    r.extend(args.iter().cloned());
    r
}

/// `FCALL function numkeys keys... args...` (`FCALL_RO` when `read_only`).
pub fn fcall(function: &str, read_only: bool, keys: Vec<Vec<u8>>, args: &[Vec<u8>]) -> Request {
    let name: &[u8] = if read_only { b"FCALL_RO" } else { b"FCALL" };
    let mut r = vec![
        name.to_vec(),
        function.as_bytes().to_vec(),
        keys.len().to_string().into_bytes(),
    ];
    r.extend(keys);
    r.extend(args.iter().cloned());
    r
}

impl Workload for Transfer {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Transfer
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if self.opened != [true, true] || self.scripts.is_none() || self.functions.is_none() {
            self.open(batch);
            return;
        }
        match &self.round {
            Round::Idle => {}
            Round::Watching { .. } => return self.commit(batch),
            // The EXEC's reply (or its loss) always ends a commit; should a
            // batch come first anyway, start afresh.
            Round::Committing { .. } => self.round = Round::Idle,
        }
        if let Some((from, to, amount, retries, lease_ms)) = self.retry.take() {
            return self.send_watch(from, to, amount, retries, lease_ms, batch);
        }
        let scripts = self.scripts == Some(true);
        match rng.gen_range(0..100) {
            0..=24 => Self::multi_transfer(rng, batch),
            25..=44 => self.watch(rng, batch),
            45..=54 if scripts => self.script_transfer(rng, batch),
            45..=54 => Self::multi_transfer(rng, batch),
            55..=69 => Self::mget(Pool::Protected, batch),
            70..=77 => Self::multi_read(Pool::Protected, batch),
            78..=83 if scripts => self.script_read(rng, batch),
            78..=83 => Self::mget(Pool::Protected, batch),
            84..=95 => {
                // The unprotected pair, pipelined; sometimes a reader of
                // the loose pool in the same pipeline.
                let (from, to) = pair(rng, Pool::Loose);
                let x = int_arg(amount(rng));
                batch.push(vec![b"DECRBY".to_vec(), from, x.clone()]);
                batch.push(vec![b"INCRBY".to_vec(), to, x]);
                if rng.gen_bool(0.3) {
                    Self::mget(Pool::Loose, batch);
                }
            }
            96..=97 => Self::mget(Pool::Loose, batch),
            _ => Self::multi_read(Pool::Loose, batch),
        }
    }

    fn on_reply(&mut self, request: &Request, reply: Option<&Frame>) {
        let name = request[0].as_slice();
        if name == b"MSETNX" {
            let p = match request.get(1).and_then(|k| parse_account(k)) {
                Some((Pool::Loose, _)) => 1,
                _ => 0,
            };
            self.opened[p] |= matches!(reply, Some(Frame::Integer(_)));
            return;
        }
        if name == b"FUNCTION" && self.functions.is_none() {
            // The library's name back means it is loaded.
            self.functions = match reply {
                Some(Frame::Bulk(_)) => Some(true),
                Some(_) => Some(false),
                None => None,
            };
            return;
        }
        if name == b"EVAL" && self.scripts.is_none() {
            // Any reply but an error means the engine runs scripts.
            self.scripts = match reply {
                Some(Frame::Error(_)) => Some(false),
                Some(_) => Some(true),
                None => None,
            };
            return;
        }
        match &mut self.round {
            Round::Watching {
                from,
                balances,
                broken,
                ..
            } => {
                let ok = match (name, reply) {
                    (b"GET", Some(f)) => match bulk_i64(f) {
                        Some(v) => {
                            let slot = usize::from(request[1] != *from);
                            balances[slot] = Some(v);
                            true
                        }
                        None => false,
                    },
                    (b"WATCH" | b"SET", Some(Frame::Simple(_))) => true,
                    _ => false,
                };
                *broken |= !ok;
            }
            Round::Committing { .. } if name == b"EXEC" => self.on_exec(reply),
            _ => {}
        }
    }

    /// The previous connection's WATCH is gone with it: a round in
    /// progress would commit values read under no watch, so it is dropped.
    fn on_connect(&mut self) {
        self.round = Round::Idle;
        self.retry = None;
        // The library may be gone (a restart from an old file): load it
        // again before the next function call.
        if self.functions == Some(true) {
            self.functions = None;
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        if let Round::Watching {
            lease_ms: Some(ms), ..
        } = self.round
        {
            // Sometimes long enough for the lease to expire before EXEC.
            return rng.gen_range(0..=2 * ms * 1_000_000);
        }
        rng.gen_range(0..=TRANSFER_THINK_NS_MAX)
    }
}

impl Transfer {
    /// The EXEC of a WATCH round answered: done, or retry on a null reply.
    fn on_exec(&mut self, reply: Option<&Frame>) {
        let round = std::mem::replace(&mut self.round, Round::Idle);
        let Round::Committing {
            from,
            to,
            amount,
            retries,
            lease_ms,
        } = round
        else {
            return;
        };
        if matches!(reply, Some(Frame::Null)) && retries < WATCH_RETRIES_MAX {
            // Retried at the next batch, from a fresh WATCH.
            self.retry = Some((from, to, amount, retries + 1, lease_ms));
        }
    }
}
