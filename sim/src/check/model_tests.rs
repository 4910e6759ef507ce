//! Unit tests of the reference model on hand-built histories. Every property
//! is tested twice: a consistent history passes, the same history with one
//! planted wrong reply fails.

use seedkv_engine::resp::Frame;

use super::testkit::{bulk, error, simple, Builder};
use super::ReferenceModel;
use crate::check::{Checker, RunFacts};

pub(crate) mod testkit {
    //! Hand-built histories for checker tests.

    use seedkv_engine::cmd::CommandTable;
    use seedkv_engine::resp::Frame;

    use crate::history::{ConnId, Execution, History, Op, TimeNs};

    /// Wall-clock origin of test histories (unix ms).
    pub const UNIX_ORIGIN_MS: u64 = 1_700_000_000_000;

    /// Builds a history one request at a time. Each `run` is invoked,
    /// executed and completed in order; `invoke`/`complete` give explicit
    /// times for concurrency tests.
    pub struct Builder {
        pub history: History,
        table: CommandTable,
        pub unix_ms: u64,
        pub now_ns: TimeNs,
    }

    impl Default for Builder {
        fn default() -> Self {
            Self::new()
        }
    }

    pub fn args(text: &str) -> Vec<Vec<u8>> {
        text.split(' ').map(|a| a.as_bytes().to_vec()).collect()
    }

    pub fn bulk(text: &str) -> Frame {
        Frame::Bulk(text.as_bytes().to_vec())
    }

    pub fn simple(text: &str) -> Frame {
        Frame::Simple(text.as_bytes().to_vec())
    }

    pub fn error(text: &str) -> Frame {
        Frame::Error(text.as_bytes().to_vec())
    }

    impl Builder {
        pub fn new() -> Builder {
            Builder {
                history: History::default(),
                table: CommandTable::new(seedkv_engine::commands::FAMILIES),
                unix_ms: UNIX_ORIGIN_MS,
                now_ns: 1_000,
            }
        }

        fn next_seq(&self, conn: ConnId) -> u64 {
            self.history.ops.iter().filter(|o| o.conn == conn).count() as u64
        }

        /// Records an op invoked at `invoke_ns`, completed (if `reply`) at
        /// `complete_ns`; returns its index in `ops`.
        pub fn op(
            &mut self,
            conn: ConnId,
            text: &str,
            invoke_ns: TimeNs,
            reply: Option<(TimeNs, Frame)>,
        ) -> usize {
            let seq_in_conn = self.next_seq(conn);
            self.history.ops.push(Op {
                client: conn as u32,
                conn,
                seq_in_conn,
                args: args(text),
                workload: if text.to_ascii_lowercase().starts_with("scan ") {
                    "scan"
                } else {
                    "kv"
                },
                invoke_ns,
                complete: reply,
            });
            self.history.end_ns = self.history.end_ns.max(invoke_ns);
            self.history.ops.len() - 1
        }

        /// Records the engine executing op `index` now, for `duration_ns`.
        pub fn execute(&mut self, index: usize, duration_ns: u64) {
            let op = &self.history.ops[index];
            let name = self.name_of(&op.args);
            let flags = self.table.lookup(&op.args[0]).map_or(0, |s| s.flags);
            self.history.executions.push(Execution {
                conn: op.conn,
                seq_in_conn: op.seq_in_conn,
                start_ns: self.now_ns,
                end_ns: self.now_ns + duration_ns,
                unix_ms: self.unix_ms,
                name,
                flags,
                work_units: 1,
            });
            self.now_ns += duration_ns;
        }

        fn name_of(&self, args: &[Vec<u8>]) -> &'static str {
            match self.table.lookup(&args[0]) {
                Some(spec) => spec.name,
                // Commands the engine does not have yet: leak a name, as the
                // engine's names are `&'static str` too (tests only).
                None => Box::leak(
                    String::from_utf8_lossy(&args[0])
                        .to_ascii_lowercase()
                        .into_boxed_str(),
                ),
            }
        }

