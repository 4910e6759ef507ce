//! Sizes of what a command touched, measured by the engine's generic
//! execution code (never by the command's handler), for a harness that
//! bounds each execution's work by its declared complexity.
//!
//! With [`crate::Config::record_sizes`] (and `record_executions`) on, every
//! [`crate::Executed`] record carries a [`Sizes`]: the request's argument
//! count and bytes, the values at the keys it names ([`touched_keys`]:
//! the key positions of its spec, or of its `numkeys` for the commands
//! Redis calls movablekeys) before and after it ran, and a few populations
//! of the server it may walk (keys, clients, channels, patterns, scripts).
//! Off, nothing is measured: the request path pays one branch.

use crate::client::{ClientId, Clients};
use crate::cmd::CommandSpec;
use crate::db::Db;
use crate::server::Server;
use crate::value::Value;

/// What one execution touched (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sizes {
    /// The container of a subcommand (`slowlog` for SLOWLOG GET, whose
    /// record is named `get`); empty for a top-level command.
    pub container: &'static str,
    /// Times the handler ran for this record: 1, or for a blocking command
    /// served or timed out after it parked, every attempt (each one's work
    /// is in the record).
    pub runs: u64,
    /// Arguments, the command name included, and their total bytes.
    pub args_count: u64,
    pub args_bytes: u64,
    /// Keys [`touched_keys`] found in the request.
    pub keys_count: u64,
    /// The values at those keys when the command started and when it ended
    /// (expired-but-present values count: a lookup frees them).
    pub before: ValueSizes,
    pub after: ValueSizes,
    /// Keys in the selected database and in all databases, before.
    pub db_keys: u64,
    pub all_keys: u64,
    /// Elements of every value of every database, before; measured only
    /// for a keyless write declared O(N) (FLUSHDB, FLUSHALL, SWAPDB), which
    /// may visit them all. 0 otherwise.
    pub all_elements: u64,
    /// Bytes of every database's keys and values (as MEMORY USAGE counts
    /// them), measured with `all_elements`. 0 otherwise.
    pub all_bytes: u64,
    /// Connected clients, pub/sub channels (plain and shard), patterns and
    /// cached scripts, before.
    pub clients: u64,
    pub channels: u64,
    pub patterns: u64,
    pub scripts: u64,
    /// Function libraries, their functions and their code (a unit per 64
    /// bytes), before.
    pub functions: u64,
    /// The calling client's MULTI queue and watched keys, before.
    pub queued: u64,
    pub watched: u64,
    /// Bytes of the reply (the same as `Executed::reply_bytes`; here so
    /// that the sizes travel as one record).
    pub reply_bytes: u64,
    /// Keyspace notifications were on (`notify-keyspace-events` enables a
    /// class and a channel kind): each write may publish its events.
    pub notify: bool,
}

/// The values at a command's keys at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueSizes {
    /// Elements of the collections (list entries, hash fields, set and
    /// sorted-set members), summed, and the largest single collection.
    pub elements: u64,
    pub elements_max: u64,
    /// Bytes of the strings, summed, and the longest single string.
    pub string_bytes: u64,
    pub string_bytes_max: u64,
}

impl ValueSizes {
    fn add(&mut self, value: &Value) {
        match value {
            Value::Str(s) => {
                let n = s.len() as u64;
                self.string_bytes += n;
                self.string_bytes_max = self.string_bytes_max.max(n);
            }
            _ => {
                let n = elements_count(value);
                self.elements += n;
                self.elements_max = self.elements_max.max(n);
            }
        }
    }
}

/// Elements of a collection (0 for a string).
pub fn elements_count(value: &Value) -> u64 {
    match value {
        Value::Str(_) => 0,
        Value::List(l) => l.len() as u64,
        Value::Hash(h) => h.len() as u64,
        Value::Set(s) => s.len() as u64,
        Value::ZSet(z) => z.len() as u64,
        // Its entries, nodes and pending entries: what freeing it (DEL)
        // walks and charges; the entries alone under-count a stream whose
        // groups hold many unacknowledged (or deleted) entries.
        Value::Stream(s) => s.free_cost_units(),
    }
}

