//! SHUTDOWN, and how the process stops (the command, SIGTERM or SIGINT).
//!
//! SHUTDOWN is a host command: stopping the process is the host's business,
//! so the server registers it with [`Engine::with_commands`] instead of the
//! engine knowing about processes. Its handler runs inside the engine and
//! cannot reach the host, so it leaves a request in a mailbox that
//! [`take_request`] empties; the host checks the mailbox in every drain,
//! which follows every engine input on the same thread, before any other
//! input can run. (Under turmoil several hosts share a thread, but each
//! drains right after its own input, so a request never reaches the wrong
//! host.)
//!
//! seedkv keeps nothing on disk, so a shutdown never saves. Redis 7.0.15's
//! replies for a server whose save cannot happen are kept: `SHUTDOWN SAVE`
//! fails with "Errors trying to SHUTDOWN. Check logs." unless FORCE is
//! given, `ABORT` finds no shutdown in progress (a shutdown here never
//! waits: there are no replicas to wait for), and bad or conflicting
//! arguments are a syntax error.
//!
//! [`Engine::with_commands`]: seedkv_engine::Engine::with_commands

use std::cell::Cell;

use seedkv_engine::cmd::{flags::*, CommandSpec, Ctx};

use crate::logging;

/// Why the server is stopping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownCause {
    /// A client sent SHUTDOWN (with these flags; none of them saves).
    Command,
    /// SIGTERM.
    Terminate,
    /// SIGINT (Ctrl-C).
    Interrupt,
}

thread_local! {
    /// The request a SHUTDOWN handler left for the host (see module docs).
    static REQUEST: Cell<Option<ShutdownCause>> = const { Cell::new(None) };
}

/// Takes the pending shutdown request left by a SHUTDOWN command, if any.
pub fn take_request() -> Option<ShutdownCause> {
    REQUEST.with(Cell::take)
}

/// The SHUTDOWN command, as Redis 7.0.15's COMMAND INFO/DOCS describe it.
pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "shutdown",
    arity: -1,
    flags: ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY,
    acl_categories: &["admin", "slow", "dangerous"],
    group: "server",
    summary: "Synchronously save the dataset to disk and then shut down the server",
    since: "1.0.0",
    complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
    handler: Some(shutdown),
    ..CommandSpec::DEFAULT
}];

const SYNTAX_ERROR: &str = "ERR syntax error";

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], checked in Redis's order
/// (server.c `shutdownCommand`).
fn shutdown(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let (mut nosave, mut save, mut force, mut abort, mut now) = (false, false, false, false, false);
    for arg in &args[1..] {
        match arg.to_ascii_lowercase().as_slice() {
            b"nosave" => nosave = true,
            b"save" => save = true,
            b"now" => now = true,
            b"force" => force = true,
            b"abort" => abort = true,
            _ => return ctx.error(SYNTAX_ERROR),
        }
    }
    let any_flag = nosave || save || now || force;
    if (abort && any_flag) || (nosave && save) {
        return ctx.error(SYNTAX_ERROR);
    }
    if abort {
        return ctx.error("ERR No shutdown in progress.");
    }
    logging::warn("User requested shutdown...");
    if save && !force {
        // Redis's answer when the final save fails; seedkv has no disk to
        // save to, so an explicit SAVE always fails this way.
        logging::warn("Error trying to save the DB, can't exit.");
        return ctx.error("ERR Errors trying to SHUTDOWN. Check logs.");
    }
    // Redis exits without replying: the client sees its connection close.
    REQUEST.with(|r| r.set(Some(ShutdownCause::Command)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedkv_engine::testing::TestEngine;

    /// Sends `cmd` (space-separated words) as a RESP array; the raw reply.
    fn send(t: &mut TestEngine, c: seedkv_engine::ClientId, cmd: &str) -> String {
        let words: Vec<&str> = cmd.split(' ').collect();
        let mut req = format!("*{}\r\n", words.len());
        for w in words {
            req.push_str(&format!("${}\r\n{w}\r\n", w.len()));
        }
        String::from_utf8(t.raw(c, req.as_bytes())).unwrap()
    }

    fn engine() -> TestEngine {
        let mut t = TestEngine::new();
        t.engine =
            seedkv_engine::Engine::with_commands(t.engine.config().clone(), t.now, &[COMMANDS]);
        t
    }

    #[test]
    fn errors_match_redis_and_leave_no_request() {
        let mut t = engine();
        let c = t.connect();
        for (cmd, reply) in [
            ("SHUTDOWN ABORT", "-ERR No shutdown in progress.\r\n"),
            ("SHUTDOWN bogus", "-ERR syntax error\r\n"),
            ("SHUTDOWN NOSAVE SAVE", "-ERR syntax error\r\n"),
            ("SHUTDOWN ABORT NOW", "-ERR syntax error\r\n"),
            (
                "SHUTDOWN SAVE",
                "-ERR Errors trying to SHUTDOWN. Check logs.\r\n",
            ),
        ] {
            assert_eq!(send(&mut t, c, cmd), reply, "{cmd}");
            assert_eq!(take_request(), None, "{cmd}");
        }
    }

    #[test]
    fn accepted_forms_leave_a_request_and_no_reply() {
        let mut t = engine();
        let c = t.connect();
        for cmd in [
            "SHUTDOWN",
            "shutdown nosave",
            "SHUTDOWN NOW FORCE",
            "SHUTDOWN SAVE FORCE",
        ] {
            assert_eq!(send(&mut t, c, cmd), "", "{cmd}");
            assert_eq!(take_request(), Some(ShutdownCause::Command), "{cmd}");
        }
    }

    #[test]
    fn refused_inside_multi() {
        let mut t = engine();
        let c = t.connect();
        assert_eq!(send(&mut t, c, "MULTI"), "+OK\r\n");
        assert_eq!(
            send(&mut t, c, "SHUTDOWN"),
            "-ERR Command not allowed inside a transaction\r\n"
        );
        assert_eq!(take_request(), None);
    }
}
