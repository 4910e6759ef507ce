//! MEMORY USAGE | DOCTOR | MALLOC-STATS | PURGE | STATS | HELP.
//!
//! The figures come from the same estimate INFO memory uses (see
//! `commands/server.rs`): each value's `size_bytes` plus the dict entry and
//! the key. Redis computes `MEMORY USAGE` from its allocator's size classes;
//! the figures are comparable, not equal.

use crate::cmd::{flags::*, CommandSpec, Ctx};
use crate::commands::config::help_reply;
use crate::commands::server::{memory_report, ENTRY_OVERHEAD_BYTES, USED_MEMORY_STARTUP_BYTES};
use crate::util::parse_i64_strict;

/// Redis's OBJ_COMPUTE_SIZE_DEF_SAMPLES. seedkv's sizes are exact running
/// figures, so SAMPLES is validated and otherwise has no effect.
const SAMPLES_DEFAULT: i64 = 5;

const MEMORY_SUB: CommandSpec = CommandSpec {
    arity: 2,
    acl_categories: &["slow"],
    group: "server",
    since: "4.0.0",
    tips: &[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ],
    ..CommandSpec::DEFAULT
};

const MEMORY_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "memory|doctor",
        summary: "Outputs memory problems report",
        handler: Some(memory_doctor),
        ..MEMORY_SUB
    },
    CommandSpec {
        name: "memory|help",
        flags: LOADING | STALE,
        summary: "Show helpful text about the different subcommands",
        tips: &[],
        handler: Some(memory_help),
        ..MEMORY_SUB
    },
    CommandSpec {
        name: "memory|malloc-stats",
        summary: "Show allocator internal stats",
        handler: Some(memory_malloc_stats),
        ..MEMORY_SUB
    },
    CommandSpec {
        name: "memory|purge",
        summary: "Ask the allocator to release memory",
        tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
        handler: Some(memory_purge),
        ..MEMORY_SUB
    },
    CommandSpec {
        name: "memory|stats",
        summary: "Show memory usage details",
        handler: Some(memory_stats),
        ..MEMORY_SUB
    },
    CommandSpec {
        name: "memory|usage",
        arity: -3,
        flags: READONLY,
        first_key: 2,
        last_key: 2,
        key_step: 1,
        acl_categories: &["read", "slow"],
        summary: "Estimate the memory usage of a key",
        complexity: "O(N) where N is the number of samples.",
        tips: &[],
        key_spec_flags: &["RO"],
        handler: Some(memory_usage),
        ..MEMORY_SUB
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    name: "memory",
    arity: -2,
    acl_categories: &["slow"],
    group: "server",
    summary: "A container for memory diagnostics commands",
    since: "4.0.0",
    complexity: "Depends on subcommand.",
    subcommands: MEMORY_SUBCOMMANDS,
    ..CommandSpec::DEFAULT
}];

/// `MEMORY USAGE key [SAMPLES count]`: the value's bytes, the key's and its
/// dict entry's; null for a missing key. Like Redis, the key is found
/// without lazy expiry.
fn memory_usage(ctx: &mut Ctx, args: &mut [Vec<u8>]) {
    let mut i = 3;
    while i < args.len() {
        if !args[i].eq_ignore_ascii_case(b"samples") || i + 1 >= args.len() {
            return ctx.error("ERR syntax error");
        }
        let Some(samples) = parse_i64_strict(&args[i + 1]) else {
            return ctx.error("ERR value is not an integer or out of range");
        };
        if samples < 0 {
            return ctx.error("ERR syntax error");
        }
        debug_assert!(samples >= 0 && SAMPLES_DEFAULT > 0);
        i += 2;
    }
    let key = &args[2];
    let usage = match ctx.db().get(key) {
        Some(value) => value.size_bytes() + key.len() + ENTRY_OVERHEAD_BYTES,
        None => return ctx.null(),
    };
    ctx.int(usage as i64);
}