/// The argument that holds `numkeys` and the first key after it, for the
/// commands whose keys follow a count (Redis's movablekeys); `None` for
/// the others.
fn numkeys_layout(name: &str) -> Option<(usize, usize)> {
    match name {
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "zunionstore" | "zinterstore"
        | "zdiffstore" | "blmpop" | "bzmpop" => Some((2, 3)),
        "zunion" | "zinter" | "zdiff" | "zintercard" | "sintercard" | "lmpop" | "zmpop" => {
            Some((1, 2))
        }
        _ => None,
    }
}

/// The indices in `args` of the keys a request names: its spec's key
/// positions, plus the `numkeys` keys of movablekeys commands and the
/// STORE destination of SORT and GEORADIUS (STORE or STOREDIST). A malformed `numkeys` names no extra key.
pub fn touched_keys(spec: &CommandSpec, args: &[Vec<u8>]) -> Vec<usize> {
    let mut keys = spec.key_indices(args.len());
    if let Some((count_at, first)) = numkeys_layout(spec.name) {
        let count = args
            .get(count_at)
            .and_then(|a| std::str::from_utf8(a).ok())
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(0);
        let end = first.saturating_add(count).min(args.len());
        keys.extend(first..end);
    }
    if matches!(spec.name, "xread" | "xreadgroup") {
        keys.extend(stream_keys(args));
    }
    if spec.name == "sort" {
        let store = (2..args.len().saturating_sub(1))
            .rev()
            .find(|&i| args[i].eq_ignore_ascii_case(b"store"));
        keys.extend(store.map(|i| i + 1));
    }
    if matches!(spec.name, "georadius" | "georadiusbymember") {
        let store = (2..args.len().saturating_sub(1)).rev().find(|&i| {
            args[i].eq_ignore_ascii_case(b"store") || args[i].eq_ignore_ascii_case(b"storedist")
        });
        keys.extend(store.map(|i| i + 1));
    }
    keys
}

/// XREAD's and XREADGROUP's keys: the first half of what follows
/// STREAMS (Redis's `xreadGetKeys`); none when it is malformed.
fn stream_keys(args: &[Vec<u8>]) -> std::ops::Range<usize> {
    let mut i = 1;
    while i < args.len() {
        let arg = &args[i];
        if arg.eq_ignore_ascii_case(b"group") {
            i += 3;
        } else if arg.eq_ignore_ascii_case(b"block") || arg.eq_ignore_ascii_case(b"count") {
            i += 2;
        } else if arg.eq_ignore_ascii_case(b"streams") {
            let rest = args.len() - i - 1;
            if !rest.is_multiple_of(2) {
                return 0..0;
            }
            return i + 1..i + 1 + rest / 2;
        } else {
            i += 1;
        }
    }
    0..0
}

/// Sizes of the values at `keys` in `db`, without expiring or touching
/// anything.
pub fn measure_values<'k>(db: &Db, keys: impl Iterator<Item = &'k [u8]>) -> ValueSizes {
    let mut sizes = ValueSizes::default();
    for key in keys {
        if let Some(value) = db.keys.get(key) {
            sizes.add(value);
        }
    }
    sizes
}

/// [`measure_values`] over `keys`, hashing each key once for both
/// measurements of a command: a key's hash is taken in the database's dict
/// before the command and reused after it while the dict has the same
/// seed (FLUSHALL keeps the seed; SWAPDB brings another dict, whose keys
/// are hashed afresh). Every request is measured twice, and hashing was
/// half of each lookup.
fn measure_keys(db: &Db, keys: &mut KeyCopies) -> ValueSizes {
    let seed = db.keys.seed();
    if keys.hashed_with != Some(seed) {
        keys.hashes.clear();
        keys.hashes.extend(
            std::iter::once(0)
                .chain(keys.ends.iter().copied())
                .zip(keys.ends.iter().copied())
                .map(|(start, end)| db.keys.key_hash(&keys.bytes[start..end])),
        );
        keys.hashed_with = Some(seed);
    }
    let mut sizes = ValueSizes::default();
    for (key, &hash) in keys.iter().zip(&keys.hashes) {
        if let Some(value) = db.keys.get_hashed(key, hash) {
            sizes.add(value);
        }
    }
    sizes
}

