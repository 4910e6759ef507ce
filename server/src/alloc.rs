//! A counting global allocator: the real server reports the heap bytes it
//! holds as INFO memory `used_memory`, the way Redis reports its
//! allocator's count (zmalloc with `malloc_usable_size`).
//!
//! The binary installs [`CountingAlloc`] as its global allocator and calls
//! [`mark_installed`]; libraries and tests that do not install it get `None`
//! from [`allocated_bytes`], and the engine falls back to its estimate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Usable bytes of every live allocation made through [`CountingAlloc`].
static ALLOCATED_BYTES: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting the usable size of each block (what
/// glibc really set aside, not just what was asked for).
pub struct CountingAlloc;

fn usable_bytes(ptr: *mut u8) -> usize {
    // SAFETY: `ptr` is a live block returned by the system allocator
    // (glibc malloc, which `System` uses on Linux).
    unsafe { libc::malloc_usable_size(ptr.cast()) }
}

// SAFETY: every method forwards to `System` unchanged; the counter is a
// side effect that never touches the blocks.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        if !ptr.is_null() {
            ALLOCATED_BYTES.fetch_add(usable_bytes(ptr), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        if !ptr.is_null() {
            ALLOCATED_BYTES.fetch_add(usable_bytes(ptr), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ALLOCATED_BYTES.fetch_sub(usable_bytes(ptr), Ordering::Relaxed);
        System.dealloc(ptr, layout);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = usable_bytes(ptr);
        let new_ptr = System.realloc(ptr, layout, new_size);
        if !new_ptr.is_null() {
            ALLOCATED_BYTES.fetch_sub(old, Ordering::Relaxed);
            ALLOCATED_BYTES.fetch_add(usable_bytes(new_ptr), Ordering::Relaxed);
        }
        new_ptr
    }
}

/// Called by a binary that installed [`CountingAlloc`] as `#[global_allocator]`.
pub fn mark_installed() {
    INSTALLED.store(true, Ordering::Relaxed);
}

/// Heap bytes in use, when the counting allocator is installed.
pub fn allocated_bytes() -> Option<u64> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| ALLOCATED_BYTES.load(Ordering::Relaxed) as u64)
}
