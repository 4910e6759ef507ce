//! Everything that varies between runs, drawn from the run seed ("swarm
//! testing": each seed explores its own corner), plus the overrides a
//! person or the shrinker may set on the command line. Overrides are applied
//! after drawing, so overriding one knob leaves every other draw unchanged.

use rand::Rng;

use crate::net::NetKnobs;
use crate::persistence::{PersistKnobs, PersistMode};
use crate::rng::{choice_rng, stream, stream_rng};
use crate::workload::WorkloadKind;

/// Simulated clients at most (also the bound on the `--clients` override).
pub const CLIENTS_MAX: u32 = 64;
/// Clients drawn per seed: 2 ..= this.
pub const CLIENTS_DRAWN_MAX: u32 = 12;
/// Requests per run drawn per seed: this range.
pub const OPS_DRAWN_MIN: u64 = 2_000;
pub const OPS_DRAWN_MAX: u64 = 30_000;
/// Requests per run at most (bound on the `--ops` override).
pub const OPS_MAX: u64 = 100_000_000;
/// Largest forward jump of the wall clock.
pub const CLOCK_JUMP_MS_MAX: u64 = 10_000;
/// Longest global idle period (no client sends anything).
pub const IDLE_MS_MAX: u64 = 5_000;

/// Fault knobs, drawn per seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultKnobs {
    /// Chance per sent batch of a connection reset while it is delivered
    /// (mid-request), per mille: 0 ..= 30.
    pub reset_request_per_mille: u32,
    /// Chance per server write of a reset while it is delivered (mid-reply),
    /// per mille: 0 ..= 30.
    pub reset_reply_per_mille: u32,
    /// Chance per completed batch that the client closes its connection and
    /// reconnects, per mille: 0 ..= 20.
    pub disconnect_per_mille: u32,
    /// Chance per sent batch that the wall clock jumps forward by up to
    /// [`CLOCK_JUMP_MS_MAX`], per mille: 0 ..= 5. Monotonic time never jumps.
    pub clock_jump_per_mille: u32,
    /// Chance per sent batch of a global idle period of up to
    /// [`IDLE_MS_MAX`], per mille: 0 ..= 5.
    pub idle_per_mille: u32,
    /// Faults stop once this share of the request budget was sent, per
    /// mille: 500 ..= 900. Liveness is judged after that.
    pub stop_per_mille: u32,
}

impl FaultKnobs {
    pub fn none() -> FaultKnobs {
        FaultKnobs {
            reset_request_per_mille: 0,
            reset_reply_per_mille: 0,
            disconnect_per_mille: 0,
            clock_jump_per_mille: 0,
            idle_per_mille: 0,
            stop_per_mille: 0,
        }
    }

    fn draw(rng: &mut impl Rng) -> FaultKnobs {
        let mut maybe = |max: u32| {
            if rng.gen_bool(0.6) {
                rng.gen_range(0..=max)
            } else {
                0
            }
        };
        let reset_request_per_mille = maybe(30);
        let reset_reply_per_mille = maybe(30);
        let disconnect_per_mille = maybe(20);
        let clock_jump_per_mille = maybe(5);
        let idle_per_mille = maybe(5);
        FaultKnobs {
            reset_request_per_mille,
            reset_reply_per_mille,
            disconnect_per_mille,
            clock_jump_per_mille,
            idle_per_mille,
            stop_per_mille: rng.gen_range(500..=900),
        }
    }
}

/// Command-line overrides (None: use the drawn value).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub clients: Option<u32>,
    pub ops: Option<u64>,
    pub no_faults: bool,
    /// Run only these workloads (clients dealt round-robin over them).
    pub workloads: Option<Vec<WorkloadKind>>,
    /// Persist in this mode (`--persistence`); None: no storage.
    pub persistence: Option<PersistMode>,
    /// With persistence: crash and restart the server once (`--crash`).
    pub crash: bool,
    /// With persistence: inject no disk faults (`--no-disk-faults`).
    pub no_disk_faults: bool,
}

