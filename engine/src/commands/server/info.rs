//! INFO: the sections in Redis's order, each rendered from the
//! configuration, the counters and `now` (see the parent module for the
//! figures that are virtual or estimated).

use std::fmt::Write as _;

use rand::RngCore;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::memory_estimate::{memory_report, USED_MEMORY_STARTUP_BYTES};
use crate::cmd::Ctx;
use crate::commands::config::config_get;
use crate::commands::connection::REDIS_VERSION;

/// INFO sections in Redis's order, and whether `INFO` / `INFO default`
/// includes each (`all` adds the rest; `everything` is `all` plus modules).
pub(super) const SECTIONS: &[(&str, bool)] = &[
    ("server", true),
    ("clients", true),
    ("memory", true),
    ("persistence", true),
    ("stats", true),
    ("replication", true),
    ("cpu", true),
    ("modules", true),
    ("commandstats", false),
    ("errorstats", true),
    ("latencystats", false),
    ("cluster", true),
    ("keyspace", true),
];

pub(super) fn info(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut wanted = [false; SECTIONS.len()];
    if args.len() == 1 {
        for (i, (_, default)) in SECTIONS.iter().enumerate() {
            wanted[i] = *default;
        }
    }
    for arg in &args[1..] {
        let arg = String::from_utf8_lossy(arg).to_ascii_lowercase();
        for (i, (name, default)) in SECTIONS.iter().enumerate() {
            let hit = match arg.as_str() {
                "all" | "everything" => true,
                "default" => *default,
                other => other == *name,
            };
            wanted[i] |= hit;
        }
    }
    let mut text = String::with_capacity(4096);
    for (i, (name, _)) in SECTIONS.iter().enumerate() {
        if !wanted[i] {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\r\n");
        }
        write_section(ctx, name, &mut text);
    }
    ctx.work(ctx.server.stats.commands.len() as u64 + ctx.clients.len() as u64);
    ctx.w().verbatim("txt", text.as_bytes());
}

/// Redis's `bytesToHuman`.
pub fn bytes_to_human(n: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (1 << 20, "K"),
        (1 << 30, "M"),
        (1 << 40, "G"),
        (1 << 50, "T"),
        (1 << 60, "P"),
    ];
    if n < 1024 {
        return format!("{n}B");
    }
    for (limit, unit) in UNITS {
        if n < limit {
            return format!("{:.2}{unit}", n as f64 / (limit >> 10) as f64);
        }
    }
    format!("{n}B")
}

/// A 40-hex-digit id derived from the seed (`run_id`, `master_replid`).
fn hex_id(seed: u64, salt: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ salt);
    let mut bytes = [0u8; 20];
    rng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn os_name() -> String {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "windows" => "Windows",
        "freebsd" => "FreeBSD",
        other => other,
    };
    format!("{os} {}", std::env::consts::ARCH)
}

