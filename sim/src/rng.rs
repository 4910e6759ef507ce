//! Seeded randomness, one independent stream per concern.
//!
//! Every stream is derived from the run seed and a stream name (and an index
//! for per-client streams), so adding a draw to one concern — a new network
//! knob, a new workload step — never reshuffles the draws of another. No
//! stream ever reads OS randomness.

use std::cell::RefCell;
use std::rc::Rc;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The streams a run uses. Each name is hashed into the stream's seed.
pub mod stream {
    pub const KNOBS: &str = "knobs";
    pub const NETWORK: &str = "network";
    pub const FAULTS: &str = "faults";
    pub const WORKLOAD: &str = "workload";
    pub const ENGINE: &str = "engine";
}

/// FNV-1a over bytes, 64-bit: fixed, portable, no random state.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64's finaliser: spreads a 64-bit value over all bits.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of stream `name` (instance `index`) of run `seed`.
pub fn stream_seed(seed: u64, name: &str, index: u64) -> u64 {
    mix64(seed ^ mix64(fnv1a64(name.as_bytes()) ^ mix64(index)))
}

/// A fresh RNG for stream `name` (instance `index`) of run `seed`.
pub fn stream_rng(seed: u64, name: &str, index: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(stream_seed(seed, name, index))
}

thread_local! {
    /// Where the choice streams (knobs, network, faults) read from while
    /// [`with_choices`] runs on this thread; `None`: their seeded ChaCha.
    ///
    /// Why a thread-local: the fuzz target `sim_schedule` lets libFuzzer's
    /// bytes make the simulator's schedule and fault choices, so that
    /// coverage guidance explores them; a scoped thread-local keeps that a
    /// three-line hook in the world instead of a parameter threaded through
    /// every constructor. A run is single-threaded, so the scope covers it
    /// exactly.
    static CHOICES: RefCell<Option<Rc<RefCell<ByteSource>>>> = const { RefCell::new(None) };
}

/// Runs `f` with every choice stream created inside it ([`choice_rng`])
/// reading `bytes` in order, one shared cursor: the knobs take the first
/// bytes, then network and fault draws interleave as the run makes them.
pub fn with_choices<T>(bytes: &[u8], f: impl FnOnce() -> T) -> T {
    let source = Rc::new(RefCell::new(ByteSource::new(bytes)));
    let previous = CHOICES.with(|c| c.replace(Some(source)));
    // Restored even if `f` panics (a checker failure in the fuzz target is
    // a panic; the replay test catches it and goes on on this thread).
    struct Restore(Option<Rc<RefCell<ByteSource>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CHOICES.with(|c| c.replace(previous));
        }
    }
    let _restore = Restore(previous);
    f()
}

/// The RNG of a choice stream (`stream::KNOBS`, `NETWORK`, `FAULTS`):
/// [`stream_rng`], or the bytes of an enclosing [`with_choices`].
pub fn choice_rng(seed: u64, name: &str, index: u64) -> ChoiceRng {
    match CHOICES.with(|c| c.borrow().clone()) {
        Some(source) => ChoiceRng::Bytes(source),
        None => ChoiceRng::Seeded(stream_rng(seed, name, index)),
    }
}

/// A choice stream's RNG: seeded (every run), or fuzzer bytes.
// The seeded variant is the common one: boxing it would add an indirection
// to every network and fault draw of every simulated run.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum ChoiceRng {
    Seeded(ChaCha8Rng),
    Bytes(Rc<RefCell<ByteSource>>),
}

impl RngCore for ChoiceRng {
    fn next_u32(&mut self) -> u32 {
        match self {
            ChoiceRng::Seeded(rng) => rng.next_u32(),
            ChoiceRng::Bytes(source) => source.borrow_mut().next_u32(),
        }
    }

    fn next_u64(&mut self) -> u64 {
        match self {
            ChoiceRng::Seeded(rng) => rng.next_u64(),
            ChoiceRng::Bytes(source) => source.borrow_mut().next_u64(),
        }
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for b in dest.iter_mut() {
            *b = self.next_u32() as u8;
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

/// Fuzzer bytes as random numbers: one byte per `u32` (its value spread
/// over all four bytes, so `gen_range` maps it across the whole range and a
/// one-byte mutation changes one choice), two per `u64`. Once the bytes run
/// out, a ChaCha stream seeded by their hash takes over: zeros would make
/// every "per mille" fault fire on every draw.
#[derive(Clone, Debug)]
pub struct ByteSource {
    bytes: Vec<u8>,
    offset: usize,
    rest: ChaCha8Rng,
}

impl ByteSource {
    pub fn new(bytes: &[u8]) -> ByteSource {
        ByteSource {
            bytes: bytes.to_vec(),
            offset: 0,
            rest: ChaCha8Rng::seed_from_u64(fnv1a64(bytes)),
        }
    }

    fn next_u32(&mut self) -> u32 {
        match self.bytes.get(self.offset) {
            Some(&b) => {
                self.offset += 1;
                u32::from(b).wrapping_mul(0x0101_0101)
            }
            None => self.rest.next_u32(),
        }
    }

    fn next_u64(&mut self) -> u64 {
        (u64::from(self.next_u32()) << 32) | u64::from(self.next_u32())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_name_and_index() {
        let a = stream_seed(7, stream::NETWORK, 0);
        assert_ne!(a, stream_seed(7, stream::FAULTS, 0));
        assert_ne!(a, stream_seed(7, stream::NETWORK, 1));
        assert_ne!(a, stream_seed(8, stream::NETWORK, 0));
        assert_eq!(a, stream_seed(7, stream::NETWORK, 0));
    }

    #[test]
    fn choices_read_bytes_then_a_seeded_stream() {
        use rand::Rng;
        let seeded = choice_rng(7, stream::FAULTS, 0).gen_range(0..1000u32);
        let (a, b, c) = with_choices(&[0, 128], || {
            let mut knobs = choice_rng(7, stream::KNOBS, 0);
            let mut faults = choice_rng(7, stream::FAULTS, 0);
            (
                knobs.gen_range(0..1000u32),
                faults.gen_range(0..1000u32),
                faults.next_u32(),
            )
        });
        assert_eq!((a, b), (0, 501));
        assert_eq!(c, ChaCha8Rng::seed_from_u64(fnv1a64(&[0, 128])).next_u32());
        // Outside the scope, the seeded stream again.
        assert_eq!(
            choice_rng(7, stream::FAULTS, 0).gen_range(0..1000u32),
            seeded
        );
    }
}