/// The keys a measurement weighs again after the command, copied (a
/// handler may take its arguments apart) into one buffer: every request
/// is measured, and a copy per key was most of the measurement's cost.
#[derive(Debug)]
pub struct KeyCopies {
    bytes: Vec<u8>,
    /// Where each key ends in `bytes`.
    ends: Vec<usize>,
    /// Each key's hash in a dict keyed by `hashed_with` (see
    /// [`measure_keys`]); empty before the first measurement.
    hashes: Vec<u64>,
    hashed_with: Option<u64>,
}

impl KeyCopies {
    /// Copies `args[i]` for each index in `indices` (whose buffer is kept
    /// for the ends).
    fn of(args: &[Vec<u8>], mut indices: Vec<usize>) -> KeyCopies {
        let mut bytes = Vec::with_capacity(indices.iter().map(|&i| args[i].len()).sum());
        for end in indices.iter_mut() {
            bytes.extend_from_slice(&args[*end]);
            *end = bytes.len();
        }
        KeyCopies {
            bytes,
            ends: indices,
            hashes: Vec::new(),
            hashed_with: None,
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(start, end)| &self.bytes[start..end])
    }
}

/// A measurement under way: the sizes taken before the command ran, and
/// the keys to weigh again after it.
#[derive(Debug)]
pub struct Measuring {
    pub sizes: Sizes,
    pub db: usize,
    pub keys: KeyCopies,
}

impl Measuring {
    /// The finished record, with the values at the keys weighed now.
    pub fn finish(mut self, server: &Server, reply_bytes: usize) -> Box<Sizes> {
        let mut sizes = self.sizes;
        sizes.reply_bytes = reply_bytes as u64;
        if let Some(db) = server.keyspace.dbs.get(self.db) {
            sizes.after = measure_keys(db, &mut self.keys);
        }
        Box::new(sizes)
    }
}

