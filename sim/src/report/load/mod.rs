//! `seedkv-load`: seed 002's head-of-line experiment over real sockets,
//! against any RESP server (seedkv-server, redis-server, ...).
//!
//! The operator connection fills `k:0 .. k:<N-1>` with pipelined MSETs and
//! a hash of M fields with pipelined HSETs, checks DBSIZE and HLEN, then
//! starts the prober (PING back to back on its own connection and thread,
//! see `prober.rs`) and in turn: does nothing for a second, runs
//! `KEYS k:1*`, `KEYS *`, a full `SCAN ... COUNT 1000`, `DEL` of the hash,
//! refills it, and `UNLINK`s it. Each operation's window runs from its
//! first request to its last reply and lasts at least [`WINDOW_NS_MIN`];
//! windows are [`GAP_NS`] apart, so no PING belongs to two.
//!
//! Seed 004's lesson is built in: every reply on both connections is
//! checked, and the table is printed only if no reply was an error, the
//! fill produced exactly N keys and M fields, and KEYS, SCAN, DEL and UNLINK
//! returned what they must. The same windows, pauses and table layout as
//! `seedkv-sim report latency` make the two tables comparable: the table,
//! the `checked:` line, the spans and the windows' constants are that
//! report's own (`table.rs`, `verify.rs`, `script.rs`).
//!
//! # Real time
//!
//! Like `probe/`, and unlike the rest of the crate, this module opens
//! sockets, runs threads and reads the monotonic clock (`Instant`); nothing
//! outside it calls into it except the `seedkv-load` binary.

pub mod conn;
pub mod prober;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use seedkv_engine::resp::Frame;

use super::latency::check_sizes;
use super::script::{FILL_ELEMENTS_PER_REQUEST, GAP_NS, HASH_KEY, SCAN_COUNT, WINDOW_NS_MIN};
use super::table::{format_checked_table, row_of, Row};
use super::verify::{prefix_one_count, Checked, Span};
use conn::Conn;

/// Fill requests written as one pipeline before their replies are read
/// (the virtual operator keeps 8 in flight: `script::FILL_PIPELINE_DEPTH`).
pub const FILL_PIPELINE_DEPTH: u64 = 16;

/// What to run, and against what.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    pub host: String,
    pub port: u16,
    pub keys_count: u64,
    pub hash_fields_count: u64,
    /// FLUSHALL first (else a non-empty database is refused).
    pub flush: bool,
}

/// Runs the experiment on a current-thread runtime; returns the report to
/// print, or why no figure can be trusted.
pub fn run(config: &LoadConfig) -> Result<String, String> {
    check_sizes(config.keys_count, config.hash_fields_count)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    runtime.block_on(experiment(config))
}

