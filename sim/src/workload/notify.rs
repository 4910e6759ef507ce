//! Keyspace notifications: writers that create, change, expire and delete
//! a few keys of every type while subscribers listen to the keyspace and
//! keyevent channels, for `check::notify`.
//!
//! Everything happens in database [`NOTIFY_DB`], which no other workload
//! uses, so that the keyevent channels (which name an event, not a key)
//! carry this workload's events alone. A client's role follows its index
//! (`client % 3`), so three consecutive clients hold every role:
//!
//! - 0: a RESP2 **subscriber**: PSUBSCRIBE to both channel kinds on each
//!   connection, then a PSUBSCRIBE of a pattern it holds as a heartbeat:
//!   each confirmation proves which messages were written before it.
//! - 1: the same as RESP3 (HELLO 3 first): messages arrive as pushes.
//! - 2: a **writer**: first sets `notify-keyspace-events` to classes drawn
//!   from [`FLAG_SETS`], then writes keys of each type, with TTLs of a
//!   few milliseconds so that keys expire on access and in the cron, and
//!   reads them with EXISTS (a `keymiss` when missing, under `m`); a
//!   batch in [`TRANSACTION_PERCENT`] is one MULTI/EXEC.
//!
//! Keys are typed by name (`ntf:str:<i>`, `ntf:list:<i>`...), so a command
//! never meets a key of another type and every reply tells the checker
//! what changed.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{request, Request, Workload, WorkloadKind};
use crate::history::Delivery;

/// The database every request of this workload runs in.
pub const NOTIFY_DB: usize = 7;
/// Keys per type.
pub const KEYS_PER_TYPE: u32 = 3;
/// Members a collection draws from (few, so that removals empty it).
pub const MEMBERS_COUNT: u32 = 4;
/// TTLs drawn for PX and PEXPIRE, in milliseconds: short, so that keys
/// expire while the run goes on, some on access and some in the cron.
pub const TTL_MS_MAX: u64 = 30;
/// Requests per writer batch at most.
pub const WRITER_BATCH_MAX: usize = 4;
/// Longest pause between batches.
pub const WRITER_THINK_NS_MAX: u64 = 300_000;
pub const SUBSCRIBER_THINK_NS_MAX: u64 = 2_000_000;
/// Percent of writer batches sent as MULTI ... EXEC.
pub const TRANSACTION_PERCENT: u32 = 20;

/// The patterns each subscriber holds: every key of the workload on the
/// keyspace channels, every event of the database on the keyevent ones.
pub const PATTERNS: [&[u8]; 2] = [b"__keyspace@7__:ntf:*", b"__keyevent@7__:*"];

/// The `notify-keyspace-events` values a writer draws from: everything,
/// everything with `new` or with `keymiss` (`m`, which `A` leaves out),
/// and subsets that leave out classes or one of the two channel kinds.
pub const FLAG_SETS: &[&str] = &[
    "KEA", "AKE", "KEAn", "Kgx", "Elshzx", "K$lxe", "E$gn", "KEAm", "Elxm",
];

/// The key types and their name prefixes.
const TYPES: [&str; 5] = ["str", "list", "set", "hash", "zset"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Subscriber,
    Resp3Subscriber,
    Writer,
}

pub struct Notify {
    role: Role,
    /// The subscription (and HELLO, SELECT) of this connection was sent.
    set_up: bool,
    /// The writer set the classes (once per run: the setting is global).
    configured: bool,
    /// Messages received, for the trace of a run (the checker reads the
    /// history, not this).
    pub messages_count: u64,
}

impl Notify {
    pub fn new(client: u32) -> Notify {
        let role = match client % 3 {
            0 => Role::Subscriber,
            1 => Role::Resp3Subscriber,
            _ => Role::Writer,
        };
        Notify {
            role,
            set_up: false,
            configured: false,
            messages_count: 0,
        }
    }

    fn subscriber_batch(&mut self, batch: &mut Vec<Request>) {
        if !self.set_up {
            if self.role == Role::Resp3Subscriber {
                batch.push(request(&[b"HELLO", b"3"]));
            }
            batch.push(request(&[b"PSUBSCRIBE", PATTERNS[0], PATTERNS[1]]));
            self.set_up = true;
        }
        // The heartbeat: a pattern already held changes nothing.
        batch.push(request(&[b"PSUBSCRIBE", PATTERNS[1]]));
    }

    fn writer_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if !self.configured {
            let flags = FLAG_SETS[rng.gen_range(0..FLAG_SETS.len())];
            batch.push(request(&[
                b"CONFIG",
                b"SET",
                b"notify-keyspace-events",
                flags.as_bytes(),
            ]));
            self.configured = true;
        }
        if !self.set_up {
            batch.push(request(&[b"SELECT", NOTIFY_DB.to_string().as_bytes()]));
            self.set_up = true;
        }
        // Some batches run as one transaction, whose commands raise their
        // events one after another inside EXEC, as in Redis.
        let transaction = rng.gen_range(0..100) < TRANSACTION_PERCENT;
        if transaction {
            batch.push(request(&[b"MULTI"]));
        }
        for _ in 0..rng.gen_range(1..=WRITER_BATCH_MAX) {
            batch.push(write(rng));
        }
        if transaction {
            batch.push(request(&[b"EXEC"]));
        }
    }
}

