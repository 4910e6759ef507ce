//! PSYNC, SYNC, REPLCONF, WAIT and ROLE, as Redis 7.0.15's `replication.c`
//! answers them (the state and the stream are in [`crate::repl`]).
//!
//! A full resync serializes the dataset on the command thread, as SAVE
//! does, and queues `+FULLRESYNC`, the RDB and then the stream in the
//! replica's output: Redis forks a child for it, seedkv charges the
//! serialization as the command's work (so the simulator sees the stall
//! a fork-less primary would have).

use crate::client::CloseReason;
use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::event::{Event, LogLevel};
use crate::repl::primary::{self, Resync};
use crate::repl::replica::Parts;
use crate::repl::{ClientRole, RdbFilter, ReplicaState, Waiter};
use crate::util::parse_i64_strict as parse_i64;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "psync",
        arity: -3,
        flags: ADMIN | NOSCRIPT | NO_MULTI,
        acl_categories: &["admin", "slow", "dangerous"],
        group: "server",
        summary: "Internal command used for replication",
        handler: Some(psync),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "sync",
        arity: 1,
        flags: ADMIN | NOSCRIPT | NO_MULTI,
        acl_categories: &["admin", "slow", "dangerous"],
        group: "server",
        summary: "Internal command used for replication",
        handler: Some(sync),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "replconf",
        arity: -1,
        flags: ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY,
        acl_categories: &["admin", "slow", "dangerous"],
        group: "server",
        summary: "An internal command for configuring the replication stream",
        complexity: "O(1)",
        handler: Some(replconf),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "wait",
        arity: 3,
        flags: NOSCRIPT,
        acl_categories: &["slow", "connection"],
        group: "generic",
        summary: "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
        complexity: "O(1)",
        tips: &["request_policy:all_shards", "response_policy:agg_min"],
        handler: Some(wait),
        ..CommandSpec::DEFAULT
    },
    CommandSpec {
        name: "role",
        arity: 1,
        flags: NOSCRIPT | LOADING | STALE | FAST,
        acl_categories: &["admin", "fast", "dangerous"],
        group: "server",
        summary: "Return the role of the instance in the context of replication",
        complexity: "O(1)",
        handler: Some(role),
        ..CommandSpec::DEFAULT
    },
];

const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

fn psync(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if ctx.client().repl_role == ClientRole::Replica {
        return; // Redis ignores a second SYNC from a replica
    }
    if args.len() > 3
        && args[3].eq_ignore_ascii_case(b"failover")
        && !promote_for_failover(ctx, args)
    {
        return;
    }
    if refuses_sync(ctx) {
        return;
    }
    let Some(offset) = parse_i64(&args[2]) else {
        return ctx.error(NOT_INTEGER);
    };
    match primary::try_partial(&ctx.server.repl, &args[1], offset) {
        Resync::Partial(bytes) => {
            let bytes = ctx.server.planted.partial_resync_bytes(bytes);
            continue_sync(ctx, &bytes)
        }
        Resync::Full => {
            if args[1].as_slice() != b"?" {
                ctx.server.repl.sync_partial_err += 1;
            }
            full_sync(ctx, true);
        }
    }
}

/// SYNC: the protocol before PSYNC, still what `redis-cli --rdb`,
/// `--functions-rdb` and `--replica` send: a full resync without the
/// `+FULLRESYNC` line (Redis flags such a replica `CLIENT_PRE_PSYNC`).
fn sync(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    if ctx.client().repl_role == ClientRole::Replica {
        return;
    }
    if refuses_sync(ctx) {
        return;
    }
    full_sync(ctx, false);
}

/// The refusals SYNC and PSYNC share, in `syncCommand`'s order; true when
/// one was answered.
fn refuses_sync(ctx: &mut Ctx) -> bool {
    if ctx.server.repl.failover.is_some() {
        ctx.error("NOMASTERLINK Can't SYNC while failing over");
        return true;
    }
    if let Some(refusal) = crate::repl::replica::refuses_sync(ctx.server) {
        ctx.error(refusal);
        return true;
    }
    let hs = primary::handshake(&mut ctx.server.repl, ctx.client_id);
    if hs.rdb_filter.is_some() && !hs.capa_eof {
        ctx.error("ERR Filtered replica requires EOF capability");
        return true;
    }
    false
}

