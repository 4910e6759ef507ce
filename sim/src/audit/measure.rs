//! Runs one audit input on a fresh in-process engine and measures what its
//! measured request really cost.
//!
//! The engine asks its host for a [`Stopwatch`] around every command's
//! handler (see `seedkv_engine::stopwatch`); the audit installs one that
//! reads this thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), so the figure
//! is the CPU the command's handler and reply encoding took, without
//! parsing, without the host's draining, and without the time this thread
//! spent descheduled (the machine is shared). This is the one place in the
//! simulator crate that reads a real clock, and it is outside every
//! deterministic run: the audit is a measuring tool, like the calibration
//! example.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use seedkv_engine::stopwatch::Stopwatch;
use seedkv_engine::{ClientId, Config, ConnectInfo, Engine, Event, Now};

use super::template::{Request, CLIENTS_PSEUDO};
use crate::client::encode_request_into;

/// The Unix time the audit's engines believe it is (fixed: nothing in the
/// audit depends on it, and TTLs set by a setup must not expire).
const UNIX_US_START: u64 = 1_700_000_000_000_000;
/// Bytes of the measured reply kept to show and to check for an error.
const REPLY_KEPT_BYTES: usize = 120;

/// Blocks [`settle_allocator`] takes and gives back before the clock.
const SETTLE_BLOCKS: usize = 64;
/// Their size: past glibc's per-thread cache (1,032 bytes) and below its
/// mmap threshold (128 KiB at least), so that each comes from the heap's
/// bins, after malloc has merged its fast bins and sorted (up to 10,000
/// a call) the chunks freed since it last did.
const SETTLE_BLOCK_BYTES: usize = 4_000;

/// Pays, before the clock starts, the work the allocator deferred from
/// the setup's frees. glibc sorts freed chunks into its bins lazily, on
/// the first allocation its caches cannot serve; a setup that freed tens
/// of thousands of scattered blocks (an XREADGROUP that built a command
/// per entry it delivered) left that sorting, O(blocks freed), to the
/// measured command's first allocation: an XACK of one ID was billed
/// 1.3 ms after 65,536 entries. The command's own allocations and frees
/// are still measured; only the setup's debt is not.
fn settle_allocator() {
    let mut blocks: Vec<Vec<u8>> = Vec::with_capacity(SETTLE_BLOCKS);
    for _ in 0..SETTLE_BLOCKS {
        blocks.push(std::hint::black_box(Vec::with_capacity(SETTLE_BLOCK_BYTES)));
    }
    drop(std::hint::black_box(blocks));
}

/// This thread's CPU time so far, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64
}

/// Sums the thread CPU time of every command the engine times.
struct CpuStopwatch {
    started_ns: u64,
    total_ns: Arc<AtomicU64>,
}

impl Stopwatch for CpuStopwatch {
    fn start(&mut self) {
        self.started_ns = thread_cpu_ns();
    }

    fn stop(&mut self, _work_units: u64, _reply_bytes: u64) -> u64 {
        let elapsed_ns = thread_cpu_ns().saturating_sub(self.started_ns);
        self.total_ns.fetch_add(elapsed_ns, Ordering::Relaxed);
        elapsed_ns
    }
}

/// What one execution of the measured request cost.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// Thread CPU time of the handlers that ran (EXEC: its own and each
    /// queued command's).
    pub cpu_ns: u64,
    /// Work units the engine reported (`Event::Executed`), summed.
    pub work_units: u64,
    /// Commands the engine reported executing.
    pub commands: u64,
    pub reply_bytes: u64,
    /// Bytes of the request as sent (the cost model charges them per byte).
    pub request_bytes: u64,
    /// The start of the reply the measured request's client received.
    pub reply_head: Vec<u8>,
}

/// A fresh engine with two clients (and any extra idle ones).
pub struct Bench {
    engine: Engine,
    clients: [ClientId; 2],
    now_ns: u64,
    total_ns: Arc<AtomicU64>,
    buf: Vec<u8>,
}