/// Measures everything but [`Sizes::after`], before `spec` runs `args` in
/// database `db`.
pub fn measure_before(
    server: &Server,
    (clients, client): (&Clients, ClientId),
    db: usize,
    (container, spec): (Option<&'static CommandSpec>, &CommandSpec),
    args: &[Vec<u8>],
) -> Measuring {
    let mut keys = KeyCopies::of(args, touched_keys(spec, args));
    let dbs = &server.keyspace.dbs;
    // A keyless write declared O(N) may visit every value; SAVE
    // serializes them all.
    let whole_keyspace = keys.is_empty()
        && ((spec.has(crate::cmd::flags::WRITE) && spec.has(crate::cmd::flags::O_N))
            || spec.name == "save");
    let (mut all_elements, mut all_bytes) = (0, 0);
    if whole_keyspace {
        for (key, value) in dbs.iter().flat_map(|d| d.keys.iter()) {
            all_elements += elements_count(value).max(1);
            all_bytes += (key.len() + value.size_bytes()) as u64;
        }
    }
    let tx = clients.get(&client).map(|c| &c.tx);
    let sizes = Sizes {
        container: container.map_or("", |c| c.name),
        runs: 1,
        args_count: args.len() as u64,
        args_bytes: args.iter().map(|a| a.len() as u64).sum(),
        keys_count: keys.len() as u64,
        before: measure_keys(&dbs[db], &mut keys),
        after: ValueSizes::default(),
        db_keys: dbs[db].len() as u64,
        all_keys: dbs.iter().map(|d| d.len() as u64).sum(),
        all_elements,
        all_bytes,
        clients: clients.len() as u64,
        channels: (server.pubsub.channels_count() + server.pubsub.shard_channels_count()) as u64,
        patterns: server.pubsub.patterns_count() as u64,
        scripts: server.scripting.cached_scripts_count() as u64,
        functions: server.functions.size_units(),
        queued: tx
            .and_then(|tx| tx.multi.as_ref())
            .map_or(0, |m| m.queue.len() as u64),
        watched: tx.map_or(0, |tx| tx.watched.len() as u64),
        reply_bytes: 0,
        notify: crate::notify::enabled(server.config.notify_keyspace_events),
    };
    Measuring { sizes, db, keys }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::CommandTable;
    use crate::testing::TestEngine;
    use crate::{Config, Event};

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn keys_of(words: &[&str]) -> Vec<usize> {
        let table = CommandTable::new(crate::commands::FAMILIES);
        let spec = table.lookup(words[0].as_bytes()).expect("known command");
        touched_keys(spec, &args(words))
    }

    fn sizes_of(t: &TestEngine, name: &str) -> Sizes {
        t.events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Executed(x) if x.name == name => x.sizes.as_deref().copied(),
                _ => None,
            })
            .expect("recorded with sizes")
    }

    #[test]
    fn measured_around_the_command() {
        let mut t = TestEngine::with_config(Config {
            record_executions: true,
            record_sizes: true,
            ..Config::default()
        });
        let c = t.connect();
        t.cmd(c, &["rpush", "l", "a", "b", "c", "a"]);
        let push = sizes_of(&t, "rpush");
        assert_eq!((push.args_count, push.args_bytes), (6, 10));
        assert_eq!((push.before.elements, push.after.elements), (0, 4));
        t.cmd(c, &["set", "s", "hello"]);
        t.cmd(c, &["lrem", "l", "0", "a"]);
        let lrem = sizes_of(&t, "lrem");
        assert_eq!((lrem.before.elements, lrem.after.elements), (4, 2));
        assert_eq!((lrem.db_keys, lrem.all_keys, lrem.runs), (2, 2, 1));
        assert_eq!(lrem.reply_bytes, 4);
        t.cmd(
            c,
            &["eval", "return redis.call('strlen', KEYS[1])", "1", "s"],
        );
        let strlen = sizes_of(&t, "strlen");
        assert_eq!(strlen.before.string_bytes, 5);
        let sub = {
            t.cmd(c, &["slowlog", "len"]);
            sizes_of(&t, "slowlog|len")
        };
        assert_eq!(sub.container, "slowlog");
        t.cmd(c, &["multi"]);
        t.cmd(c, &["get", "s"]);
        t.cmd(c, &["exec"]);
        assert_eq!(sizes_of(&t, "exec").queued, 1);
        t.cmd(c, &["flushall"]);
        assert_eq!(sizes_of(&t, "flushall").all_elements, 3);
    }

    #[test]
    fn off_by_default() {
        let mut t = TestEngine::with_config(Config {
            record_executions: true,
            ..Config::default()
        });
        let c = t.connect();
        t.cmd(c, &["ping"]);
        assert!(t.events.iter().all(|e| match e {
            Event::Executed(x) => x.sizes.is_none(),
            _ => true,
        }));
    }

    #[test]
    fn fixed_and_movable_keys() {
        assert_eq!(keys_of(&["get", "k"]), vec![1]);
        assert_eq!(keys_of(&["mset", "a", "1", "b", "2"]), vec![1, 3]);
        assert_eq!(keys_of(&["eval", "s", "2", "a", "b", "x"]), vec![3, 4]);
        assert_eq!(keys_of(&["zunion", "2", "a", "b", "weights"]), vec![2, 3]);
        assert_eq!(keys_of(&["lmpop", "9", "a", "left"]), vec![2, 3]);
        assert_eq!(keys_of(&["blmpop", "0", "x", "a"]), Vec::<usize>::new());
        assert_eq!(
            keys_of(&["sort", "k", "by", "w*", "store", "d"]),
            vec![1, 5]
        );
    }
}