/// `PSYNC <replid> <offset> FAILOVER`: our primary hands its role over to
/// us (its FAILOVER reached this step when we had acknowledged its every
/// byte). We promote ourselves if our history is the one it names (Redis's
/// `syncCommand`); the PSYNC then goes on as any other, which finds its
/// id as our `replid2` and resyncs it partially. False when refused.
fn promote_for_failover(ctx: &mut Ctx, args: &[Vec<u8>]) -> bool {
    let replid = String::from_utf8_lossy(&args[1]).into_owned();
    ctx.events.push_back(Event::Log {
        level: LogLevel::Warning,
        text: format!("Failover request received for replid {replid}."),
    });
    if !ctx.server.repl.is_replica() {
        ctx.error("ERR PSYNC FAILOVER can't be sent to a master.");
        return false;
    }
    if !args[1].eq_ignore_ascii_case(ctx.server.repl.replid.as_bytes()) {
        ctx.error("ERR PSYNC FAILOVER replid must match my replid.");
        return false;
    }
    crate::repl::replica::unset_master(&mut Parts {
        server: ctx.server,
        clients: ctx.clients,
        events: ctx.events,
    });
    ctx.events.push_back(Event::Log {
        level: LogLevel::Notice,
        text: format!(
            "MASTER MODE enabled (failover request from 'id={}')",
            ctx.client_id.0
        ),
    });
    true
}

/// `+CONTINUE` and the backlog from the replica's offset on.
fn continue_sync(ctx: &mut Ctx, backlog_bytes: &[u8]) {
    let psync2 = primary::handshake(&mut ctx.server.repl, ctx.client_id).capa_psync2;
    let line = match psync2 {
        true => format!("+CONTINUE {}\r\n", ctx.server.repl.replid),
        false => "+CONTINUE\r\n".to_string(),
    };
    ctx.reply.extend_from_slice(line.as_bytes());
    ctx.reply.extend_from_slice(backlog_bytes);
    ctx.work(backlog_bytes.len() as u64 / 64 + 1);
    ctx.server.repl.sync_partial_ok += 1;
    let start = ctx.server.repl.master_repl_offset;
    let at = (ctx.now, ctx.client_id);
    primary::add_replica(ctx.server, ctx.clients, at, (start, ReplicaState::Online));
}

