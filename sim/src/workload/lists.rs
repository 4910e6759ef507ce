//! Lists, two ways.
//!
//! - **Plain list commands** on shared `list:` keys: LPUSH/RPUSH/LPOP/RPOP
//!   (with COUNT)/LRANGE/LTRIM/LINSERT/LREM/LINDEX/LSET/LLEN, with a few
//!   elements of hundreds of bytes so that lists outgrow one listpack node
//!   (`list-max-listpack-size -2`, 8 KiB) and LTRIM keeping them bounded.
//! - **A rotation**: a closed system of tagged elements moved between the
//!   lists of a group (`rot:<g>:0 ..`) by LMOVE, RPOPLPUSH and BLMOVE from
//!   every lists client at once. Each client seeds each group once with
//!   its own elements, then only moves them; a snapshot is one pipeline of
//!   `LRANGE rot:<g>:<i> 0 -1` over the whole group, which
//!   `check::conservation` judges.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Request, Workload, WorkloadKind};

/// Shared plain keys `list:0 ..`.
pub const LIST_KEYS_COUNT: u32 = 4;
/// Rotation groups, lists per group, and elements each client seeds into
/// each group.
pub const ROTATION_GROUPS_COUNT: u32 = 2;
pub const ROTATION_LISTS_COUNT: u32 = 3;
pub const ROTATION_SEED_ELEMENTS: u32 = 6;
/// BLMOVE timeouts are drawn in 1 ..= this many milliseconds.
pub const ROTATION_BLMOVE_MS_MAX: u64 = 30;
/// LTRIM keeps at most this many elements at least.
pub const LIST_TRIM_KEEP_MIN: u32 = 40;
/// Longest pause between batches.
pub const LIST_THINK_NS_MAX: u64 = 500_000;

/// The key of list `i` of rotation group `g`.
pub fn rotation_key(g: u32, i: u32) -> Vec<u8> {
    format!("rot:{g}:{i}").into_bytes()
}

/// The group of a rotation key and the list's index in it.
pub fn parse_rotation_key(key: &[u8]) -> Option<(u32, u32)> {
    let rest = std::str::from_utf8(key.strip_prefix(b"rot:")?).ok()?;
    let (g, i) = rest.split_once(':')?;
    let (g, i): (u32, u32) = (g.parse().ok()?, i.parse().ok()?);
    (g < ROTATION_GROUPS_COUNT && i < ROTATION_LISTS_COUNT).then_some((g, i))
}

pub struct Lists {
    client: u32,
    seeded: bool,
}

fn key(rng: &mut ChaCha8Rng) -> Vec<u8> {
    format!("list:{}", rng.gen_range(0..LIST_KEYS_COUNT)).into_bytes()
}

/// Short elements from a small pool (so LREM, LINSERT and LPOS hit), and
/// now and then a long one.
fn element(rng: &mut ChaCha8Rng) -> Vec<u8> {
    if rng.gen_bool(0.05) {
        let mut v = format!("long{}-", rng.gen_range(0..100)).into_bytes();
        v.resize(rng.gen_range(200..=900), b'y');
        v
    } else {
        format!("e{}", rng.gen_range(0..24)).into_bytes()
    }
}

fn index(rng: &mut ChaCha8Rng) -> Vec<u8> {
    rng.gen_range(-12i32..=12).to_string().into_bytes()
}

fn end(rng: &mut ChaCha8Rng) -> Vec<u8> {
    if rng.gen_bool(0.5) {
        b"LEFT".to_vec()
    } else {
        b"RIGHT".to_vec()
    }
}

impl Lists {
    pub fn new(client: u32) -> Lists {
        Lists {
            client,
            seeded: false,
        }
    }