fn memory_doctor(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let report = memory_report(ctx);
    ctx.work(report.keys_visited);
    let text: &str = if report.used_bytes < 5 * 1024 * 1024 {
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
    } else {
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
    };
    ctx.w().verbatim("txt", text.as_bytes());
}

fn memory_malloc_stats(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    ctx.w().verbatim(
        "txt",
        b"Stats not supported for the current memory allocator",
    );
}

fn memory_purge(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    ctx.ok();
}

/// `MEMORY STATS`: the main figures of Redis's map, from the estimate.
fn memory_stats(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let report = memory_report(ctx);
    ctx.work(report.keys_visited);
    let keys: u64 = ctx
        .server
        .keyspace
        .dbs
        .iter()
        .map(|db| db.len() as u64)
        .sum();
    let peak = ctx
        .server
        .stats
        .used_memory_peak_bytes
        .max(report.used_bytes);
    let overhead = report.used_bytes.saturating_sub(report.dataset_bytes);
    let per_key = report
        .used_bytes
        .saturating_sub(USED_MEMORY_STARTUP_BYTES)
        .checked_div(keys)
        .unwrap_or(0);
    let fields: [(&str, u64); 8] = [
        ("peak.allocated", peak),
        ("total.allocated", report.used_bytes),
        ("startup.allocated", USED_MEMORY_STARTUP_BYTES),
        ("clients.normal", report.clients_bytes),
        ("overhead.total", overhead),
        ("keys.count", keys),
        ("keys.bytes-per-key", per_key),
        ("dataset.bytes", report.dataset_bytes),
    ];
    let mut w = ctx.w();
    w.map_len(fields.len());
    for (name, value) in fields {
        w.bulk(name.as_bytes());
        w.int(value as i64);
    }
}

fn memory_help(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    help_reply(
        ctx,
        "MEMORY",
        &[
            "DOCTOR",
            "    Return memory problems reports.",
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS",
            "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
        ],
    );
}

#[cfg(test)]
mod tests {
    use crate::resp::Frame;
    use crate::testing::{err, int, TestEngine};

    #[test]
    fn usage_grows_with_the_value_and_checks_its_options() {
        let mut t = TestEngine::new();
        let c = t.connect();
        assert_eq!(t.cmd(c, &["memory", "usage", "nosuch"]), Frame::Null);
        t.cmd(c, &["set", "small", "x"]);
        t.cmd(c, &["set", "big", &"x".repeat(10_000)]);
        let Frame::Integer(small) = t.cmd(c, &["memory", "usage", "small"]) else {
            panic!("integer reply");
        };
        let Frame::Integer(big) = t.cmd(c, &["memory", "usage", "big", "samples", "0"]) else {
            panic!("integer reply");
        };
        assert!(big > small + 9_900, "{small} {big}");
        assert_eq!(
            t.cmd(c, &["memory", "usage", "small", "samples"]),
            err("ERR syntax error")
        );
        assert_eq!(
            t.cmd(c, &["memory", "usage", "small", "samples", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            t.cmd(c, &["memory", "usage", "small", "samples", "-1"]),
            err("ERR syntax error")
        );
        assert_eq!(t.cmd(c, &["memory", "purge"]), crate::testing::simple("OK"));
        // Redis's report ends its sentence with a newline (redis-cli 7.0.15).
        let Frame::Bulk(doctor) = t.cmd(c, &["memory", "doctor"]) else {
            panic!("doctor is a bulk (RESP2 verbatim)");
        };
        assert!(doctor.starts_with(b"Hi Sam, ") && doctor.ends_with(b"rebooting.\n"));
        let Frame::Array(help) = t.cmd(c, &["memory", "help"]) else {
            panic!("help is an array");
        };
        assert_eq!(help.len(), 14);
        assert_eq!(help[13], crate::testing::simple("    Prints this help."));
        assert!(matches!(
            t.cmd(c, &["memory", "stats"]),
            Frame::Array(_) | Frame::Map(_)
        ));
        let _ = int(0);
    }
}