/// `+FULLRESYNC <replid> <offset>` (PSYNC only), then the RDB of the
/// dataset as it is now, as a `$<len>` bulk or, under
/// `repl-diskless-sync` to a replica that can read it, `$EOF:<mark>`. A
/// filtered RDB always goes the diskless way (Redis never writes one to
/// disk); an rdb-only replica is closed once its RDB is written.
fn full_sync(ctx: &mut Ctx, psync: bool) {
    let repl = &mut ctx.server.repl;
    if repl.backlog.is_none() && repl.replicas.is_empty() {
        // A new history starts with the first replica (Redis 7.0).
        repl.change_replid();
        repl.clear_replid2();
    }
    let size = primary::config_u64(&ctx.server.config, "repl-backlog-size") as usize;
    ctx.server.repl.ensure_backlog(size);
    let propagation = &mut ctx.server.propagation;
    if !propagation.is_enabled() {
        propagation.set_enabled(true);
    }
    // The replica's first command comes with its database.
    propagation.reset_selected_db();
    // Bytes propagated earlier in this input are in the snapshot already.
    let start = ctx.server.repl.master_repl_offset + propagation.stream().len() as u64;
    let hs = primary::handshake(&mut ctx.server.repl, ctx.client_id).clone();
    let diskless = hs.capa_eof
        && (hs.rdb_filter.is_some()
            || crate::commands::config::config_get(&ctx.server.config, "repl-diskless-sync")
                .as_deref()
                == Some("yes"));
    if psync {
        let line = format!("+FULLRESYNC {} {start}\r\n", ctx.server.repl.replid);
        ctx.reply.extend_from_slice(line.as_bytes());
    }
    let (rdb, work_units) = match hs.rdb_filter {
        None => crate::persist::rdb::snapshot(ctx.server, ctx.now, false),
        Some(filter) => crate::persist::rdb::snapshot_filtered(ctx.server, ctx.now, filter),
    };
    ctx.work(work_units + rdb.len() as u64 / 64);
    if diskless {
        let mark = ctx.server.repl.eof_mark();
        ctx.reply
            .extend_from_slice(format!("$EOF:{mark}\r\n").as_bytes());
        ctx.reply.extend_from_slice(&rdb);
        ctx.reply.extend_from_slice(mark.as_bytes());
    } else {
        ctx.reply
            .extend_from_slice(format!("${}\r\n", rdb.len()).as_bytes());
        ctx.reply.extend_from_slice(&rdb);
    }
    ctx.server.repl.sync_full += 1;
    if hs.rdb_only {
        // Redis's replicaPutOnline for an rdb-only replica: no stream. Its
        // name is the peer's ip with the listening port it announced.
        let addr = &ctx.client().info.addr;
        let name = format!(
            "{}:{}",
            addr.rsplit_once(':').map_or("?", |(ip, _)| ip),
            hs.listening_port
        );
        ctx.events.push_back(Event::Log {
            level: LogLevel::Notice,
            text: format!(
                "RDB transfer completed, rdb only replica ({name}) should be disconnected asap"
            ),
        });
        let id = ctx.client_id;
        return crate::clients::close_client(ctx.clients, ctx.events, id, CloseReason::Quit);
    }
    let state = match diskless {
        true => ReplicaState::WaitAck,
        false => ReplicaState::Online,
    };
    let at = (ctx.now, ctx.client_id);
    primary::add_replica(ctx.server, ctx.clients, at, (start, state));
}

fn replconf(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if args.len().is_multiple_of(2) {
        return ctx.error("ERR syntax error");
    }
    for pair in args[1..].chunks(2) {
        let (option, value) = (&pair[0], &pair[1]);
        let option = String::from_utf8_lossy(option).to_ascii_lowercase();
        match option.as_str() {
            "listening-port" => {
                let Some(port) = parse_i64(value) else {
                    return ctx.error(NOT_INTEGER);
                };
                let hs = primary::handshake(&mut ctx.server.repl, ctx.client_id);
                hs.listening_port = port as u16;
            }
            "ip-address" => {}
            "rdb-only" => {
                let Some(on) = parse_i64(value) else {
                    return ctx.error(NOT_INTEGER);
                };
                if !(0..=1).contains(&on) {
                    return ctx.error("ERR value is out of range, value must between 0 and 1");
                }
                primary::handshake(&mut ctx.server.repl, ctx.client_id).rdb_only = on == 1;
            }
            "rdb-filter-only" => {
                if let Err(e) = rdb_filter(ctx, value) {
                    return ctx.error(&e);
                }
            }
            "capa" => {
                let hs = primary::handshake(&mut ctx.server.repl, ctx.client_id);
                if value.eq_ignore_ascii_case(b"eof") {
                    hs.capa_eof = true;
                } else if value.eq_ignore_ascii_case(b"psync2") {
                    hs.capa_psync2 = true;
                }
            }
            // Acks get no reply, as in Redis.
            "ack" => return ack(ctx, value),
            "getack" => return crate::repl::replica::getack(ctx),
            _ => {
                let text = String::from_utf8_lossy(&pair[0]);
                return ctx.error(&format!("ERR Unrecognized REPLCONF option: {text}"));
            }
        }
    }
    ctx.ok();
}