impl Default for Bench {
    fn default() -> Self {
        Bench::new()
    }
}

impl Bench {
    pub fn new() -> Bench {
        let mut config = Config {
            record_executions: true,
            // Each command is measured whole, where it runs: a snapshot
            // read (KEYS, SMEMBERS... in slices) would charge its
            // execution 1 and its slices to no command.
            snapshot_reads: false,
            ..Config::default()
        };
        // DEBUG SLEEP 0 is audited like any command.
        config
            .extra
            .insert("enable-debug-command".into(), "yes".into());
        let now = Now::from_ns(0, UNIX_US_START);
        let mut engine = Engine::new(config, now);
        // As seedkv-server does (from its counting allocator): INFO and
        // MEMORY read `used_memory` from the host instead of estimating it
        // by walking the keyspace.
        engine.set_allocated_bytes(Some(1 << 20));
        let total_ns = Arc::new(AtomicU64::new(0));
        engine.set_stopwatch(Box::new(CpuStopwatch {
            started_ns: 0,
            total_ns: Arc::clone(&total_ns),
        }));
        let clients = [
            engine.connect(now, Self::info(1)),
            engine.connect(now, Self::info(2)),
        ];
        let mut bench = Bench {
            engine,
            clients,
            now_ns: 0,
            total_ns,
            buf: Vec::new(),
        };
        bench.drain();
        bench
    }

    fn info(i: u64) -> ConnectInfo {
        ConnectInfo {
            addr: format!("127.0.0.1:{}", 40_000 + i),
            laddr: "127.0.0.1:6379".into(),
            fd: 7 + i as i64,
        }
    }

    /// Runs the setup requests, untimed.
    pub fn setup(&mut self, requests: &[Request]) {
        for r in requests {
            if r.args.first().map(Vec::as_slice) == Some(CLIENTS_PSEUDO) {
                let count: usize = r
                    .args
                    .get(1)
                    .and_then(|a| std::str::from_utf8(a).ok()?.parse().ok())
                    .unwrap_or(0);
                for i in 0..count {
                    let now = self.now();
                    self.engine.connect(now, Self::info(3 + i as u64));
                }
                self.drain();
                continue;
            }
            self.send(r);
            self.drain();
        }
    }

    /// Runs the measured request and reports what it cost.
    pub fn measure(&mut self, request: &Request) -> Sample {
        settle_allocator();
        self.total_ns.store(0, Ordering::Relaxed);
        let request_bytes = self.send(request);
        let cpu_ns = self.total_ns.load(Ordering::Relaxed);
        let mut sample = Sample {
            cpu_ns,
            request_bytes,
            ..Sample::default()
        };
        let client = self.clients[usize::from(request.client == 2)];
        while let Some(event) = self.engine.poll_event() {
            if let Event::Executed(x) = event {
                sample.work_units += x.work_units;
                sample.commands += 1;
                sample.reply_bytes += x.reply_bytes as u64;
            }
        }
        let output = self.engine.pending_output(client);
        sample.reply_head = output[..output.len().min(REPLY_KEPT_BYTES)].to_vec();
        self.drain();
        sample
    }

    fn now(&mut self) -> Now {
        self.now_ns += 1_000;
        Now::from_ns(self.now_ns, UNIX_US_START)
    }

    /// Feeds one request; returns its encoded size.
    fn send(&mut self, request: &Request) -> u64 {
        self.buf.clear();
        encode_request_into(&mut self.buf, &request.args);
        let client = self.clients[usize::from(request.client == 2)];
        let now = self.now();
        self.engine.handle_input(now, client, &self.buf);
        self.buf.len() as u64
    }

    /// Takes every event and all output (values to free are dropped here,
    /// outside the timed region, as a host's background thread would).
    fn drain(&mut self) {
        while self.engine.poll_event().is_some() {}
        while let Some(id) = self.engine.poll_transmit() {
            let n = self.engine.pending_output(id).len();
            self.engine.consume_output(id, n);
        }
    }
}