    fn plain(&mut self, rng: &mut ChaCha8Rng) -> Request {
        let k = key(rng);
        match rng.gen_range(0..100) {
            0..=29 => {
                let name: &[u8] = if rng.gen_bool(0.5) {
                    b"LPUSH"
                } else {
                    b"RPUSH"
                };
                let mut r = vec![name.to_vec(), k];
                for _ in 0..rng.gen_range(1..=8) {
                    r.push(element(rng));
                }
                r
            }
            30..=41 => {
                let name: &[u8] = if rng.gen_bool(0.5) { b"LPOP" } else { b"RPOP" };
                let mut r = vec![name.to_vec(), k];
                if rng.gen_bool(0.4) {
                    r.push(rng.gen_range(0..=5u32).to_string().into_bytes());
                }
                r
            }
            42..=51 => vec![b"LRANGE".to_vec(), k, index(rng), index(rng)],
            52..=54 => vec![b"LRANGE".to_vec(), k, b"0".to_vec(), b"-1".to_vec()],
            55..=59 => {
                let keep = rng.gen_range(LIST_TRIM_KEEP_MIN..=4 * LIST_TRIM_KEEP_MIN);
                vec![
                    b"LTRIM".to_vec(),
                    k,
                    b"0".to_vec(),
                    keep.to_string().into_bytes(),
                ]
            }
            60..=66 => {
                let place: &[u8] = if rng.gen_bool(0.5) {
                    b"BEFORE"
                } else {
                    b"AFTER"
                };
                vec![
                    b"LINSERT".to_vec(),
                    k,
                    place.to_vec(),
                    element(rng),
                    element(rng),
                ]
            }
            67..=72 => vec![b"LREM".to_vec(), k, index(rng), element(rng)],
            73..=80 => vec![b"LINDEX".to_vec(), k, index(rng)],
            81..=87 => vec![b"LSET".to_vec(), k, index(rng), element(rng)],
            88..=93 => vec![b"LLEN".to_vec(), k],
            _ => vec![b"LPOS".to_vec(), k, element(rng)],
        }
    }

    fn seed(&mut self, batch: &mut Vec<Request>) {
        for g in 0..ROTATION_GROUPS_COUNT {
            let mut r = vec![b"RPUSH".to_vec(), rotation_key(g, 0)];
            for j in 0..ROTATION_SEED_ELEMENTS {
                r.push(format!("r{g}|c{}|{j}", self.client).into_bytes());
            }
            batch.push(r);
        }
        self.seeded = true;
    }

    fn rotation_pair(rng: &mut ChaCha8Rng) -> (Vec<u8>, Vec<u8>) {
        let g = rng.gen_range(0..ROTATION_GROUPS_COUNT);
        let src = rng.gen_range(0..ROTATION_LISTS_COUNT);
        // Mostly to another list; sometimes onto itself (a rotation).
        let dst = if rng.gen_bool(0.1) {
            src
        } else {
            rng.gen_range(0..ROTATION_LISTS_COUNT)
        };
        (rotation_key(g, src), rotation_key(g, dst))
    }

    fn moves(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        for _ in 0..rng.gen_range(1..=4) {
            let (src, dst) = Self::rotation_pair(rng);
            if rng.gen_bool(0.3) {
                batch.push(vec![b"RPOPLPUSH".to_vec(), src, dst]);
            } else {
                batch.push(vec![b"LMOVE".to_vec(), src, dst, end(rng), end(rng)]);
            }
        }
    }

    fn snapshot(rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        let g = rng.gen_range(0..ROTATION_GROUPS_COUNT);
        for i in 0..ROTATION_LISTS_COUNT {
            batch.push(vec![
                b"LRANGE".to_vec(),
                rotation_key(g, i),
                b"0".to_vec(),
                b"-1".to_vec(),
            ]);
        }
    }
}

impl Workload for Lists {
    fn kind(&self) -> WorkloadKind {
        WorkloadKind::Lists
    }

    fn next_batch(&mut self, rng: &mut ChaCha8Rng, batch: &mut Vec<Request>) {
        if !self.seeded {
            self.seed(batch);
            return;
        }
        match rng.gen_range(0..100) {
            0..=39 => {
                for _ in 0..rng.gen_range(1..=5) {
                    let r = self.plain(rng);
                    batch.push(r);
                }
            }
            40..=69 => self.moves(rng, batch),
            70..=79 => {
                // Alone in its batch: nothing waits behind it.
                let (src, dst) = Self::rotation_pair(rng);
                let ms = rng.gen_range(1..=ROTATION_BLMOVE_MS_MAX);
                let timeout = format!("0.{ms:03}").into_bytes();
                batch.push(vec![
                    b"BLMOVE".to_vec(),
                    src,
                    dst,
                    end(rng),
                    end(rng),
                    timeout,
                ]);
            }
            _ => Self::snapshot(rng, batch),
        }
    }

    fn think_ns(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        rng.gen_range(0..=LIST_THINK_NS_MAX)
    }
}
