//! Millionaires' protocol `Π_MILL^{ℓ,m}` (CrypTFlow2 Algorithm 1, §3.1).
//!
//! Inputs of ℓ bits are cut into `q = ⌈ℓ/m⌉` digits; one KK call (role `P1` receiving)
//! carries every leaf OT and the OTs of the AND triples; the digits are then combined in
//! a tree of `⌈log₂ q⌉` levels, each level one exchange of AND openings (role `P0`
//! first, its first-level message right after its OT answer). With `k` comparisons per
//! element the leaf OTs carry the `k` bits at once.
//!
//! Per element (`k = 1`, λ = 128), `λ(4q − ⌈log q⌉ − 2) + M(2q − 3) + 2R + 22(q − 1) −
//! 2⌈log q⌉` bits (`M = 2^m`, `R = 2^r` for the top digit of `r` bits) — exactly §3.1.2
//! (3844 bits for ℓ = 32, m = 4) — plus the padding of the batch to 8 instances and of
//! each message to whole bytes. Rounds (role `P1`): `max(1, ⌈log₂ q⌉)`.

use super::ot;
use super::{Role, Transcript, bytes_of};
use crate::params::mill::{leaf_classes, levels};
use crate::params::ot::KkClass;

/// The leaf classes (in call order) of one millionaires' on `n` elements with `k`
/// comparisons each, and its bit triples `(regular, correlated pairs)`: one regular
/// AND per tree level and a correlated pair per other combination, `n·k` each.
pub fn calls(bits: u32, m: u32, k: usize, n: usize) -> (Vec<KkClass>, (usize, usize)) {
    if bits == 0 || n == 0 {
        return (Vec::new(), (0, 0));
    }
    let total = n * k;
    let leaves: Vec<KkClass> = leaf_classes(bits, m, k)
        .into_iter()
        .map(|(n_msgs, bits)| KkClass {
            n_msgs,
            bits,
            count: n,
        })
        .collect();
    let (q, lv) = (leaves.len(), levels(leaves.len()));
    (leaves, (lv * total, (q - 1 - lv) * total))
}

/// Bits of each party's AND openings per tree level (before byte rounding): 2 per
/// regular AND (the pair holding the lowest node) and 3 per correlated pair.
pub fn and_level_bits(bits: u32, m: u32, k: usize, n: usize) -> Vec<u64> {
    if bits == 0 || n == 0 {
        return Vec::new();
    }
    let total = (n * k) as u64;
    let mut nodes = bits.div_ceil(m) as usize;
    let mut v = Vec::new();
    while nodes > 1 {
        let pairs = (nodes / 2) as u64;
        v.push((2 + 3 * (pairs - 1)) * total);
        nodes -= nodes / 2;
    }
    v
}

/// One exchange: role `P0` sends `bits` bits, then role `P1` answers with as many.
pub fn exchange(bits: u64) -> Transcript {
    Transcript::new()
        .send(Role::P0, bytes_of(bits))
        .send(Role::P1, bytes_of(bits))
}

/// Several independent millionaires' `(bits, k, n)` in one call: one KK call for all
/// their leaves and triples (on the silent engine the triples' random OTs follow it,
/// spec by spec), then one exchange per tree level holding every instance's openings
/// of that level.
pub fn mill_multi(m: u32, specs: &[(u32, usize, usize)]) -> Transcript {
    let (mut cls, mut triples) = (Vec::new(), Vec::new());
    for &(bits, k, n) in specs {
        let (leaves, t) = calls(bits, m, k, n);
        cls.extend(leaves);
        triples.push(t);
    }
    let mut per_level: Vec<u64> = Vec::new();
    for &(bits, k, n) in specs {
        for (i, b) in and_level_bits(bits, m, k, n).into_iter().enumerate() {
            if per_level.len() <= i {
                per_level.push(0);
            }
            per_level[i] += b;
        }
    }
    per_level
        .into_iter()
        .fold(ot::kk_call(Role::P1, &cls, &triples), |t, b| {
            t.then(exchange(b))
        })
}

/// `Π_MILL^{bits,m}` on `n` elements with `k` comparisons each.
pub fn mill(bits: u32, m: u32, k: usize, n: usize) -> Transcript {
    mill_multi(m, &[(bits, k, n)])
}

/// One `(N 1)-OT_b` call on `count` instances, role `P1` receiving.
pub fn kk_call(n_msgs: usize, bits: u32, count: usize) -> Transcript {
    let class = KkClass {
        n_msgs,
        bits,
        count,
    };
    ot::kk_call(Role::P1, &[class], &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §3.1.2: 3844 bits per element for ℓ = 32, m = 4 and 2930 for m = 7 (n a multiple
    /// of 8 and large enough that byte rounding vanishes).
    #[test]
    fn paper_formula() {
        let n = 1 << 12;
        assert_eq!(mill(32, 4, 1, n).bits(), 3844 * n as u64);
        assert_eq!(mill(32, 7, 1, n).bits(), 2930 * n as u64);
        assert_eq!(mill(31, 4, 1, n).rounds(Role::P1), 3);
        assert_eq!(mill(3, 4, 1, n).rounds(Role::P1), 1);
    }
}
