//! Transaction commands: MULTI EXEC DISCARD WATCH UNWATCH, with Redis
//! 7.0's replies (multi.c). The state lives in [`crate::multi`]; queueing
//! and running the queue are done by the engine, so EXEC's handler here only
//! ever answers the cases where nothing runs.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::multi::{self, ExecOutcome};

const TRANSACTIONS: CommandSpec = CommandSpec {
    group: "transactions",
    ..CommandSpec::DEFAULT
};

const FAST_TX: &[&str] = &["fast", "transaction"];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "multi",
        arity: 1,
        flags: NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
        acl_categories: FAST_TX,
        summary: "Mark the start of a transaction block",
        since: "1.2.0",
        handler: Some(multi_cmd),
        ..TRANSACTIONS
    },
    CommandSpec {
        name: "exec",
        arity: 1,
        flags: NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG,
        acl_categories: &["slow", "transaction"],
        summary: "Execute all commands issued after MULTI",
        since: "1.2.0",
        complexity: "Depends on commands in the transaction",
        handler: Some(exec),
        ..TRANSACTIONS
    },
    CommandSpec {
        name: "discard",
        arity: 1,
        flags: NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
        acl_categories: FAST_TX,
        summary: "Discard all commands issued after MULTI",
        since: "2.0.0",
        complexity: "O(N), when N is the number of queued commands",
        handler: Some(discard),
        ..TRANSACTIONS
    },
    CommandSpec {
        name: "watch",
        arity: -2,
        flags: NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
        first_key: 1,
        last_key: -1,
        key_step: 1,
        acl_categories: FAST_TX,
        summary: "Watch the given keys to determine execution of the MULTI/EXEC block",
        since: "2.2.0",
        complexity: "O(1) for every key.",
        handler: Some(watch),
        ..TRANSACTIONS
    },
    CommandSpec {
        name: "unwatch",
        arity: 1,
        flags: NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
        acl_categories: FAST_TX,
        summary: "Forget about all watched keys",
        since: "2.2.0",
        handler: Some(unwatch),
        ..TRANSACTIONS
    },
];

fn multi_cmd(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let c = ctx.client();
    if c.tx.in_multi() {
        ctx.error("ERR MULTI calls can not be nested");
        return;
    }
    c.tx.multi = Some(multi::MultiState::default());
    ctx.ok();
}

/// EXEC replies the array header and hands the queue to the engine, which
/// runs each command right after this handler returns, through the same
/// path as any request (see `crate::pipeline`); so their replies follow
/// the header in order.
fn exec(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let now_ms = ctx.server.planted.watch_clock_ms(ctx.now_ms());
    let outcome = multi::exec_outcome(ctx.client(), now_ms);
    if outcome == ExecOutcome::NotInMulti {
        ctx.error("ERR EXEC without MULTI");
        return;
    }
    let (server, clients) = (&mut *ctx.server, &mut *ctx.clients);
    let c = clients
        .get_mut(&ctx.client_id)
        .expect("calling client exists");
    // Watched keys are forgotten before the queue runs, as in Redis.
    let queue = multi::discard(&mut server.watches, c);
    match outcome {
        ExecOutcome::Run => {
            debug_assert!(c.tx.exec_queue.is_none());
            let n = queue.len();
            c.tx.exec_queue = Some(queue);
            ctx.w().array_len(n);
        }
        ExecOutcome::Abort => {
            ctx.work(queue.len() as u64);
            ctx.error("EXECABORT Transaction discarded because of previous errors.")
        }
        ExecOutcome::WatchFailed | ExecOutcome::NotInMulti => {
            ctx.work(queue.len() as u64);
            ctx.w().null_array()
        }
    }
}

fn discard(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    if !ctx.client().tx.in_multi() {
        ctx.error("ERR DISCARD without MULTI");
        return;
    }
    let (server, clients) = (&mut *ctx.server, &mut *ctx.clients);
    let c = clients
        .get_mut(&ctx.client_id)
        .expect("calling client exists");
    let discarded = multi::discard(&mut server.watches, c);
    ctx.work(discarded.len() as u64);
    ctx.ok();
}

/// Work units per key WATCH adds.
const WATCH_KEY_UNITS: u64 = 3;

fn watch(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if ctx.client().tx.in_multi() {
        ctx.error("ERR WATCH inside MULTI is not allowed");
        return;
    }
    let db = ctx.db_index();
    let now_ms = ctx.expiry_now_ms();
    let (server, clients) = (&mut *ctx.server, &mut *ctx.clients);
    let c = clients
        .get_mut(&ctx.client_id)
        .expect("calling client exists");
    let mut scanned = 0;
    for key in &args[1..] {
        scanned += multi::watch(&mut server.watches, &server.keyspace, c, db, key, now_ms);
    }
    // A watched key is copied into the key's watcher list and the
    // client's list (the cost audit measures ~340 ns, three units).
    ctx.work(WATCH_KEY_UNITS * (args.len() as u64 - 1) + scanned);
    ctx.ok();
}

fn unwatch(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let (server, clients) = (&mut *ctx.server, &mut *ctx.clients);
    let c = clients
        .get_mut(&ctx.client_id)
        .expect("calling client exists");
    let watched = c.tx.watched.len() as u64;
    multi::unwatch_all(&mut server.watches, c);
    ctx.work(watched);
    ctx.ok();
}
