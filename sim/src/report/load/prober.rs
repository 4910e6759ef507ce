//! The PING prober: its own connection, its own thread and its own
//! current-thread runtime, so that decoding a 2M-key KEYS reply on the
//! operator's side never delays a PING measurement. It sends one PING at a
//! time and the next as soon as the reply is in (`redis-cli --latency`
//! without its sleep), recording when each was sent and how long it took.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use seedkv_engine::resp::Frame;

use super::conn::Conn;
use crate::report::table::PingSample;

/// PINGs recorded at most (≈ 30 s of back-to-back PINGs on loopback); the
/// prober keeps pinging past it but stops recording, and says so.
pub const SAMPLES_MAX: usize = 20_000_000;

/// What the prober brings back.
#[derive(Debug, Default)]
pub struct ProbeResult {
    pub samples: Vec<PingSample>,
    /// Replies that were not PONG.
    pub errors_count: u64,
    pub first_error: Option<String>,
    /// PINGs sent after [`SAMPLES_MAX`] was reached.
    pub dropped_count: u64,
}

/// Starts the prober; it runs until `stop` is set.
pub fn spawn(
    addr: String,
    origin: Instant,
    stop: Arc<AtomicBool>,
) -> std::io::Result<JoinHandle<std::io::Result<ProbeResult>>> {
    std::thread::Builder::new()
        .name("seedkv-load-ping".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()?;
            runtime.block_on(probe(&addr, origin, &stop))
        })
}

async fn probe(addr: &str, origin: Instant, stop: &AtomicBool) -> std::io::Result<ProbeResult> {
    let mut conn = Conn::connect(addr).await?;
    let mut result = ProbeResult {
        samples: Vec::with_capacity(1 << 20),
        ..ProbeResult::default()
    };
    while !stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        let reply = conn.call(&[b"PING"]).await?;
        let latency_ns = sent.elapsed().as_nanos() as u64;
        if !matches!(&reply, Frame::Simple(s) if s == b"PONG") {
            result.errors_count += 1;
            result
                .first_error
                .get_or_insert_with(|| format!("PING replied {reply:?}"));
        }
        if result.samples.len() < SAMPLES_MAX {
            result.samples.push(PingSample {
                sent_ns: sent.duration_since(origin).as_nanos() as u64,
                latency_ns,
            });
        } else {
            result.dropped_count += 1;
        }
    }
    Ok(result)
}