/// `REPLCONF rdb-filter-only <filters>`: the filters are split as Redis's
/// `sdssplitargs` splits them; every part is left out but those named
/// (only `functions` exists). Like Redis, an unknown filter is refused
/// after the filter is already set to leave everything out.
fn rdb_filter(ctx: &mut Ctx, value: &[u8]) -> Result<(), String> {
    let Some(filters) = crate::resp::parse::split_args(value) else {
        return Err("ERR Missing rdb-filter-only values".to_string());
    };
    ctx.work(filters.len() as u64);
    let hs = primary::handshake(&mut ctx.server.repl, ctx.client_id);
    let filter = hs.rdb_filter.insert(RdbFilter::default());
    for name in &filters {
        if !name.eq_ignore_ascii_case(b"functions") {
            let name = String::from_utf8_lossy(name);
            return Err(format!("ERR Unsupported rdb-filter-only option: {name}"));
        }
        filter.functions = true;
    }
    Ok(())
}

/// `REPLCONF ACK <offset>` from a replica: it has applied the stream up to
/// `offset`; WAITs that this satisfies are answered.
fn ack(ctx: &mut Ctx, value: &[u8]) {
    let Some(offset) = parse_i64(value) else {
        return;
    };
    let client = ctx.client_id;
    let now_ns = ctx.now.mono_ns;
    let repl = &mut ctx.server.repl;
    let Some(r) = repl.replicas.iter_mut().find(|r| r.client == client) else {
        return;
    };
    r.ack_offset = r.ack_offset.max(offset.max(0) as u64);
    r.ack_mono_ns = now_ns;
    if r.state == ReplicaState::WaitAck {
        // Loaded: the stream held since its RDB goes out now.
        r.state = ReplicaState::Online;
        let held = std::mem::take(&mut r.held);
        ctx.reply.extend_from_slice(&held);
    }
    crate::repl::primary::answer_waiters(ctx.server, ctx.clients, now_ns, false);
}

fn wait(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    if ctx.server.repl.is_replica() {
        return ctx.error(
            "ERR WAIT cannot be used with replica instances. Please also note that since Redis \
             4.0 if a replica is configured to be writable (which is not the default) writes to \
             replicas are just local and are not propagated.",
        );
    }
    let Some(timeout_ms) = parse_i64(&args[2]) else {
        return ctx.error("ERR timeout is not an integer or out of range");
    };
    if timeout_ms < 0 {
        return ctx.error("ERR timeout is negative");
    }
    let Some(numreplicas) = parse_i64(&args[1]) else {
        return ctx.error(NOT_INTEGER);
    };
    let offset = ctx.client().woff;
    let acked = ctx.server.planted.acked_count(&ctx.server.repl, offset);
    if acked as i64 >= numreplicas || !ctx.may_block() {
        return ctx.int(acked as i64);
    }
    let deadline_ns = match timeout_ms {
        0 => None,
        ms => Some(
            ctx.now
                .mono_ns
                .saturating_add((ms as u64).saturating_mul(1_000_000)),
        ),
    };
    ctx.server.repl.waiters.push(Waiter {
        client: ctx.client_id,
        offset,
        numreplicas: numreplicas as usize,
        deadline_ns,
    });
    ctx.server.repl.getack_pending = true;
    ctx.client().waiting_acks = true;
}

fn role(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    if crate::repl::replica::write_role(ctx) {
        return;
    }
    let repl = &ctx.server.repl;
    let replicas: Vec<(String, u16, u64)> = repl
        .replicas
        .iter()
        .map(|r| (r.ip.clone(), r.listening_port, r.ack_offset))
        .collect();
    let offset = repl.master_repl_offset;
    let mut w = ctx.w();
    w.array_len(3);
    w.bulk_str("master");
    w.int(offset as i64);
    w.array_len(replicas.len());
    for (ip, port, ack) in &replicas {
        w.array_len(3);
        w.bulk_str(ip);
        w.bulk_str(&port.to_string());
        w.bulk_str(&ack.to_string());
    }
}