        /// Invokes, executes and completes one request with `reply`.
        pub fn run(&mut self, conn: ConnId, text: &str, reply: Frame) -> usize {
            let invoke = self.now_ns;
            self.now_ns += 10;
            let index = self.op(conn, text, invoke, None);
            self.execute(index, 10);
            self.now_ns += 10;
            self.history.ops[index].complete = Some((self.now_ns, reply));
            self.history.end_ns = self.now_ns;
            index
        }

        pub fn advance_ms(&mut self, ms: u64) {
            self.unix_ms += ms;
            self.now_ns += ms * 1_000_000;
        }
    }
}

fn check(b: &Builder) -> Result<(), String> {
    ReferenceModel
        .check(&b.history, &RunFacts::default())
        .map_err(|v| v.message)
}

fn ok() -> Frame {
    simple("OK")
}

/// Runs the script, then asserts it passes, and that replacing the reply of
/// the last step with `wrong` fails.
fn passes_and_fails_with(b: &mut Builder, wrong: Frame) {
    check(b).expect("consistent history passes");
    let last = b.history.ops.len() - 1;
    b.history.ops[last].complete.as_mut().expect("completed").1 = wrong;
    let message = check(b).expect_err("planted inconsistency is caught");
    assert!(message.contains("expected"), "{message}");
}

#[test]
fn strings_basic() {
    let mut b = Builder::new();
    b.run(1, "PING", simple("PONG"));
    b.run(1, "ECHO hi", bulk("hi"));
    b.run(1, "GET k", Frame::Null);
    b.run(1, "SET k v1", ok());
    b.run(2, "GET k", bulk("v1"));
    b.run(2, "APPEND k x", Frame::Integer(3));
    b.run(1, "STRLEN k", Frame::Integer(3));
    b.run(1, "EXISTS k k nope", Frame::Integer(2));
    b.run(1, "MSET a 1 b 2", ok());
    b.run(
        2,
        "MGET a b c",
        Frame::Array(vec![bulk("1"), bulk("2"), Frame::Null]),
    );
    b.run(2, "SETNX a 9", Frame::Integer(0));
    b.run(2, "GETDEL a", bulk("1"));
    b.run(2, "DEL a b b", Frame::Integer(1));
    b.run(2, "TYPE k", simple("string"));
    b.run(1, "GET k", bulk("v1x"));
    passes_and_fails_with(&mut b, bulk("v1"));
}

#[test]
fn stale_read_after_overwrite_fails() {
    let mut b = Builder::new();
    b.run(1, "SET k old", ok());
    b.run(2, "SET k new", ok());
    b.run(1, "GET k", bulk("new"));
    passes_and_fails_with(&mut b, bulk("old"));
}

#[test]
fn set_options() {
    let mut b = Builder::new();
    b.run(1, "SET k a NX", ok());
    b.run(1, "SET k b NX", Frame::Null);
    b.run(1, "SET j b XX", Frame::Null);
    b.run(1, "SET k c XX GET", bulk("a"));
    b.run(1, "SET k d GET", bulk("c"));
    b.run(1, "SET k e NX GET", bulk("d"));
    b.run(1, "SET k v EX 10 PX 5", error("ERR syntax error"));
    b.run(
        1,
        "SET k v EX 0",
        error("ERR invalid expire time in 'set' command"),
    );
    b.run(
        1,
        "SET k v EX x",
        error("ERR value is not an integer or out of range"),
    );
    b.run(1, "SET k v NX XX", error("ERR syntax error"));
    b.run(1, "GET k", bulk("d"));
    passes_and_fails_with(&mut b, bulk("e"));
}

