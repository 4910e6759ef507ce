//! The partition model of the multi-node world: which node may send bytes
//! to which, and when.
//!
//! A plan is a list of [`Partition`]s drawn per seed over the fault window.
//! Each blocks bytes between two nodes, in one direction or both, for a
//! span of virtual time, either for the whole span or flapping (blocked
//! for the first half of every period). Bytes written into a blocked
//! direction are held, as TCP retransmits them, and leave when it heals:
//! a partition delays a link's bytes, and a long one lets the engines'
//! own `repl-timeout` end the link. A connection attempt into a blocked
//! direction fails after [`CONNECT_TIMEOUT_NS`]. Every partition ends
//! within the fault window: after it, the network is whole ("healing").

use rand::Rng;

/// Partitions a plan holds at most.
pub const PARTITIONS_MAX: usize = 16;
/// How long a connection attempt into a partition waits before failing.
pub const CONNECT_TIMEOUT_NS: u64 = 1_000_000_000;
/// Shortest and longest partition: 20 ms ..= 4 s.
pub const PARTITION_NS_MIN: u64 = 20_000_000;
pub const PARTITION_NS_MAX: u64 = 4_000_000_000;
/// A flapping partition's period: 10 ms ..= 400 ms.
pub const FLAP_PERIOD_NS_MIN: u64 = 10_000_000;
pub const FLAP_PERIOD_NS_MAX: u64 = 400_000_000;

/// How a partition blocks the pair of nodes it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionKind {
    /// Bytes from `a` to `b` are blocked; `b` to `a` flow.
    OneWay,
    /// Both directions are blocked.
    TwoWay,
    /// Both directions are blocked for the first half of every period.
    Flapping { period_ns: u64 },
}

/// One partition between nodes `a` and `b`, over `[from_ns, until_ns)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    pub a: u32,
    pub b: u32,
    pub from_ns: u64,
    pub until_ns: u64,
    pub kind: PartitionKind,
}

impl Partition {
    /// Whether bytes from `from` to `to` are blocked at `now_ns`.
    fn blocks(&self, now_ns: u64, from: u32, to: u32) -> bool {
        if now_ns < self.from_ns || now_ns >= self.until_ns {
            return false;
        }
        let forward = from == self.a && to == self.b;
        let backward = from == self.b && to == self.a;
        match self.kind {
            PartitionKind::OneWay => forward,
            PartitionKind::TwoWay => forward || backward,
            PartitionKind::Flapping { period_ns } => {
                (forward || backward) && (now_ns - self.from_ns) % period_ns < period_ns / 2
            }
        }
    }

    /// The first instant after `now_ns` at which this partition stops
    /// blocking (it may block again later, when flapping).
    fn unblocks_at(&self, now_ns: u64) -> u64 {
        match self.kind {
            PartitionKind::Flapping { period_ns } => {
                let into = (now_ns - self.from_ns) % period_ns;
                (now_ns - into + period_ns / 2).min(self.until_ns)
            }
            _ => self.until_ns,
        }
    }
}

/// The partitions of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartitionPlan {
    pub partitions: Vec<Partition>,
}

impl PartitionPlan {
    /// Draws up to `count_max` partitions among `nodes_count` nodes, each
    /// within `[0, window_ns)`.
    pub fn draw(rng: &mut impl Rng, nodes_count: u32, window_ns: u64, count_max: usize) -> Self {
        let mut partitions = Vec::new();
        if nodes_count < 2 || window_ns <= PARTITION_NS_MIN {
            return PartitionPlan { partitions };
        }
        let count = rng.gen_range(0..=count_max.min(PARTITIONS_MAX));
        for _ in 0..count {
            let a = rng.gen_range(0..nodes_count);
            let b = (a + rng.gen_range(1..nodes_count)) % nodes_count;
            let len_ns = rng.gen_range(PARTITION_NS_MIN..=PARTITION_NS_MAX.min(window_ns));
            let from_ns = rng.gen_range(0..=window_ns - len_ns);
            let kind = match rng.gen_range(0..3) {
                0 => PartitionKind::OneWay,
                1 => PartitionKind::TwoWay,
                _ => PartitionKind::Flapping {
                    period_ns: rng.gen_range(FLAP_PERIOD_NS_MIN..=FLAP_PERIOD_NS_MAX),
                },
            };
            partitions.push(Partition {
                a,
                b,
                from_ns,
                until_ns: from_ns + len_ns,
                kind,
            });
        }
        PartitionPlan { partitions }
    }

