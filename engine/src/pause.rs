//! CLIENT PAUSE / CLIENT UNPAUSE, and the stall of DEBUG SLEEP.
//!
//! # Client pause
//!
//! `CLIENT PAUSE ms [WRITE|ALL]` holds, until the pause ends, every request
//! that must wait under its mode (Redis 7.0.15's `processCommand`):
//!
//! - ALL: every request that gets as far as running (an unknown command,
//!   wrong arity, NOAUTH or a command refused in subscribed mode is
//!   answered at once, as Redis rejects those before its pause check);
//! - WRITE: write commands, PUBLISH and SPUBLISH, EVAL and EVALSHA unless
//!   the script declares `no-writes` (EVAL_RO too when its script declares
//!   flags without `no-writes`), and EXEC when one of its queued commands
//!   would wait. A write inside MULTI waits when it is queued, because
//!   Redis checks the pause before queueing.
//!
//! A held request is parked here with the client's id, and the client's
//! later (pipelined) requests stay in its query buffer behind it, so its
//! order is kept. When the pause ends (its deadline, which the engine's
//! `poll_timeout` reports while someone waits, or CLIENT UNPAUSE), the held
//! clients run in the order they were held, as Redis's
//! `unblockPostponedClients` does; each runs its held request again from
//! the start (a new pause begun meanwhile holds it again). A new pause never
//! shortens the current one: it keeps the later end and the stronger mode.
//!
//! Redis notices a pause's end in its cron (up to `1000/hz` ms late); the
//! engine ends it exactly at its deadline. Redis also stops active expiry
//! and eviction while paused; the engine does not (yet).
//!
//! (DEBUG SLEEP, which stalls the whole server rather than some clients, is
//! not a pause: it is an [`crate::Event::Stall`] for the host.)

use std::collections::{BTreeMap, VecDeque};

use crate::client::{Client, ClientId};
use crate::cmd::{flags, CommandSpec};
use crate::pipeline::Found;
use crate::server::Server;
use crate::time::Now;

/// What a pause holds. `Write < All`: the stronger mode wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PauseMode {
    Write,
    All,
}

/// The pause in force, the requests it holds, and DEBUG SLEEP's stall.
#[derive(Debug, Default)]
pub struct Pause {
    /// The current pause's mode and end (monotonic ns); a pause whose end
    /// has passed holds nothing and is replaced by the next one.
    current: Option<(PauseMode, u64)>,
    /// Each held client's first request, not yet executed.
    held: BTreeMap<ClientId, Vec<Vec<u8>>>,
    /// Held clients in the order they were held: the release order.
    order: VecDeque<ClientId>,
    /// CLIENT UNPAUSE ran: the held clients go at the end of this input.
    unpaused: bool,
    /// A FAILOVER pauses writes until it ends (Redis's
    /// `PAUSE_DURING_FAILOVER`): a pause of its own, which CLIENT UNPAUSE
    /// does not end and CLIENT PAUSE does not shorten.
    failover: bool,
}

impl Pause {
    /// CLIENT PAUSE: pauses until `end_ns` with `mode`, or extends the
    /// pause in force to the later end and the stronger mode.
    pub fn pause(&mut self, now: Now, mode: PauseMode, end_ns: u64) {
        self.current = Some(match self.client_mode(now).zip(self.current) {
            Some((m, (_, end))) => (m.max(mode), end.max(end_ns)),
            None => (mode, end_ns),
        });
    }

    /// CLIENT UNPAUSE: ends the pause now. The held clients are released
    /// once the current input is done (see `Engine::release_paused`).
    pub fn unpause(&mut self) {
        self.current = None;
        self.unpaused = !self.held.is_empty();
    }

    /// FAILOVER began: writes wait until [`Pause::end_failover`].
    pub fn begin_failover(&mut self) {
        self.failover = true;
    }

    /// The failover ended (done or aborted): the clients it held go at
    /// once unless CLIENT PAUSE still holds them.
    pub fn end_failover(&mut self) {
        self.failover = false;
        self.unpaused = !self.held.is_empty();
    }

    /// The mode in force at `now`, if a pause is: the stronger of CLIENT
    /// PAUSE's and the failover's.
    #[inline]
    pub fn mode(&self, now: Now) -> Option<PauseMode> {
        let failover = self.failover.then_some(PauseMode::Write);
        self.client_mode(now).max(failover)
    }

    /// CLIENT PAUSE's mode at `now`, if it is in force.
    #[inline]
    fn client_mode(&self, now: Now) -> Option<PauseMode> {
        match self.current {
            Some((mode, end_ns)) if now.mono_ns < end_ns => Some(mode),
            _ => None,
        }
    }

    /// Whether `client` waits for the pause to end (its input must not run).
    #[inline]
    pub fn holds(&self, client: ClientId) -> bool {
        !self.held.is_empty() && self.held.contains_key(&client)
    }

    /// The request CLIENT PAUSE holds for `client`, if it holds one.
    pub fn held_args(&self, client: ClientId) -> Option<&[Vec<u8>]> {
        self.held.get(&client).map(Vec::as_slice)
    }

    /// Clients held right now.
    pub fn held_count(&self) -> usize {
        debug_assert_eq!(self.held.len(), self.order.len());
        self.held.len()
    }