#[test]
fn counters_and_their_errors() {
    let mut b = Builder::new();
    b.run(1, "INCR n", Frame::Integer(1));
    b.run(2, "INCRBY n 10", Frame::Integer(11));
    b.run(1, "DECR n", Frame::Integer(10));
    b.run(1, "DECRBY n 20", Frame::Integer(-10));
    b.run(
        1,
        "INCRBY n x",
        error("ERR value is not an integer or out of range"),
    );
    b.run(1, "SET s abc", ok());
    b.run(
        1,
        "INCR s",
        error("ERR value is not an integer or out of range"),
    );
    b.run(1, "SET m 9223372036854775807", ok());
    b.run(
        1,
        "INCR m",
        error("ERR increment or decrement would overflow"),
    );
    b.run(1, "GET n", bulk("-10"));
    passes_and_fails_with(&mut b, bulk("-9"));
}

#[test]
fn lost_increment_is_caught() {
    let mut b = Builder::new();
    b.run(1, "INCR n", Frame::Integer(1));
    b.run(2, "INCR n", Frame::Integer(2));
    passes_and_fails_with(&mut b, Frame::Integer(1));
}

#[test]
fn expiry_follows_execution_time() {
    let mut b = Builder::new();
    b.run(1, "SET k v PX 100", ok());
    b.run(1, "PTTL k", Frame::Integer(100));
    b.run(1, "TTL k", Frame::Integer(0));
    b.advance_ms(60);
    b.run(1, "PTTL k", Frame::Integer(40));
    b.run(1, "GET k", bulk("v"));
    b.advance_ms(40);
    b.run(1, "TTL k", Frame::Integer(-2));
    b.run(1, "GET k", Frame::Null);
    passes_and_fails_with(&mut b, bulk("v"));
}

#[test]
fn expire_commands() {
    let mut b = Builder::new();
    b.run(1, "SET k v", ok());
    b.run(1, "TTL k", Frame::Integer(-1));
    b.run(1, "EXPIRE k 10 XX", Frame::Integer(0));
    b.run(1, "EXPIRE k 10 NX", Frame::Integer(1));
    b.run(1, "TTL k", Frame::Integer(10));
    b.run(1, "EXPIRE k 5 GT", Frame::Integer(0));
    b.run(1, "PEXPIRE k 5000 LT", Frame::Integer(1));
    b.run(
        1,
        "EXPIRE k 5 NX GT",
        error("ERR NX and XX, GT or LT options at the same time are not compatible"),
    );
    b.run(1, "EXPIRE k 5 FOO", error("ERR Unsupported option FOO"));
    b.run(
        1,
        "INCR k",
        error("ERR value is not an integer or out of range"),
    );
    b.run(1, "SET k 5 KEEPTTL", ok());
    b.run(1, "INCR k", Frame::Integer(6));
    b.run(1, "PTTL k", Frame::Integer(5000));
    b.run(1, "PERSIST k", Frame::Integer(1));
    b.run(1, "PERSIST k", Frame::Integer(0));
    b.run(1, "EXPIRE nope 10", Frame::Integer(0));
    b.run(1, "EXPIRE k -1", Frame::Integer(1));
    b.run(1, "EXISTS k", Frame::Integer(0));
    passes_and_fails_with(&mut b, Frame::Integer(1));
}

#[test]
fn databases_are_separate() {
    let mut b = Builder::new();
    b.run(1, "SELECT 3", ok());
    b.run(1, "SET k in3", ok());
    b.run(1, "SELECT 16", error("ERR DB index is out of range"));
    b.run(
        1,
        "SELECT x",
        error("ERR value is not an integer or out of range"),
    );
    b.run(1, "DBSIZE", Frame::Integer(1));
    b.run(2, "DBSIZE", Frame::Integer(0));
    b.run(2, "FLUSHALL", ok());
    b.run(1, "GET k", Frame::Null);
    b.run(1, "SET k again", ok());
    b.run(2, "GET k", Frame::Null);
    passes_and_fails_with(&mut b, bulk("again"));
}