fn write_section(ctx: &mut Ctx, name: &str, out: &mut String) {
    let now = ctx.now;
    let cfg = &ctx.server.config;
    let _ = match name {
        "server" => {
            let uptime_s = now.mono_ns.saturating_sub(ctx.server.started.mono_ns) / 1_000_000_000;
            let hz = cfg.hz.clamp(1, 500);
            write!(
                out,
                "# Server\r\n\
                 redis_version:{REDIS_VERSION}\r\n\
                 seedkv_version:{}\r\n\
                 redis_git_sha1:00000000\r\n\
                 redis_git_dirty:0\r\n\
                 redis_build_id:0\r\n\
                 redis_mode:standalone\r\n\
                 os:{}\r\n\
                 arch_bits:{}\r\n\
                 monotonic_clock:host\r\n\
                 multiplexing_api:host\r\n\
                 atomicvar_api:none\r\n\
                 gcc_version:0.0.0\r\n\
                 process_id:{}\r\n\
                 process_supervised:no\r\n\
                 run_id:{}\r\n\
                 tcp_port:{}\r\n\
                 server_time_usec:{}\r\n\
                 uptime_in_seconds:{}\r\n\
                 uptime_in_days:{}\r\n\
                 hz:{hz}\r\n\
                 configured_hz:{hz}\r\n\
                 lru_clock:{}\r\n\
                 executable:\r\n\
                 config_file:\r\n\
                 io_threads_active:0\r\n",
                env!("CARGO_PKG_VERSION"),
                os_name(),
                if cfg!(target_pointer_width = "64") {
                    64
                } else {
                    32
                },
                cfg.process_id,
                hex_id(cfg.seed, 0x7275_6e5f_6964),
                cfg.port,
                now.unix_us,
                uptime_s,
                uptime_s / 86_400,
                (now.unix_ms() / 1000) & ((1 << 24) - 1),
            )
        }
        "clients" => {
            let live = ctx.clients.values().filter(|c| c.closing.is_none());
            let (mut count, mut max_in, mut max_out) = (0usize, 0usize, 0usize);
            for c in live {
                count += 1;
                max_in = max_in.max(c.parser.buffered_bytes());
                max_out = max_out.max(c.pending_output_bytes());
            }
            write!(
                out,
                "# Clients\r\n\
                 connected_clients:{count}\r\n\
                 cluster_connections:0\r\n\
                 maxclients:{}\r\n\
                 client_recent_max_input_buffer:{max_in}\r\n\
                 client_recent_max_output_buffer:{max_out}\r\n\
                 blocked_clients:{}\r\n\
                 tracking_clients:{}\r\n\
                 clients_in_timeout_table:{}\r\n",
                cfg.maxclients,
                // Redis 7.0 blocks a client that CLIENT PAUSE postpones
                // (BLOCKED_PAUSE), and one in WAIT (BLOCKED_WAIT, in the
                // timeout table when it has a timeout), so they count.
                ctx.server.blocking.blocked_count()
                    + ctx.server.pause.held_count()
                    + ctx.server.repl.waiters.len(),
                ctx.server.tracking.clients_count(),
                ctx.server.blocking.timeouts_count()
                    + ctx
                        .server
                        .repl
                        .waiters
                        .iter()
                        .filter(|w| w.deadline_ns.is_some())
                        .count(),
            )
        }
        "memory" => {
            let report = memory_report(ctx);
            let (used, dataset) = (report.used_bytes, report.dataset_bytes);
            ctx.work(report.keys_visited);
            let peak = ctx.server.stats.used_memory_peak_bytes.max(used);
            ctx.server.stats.used_memory_peak_bytes = peak;
            let cfg = &ctx.server.config;
            let overhead = used.saturating_sub(dataset);
            let dataset_perc = if used > USED_MEMORY_STARTUP_BYTES {
                dataset as f64 * 100.0 / (used - USED_MEMORY_STARTUP_BYTES) as f64
            } else {
                0.0
            };
            write!(
                out,
                "# Memory\r\n\
                 used_memory:{used}\r\n\
                 used_memory_human:{}\r\n\
                 used_memory_rss:{used}\r\n\
                 used_memory_rss_human:{}\r\n\
                 used_memory_peak:{peak}\r\n\
                 used_memory_peak_human:{}\r\n\
                 used_memory_peak_perc:{:.2}%\r\n\
                 used_memory_overhead:{overhead}\r\n\
                 used_memory_startup:{USED_MEMORY_STARTUP_BYTES}\r\n\
                 used_memory_dataset:{dataset}\r\n\
                 used_memory_dataset_perc:{dataset_perc:.2}%\r\n\
                 total_system_memory:0\r\n\
                 total_system_memory_human:0B\r\n\
                 maxmemory:{}\r\n\
                 maxmemory_human:{}\r\n\
                 maxmemory_policy:{}\r\n\
                 mem_fragmentation_ratio:1.00\r\n\
                 mem_fragmentation_bytes:0\r\n\
                 mem_not_counted_for_evict:0\r\n\
                 mem_clients_slaves:0\r\n\
                 mem_clients_normal:{}\r\n\
                 mem_aof_buffer:0\r\n\
                 mem_allocator:libc\r\n\
                 active_defrag_running:0\r\n\
                 lazyfree_pending_objects:0\r\n\
                 lazyfreed_objects:{}\r\n",
                bytes_to_human(used),
                bytes_to_human(used),
                bytes_to_human(peak),
                used as f64 * 100.0 / peak as f64,
                cfg.maxmemory_bytes,
                bytes_to_human(cfg.maxmemory_bytes),
                cfg.maxmemory_policy.name(),
                report.clients_bytes,
                // Handed to the host; it reports no completion, so none
                // are ever pending from the engine's point of view.
                ctx.server.stats.lazyfreed_objects,
            )
        }
        "persistence" => crate::persist::info::write(ctx.server, ctx.now, out),
        "stats" => {
            let s = &ctx.server.stats;
            write!(
                out,
                "# Stats\r\n\
                 total_connections_received:{}\r\n\
                 total_commands_processed:{}\r\n\
                 instantaneous_ops_per_sec:0\r\n\
                 total_net_input_bytes:{}\r\n\
                 total_net_output_bytes:{}\r\n\
                 total_net_repl_input_bytes:0\r\n\
                 total_net_repl_output_bytes:0\r\n\
                 instantaneous_input_kbps:0.00\r\n\
                 instantaneous_output_kbps:0.00\r\n\
                 instantaneous_input_repl_kbps:0.00\r\n\
                 instantaneous_output_repl_kbps:0.00\r\n\
                 rejected_connections:{}\r\n\
                 sync_full:{}\r\n\
                 sync_partial_ok:{}\r\n\
                 sync_partial_err:{}\r\n\
                 expired_keys:{}\r\n\
                 expired_stale_perc:0.00\r\n\
                 expired_time_cap_reached_count:0\r\n\
                 expire_cycle_cpu_milliseconds:0\r\n\
                 evicted_keys:{}\r\n\
                 evicted_clients:{}\r\n\
                 total_eviction_exceeded_time:{}\r\n\
                 current_eviction_exceeded_time:{}\r\n\
                 keyspace_hits:{}\r\n\
                 keyspace_misses:{}\r\n\
                 pubsub_channels:{}\r\n\
                 pubsub_patterns:{}\r\n\
                 pubsubshard_channels:{}\r\n\
                 latest_fork_usec:0\r\n\
                 total_forks:0\r\n\
                 migrate_cached_sockets:0\r\n\
                 slave_expires_tracked_keys:0\r\n\
                 active_defrag_hits:0\r\n\
                 active_defrag_misses:0\r\n\
                 active_defrag_key_hits:0\r\n\
                 active_defrag_key_misses:0\r\n\
                 total_active_defrag_time:0\r\n\
                 current_active_defrag_time:0\r\n\
                 tracking_total_keys:{}\r\n\
                 tracking_total_items:{}\r\n\
                 tracking_total_prefixes:{}\r\n\
                 unexpected_error_replies:0\r\n\
                 total_error_replies:{}\r\n\
                 dump_payload_sanitizations:0\r\n\
                 total_reads_processed:0\r\n\
                 total_writes_processed:0\r\n\
                 io_threaded_reads_processed:0\r\n\
                 io_threaded_writes_processed:0\r\n\
                 reply_buffer_shrinks:0\r\n\
                 reply_buffer_expands:0\r\n",
                s.total_connections_received,
                s.total_commands_processed,
                s.net_input_bytes,
                s.net_output_bytes,
                s.rejected_connections,
                ctx.server.repl.sync_full,
                ctx.server.repl.sync_partial_ok,
                ctx.server.repl.sync_partial_err,
                ctx.server.keyspace.expired_keys,
                ctx.server.evict.evicted_keys,
                s.evicted_clients,
                ctx.server.evict.total_exceeded_ms(ctx.now),
                ctx.server.evict.current_exceeded_ms(ctx.now),
                s.keyspace_hits,
                s.keyspace_misses,
                ctx.server.pubsub.channels_count(),
                ctx.server.pubsub.patterns_count(),
                ctx.server.pubsub.shard_channels_count(),
                ctx.server.tracking.keys_count(),
                ctx.server.tracking.items_count(),
                ctx.server.tracking.prefixes_count(),
                s.total_error_replies,
            )
        }
        "replication" => {
            crate::repl::info::write(ctx.server, ctx.now, out);
            Ok(())
        }
        // The engine has no CPU clock; the simulator's virtual CPU time is
        // in commandstats `usec`.
        "cpu" => write!(
            out,
            "# CPU\r\n\
             used_cpu_sys:0.000000\r\n\
             used_cpu_user:0.000000\r\n\
             used_cpu_sys_children:0.000000\r\n\
             used_cpu_user_children:0.000000\r\n\
             used_cpu_sys_main_thread:0.000000\r\n\
             used_cpu_user_main_thread:0.000000\r\n"
        ),
        "modules" => write!(out, "# Modules\r\n"),
        "commandstats" => {
            ctx.server.stats.write_commandstats(out);
            Ok(())
        }
        "errorstats" => {
            ctx.server.stats.write_errorstats(out);
            Ok(())
        }
        "latencystats" => {
            let percentiles = config_get(cfg, "latency-tracking-info-percentiles")
                .map(|text| crate::stats::parse_percentiles(&text))
                .unwrap_or_default();
            ctx.server.stats.write_latencystats(out, &percentiles);
            Ok(())
        }
        "cluster" => write!(out, "# Cluster\r\ncluster_enabled:0\r\n"),
        "keyspace" => {
            out.push_str("# Keyspace\r\n");
            for (i, db) in ctx.server.keyspace.dbs.iter().enumerate() {
                if db.is_empty() {
                    continue;
                }
                let _ = write!(
                    out,
                    "db{i}:keys={},expires={},avg_ttl=0\r\n",
                    db.len(),
                    db.expires.len()
                );
            }
            Ok(())
        }
        _ => Ok(()),
    };
}