impl Overrides {
    /// The flags that reproduce these overrides, for repro lines.
    pub fn flags(&self) -> String {
        let mut s = String::new();
        if let Some(c) = self.clients {
            s.push_str(&format!(" --clients {c}"));
        }
        if let Some(o) = self.ops {
            s.push_str(&format!(" --ops {o}"));
        }
        if self.no_faults {
            s.push_str(" --no-faults");
        }
        if let Some(w) = &self.workloads {
            let names: Vec<&str> = w.iter().map(|k| k.name()).collect();
            s.push_str(&format!(" --workloads {}", names.join(",")));
        }
        if let Some(mode) = self.persistence {
            s.push_str(&format!(" --persistence {}", mode.name()));
        }
        if self.crash {
            s.push_str(" --crash");
        }
        if self.no_disk_faults {
            s.push_str(" --no-disk-faults");
        }
        s
    }
}

/// All knobs of one run.
#[derive(Clone, Debug)]
pub struct Knobs {
    pub clients_count: u32,
    /// Requests the core workloads' clients share (see [`Knobs::ops_of`]).
    pub ops_count: u64,
    /// Workloads in this run; client `i` runs `workloads[i % len]`.
    pub workloads: Vec<WorkloadKind>,
    pub net: NetKnobs,
    pub faults: FaultKnobs,
    /// Persistence and the disk (None: the server has no storage).
    pub persist: Option<PersistKnobs>,
}

impl Knobs {
    /// Draws the knobs of `seed`, then applies `overrides`.
    pub fn draw(seed: u64, overrides: &Overrides) -> Knobs {
        let mut rng = choice_rng(seed, stream::KNOBS, 0);
        let clients_count = rng.gen_range(2..=CLIENTS_DRAWN_MAX);
        let ops_count = rng.gen_range(OPS_DRAWN_MIN..=OPS_DRAWN_MAX);
        let mut workloads: Vec<WorkloadKind> = WorkloadKind::CORE
            .iter()
            .copied()
            .filter(|_| rng.gen_bool(0.6))
            .collect();
        if workloads.is_empty() {
            workloads.push(WorkloadKind::CORE[rng.gen_range(0..WorkloadKind::CORE.len())]);
        }
        // Shuffle so that which workloads get the extra clients varies.
        for i in (1..workloads.len()).rev() {
            let j = rng.gen_range(0..=i);
            workloads.swap(i, j);
        }
        let net = NetKnobs::draw(&mut rng);
        let faults_on = rng.gen_bool(0.85);
        let drawn_faults = FaultKnobs::draw(&mut rng);
        // The collections get the added clients, the last ones (see
        // `workload_of`), so the core clients keep their index, workload
        // and streams.
        let (collections, clients_extra) = draw_collections(seed);
        workloads.extend(collections);
        let rare = draw_rare(seed);
        let clients_count = match rare {
            Some(WorkloadKind::RareSolo) => {
                workloads = vec![WorkloadKind::RareSolo];
                1
            }
            Some(kind) => {
                workloads.push(kind);
                clients_count + clients_extra + 1
            }
            None => clients_count + clients_extra,
        };
        // Contention's three clients come last, so every other client
        // keeps its index, workload and streams.
        let clients_count = if draw_contention(seed) && rare != Some(WorkloadKind::RareSolo) {
            workloads.extend([WorkloadKind::Contention; 3]);
            clients_count + 3
        } else {
            clients_count
        };
        // The acl clients come after everything, for the same reason.
        let clients_count = if draw_acl(seed) && rare != Some(WorkloadKind::RareSolo) {
            let roles = crate::workload::acl::ROLES_COUNT;
            workloads.extend((0..roles).map(|_| WorkloadKind::Acl));
            clients_count + roles
        } else {
            clients_count
        };
        // `busy` runs alone too (every other client would get -BUSY).
        let clients_count = if draw_busy(seed) && rare != Some(WorkloadKind::RareSolo) {
            workloads = vec![WorkloadKind::Busy];
            crate::workload::busy::BUSY_CLIENTS
        } else {
            clients_count
        };
        let mut knobs = Knobs {
            clients_count,
            ops_count,
            workloads,
            net,
            faults: if faults_on {
                drawn_faults
            } else {
                FaultKnobs::none()
            },
            persist: overrides.persistence.map(|mode| {
                PersistKnobs::draw(seed, mode, overrides.crash, !overrides.no_disk_faults)
            }),
        };
        if let Some(c) = overrides.clients {
            knobs.clients_count = c.clamp(1, CLIENTS_MAX);
        }
        if let Some(o) = overrides.ops {
            knobs.ops_count = o.clamp(1, OPS_MAX);
        }
        if overrides.no_faults {
            knobs.faults = FaultKnobs::none();
        }
        if let Some(w) = &overrides.workloads {
            assert!(!w.is_empty(), "at least one workload");
            knobs.workloads = w.clone();
        }
        // `rare-solo` runs alone (its FLUSHALL, CLIENT PAUSE and MONITOR
        // would break any other client's checks), whatever a shrink or a
        // fuzzer's choices asked for.
        if knobs.workloads.contains(&WorkloadKind::RareSolo) {
            knobs.workloads = vec![WorkloadKind::RareSolo];
            knobs.clients_count = 1;
        }
        // `busy` as well: its -BUSY replies would fail other workloads'
        // checks.
        if knobs.workloads.contains(&WorkloadKind::Busy) {
            knobs.workloads = vec![WorkloadKind::Busy];
        }
        knobs
    }

