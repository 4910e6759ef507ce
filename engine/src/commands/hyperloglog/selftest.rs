//! PFSELFTEST: Redis's self-test of the HyperLogLog implementation
//! (`pfselftestCommand`), the same two tests at a smaller scale.
//!
//! 1. Register access: a dense register array filled with random values
//!    reads every value back, and setting one never disturbs a neighbour.
//! 2. Approximation: unique elements (`j ^ seed`, 8 bytes) are added to a
//!    dense array and to a sparse HLL at once; at every power of ten the
//!    sparse one must still be sparse while small, both must estimate the
//!    same cardinality, and the error must stay within six standard errors.
//!
//! Redis runs 1000 register cycles and 10,000,000 elements (about a second
//! of its one thread); this runs [`REGISTER_CYCLES`] and
//! [`ELEMENTS_MAX`], every step charged as work, so the command costs
//! milliseconds. The replies are Redis's: `+OK`, or its `TESTFAILED` errors.

use rand::RngCore;

use crate::cmd::Ctx;
use crate::types::hll::{self, REGISTERS};

/// Cycles of the register access test (Redis: 1000).
const REGISTER_CYCLES: usize = 8;
/// Elements of the approximation test (Redis: 10,000,000).
const ELEMENTS_MAX: u64 = 100_000;
/// Registers written and read back per work unit.
const REGISTERS_PER_UNIT: u64 = 64;

pub(super) fn pfselftest(ctx: &mut Ctx, _args: &mut [Vec<u8>]) {
    let result = registers_test(ctx).and_then(|()| approximation_test(ctx));
    match result {
        Ok(()) => ctx.ok(),
        Err(message) => ctx.error(&message),
    }
}

/// Test 1: random values in every register read back unchanged.
fn registers_test(ctx: &mut Ctx) -> Result<(), String> {
    let mut regs = vec![0u8; hll::DENSE_BYTES - hll::HDR_BYTES];
    let mut expected = vec![0u8; REGISTERS];
    for _ in 0..REGISTER_CYCLES {
        for (i, slot) in expected.iter_mut().enumerate() {
            let value = (ctx.server.rng.next_u32() & 63) as u8;
            *slot = value;
            hll::dense_set(&mut regs, i, value);
        }
        for (i, &value) in expected.iter().enumerate() {
            let read = hll::dense_get(&regs, i);
            if read != value {
                return Err(format!(
                    "TESTFAILED Register {i} should be {value} but is {read}"
                ));
            }
        }
        ctx.work(2 * REGISTERS as u64 / REGISTERS_PER_UNIT);
    }
    Ok(())
}

/// Test 2: dense and sparse agree, and the estimate is close.
fn approximation_test(ctx: &mut Ctx) -> Result<(), String> {
    let sparse_max_bytes = ctx.server.config.hll_sparse_max_bytes;
    let mut dense = hll::new_sparse();
    hll::make_dense(&mut dense).map_err(|_| corrupt())?;
    let mut sparse = hll::new_sparse();
    let relative_error = 1.04 / (REGISTERS as f64).sqrt();
    let seed = u64::from(ctx.server.rng.next_u32()) | u64::from(ctx.server.rng.next_u32()) << 32;
    let mut checkpoint = 1u64;
    for j in 1..=ELEMENTS_MAX {
        let element = (j ^ seed).to_le_bytes();
        let (_, dense_units) =
            hll::add(&mut dense, &element, sparse_max_bytes).map_err(|_| corrupt())?;
        let (_, sparse_units) =
            hll::add(&mut sparse, &element, sparse_max_bytes).map_err(|_| corrupt())?;
        ctx.work(dense_units + sparse_units);
        if j != checkpoint {
            continue;
        }
        if j < sparse_max_bytes as u64 / 2 && hll::validate(&sparse) != Ok(hll::Encoding::Sparse) {
            return Err("TESTFAILED sparse encoding not used".to_string());
        }
        ctx.work(hll::scan_units(&dense) + hll::scan_units(&sparse));
        let dense_card = hll::count(&dense).map_err(|_| corrupt())?;
        let sparse_card = hll::count(&sparse).map_err(|_| corrupt())?;
        if dense_card != sparse_card {
            return Err("TESTFAILED dense/sparse disagree".to_string());
        }
        let error = checkpoint.abs_diff(dense_card);
        let error_max = match j {
            // Collisions make a larger error likely at 10 (as Redis notes).
            10 => 1,
            _ => (relative_error * 6.0 * checkpoint as f64).ceil() as u64,
        };
        if error > error_max {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{error}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

/// The test's own values never fail to decode; if they did, the HLL code
/// is broken, which is what a self-test reports.
fn corrupt() -> String {
    "TESTFAILED the HLL code produced a value it cannot read".to_string()
}