fn key(rng: &mut ChaCha8Rng, kind: &str) -> Vec<u8> {
    format!("ntf:{kind}:{}", rng.gen_range(0..KEYS_PER_TYPE)).into_bytes()
}

fn member(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("m{}", rng.gen_range(0..MEMBERS_COUNT)).into_bytes()
}

fn ttl_ms(rng: &mut ChaCha8Rng) -> Vec<u8> {
    rng.gen_range(1..=TTL_MS_MAX).to_string().into_bytes()
}

/// One write, or a read (EXISTS) that may expire a key lazily and, with
/// class `m`, raises `keymiss` for a missing key, on a drawn key.
fn write(rng: &mut ChaCha8Rng) -> Request {
    let kind = TYPES[rng.gen_range(0..TYPES.len())];
    let k = key(rng, kind);
    let generic = rng.gen_range(0..100);
    let r = |parts: &[&[u8]]| request(parts);
    match generic {
        0..=7 => return r(&[b"DEL", &k]),
        8..=15 => return r(&[b"PEXPIRE", &k, &ttl_ms(rng)]),
        16..=18 => return r(&[b"PERSIST", &k]),
        19..=27 => return r(&[b"EXISTS", &k]),
        _ => {}
    }
    let m = member(rng);
    let n = rng.gen_range(0..100).to_string().into_bytes();
    match (kind, rng.gen_range(0..4)) {
        ("str", 0) => r(&[b"SET", &k, &n, b"PX", &ttl_ms(rng)]),
        ("str", 1) => r(&[b"SET", &k, &n]),
        ("str", 2) => r(&[b"INCRBY", &k, &n]),
        ("str", _) => r(&[b"APPEND", &k, b"1"]),
        ("list", 0 | 1) => r(&[b"LPUSH", &k, &m, &n]),
        ("list", 2) => r(&[b"RPOP", &k]),
        ("list", _) => r(&[b"LPOP", &k]),
        ("set", 0 | 1) => r(&[b"SADD", &k, &m]),
        ("set", _) => r(&[b"SREM", &k, &m]),
        ("hash", 0 | 1) => r(&[b"HSET", &k, &m, &n]),
        ("hash", _) => r(&[b"HDEL", &k, &m]),
        ("zset", 0 | 1) => r(&[b"ZADD", &k, b"NX", &n, &m]),
        (_, _) => r(&[b"ZREM", &k, &m]),
    }
}

impl Workload for Notify {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Notify
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        match self.role {
            Role::Writer => self.writer_batch(rng, batch),
            Role::Subscriber | Role::Resp3Subscriber => self.subscriber_batch(batch),
        }
    }

    fn reply_frames(&mut self, request: &Request) -> usize {
        // One confirmation per pattern.
        if request[0].eq_ignore_ascii_case(b"PSUBSCRIBE") {
            request.len() - 1
        } else {
            1
        }
    }

    fn takes_messages(&self) -> bool {
        self.role != Role::Writer
    }

    fn on_message(&mut self, _delivery: &Delivery) {
        self.messages_count += 1;
    }

    fn on_connect(&mut self) {
        self.set_up = false;
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        match self.role {
            Role::Writer => rng.gen_range(0..=WRITER_THINK_NS_MAX),
            _ => rng.gen_range(0..=SUBSCRIBER_THINK_NS_MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn roles_cycle_and_the_writer_configures_once() {
        let roles: Vec<Role> = (0..3).map(|i| Notify::new(i).role).collect();
        assert_eq!(
            roles,
            [Role::Subscriber, Role::Resp3Subscriber, Role::Writer]
        );
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut w = Notify::new(2);
        let mut batch = Vec::new();
        w.next_batch(&mut rng, &mut batch);
        assert_eq!(batch[0][0], b"CONFIG");
        assert_eq!(batch[1], request(&[b"SELECT", b"7"]));
        w.on_connect();
        batch.clear();
        w.next_batch(&mut rng, &mut batch);
        assert_eq!(batch[0], request(&[b"SELECT", b"7"]), "SELECT again");
    }

    #[test]
    fn some_writer_batches_are_transactions_wrapping_all_their_writes() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut w = Notify::new(2);
        let mut transactions = 0;
        for _ in 0..200 {
            let mut batch = Vec::new();
            w.next_batch(&mut rng, &mut batch);
            let writes: Vec<&Request> = batch
                .iter()
                .filter(|r| r[0] != b"CONFIG" && r[0] != b"SELECT")
                .collect();
            if writes[0][0] == b"MULTI" {
                transactions += 1;
                assert_eq!(writes.last().unwrap()[0], b"EXEC");
                assert!(writes.len() >= 3, "MULTI, a write, EXEC");
            } else {
                assert!(writes.iter().all(|r| r[0] != b"MULTI" && r[0] != b"EXEC"));
            }
        }
        assert!((10..=80).contains(&transactions), "{transactions} of 200");
    }

    #[test]
    fn patterns_name_the_workload_database() {
        let db = format!("@{NOTIFY_DB}__:");
        for p in PATTERNS {
            assert!(String::from_utf8_lossy(p).contains(&db));
        }
    }
}