fn io_err(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

async fn experiment(config: &LoadConfig) -> Result<String, String> {
    let addr = format!("{}:{}", config.host, config.port);
    let n = config.keys_count as i64;
    let m = config.hash_fields_count as i64;
    let mut op = Conn::connect(&addr).await.map_err(io_err(&addr))?;
    if config.flush {
        expect_ok(
            &op.call(&[b"FLUSHALL"]).await.map_err(io_err("FLUSHALL"))?,
            "FLUSHALL",
        )?;
    }
    let server = server_name(
        &op.call(&[b"INFO", b"server"])
            .await
            .map_err(io_err("INFO"))?,
    );
    let dbsize = integer(
        &op.call(&[b"DBSIZE"]).await.map_err(io_err("DBSIZE"))?,
        "DBSIZE",
    )?;
    if dbsize != 0 {
        return Err(format!(
            "the database holds {dbsize} keys; the experiment needs it empty (--flush empties it)"
        ));
    }
    let mut checked = Checked::default();
    let started = Instant::now();
    fill_keys(&mut op, config.keys_count).await?;
    fill_hash(&mut op, config.hash_fields_count).await?;
    let fill_s = started.elapsed().as_secs_f64();
    checked.dbsize_filled =
        expect_integer(&mut op, &[b"DBSIZE"], "DBSIZE after the fill", n + 1).await?;
    checked.hlen_filled =
        expect_integer(&mut op, &[b"HLEN", HASH_KEY], "HLEN after the fill", m).await?;

    let origin = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let prober = prober::spawn(addr.clone(), origin, Arc::clone(&stop))
        .map_err(io_err("the PING thread"))?;
    let since = |at: Instant| at.duration_since(origin).as_nanos() as u64;
    let mut spans = Vec::new();

    sleep_ns(GAP_NS).await;
    let idle_start_ns = since(Instant::now());
    spans.push(Span {
        operation: "(nothing)".into(),
        duration_ns: None,
        window_start_ns: idle_start_ns,
        window_end_ns: idle_start_ns + WINDOW_NS_MIN,
    });
    sleep_ns(WINDOW_NS_MIN + GAP_NS).await;

    let (span, reply) = measured(&mut op, origin, "KEYS k:1*".into(), &[b"KEYS", b"k:1*"]).await?;
    checked.keys_prefix_count = array(&reply, "KEYS k:1*")?.len();
    let want = prefix_one_count(config.keys_count) as usize;
    if checked.keys_prefix_count != want {
        return Err(format!(
            "KEYS k:1* returned {} keys, expected {want}",
            checked.keys_prefix_count
        ));
    }
    drop(reply);
    spans.push(pause_after(span).await);

    let (span, reply) = measured(&mut op, origin, "KEYS *".into(), &[b"KEYS", b"*"]).await?;
    checked.keys_all_count = array(&reply, "KEYS *")?.len();
    if checked.keys_all_count as i64 != n + 1 {
        return Err(format!(
            "KEYS * returned {} keys, expected {}",
            checked.keys_all_count,
            n + 1
        ));
    }
    drop(reply);
    spans.push(pause_after(span).await);

    let scan_start = Instant::now();
    let (calls, distinct) = full_scan(&mut op, config.keys_count).await?;
    let scan_end = Instant::now();
    checked.scan_calls = calls as usize;
    checked.scan_distinct_keys = distinct;
    spans.push(
        pause_after(Span::of(
            format!("SCAN COUNT 1000 ({calls} calls)"),
            since(scan_start),
            since(scan_end),
        ))
        .await,
    );

    let del_name = format!("DEL of the {m}-field hash");
    let (span, reply) = measured(&mut op, origin, del_name, &[b"DEL", HASH_KEY]).await?;
    expect_value(&reply, "DEL's reply", 1)?;
    spans.push(pause_after(span).await);

    fill_hash(&mut op, config.hash_fields_count).await?;
    expect_integer(&mut op, &[b"DBSIZE"], "DBSIZE after the refill", n + 1).await?;
    checked.hlen_refilled =
        expect_integer(&mut op, &[b"HLEN", HASH_KEY], "HLEN after the refill", m).await?;
    sleep_ns(GAP_NS).await;

    let unlink_name = format!("UNLINK of the {m}-field hash");
    let (span, reply) = measured(&mut op, origin, unlink_name, &[b"UNLINK", HASH_KEY]).await?;
    expect_value(&reply, "UNLINK's reply", 1)?;
    spans.push(pause_after(span).await);
    checked.dbsize_end = expect_integer(&mut op, &[b"DBSIZE"], "DBSIZE at the end", n).await?;
    expect_integer(
        &mut op,
        &[b"EXISTS", HASH_KEY],
        "EXISTS of the unlinked hash",
        0,
    )
    .await?;

    stop.store(true, Ordering::Relaxed);
    let probe = prober
        .join()
        .map_err(|_| "the PING thread panicked".to_string())?
        .map_err(io_err("the PING connection"))?;
    checked.replies_count = op.replies_count + probe.samples.len() as u64 + probe.dropped_count;
    checked.errors_count = op.errors_count + probe.errors_count;
    if checked.errors_count > 0 {
        let first = op.first_error.or(probe.first_error).unwrap_or_default();
        return Err(format!(
            "{} error replies (first: {first}); no figure printed",
            checked.errors_count
        ));
    }
    if probe.dropped_count > 0 {
        return Err(format!(
            "{} PINGs past the sample bound; no figure printed",
            probe.dropped_count
        ));
    }
    let rows: Vec<Row> = spans
        .into_iter()
        .map(|s| row_of(s, &probe.samples))
        .collect();
    let mut out = format!(
        "head-of-line latency over real sockets: {server} at {addr}, {} keys, {}-field hash\n\n",
        config.keys_count, config.hash_fields_count
    );
    out.push_str(&format_checked_table(&rows, &checked));
    let _ = writeln!(
        out,
        "fill: {fill_s:.1} s wall (not measured); {} PINGs in all",
        probe.samples.len()
    );
    Ok(out)
}

async fn sleep_ns(ns: u64) {
    tokio::time::sleep(Duration::from_nanos(ns)).await;
}

/// Sends one request, times it from the write to the whole reply.
async fn measured(
    op: &mut Conn,
    origin: Instant,
    operation: String,
    args: &[&[u8]],
) -> Result<(Span, Frame), String> {
    let start = Instant::now();
    let reply = op.call(args).await.map_err(io_err(&operation))?;
    let end = Instant::now();
    let since = |at: Instant| at.duration_since(origin).as_nanos() as u64;
    Ok((Span::of(operation, since(start), since(end)), reply))
}

/// Waits until `span`'s window is over and a gap has passed.
async fn pause_after(span: Span) -> Span {
    let watched_ns = span.window_end_ns - span.window_start_ns;
    let elapsed_ns = span.duration_ns.unwrap_or(0);
    sleep_ns(watched_ns.saturating_sub(elapsed_ns) + GAP_NS).await;
    span
}

async fn fill_keys(op: &mut Conn, keys_count: u64) -> Result<(), String> {
    let mut next = 0;
    while next < keys_count {
        let mut sent = 0;
        while sent < FILL_PIPELINE_DEPTH && next < keys_count {
            let n = FILL_ELEMENTS_PER_REQUEST.min(keys_count - next);
            op.begin(1 + 2 * n as usize);
            op.arg(b"MSET");
            for i in next..next + n {
                op.arg(format!("k:{i}").as_bytes());
                op.arg(format!("v:{i}").as_bytes());
            }
            next += n;
            sent += 1;
        }
        op.flush().await.map_err(io_err("MSET"))?;
        for _ in 0..sent {
            expect_ok(&op.recv().await.map_err(io_err("MSET"))?, "MSET")?;
        }
    }
    Ok(())
}

/// HSETs of `fields_count` new fields; checks that each field was new.
async fn fill_hash(op: &mut Conn, fields_count: u64) -> Result<(), String> {
    let mut next = 0;
    let mut created = 0;
    while next < fields_count {
        let mut sent = 0;
        while sent < FILL_PIPELINE_DEPTH && next < fields_count {
            let n = FILL_ELEMENTS_PER_REQUEST.min(fields_count - next);
            op.begin(2 + 2 * n as usize);
            op.arg(b"HSET");
            op.arg(HASH_KEY);
            for i in next..next + n {
                op.arg(format!("f:{i}").as_bytes());
                op.arg(format!("v:{i}").as_bytes());
            }
            next += n;
            sent += 1;
        }
        op.flush().await.map_err(io_err("HSET"))?;
        for _ in 0..sent {
            created += integer(&op.recv().await.map_err(io_err("HSET"))?, "HSET")?;
        }
    }
    if created != fields_count as i64 {
        return Err(format!(
            "HSET created {created} fields, expected {fields_count}"
        ));
    }
    Ok(())
}

/// A whole SCAN iteration; returns the calls made and the distinct keys
/// seen, which must be every key (nothing is written meanwhile).
async fn full_scan(op: &mut Conn, keys_count: u64) -> Result<(u64, usize), String> {
    let calls_max = 4 * (keys_count + 1) / SCAN_COUNT + 1_000;
    let count = SCAN_COUNT.to_string();
    let mut seen: HashSet<Vec<u8>> = HashSet::with_capacity(keys_count as usize + 1);
    let mut cursor = b"0".to_vec();
    let mut calls = 0;
    loop {
        let reply = op
            .call(&[b"SCAN", &cursor, b"COUNT", count.as_bytes()])
            .await
            .map_err(io_err("SCAN"))?;
        calls += 1;
        let Frame::Array(mut items) = reply else {
            return Err(format!("SCAN replied {reply:?}"));
        };
        let (Some(Frame::Array(keys)), Some(Frame::Bulk(next))) = (items.pop(), items.pop()) else {
            return Err("SCAN replied something other than [cursor, keys]".into());
        };
        for key in keys {
            if let Frame::Bulk(k) = key {
                seen.insert(k);
            }
        }
        if next == b"0" {
            break;
        }
        if calls >= calls_max {
            return Err(format!("SCAN did not finish in {calls_max} calls"));
        }
        cursor = next;
    }
    if seen.len() as u64 != keys_count + 1 {
        return Err(format!(
            "SCAN returned {} distinct keys, expected {}",
            seen.len(),
            keys_count + 1
        ));
    }
    Ok((calls, seen.len()))
}

/// "seedkv 0.1.0" or "redis 7.0.15", from INFO server, so that a table
/// says what it measured.
fn server_name(info: &Frame) -> String {
    let text = match info {
        Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    };
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
            .map(str::to_string)
    };
    match (field("seedkv_version"), field("redis_version")) {
        (Some(s), _) => format!("seedkv {s}"),
        (None, Some(r)) => format!("redis {r}"),
        (None, None) => "a RESP server".into(),
    }
}