#[test]
fn keys_compare_as_sets_and_dbsize_allows_unreclaimed_keys() {
    let mut b = Builder::new();
    b.run(1, "MSET a 1 ab 2 b 3", ok());
    b.run(1, "SET t v PX 5", ok());
    b.advance_ms(10);
    // `t` expired but nothing touched it: it may still be counted.
    b.run(1, "DBSIZE", Frame::Integer(4));
    b.run(1, "DBSIZE", Frame::Integer(3));
    b.run(
        1,
        "KEYS *",
        Frame::Array(vec![bulk("b"), bulk("a"), bulk("ab")]),
    );
    b.run(1, "KEYS a*", Frame::Array(vec![bulk("ab"), bulk("a")]));
    passes_and_fails_with(&mut b, Frame::Array(vec![bulk("ab"), bulk("a"), bulk("b")]));
}

#[test]
fn dbsize_out_of_range_fails() {
    let mut b = Builder::new();
    b.run(1, "MSET a 1 b 2", ok());
    b.run(1, "DBSIZE", Frame::Integer(2));
    passes_and_fails_with(&mut b, Frame::Integer(3));
}

#[test]
fn unknown_commands_make_keys_unknown_until_overwritten() {
    let mut b = Builder::new();
    b.run(1, "SET k v", ok());
    b.run(1, "HSET k f v", Frame::Integer(1));
    b.history.executions.last_mut().unwrap().flags = seedkv_engine::cmd::flags::WRITE;
    b.history.executions.last_mut().unwrap().name = "hset";
    // Whatever HSET did, the model cannot say what GET, KEYS or DBSIZE see.
    b.run(
        2,
        "GET k",
        error("WRONGTYPE Operation against a key holding the wrong kind of value"),
    );
    b.run(2, "KEYS *", Frame::Array(vec![]));
    b.run(2, "DBSIZE", Frame::Integer(7));
    b.run(2, "GET other", Frame::Null);
    // A plain SET determines the key again.
    b.run(2, "SET k fresh", ok());
    b.run(1, "GET k", bulk("fresh"));
    passes_and_fails_with(&mut b, bulk("v"));
}

#[test]
fn unknown_keyless_write_makes_everything_unknown_until_flush() {
    let mut b = Builder::new();
    b.run(1, "SET k v", ok());
    b.run(1, "SWAPDB 0 1", ok());
    let last = b.history.executions.len() - 1;
    b.history.executions[last].flags = seedkv_engine::cmd::flags::WRITE;
    b.history.executions[last].name = "swapdb";
    b.run(1, "GET k", Frame::Null);
    b.run(1, "FLUSHDB", ok());
    b.run(1, "GET k", Frame::Null);
    passes_and_fails_with(&mut b, bulk("v"));
}

#[test]
fn multi_defers_effects_to_exec() {
    let mut b = Builder::new();
    b.run(1, "SET k v", ok());
    b.run(1, "MULTI", ok());
    b.run(1, "SET k queued", simple("QUEUED"));
    // Queued, not yet run: other clients still see the old value.
    b.run(2, "GET k", bulk("v"));
    b.run(1, "EXEC", Frame::Array(vec![ok()]));
    // After EXEC (whatever the engine recorded), the key is not predicted.
    b.run(2, "GET k", bulk("queued"));
    b.run(2, "GET untouched", Frame::Null);
    passes_and_fails_with(&mut b, bulk("v"));
}

#[test]
fn rejected_requests_must_get_an_error() {
    let mut b = Builder::new();
    b.run(1, "GET k", Frame::Null);
    b.run(
        1,
        "NOSUCHCOMMAND x",
        error("ERR unknown command 'NOSUCHCOMMAND'"),
    );
    b.history.executions.last_mut().unwrap().name = "";
    passes_and_fails_with(&mut b, ok());
}

#[test]
fn unanswered_requests_still_take_effect() {
    let mut b = Builder::new();
    let i = b.run(1, "SET k v", ok());
    b.history.ops[i].complete = None;
    b.run(2, "GET k", bulk("v"));
    passes_and_fails_with(&mut b, Frame::Null);
}
