//! Measures seedkv-engine in process on this machine and prints the cost
//! model's constants next to what was measured.
//!
//! `cargo run --release -p seedkv-sim --example calibrate`
//!
//! No sockets are involved, so this measures the engine's own CPU cost per
//! command and per work unit; a real server adds syscalls and copies, which
//! the cost model's read/write overheads stand for (see `sim/src/cost.rs`).

use std::time::Instant;

use seedkv_engine::{Config, ConnectInfo, Engine, Event, Now};
use seedkv_sim::client::encode_request_into;
use seedkv_sim::cost::CostModel;

/// Requests per measured pipeline.
const PIPELINE_REQUESTS: usize = 20_000;
/// Keys for the KEYS and DEL measurements.
const KEYS_COUNT: usize = 200_000;

struct Bench {
    engine: Engine,
    client: seedkv_engine::ClientId,
    now_ns: u64,
}

impl Bench {
    fn new() -> Bench {
        let config = Config {
            record_executions: true,
            ..Config::default()
        };
        let mut engine = Engine::new(config, Now::from_ns(0, 1_700_000_000_000_000));
        let client = engine.connect(
            Now::from_ns(0, 1_700_000_000_000_000),
            ConnectInfo::default(),
        );
        Bench {
            engine,
            client,
            now_ns: 0,
        }
    }

    /// Feeds `bytes` and drains everything; returns (ns elapsed, work units,
    /// commands executed).
    fn feed(&mut self, bytes: &[u8]) -> (u64, u64, u64) {
        self.now_ns += 1_000;
        let now = Now::from_ns(self.now_ns, 1_700_000_000_000_000);
        let started = Instant::now();
        self.engine.handle_input(now, self.client, bytes);
        let (mut units, mut commands) = (0, 0);
        while let Some(e) = self.engine.poll_event() {
            if let Event::Executed(x) = e {
                units += x.work_units;
                commands += 1;
            }
        }
        while let Some(id) = self.engine.poll_transmit() {
            let n = self.engine.pending_output(id).len();
            self.engine.consume_output(id, n);
        }
        (started.elapsed().as_nanos() as u64, units, commands)
    }
}

fn requests(make: impl Fn(usize) -> Vec<Vec<u8>>, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        encode_request_into(&mut out, &make(i));
    }
    out
}

fn main() {
    let model = CostModel::default();
    let mut b = Bench::new();

    let set = requests(
        |i| {
            vec![
                b"SET".to_vec(),
                format!("key:{}", i % 1000).into_bytes(),
                b"value".to_vec(),
            ]
        },
        PIPELINE_REQUESTS,
    );
    let get = requests(
        |i| vec![b"GET".to_vec(), format!("key:{}", i % 1000).into_bytes()],
        PIPELINE_REQUESTS,
    );
    b.feed(&set); // warm up
    let (set_ns, _, set_n) = b.feed(&set);
    let (get_ns, _, get_n) = b.feed(&get);

    let mut b = Bench::new();
    for chunk in 0..KEYS_COUNT / 1000 {
        let mut r = vec![b"MSET".to_vec()];
        for i in 0..1000 {
            r.push(format!("k:{}", chunk * 1000 + i).into_bytes());
            r.push(b"v".to_vec());
        }
        b.feed(&requests(|_| r.clone(), 1));
    }
    let (keys_ns, keys_units, _) =
        b.feed(&requests(|_| vec![b"KEYS".to_vec(), b"k:1*".to_vec()], 1));
    let mut del = vec![b"DEL".to_vec()];
    for i in 0..KEYS_COUNT {
        del.push(format!("k:{i}").into_bytes());
    }
    let (del_ns, del_units, _) = b.feed(&requests(|_| del.clone(), 1));

    let per = |ns: u64, n: u64| ns as f64 / n.max(1) as f64;
    println!("seedkv-engine in process on this machine:");
    println!(
        "  SET   {:>8.1} ns per pipelined command",
        per(set_ns, set_n)
    );
    println!(
        "  GET   {:>8.1} ns per pipelined command",
        per(get_ns, get_n)
    );
    println!(
        "  KEYS  {:>8.1} ns per work unit ({} units over {} keys)",
        per(keys_ns, keys_units),
        keys_units,
        KEYS_COUNT
    );
    println!(
        "  DEL   {:>8.1} ns per work unit ({} units, {} keys)",
        per(del_ns, del_units),
        del_units,
        KEYS_COUNT
    );
    println!("cost model constants (sim/src/cost.rs, calibrated to Redis 7.0 per the seeds):");
    println!("  COMMAND_OVERHEAD_NS = {}", model.command_overhead_ns);
    println!(
        "  WORK_UNIT_NS        = {}  (KEYS over 2M keys = 0.60 s)",
        model.ns_per_work_unit
    );
    println!("  READ_OVERHEAD_NS    = {}", model.read_overhead_ns);
    println!("  WRITE_OVERHEAD_NS   = {}", model.write_overhead_ns);
    println!("  BYTE_COST_PS        = {}", model.byte_cost_ps);
    println!(
        "  FREE_UNIT_NS        = {}  (DEL of a 3M-field hash = 0.54 s)",
        model.free_ns_per_unit
    );
    println!(
        "  engine/Redis ratio: KEYS per unit {:.2}x, GET {:.2}x of COMMAND_OVERHEAD_NS",
        per(keys_ns, keys_units) / model.ns_per_work_unit as f64,
        per(get_ns, get_n) / model.command_overhead_ns as f64
    );
}