fn integer(frame: &Frame, what: &str) -> Result<i64, String> {
    match frame {
        Frame::Integer(n) => Ok(*n),
        other => Err(format!("{what} replied {other:?}, not an integer")),
    }
}

fn expect_value(frame: &Frame, what: &str, want: i64) -> Result<i64, String> {
    let n = integer(frame, what)?;
    if n != want {
        return Err(format!("{what} is {n}, expected {want}"));
    }
    Ok(n)
}

async fn expect_integer(
    op: &mut Conn,
    args: &[&[u8]],
    what: &str,
    want: i64,
) -> Result<i64, String> {
    let reply = op.call(args).await.map_err(io_err(what))?;
    expect_value(&reply, what, want)
}

fn expect_ok(frame: &Frame, what: &str) -> Result<(), String> {
    match frame {
        Frame::Simple(s) if s == b"OK" => Ok(()),
        other => Err(format!("{what} replied {other:?}")),
    }
}

fn array<'a>(frame: &'a Frame, what: &str) -> Result<&'a [Frame], String> {
    match frame {
        Frame::Array(items) => Ok(items),
        other => Err(format!("{what} replied {:?}", summary(other))),
    }
}

fn summary(frame: &Frame) -> String {
    let mut s = format!("{frame:?}");
    s.truncate(200);
    s
}