    /// The collection workloads of a run, from their own stream: each with
    /// even odds, blocking twice (it needs two clients to block one
    /// another), and one more client per entry so that the core workloads
    /// keep theirs.
    pub fn collections_of(seed: u64) -> Vec<WorkloadKind> {
        draw_collections(seed).0
    }

    /// The requests client `client` sends. The core workloads' clients
    /// share `ops_count` as they always did; each collection client sends
    /// as many as a core client, on top, so that adding the collection
    /// workloads took nothing from the others (the planted bugs they find
    /// are found as fast). Without core clients, all share `ops_count`.
    pub fn ops_of(&self, client: u32) -> u64 {
        let is_core = |i: u32| WorkloadKind::CORE.contains(&self.workload_of(i));
        let sharing: Vec<u32> = (0..self.clients_count).filter(|&i| is_core(i)).collect();
        let sharing = if sharing.is_empty() {
            (0..self.clients_count).collect()
        } else {
            sharing
        };
        let n = sharing.len() as u64;
        let base = self.ops_count / n;
        let ops = match sharing.iter().position(|&i| i == client) {
            Some(rank) => base + u64::from((rank as u64) < self.ops_count % n),
            None => base,
        };
        match self.workload_of(client) {
            // Its script stops it (`Workload::finished`) once played.
            WorkloadKind::Rare | WorkloadKind::RareSolo => {
                ops.max(crate::workload::rare::RARE_OPS_MIN)
            }
            _ => ops,
        }
    }

    /// Client `client`'s workload. Each collection entry of `workloads`
    /// takes one of the last clients; the other clients are dealt round
    /// robin over the core entries (if there are none, everyone is dealt
    /// over the collections).
    pub fn workload_of(&self, client: u32) -> WorkloadKind {
        let kind = self.drawn_workload_of(client);
        // `rare` uses fixed key names: a second `rare` client (when a
        // workload override hands it several) would break the first's
        // expected replies, so later ones run `kv` instead.
        if kind == WorkloadKind::Rare && (0..client).any(|c| self.drawn_workload_of(c) == kind) {
            return WorkloadKind::Kv;
        }
        kind
    }

