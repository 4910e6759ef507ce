//! Redis 7.0's cardinality estimate (`hllCount`): Otmar Ertl's improved
//! estimator over the register histogram ("New cardinality estimation
//! algorithms for HyperLogLog sketches", arXiv:1702.01284), as
//! `hyperloglog.c` computes it, operation for operation, so that the
//! doubles round the same way.

use super::encoding::{Q_BITS, REGISTERS_COUNT};

/// `HLL_ALPHA_INF`: 0.5 / ln(2).
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// `hllSigma`.
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let z_prime = z;
        z += x * y;
        y += y;
        if z_prime == z {
            return z;
        }
    }
}

/// `hllTau`.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let z_prime = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if z_prime == z {
            return z / 3.0;
        }
    }
}

/// The estimate from the register histogram (`reghisto[v]`: how many
/// registers hold `v`).
pub(crate) fn cardinality(histo: &[u64; 64]) -> u64 {
    let m = REGISTERS_COUNT as f64;
    let q = Q_BITS as usize;
    let mut z = m * tau((m - histo[q + 1] as f64) / m);
    for j in (1..=q).rev() {
        z += histo[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histo[0] as f64 / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// The histogram of plain registers (PFCOUNT of several keys).
pub(crate) fn histogram_of(registers: &[u8; REGISTERS_COUNT]) -> [u64; 64] {
    let mut histo = [0u64; 64];
    for r in registers {
        histo[usize::from(*r & 63)] += 1;
    }
    histo
}
