//! SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis 7.0.15's
//! `shutdownCommand` checks it.
//!
//! Stopping the process is the host's business: an accepted SHUTDOWN is an
//! [`Event::Shutdown`] carrying the caller's save choice, and the client
//! gets no reply (Redis exits without one). The engine knows the command
//! only when [`crate::Config::shutdown_command`] says its host can stop
//! (the real server); the simulator's table has no SHUTDOWN, so this family
//! is not in [`super::FAMILIES`].
//!
//! Saving comes first, as in Redis's `prepareForShutdown` (see
//! [`crate::persist::shutdown`]): the AOF is flushed and fsynced, and the
//! final RDB save runs when save points are configured or SAVE is given
//! (not with NOSAVE). The client waits unserved while it runs; if it
//! fails without FORCE the server stays up and the client gets "Errors
//! trying to SHUTDOWN. Check logs.", as it does when a host without
//! storage is asked to SAVE. `ABORT` finds no shutdown in progress (a
//! shutdown here never waits for replicas), and bad or conflicting
//! arguments are a syntax error.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::event::{Event, LogLevel, Shutdown, ShutdownSave};

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
    if let (false, Some(busy)) = (nosave, ctx.server.scripting.busy_error()) {
        // A busy script: only SHUTDOWN NOSAVE (shutdownCommand).
        return ctx.error(busy);
    }
    warn(ctx, "User requested shutdown...");
    let save = match (save, nosave) {
        (true, _) => ShutdownSave::Save,
        (_, true) => ShutdownSave::NoSave,
        _ => ShutdownSave::Configured,
    };
    let shutdown = Shutdown { save, force };
    let client = ctx.client_id;
    match crate::persist::shutdown(ctx.server, ctx.events, ctx.now, Some(client), shutdown) {
        Ok(Some(work_units)) => {
            // Saving: the client waits; the shutdown (or its error) comes
            // when the save ends.
            ctx.work(work_units);
            if let Some(c) = ctx.clients.get_mut(&client) {
                c.waiting_save = true;
            }
        }
        Ok(None) => {}
        Err(()) => {
            // Redis's answer when the final save fails; a host without
            // storage cannot save, so an explicit SAVE fails this way.
            warn(ctx, "Error trying to save the DB, can't exit.");
            ctx.error("ERR Errors trying to SHUTDOWN. Check logs.");
        }
    }
}

/// Redis's `serverLog(LL_WARNING, ...)`, through the host.
fn warn(ctx: &mut Ctx, text: &str) {
    ctx.events.push_back(Event::Log {
        level: LogLevel::Warning,
        text: text.to_string(),
    });
}

#[cfg(test)]
mod tests {
    use crate::event::{Event, LogLevel, Shutdown, ShutdownSave};
    use crate::testing::TestEngine;
    use crate::{ClientId, Config, Engine};

    fn engine() -> (TestEngine, ClientId) {
        let mut t = TestEngine::new();
        let config = Config {
            shutdown_command: true,
            ..t.engine.config().clone()
        };
        t.engine = Engine::new(config, t.now);
        let c = t.connect();
        (t, c)
    }

    /// Sends `cmd` (space-separated words) as a RESP array; the raw reply.
    fn send(t: &mut TestEngine, c: ClientId, cmd: &str) -> String {
        let words: Vec<&str> = cmd.split(' ').collect();
        let mut req = format!("*{}\r\n", words.len());
        for w in words {
            req.push_str(&format!("${}\r\n{w}\r\n", w.len()));
        }
        String::from_utf8(t.raw(c, req.as_bytes())).unwrap()
    }

    fn shutdowns(t: &mut TestEngine) -> Vec<Shutdown> {
        std::mem::take(&mut t.events)
            .into_iter()
            .filter_map(|e| match e {
                Event::Shutdown(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn unknown_unless_the_host_can_stop() {
        let mut t = TestEngine::new();
        let c = t.connect();
        assert_eq!(
            send(&mut t, c, "SHUTDOWN"),
            "-ERR unknown command 'SHUTDOWN', with args beginning with: \r\n"
        );
        assert_eq!(shutdowns(&mut t), []);
    }

    #[test]
    fn errors_match_redis_and_ask_for_no_shutdown() {
        let (mut t, c) = engine();
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
            assert_eq!(shutdowns(&mut t), [], "{cmd}");
        }
    }

    #[test]
    fn accepted_forms_ask_for_a_shutdown_and_reply_nothing() {
        let (mut t, c) = engine();
        for (cmd, save, force) in [
            ("SHUTDOWN", ShutdownSave::Configured, false),
            ("shutdown nosave", ShutdownSave::NoSave, false),
            ("SHUTDOWN NOW FORCE", ShutdownSave::Configured, true),
            ("SHUTDOWN SAVE FORCE", ShutdownSave::Save, true),
        ] {
            assert_eq!(send(&mut t, c, cmd), "", "{cmd}");
            assert_eq!(shutdowns(&mut t), [Shutdown { save, force }], "{cmd}");
        }
    }

    #[test]
    fn the_host_logs_what_redis_logs() {
        let (mut t, c) = engine();
        let logs = |t: &mut TestEngine| -> Vec<String> {
            std::mem::take(&mut t.events)
                .into_iter()
                .filter_map(|e| match e {
                    Event::Log { level, text } => {
                        assert_eq!(level, LogLevel::Warning);
                        Some(text)
                    }
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            send(&mut t, c, "SHUTDOWN ABORT"),
            "-ERR No shutdown in progress.\r\n"
        );
        assert_eq!(logs(&mut t), Vec::<String>::new());
        send(&mut t, c, "SHUTDOWN SAVE");
        assert_eq!(
            logs(&mut t),
            [
                "User requested shutdown...",
                "Error trying to save the DB, can't exit."
            ]
        );
        send(&mut t, c, "SHUTDOWN NOSAVE");
        assert_eq!(logs(&mut t), ["User requested shutdown..."]);
    }

    #[test]
    fn refused_inside_multi() {
        let (mut t, c) = engine();
        assert_eq!(send(&mut t, c, "MULTI"), "+OK\r\n");
        assert_eq!(
            send(&mut t, c, "SHUTDOWN"),
            "-ERR Command not allowed inside a transaction\r\n"
        );
        assert_eq!(shutdowns(&mut t), []);
    }
}