    /// Whether bytes from node `from` to node `to` are blocked at `now_ns`.
    pub fn blocked(&self, now_ns: u64, from: u32, to: u32) -> bool {
        self.partitions.iter().any(|p| p.blocks(now_ns, from, to))
    }

    /// The earliest instant at or after `now_ns` when bytes from `from`
    /// may reach `to`. Bounded: every partition ends, and each step moves
    /// past at least one unblocking instant.
    pub fn open_at(&self, now_ns: u64, from: u32, to: u32) -> u64 {
        let mut t = now_ns;
        // Each pass moves `t` to the end of one blocking stretch; a flapping
        // partition has at most until/period stretches.
        for _ in 0..1_000_000 {
            let Some(next) = self
                .partitions
                .iter()
                .filter(|p| p.blocks(t, from, to))
                .map(|p| p.unblocks_at(t))
                .max()
            else {
                return t;
            };
            debug_assert!(next > t);
            t = next;
        }
        self.heal_ns()
    }

    /// When the last partition ends (0 without partitions).
    pub fn heal_ns(&self) -> u64 {
        self.partitions
            .iter()
            .map(|p| p.until_ns)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn plan(kind: PartitionKind) -> PartitionPlan {
        PartitionPlan {
            partitions: vec![Partition {
                a: 1,
                b: 0,
                from_ns: 100,
                until_ns: 1100,
                kind,
            }],
        }
    }

    #[test]
    fn one_way_blocks_one_direction_only() {
        let p = plan(PartitionKind::OneWay);
        assert!(p.blocked(100, 1, 0));
        assert!(!p.blocked(100, 0, 1));
        assert!(!p.blocked(99, 1, 0));
        assert!(!p.blocked(1100, 1, 0));
        assert_eq!(p.open_at(500, 1, 0), 1100);
        assert_eq!(p.open_at(500, 0, 1), 500);
    }

    #[test]
    fn two_way_blocks_both_and_others_flow() {
        let p = plan(PartitionKind::TwoWay);
        assert!(p.blocked(100, 1, 0) && p.blocked(100, 0, 1));
        assert!(!p.blocked(100, 2, 0));
        assert_eq!(p.open_at(1099, 0, 1), 1100);
    }

    #[test]
    fn flapping_opens_every_second_half_period() {
        let p = plan(PartitionKind::Flapping { period_ns: 200 });
        assert!(p.blocked(100, 0, 1));
        assert!(p.blocked(199, 0, 1));
        assert!(!p.blocked(200, 0, 1));
        assert!(p.blocked(300, 1, 0));
        assert_eq!(p.open_at(120, 0, 1), 200);
        assert_eq!(p.open_at(250, 0, 1), 250);
        assert_eq!(p.open_at(950, 0, 1), 1000);
        assert_eq!(p.open_at(1090, 0, 1), 1090);
        // A blocked half cut short by the partition's end ends with it.
        let mut short = p.clone();
        short.partitions[0].until_ns = 950;
        assert_eq!(short.open_at(920, 0, 1), 950);
    }

    #[test]
    fn drawn_plans_stay_in_their_window_and_heal() {
        for seed in 0..200 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let p = PartitionPlan::draw(&mut rng, 3, 10_000_000_000, 6);
            assert!(p.partitions.len() <= 6);
            for q in &p.partitions {
                assert!(q.a != q.b && q.a < 3 && q.b < 3);
                assert!(q.from_ns < q.until_ns && q.until_ns <= 10_000_000_000);
                assert!(p.open_at(q.from_ns, q.a, q.b) <= p.heal_ns());
            }
            assert!(!p.blocked(p.heal_ns(), 0, 1) && !p.blocked(p.heal_ns(), 1, 0));
        }
    }
}