    fn drawn_workload_of(&self, client: u32) -> WorkloadKind {
        let (collections, core): (Vec<WorkloadKind>, Vec<WorkloadKind>) = self
            .workloads
            .iter()
            .partition(|k| !WorkloadKind::CORE.contains(k));
        if core.is_empty() || collections.is_empty() {
            return self.workloads[client as usize % self.workloads.len()];
        }
        let core_clients = self.clients_count.saturating_sub(collections.len() as u32);
        if client < core_clients {
            core[client as usize % core.len()]
        } else {
            collections[(client - core_clients) as usize % collections.len()]
        }
    }
}

/// See [`Knobs::collections_of`]: the drawn collection workloads and the
/// clients added for them.
fn draw_collections(seed: u64) -> (Vec<WorkloadKind>, u32) {
    let mut rng = stream_rng(seed, COLLECTIONS_STREAM, 0);
    let mut drawn = Vec::new();
    for &kind in WorkloadKind::COLLECTIONS {
        if rng.gen_bool(0.5) {
            drawn.push(kind);
            if kind == WorkloadKind::Blocking {
                drawn.push(kind);
            }
            if kind == WorkloadKind::Transfer {
                // Two clients contend for the accounts.
                drawn.push(kind);
            }
            if kind == WorkloadKind::PubSub {
                // One client per role (see `workload::pubsub`).
                drawn.extend([kind; 3]);
            }
            if kind == WorkloadKind::Tracking {
                // One client per role (see `workload::tracking`).
                drawn.extend([kind; 3]);
            }
            if kind == WorkloadKind::Hll {
                // Two clients grow `hll:big` and merge into `hll:dst`.
                drawn.push(kind);
            }
            if kind == WorkloadKind::Notify {
                // One client per role (see `workload::notify`).
                drawn.extend([kind; 2]);
            }
            if kind == WorkloadKind::Streams {
                // Three workers share the groups: one blocks or crashes
                // while the others read and claim.
                drawn.extend([kind; 2]);
            }
        }
    }
    let clients_extra = drawn.len() as u32;
    (drawn, clients_extra)
}

/// Whether the run has a `rare` client (half the seeds), and of those one
/// in eight `rare-solo` alone, from a stream of its own so that every
/// other draw of the seed stays as it was.
fn draw_rare(seed: u64) -> Option<WorkloadKind> {
    let mut rng = stream_rng(seed, RARE_STREAM, 0);
    if !rng.gen_bool(0.5) {
        return None;
    }
    Some(if rng.gen_ratio(1, 8) {
        WorkloadKind::RareSolo
    } else {
        WorkloadKind::Rare
    })
}

/// Whether the run has the three `contention` clients (a third of the
/// seeds), from a stream of its own.
fn draw_contention(seed: u64) -> bool {
    stream_rng(seed, CONTENTION_STREAM, 0).gen_ratio(1, 3)
}

/// Whether the run is a `busy` run (one seed in [`BUSY_ONE_IN`]), from a
/// stream of its own.
fn draw_busy(seed: u64) -> bool {
    stream_rng(seed, BUSY_STREAM, 0).gen_ratio(1, BUSY_ONE_IN)
}

/// One seed in this many runs `busy` alone.
const BUSY_ONE_IN: u32 = 32;

/// The stream `busy` is drawn from.
const BUSY_STREAM: &str = "knobs-busy";

/// Whether the run has the `acl` clients (half the seeds), from a stream
/// of its own.
fn draw_acl(seed: u64) -> bool {
    stream_rng(seed, ACL_STREAM, 0).gen_bool(0.5)
}

/// The stream `acl` is drawn from.
const ACL_STREAM: &str = "knobs-acl";

/// The stream `contention` is drawn from.
const CONTENTION_STREAM: &str = "knobs-contention";

/// The stream `rare` is drawn from.
const RARE_STREAM: &str = "knobs-rare";

/// The stream the collection workloads are drawn from.
const COLLECTIONS_STREAM: &str = "knobs-collections";
