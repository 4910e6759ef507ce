//! Consumer-group writes build the commands they propagate (one XCLAIM per
//! entry delivered or claimed) only while writes propagate, checked by
//! counting the heap allocations the engine makes while it handles the
//! request, with a counting global allocator of this test binary's own.
//!
//! Building them regardless cost a dozen allocations per entry, all freed
//! together at the handler's end: work thrown away, and a backlog of freed
//! chunks that glibc sorts on a later allocation, which the cost audit
//! billed to the next command (1.3 ms for an XACK of one ID after an
//! XREADGROUP of 65,536 entries). Counting allocations, not time, keeps
//! the test exact on any machine.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use seedkv_engine::resp::encode::encode_request;
use seedkv_engine::testing::TestEngine;
use seedkv_engine::ClientId;

thread_local! {
    /// Allocations (and reallocations) made by this thread so far.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// The system allocator, counting the calls that take memory.
struct Counting;

// SAFETY: every method forwards to `System` unchanged; the count is a
// thread-local side effect that never touches the blocks.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Entries in the stream; the commands below deliver or claim them all.
const ENTRIES: usize = 2_000;
/// Allocations per entry a command may make while nothing propagates (it
/// makes about 1.5: the pending entry's owner name, the PEL's tree nodes,
/// the reply's growth). Building an XCLAIM per entry costs 15 more.
const ALLOCATIONS_PER_ENTRY_MAX: usize = 4;
/// Allocations per entry while propagating: the XCLAIMs are built then.
const PROPAGATING_ALLOCATIONS_PER_ENTRY_MIN: usize = 10;

/// Allocations the engine made while handling `args` (its parse, its
/// handler, its reply); the output is then taken, uncounted.
fn allocations_during(t: &mut TestEngine, client: ClientId, args: &[&str]) -> usize {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let request = encode_request(&args);
    let before = allocations();
    t.engine.handle_input(t.now, client, &request);
    let made = allocations() - before;
    while t.engine.poll_event().is_some() {}
    while let Some(id) = t.engine.poll_transmit() {
        let n = t.engine.pending_output(id).len();
        t.engine.consume_output(id, n);
    }
    made as usize
}

/// A stream `s` of [`ENTRIES`] entries, with group `g` created at its start.
fn stream_with_group(propagating: bool) -> (TestEngine, ClientId) {
    let mut t = TestEngine::new();
    t.engine.propagation_mut().set_enabled(propagating);
    let c = t.connect();
    for i in 1..=ENTRIES {
        let id = format!("{i}-1");
        allocations_during(&mut t, c, &["XADD", "s", &id, "f", "v"]);
    }
    allocations_during(&mut t, c, &["XGROUP", "CREATE", "s", "g", "0"]);
    (t, c)
}

/// The allocations of XREADGROUP delivering every entry, then XAUTOCLAIM
/// and XCLAIM moving them all to other consumers, per entry.
fn per_entry_allocations(propagating: bool) -> [usize; 3] {
    let (mut t, c) = stream_with_group(propagating);
    let count = ENTRIES.to_string();
    let read = ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"];
    let read = allocations_during(&mut t, c, &read);
    let autoclaim = ["XAUTOCLAIM", "s", "g", "c2", "0", "0-0", "COUNT", &count];
    let autoclaim = allocations_during(&mut t, c, &autoclaim);
    let ids: Vec<String> = (1..=ENTRIES).map(|i| format!("{i}-1")).collect();
    let mut claim = vec!["XCLAIM", "s", "g", "c3", "0"];
    claim.extend(ids.iter().map(String::as_str));
    claim.push("JUSTID");
    let claim = allocations_during(&mut t, c, &claim);
    if propagating {
        // Every entry was propagated three times (an XCLAIM each).
        let stream = t.engine.propagation_mut().take();
        let xclaims = stream.windows(8).filter(|w| w == b"\r\nXCLAIM").count();
        assert_eq!(xclaims, 3 * ENTRIES);
    }
    [read, autoclaim, claim].map(|n| n / ENTRIES)
}

#[test]
fn group_writes_build_no_propagation_while_it_is_off() {
    let [read, autoclaim, claim] = per_entry_allocations(false);
    for (name, per_entry) in [
        ("XREADGROUP", read),
        ("XAUTOCLAIM", autoclaim),
        ("XCLAIM", claim),
    ] {
        assert!(
            per_entry <= ALLOCATIONS_PER_ENTRY_MAX,
            "{name} made {per_entry} allocations per entry with propagation off"
        );
    }
}

/// The counting sees the XCLAIMs when they are built: the test above
/// would catch them built again while nothing propagates.
#[test]
fn group_writes_build_their_xclaims_while_propagating() {
    let [read, autoclaim, claim] = per_entry_allocations(true);
    for (name, per_entry) in [
        ("XREADGROUP", read),
        ("XAUTOCLAIM", autoclaim),
        ("XCLAIM", claim),
    ] {
        assert!(
            per_entry >= PROPAGATING_ALLOCATIONS_PER_ENTRY_MIN,
            "{name} made only {per_entry} allocations per entry while propagating"
        );
    }
}