    /// When the held clients are due to run: the pause's end, while
    /// anyone is held (a pause that holds nobody needs no wake-up), or at
    /// once after an UNPAUSE that a released client ran while others were
    /// held again (the input that ran it has already released its batch).
    pub fn deadline_ns(&self) -> Option<u64> {
        if self.held.is_empty() {
            return None;
        }
        if self.unpaused {
            return Some(0);
        }
        debug_assert!(
            self.current.is_some() || self.failover,
            "held only while paused"
        );
        // A failover's pause ends by its state, not by time: it sets
        // `unpaused` then.
        match self.failover {
            true => None,
            false => self.current.map(|(_, end_ns)| end_ns),
        }
    }

    /// A client left: it waits for nothing any more.
    pub fn forget(&mut self, client: ClientId) {
        if self.held.remove(&client).is_some() {
            self.order.retain(|&id| id != client);
        }
    }

    /// Whether anyone is held (the request path's fast check).
    #[inline]
    pub fn holds_anyone(&self) -> bool {
        !self.held.is_empty()
    }

    /// Holds `client` with its first request `args` until the pause ends.
    pub fn hold(&mut self, client: ClientId, args: Vec<Vec<u8>>) {
        let previous = self.held.insert(client, args);
        assert!(previous.is_none(), "a held client runs nothing else");
        self.order.push_back(client);
    }

    /// The held clients, in order, if the pause is over at `now` (ended or
    /// unpaused); they are no longer held once taken.
    pub fn take_released(&mut self, now: Now) -> Option<Vec<(ClientId, Vec<Vec<u8>>)>> {
        if self.held.is_empty() || (!self.unpaused && self.mode(now).is_some()) {
            return None;
        }
        self.unpaused = false;
        if self.client_mode(now).is_none() {
            self.current = None;
        }
        let released: Vec<_> = self
            .order
            .drain(..)
            .map(|id| {
                let args = self.held.remove(&id).expect("ordered clients are held");
                (id, args)
            })
            .collect();
        debug_assert!(self.held.is_empty());
        Some(released)
    }
}

/// Whether a request `args` of client `c` must wait under `mode`. Requests
/// Redis rejects before its pause check (unknown command, wrong arity,
/// NOAUTH, refused in RESP2 subscribed mode or inside MULTI) never wait:
/// the engine answers them at once.
pub fn must_wait(server: &Server, c: &Client, args: &[Vec<u8>], mode: PauseMode) -> bool {
    let Some((top, spec)) = resolve(server, args) else {
        return false;
    };
    if server.auth_required(c) && !top.has(flags::NO_AUTH) {
        return false;
    }
    let subscribed_resp2 =
        c.protocol == crate::resp::Protocol::Resp2 && !c.subscriptions.is_empty();
    if subscribed_resp2 && !crate::commands::pubsub::allowed_while_subscribed(top.name) {
        return false;
    }
    if c.tx.in_multi() && spec.has(flags::NO_MULTI) {
        return false;
    }
    match mode {
        PauseMode::All => true,
        PauseMode::Write if spec.name == "exec" => c.tx.multi.as_ref().is_some_and(|m| {
            m.queue.iter().any(|q| {
                resolve(server, &q.args).is_some_and(|(_, s)| may_write(server, s, &q.args))
            })
        }),
        PauseMode::Write => may_write(server, spec, args),
    }
}

/// The top-level spec and the spec that runs (a subcommand's, for a
/// container), when the request would pass the name and arity checks.
fn resolve(
    server: &Server,
    args: &[Vec<u8>],
) -> Option<(&'static CommandSpec, &'static CommandSpec)> {
    match crate::pipeline::lookup(&server.commands, args)? {
        Found::Runs((parent, spec)) if spec.arity_ok(args.len()) => {
            Some((parent.unwrap_or(spec), spec))
        }
        _ => None,
    }
}

/// Whether a command may write or replicate (Redis's `CMD_WRITE |
/// CMD_MAY_REPLICATE`, with a script's declared flags in place of EVAL's).
fn may_write(server: &Server, spec: &CommandSpec, args: &[Vec<u8>]) -> bool {
    if spec.has(flags::WRITE | flags::MAY_REPLICATE) {
        return true;
    }
    match spec.name {
        // Redis flags these may-replicate; the command table does not carry
        // that flag because COMMAND INFO does not show it in 7.0.
        "publish" | "spublish" => true,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" => script_may_write(server, spec, args),
        // `fcallGetCommandFlags`: a function writes unless it declares
        // `no-writes`; an unknown one keeps the command's flags (FCALL may
        // replicate, FCALL_RO does not).
        "fcall" | "fcall_ro" => match args.get(1).and_then(|f| server.functions.flags_of(f)) {
            Some(flags) => !flags.no_writes,
            None => spec.name == "fcall",
        },
        _ => false,
    }
}

/// Redis's `evalGetCommandFlags`: a script that declares flags writes
/// unless it declares `no-writes`; one that declares none (or is unknown)
/// keeps the command's flags: EVAL and EVALSHA may replicate, the `_RO`
/// forms do not.
fn script_may_write(server: &Server, spec: &CommandSpec, args: &[Vec<u8>]) -> bool {
    let by_sha = spec.name.starts_with("evalsha");
    let compat = !spec.has(flags::READONLY);
    let declared = match args.get(1) {
        Some(sha) if by_sha && sha.len() != 40 => None,
        Some(script) => server.scripting.declared_flags(script, by_sha),
        None => None,
    };
    match declared {
        Some(f) if f.declared => !f.no_writes,
        _ => compat,
    }
}
