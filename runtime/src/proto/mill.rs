//! Millionaires' protocol `Π_MILL^{ℓ,m}` (CrypTFlow2 Algorithm 1, §3.1).
//!
//! Role `P0` holds `x`, role `P1` holds `y` (ℓ-bit unsigned integers); they
//! get boolean shares of `1{x < y}`. Each input is cut into `q = ⌈ℓ/m⌉`
//! digits, digit `j` covering bits `[j·m, j·m + w_j)` with `w_j = m` except the
//! top one, `w_{q−1} = r = ℓ − (q−1)·m` (the general case of §3.1). For every
//! digit one `(2^{w_j} 1)-OT` gives shares of `lt_j = 1{x_j < y_j}` and
//! `eq_j = 1{x_j = y_j}`; the digits are then combined in a tree with
//! equation (1): `lt = lt_hi ⊕ (lt_lo ∧ eq_hi)`, `eq = eq_lo ∧ eq_hi`. At each
//! level adjacent nodes are paired (node `2i` with `2i+1`, the lower one
//! first) and an odd top node moves up unchanged, so the tree has exactly
//! `⌈log q⌉` levels and `q − 1` combinations (the paper's "maximal perfect
//! subtrees", with the same counts).
//!
//! All three optimizations of §3.1.1 are implemented:
//! 1. the `lt` and `eq` OTs of a digit are one `(M 1)-OT_2` (merged leaf OTs);
//! 2. the two ANDs of a combination share `eq_hi` and use a correlated triple
//!    pair from one `(8 1)-OT_2` ([`super::and`]);
//! 3. the equalities of the lowest node are never computed: digit 0 uses a
//!    `(M 1)-OT_1`, and the combination containing digit 0 (one per level)
//!    needs a single AND, with regular triples two per `(16 1)-OT_2`.
//!
//! **Several comparisons against one `y`** (used by DReLU over `Z_n`,
//! Algorithm 4, and by division): with `k` comparisons per element, `P0`
//! holds `k` values `x_{·,c}` per `y`; the leaf OT of a digit carries the `k`
//! comparisons' bits at once (`(M 1)-OT_{2k}`), so the `2λ` of each leaf OT
//! is paid once per element instead of `k` times. `k ≤ 4`.
//!
//! # Cost (λ = 128, per element, `k = 1`)
//! `q = 1`: one `(R 1)-OT_1`, `2λ + R` bits, with `R = 2^r = 2^ℓ`. Otherwise
//! one `(M 1)-OT_1` (digit 0), `q − 2` `(M 1)-OT_2`, one `(R 1)-OT_2`,
//! `⌈log q⌉` regular ANDs (λ + 16 + 4 bits each) and `q − 1 − ⌈log q⌉`
//! correlated pairs (2λ + 16 + 6 bits each):
//!
//! `λ(4q − ⌈log q⌉ − 2) + M(2q − 3) + 2R + 22(q − 1) − 2⌈log q⌉` bits
//!
//! — exactly the formula of §3.1.2 (3844 bits for ℓ = 32, m = 4; 2930 for
//! m = 7), plus the OT layer's padding of each batch to a multiple of 8
//! instances and its one-time set-up. With `k` comparisons the OT payloads
//! and the AND terms scale by `k`, the `2λ` of the leaf OTs does not.
//! [`cost_bits`] gives the exact count.
//!
//! # Rounds
//! One round per distinct OT class `(N, bits)` among the leaf and triple OTs
//! (merged into one OT call per class; e.g. 3 for ℓ = 31, m = 4, where the middle
//! leaves share `(16, 2)` with the regular triples and the top leaf shares
//! `(8, 2)` with the correlated triples), then one per tree level after the
//! first (the first level's message of role `P0` follows its last OT answer
//! without waiting): at most `4 + ⌈log₂⌈ℓ/m⌉⌉`. For ℓ = 31 or 32 and m = 4
//! that is 5 rounds, the paper's count (Table 1). [`rounds`] gives the exact
//! number, pinned in the tests.

use super::and::{self, Job};
use super::bits::Bits;
use super::kk::KkBatch;
use super::{Ctx, ProtoError, Role, check};
use crate::crypto::Prg;
use crate::net::pack::mask;
use crate::ot::LAMBDA;

/// Largest number of comparisons per element ([`mill`]'s `k`).
pub const MAX_K: usize = 4;

/// The digit layout of ℓ-bit inputs at radix `m`: widths `w_j` of digits
/// `j = 0..q`, lowest first.
fn digit_widths(bits: u32, m: u32) -> Vec<u32> {
    let q = bits.div_ceil(m);
    (0..q).map(|j| m.min(bits - j * m)).collect()
}

/// `⌈log₂ q⌉`, the number of tree levels.
fn levels(q: usize) -> usize {
    q.next_power_of_two().trailing_zeros() as usize
}

/// A tree node: shares of `lt` and (except for the lowest node) `eq`, one
/// bit per element and comparison.
struct Node {
    lt: Bits,
    eq: Option<Bits>,
}

/// The OT classes `(N, bits per message)` of the leaves, lowest digit first.
fn leaf_classes(bits: u32, m: u32, k: usize) -> Vec<(usize, u32)> {
    digit_widths(bits, m)
        .iter()
        .enumerate()
        .map(|(j, &w)| (1usize << w, if j == 0 { k } else { 2 * k } as u32))
        .collect()
}

/// Millionaires' over a batch: role `P0` passes `n·k` values `x` (element
/// `e`'s comparisons at `e·k .. e·k + k`), role `P1` passes `n` values `y`;
/// both get shares of the `n·k` bits `1{x[e·k + c] < y[e]}` (same order).
/// Only the low `bits` bits of the inputs are used (`bits` in 0..=64; 0 gives
/// shares of 0 without communication). Radix `m = ctx.radix` in 1..=8, `k`
/// in 1..=[`MAX_K`]. Cost and rounds: see the [module documentation](self).
pub fn mill(ctx: &mut Ctx<'_>, bits: u32, k: usize, input: &[u64]) -> Result<Bits, ProtoError> {
    check(bits <= 64, || format!("millionaires' width {bits} > 64"))?;
    check((1..=MAX_K).contains(&k), || {
        format!("{k} comparisons per element not in 1..={MAX_K}")
    })?;
    check((1..=8).contains(&ctx.radix), || {
        format!("millionaires' radix {} not in 1..=8", ctx.radix)
    })?;
    let n = match ctx.role {
        Role::P0 => {
            check(input.len().is_multiple_of(k), || {
                format!("{} inputs is not a multiple of k = {k}", input.len())
            })?;
            input.len() / k
        }
        Role::P1 => input.len(),
    };
    let total = n * k;
    if bits == 0 || n == 0 {
        return Ok(Bits::zeros(total));
    }
    let m = ctx.radix;
    let widths = digit_widths(bits, m);
    let classes = leaf_classes(bits, m, k);
    let q = widths.len();
    let lv = levels(q);
    let mut prg = Prg::from_os()?;
    let mut batch = KkBatch::new(ctx.role);

    // Leaf OTs: P0 sends, for each digit value v of P1, its shares of
    // 1{x_j < v} and 1{x_j = v}; P1 chooses with its digit y_j.
    let mut leaves: Vec<Node> = Vec::with_capacity(q);
    let mut ids = Vec::with_capacity(q);
    let mut shift = 0u32;
    for (j, (&w, &(n_msgs, mbits))) in widths.iter().zip(&classes).enumerate() {
        let dmask = mask(w);
        match ctx.role {
            Role::P0 => {
                let lt = Bits::random(&mut prg, total);
                let eq = (j > 0).then(|| Bits::random(&mut prg, total));
                // Row x of the tables: 1{x < v} and 1{x = v} for v in 0..N.
                let lt_tab: Vec<u8> = (0..n_msgs * n_msgs)
                    .map(|t| u8::from(t / n_msgs < t % n_msgs))
                    .collect();
                let eq_tab: Vec<u8> = (0..n_msgs * n_msgs)
                    .map(|t| u8::from(t / n_msgs == t % n_msgs))
                    .collect();
                ids.push(batch.add_with(n_msgs, mbits, n, |msgs| {
                    for (e, row) in msgs.chunks_exact_mut(n_msgs).enumerate() {
                        for c in 0..k {
                            let i = e * k + c;
                            let x = ((input[i] >> shift) & dmask) as usize;
                            let x_row = x * n_msgs..(x + 1) * n_msgs;
                            let l0 = lt.bit(i) as u8;
                            for (b, &t) in row.iter_mut().zip(&lt_tab[x_row.clone()]) {
                                *b |= (t ^ l0) << c;
                            }
                            if let Some(eq) = &eq {
                                let e0 = eq.bit(i) as u8;
                                for (b, &t) in row.iter_mut().zip(&eq_tab[x_row.clone()]) {
                                    *b |= (t ^ e0) << (k + c);
                                }
                            }
                        }
                    }
                }));
                leaves.push(Node { lt, eq });
            }
            Role::P1 => {
                ids.push(batch.add_with(n_msgs, mbits, n, |choices| {
                    for (ch, &y) in choices.iter_mut().zip(input) {
                        *ch = ((y >> shift) & dmask) as u8;
                    }
                }));
            }
        }
        shift += w;
    }
    let pending = and::request(&mut prg, lv * total, (q - 1 - lv) * total, &mut batch);
    let out = batch.run(ctx)?;
    if ctx.role == Role::P1 {
        leaves = ids
            .iter()
            .enumerate()
            .map(|(j, &id)| {
                let o = out.get(id);
                Node {
                    lt: Bits::from_fn(total, |i| (o[i / k] >> (i % k)) & 1 == 1),
                    eq: (j > 0)
                        .then(|| Bits::from_fn(total, |i| (o[i / k] >> (k + i % k)) & 1 == 1)),
                }
            })
            .collect();
    }
    let mut triples = pending.finish(ctx.role, &out);

    // The tree: one exchange per level.
    let mut nodes = leaves;
    while nodes.len() > 1 {
        let mut jobs = Vec::with_capacity(nodes.len() / 2);
        for pair in nodes.chunks_exact(2) {
            let (lo, hi) = (&pair[0], &pair[1]);
            let eq_hi = hi
                .eq
                .as_ref()
                .expect("only the lowest node lacks eq, and it is never the upper one of a pair");
            jobs.push(match &lo.eq {
                None => Job::Reg {
                    x: &lo.lt,
                    y: eq_hi,
                    t: triples.take_regular(total),
                },
                Some(eq_lo) => Job::Cor {
                    x: &lo.lt,
                    x2: eq_lo,
                    y: eq_hi,
                    t: triples.take_correlated(total),
                },
            });
        }
        let outs = and::eval(ctx, jobs)?;
        let odd = (nodes.len() % 2 == 1).then(|| nodes.pop()).flatten();
        let mut next: Vec<Node> = outs
            .into_iter()
            .zip(nodes.chunks_exact(2))
            .map(|((z, z2), pair)| Node {
                lt: pair[1].lt.xor(&z),
                eq: z2,
            })
            .collect();
        next.extend(odd);
        nodes = next;
    }
    Ok(nodes.pop().map_or_else(|| Bits::zeros(total), |r| r.lt))
}

/// Exact bits on the wire (both directions, excluding the OT set-up) of
/// [`mill`] on `n` elements with `k` comparisons each, at radix `m`.
pub fn cost_bits(bits: u32, m: u32, k: usize, n: usize) -> u64 {
    if bits == 0 || n == 0 {
        return 0;
    }
    let total = n * k;
    let classes = leaf_classes(bits, m, k);
    let q = classes.len();
    let lv = levels(q);
    // Instances per KK class, in first-appearance order.
    let mut calls: Vec<((usize, u32), usize)> = Vec::new();
    let mut add = |c: (usize, u32), count: usize| {
        if count == 0 {
            return;
        }
        match calls.iter_mut().find(|(k, _)| *k == c) {
            Some((_, cnt)) => *cnt += count,
            None => calls.push((c, count)),
        }
    };
    for &c in &classes {
        add(c, n);
    }
    add((16, 2), (lv * total).div_ceil(2));
    add((8, 2), (q - 1 - lv) * total);
    let ot: u64 = calls
        .iter()
        .map(|&((nm, b), cnt)| kk_bits(nm, b, cnt))
        .sum();
    // AND openings: 2 bits per party per regular AND, 3 per correlated pair,
    // one exchange per level (each message rounded up to whole bytes).
    let mut and_bits = 0u64;
    let mut nodes = q;
    while nodes > 1 {
        // The pair holding the lowest node is a regular AND, the others
        // correlated pairs.
        let pairs = nodes / 2;
        let per_party = (2 + 3 * (pairs - 1)) * total;
        and_bits += 2 * 8 * per_party.div_ceil(8) as u64;
        nodes -= pairs;
    }
    ot + and_bits
}

/// Exact bits of one `(N 1)-OT_b` call on `count` instances: the receiver's
/// 2λ-bit rows for `8⌈count/8⌉` instances and the sender's `⌈count·N·b/8⌉`
/// bytes.
pub(crate) fn kk_bits(n_msgs: usize, bits: u32, count: usize) -> u64 {
    if count == 0 {
        return 0;
    }
    (2 * LAMBDA * count.next_multiple_of(8)) as u64
        + 8 * (count * n_msgs * bits as usize).div_ceil(8) as u64
}

/// Rounds of [`mill`] as counted by the receiving side (role `P1`, having
/// sent before, as inside any larger protocol): one per distinct OT class and
/// one per tree level after the first (role `P0` sends its first-level AND
/// message right after its last OT answer, so it travels with it).
pub fn rounds(bits: u32, m: u32, k: usize) -> u64 {
    if bits == 0 {
        return 0;
    }
    let mut classes = leaf_classes(bits, m, k);
    let q = classes.len();
    let lv = levels(q);
    if lv > 0 {
        classes.push((16, 2));
    }
    if q - 1 > lv {
        classes.push((8, 2));
    }
    classes.sort_unstable();
    classes.dedup();
    (classes.len() + lv.saturating_sub(1)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Stats;
    use crate::proto::testutil::{ELLS, RADICES, open_bits, prg, run2, run2_tcp};

    /// Inputs `(x, y)` with `k` comparisons per element: random, near-equal
    /// (long equal prefixes) and the extremes.
    fn inputs(seed: u128, bits: u32, k: usize, n: usize) -> (Vec<u64>, Vec<u64>) {
        let mut g = prg(seed);
        let m = mask(bits);
        let y: Vec<u64> = g.ring_elems(n, bits.max(1)).iter().map(|v| v & m).collect();
        let noise = g.u64s(n * k);
        let x: Vec<u64> = (0..n * k)
            .map(|i| {
                let (yi, r) = (y[i / k], noise[i]);
                match r % 6 {
                    0 => yi,
                    1 => yi.wrapping_add(1) & m,
                    2 => yi.wrapping_sub(1) & m,
                    3 => [0, m, 1, m >> 1][(r >> 8) as usize % 4],
                    _ => (r >> 3) & m,
                }
            })
            .collect();
        (x, y)
    }

    fn check(bits: u32, m: u32, k: usize, n: usize, seed: u128) {
        let (x, y) = inputs(seed, bits, k, n);
        let r = run2(m, |ctx| {
            let input = if ctx.role == Role::P0 { &x } else { &y };
            mill(ctx, bits, k, input)
        });
        let got = open_bits(&r.p0, &r.p1);
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, x[i] < y[i / k], "ℓ={bits} m={m} k={k} i={i}");
        }
    }

    #[test]
    fn equals_comparison_for_all_widths_and_radices() {
        for bits in ELLS {
            for m in RADICES {
                check(bits, m, 1, 10_000, (bits * 10 + m) as u128);
            }
        }
        check(0, 4, 1, 100, 1);
        check(5, 4, 1, 0, 1);
    }

    #[test]
    fn several_comparisons_against_one_input() {
        for (bits, m, k) in [(33, 4, 2), (8, 8, 3), (41, 7, 4), (64, 1, 2), (3, 2, 3)] {
            check(bits, m, k, 3000, 7);
        }
    }

    /// Measures one run after a warm-up that performs the OT set-ups.
    fn measured(bits: u32, m: u32, k: usize, n: usize) -> [Stats; 2] {
        let (x, y) = inputs(5, bits, k, n);
        let r = run2(m, |ctx| {
            let input = if ctx.role == Role::P0 { &x } else { &y };
            mill(
                ctx,
                bits,
                k,
                &input[..8 * if ctx.role == Role::P0 { k } else { 1 }],
            )?;
            let before = ctx.ch.stats();
            mill(ctx, bits, k, input)?;
            Ok(ctx.ch.stats() - before)
        });
        [r.p0, r.p1]
    }

    #[test]
    fn communication_matches_formula_and_paper() {
        for (bits, m, k, n) in [
            (32, 4, 1, 4096),
            (32, 7, 1, 1000),
            (31, 4, 1, 4096),
            (31, 7, 1, 1001),
            (37, 8, 1, 999),
            (12, 7, 1, 513),
            (8, 8, 3, 100),
            (64, 1, 1, 100),
            (5, 4, 2, 77),
        ] {
            let s = measured(bits, m, k, n);
            let total = 8 * (s[0].bytes_sent + s[1].bytes_sent);
            assert_eq!(
                total,
                cost_bits(bits, m, k, n),
                "ℓ={bits} m={m} k={k} n={n}"
            );
            assert_eq!(s[1].rounds, rounds(bits, m, k), "ℓ={bits} m={m} k={k}");
        }
        // The paper's §3.1.2 formula, exact per element when n is a multiple
        // of 8 (the OT layer pads batches to 8 instances).
        let paper = |bits: u32, m: u32| {
            let q = bits.div_ceil(m) as u64;
            let lq = levels(q as usize) as u64;
            let (mm, r) = (1u64 << m, 1u64 << (bits - (q as u32 - 1) * m));
            128 * (4 * q - lq - 2) + mm * (2 * q - 3) + 2 * r + 22 * (q - 1) - 2 * lq
        };
        let n = 1 << 16;
        assert_eq!(paper(32, 4), 3844);
        assert_eq!(paper(32, 7), 2930);
        for (bits, m) in [(32, 4), (32, 7), (31, 4), (31, 7), (31, 8), (12, 7)] {
            assert_eq!(
                cost_bits(bits, m, 1, n),
                paper(bits, m) * n as u64,
                "ℓ={bits} m={m}"
            );
        }
        // Exact totals for n = 4096 (pinned): 3844 and 3828 bits per element.
        assert_eq!(cost_bits(32, 4, 1, 4096), 3844 * 4096);
        assert_eq!(cost_bits(31, 4, 1, 4096), 3828 * 4096);
        // Rounds: one per OT class, ⌈log q⌉ − 1 AND levels.
        assert_eq!(rounds(32, 4, 1), 3 + 2);
        assert_eq!(rounds(31, 4, 1), 3 + 2);
        assert_eq!(rounds(32, 7, 1), 4 + 2);
        assert_eq!(rounds(8, 8, 3), 1);
    }

    #[test]
    fn over_tcp_loopback() {
        let n = 1 << 16;
        let (x, y) = inputs(9, 32, 1, n);
        let r = run2_tcp(4, |ctx| {
            let input = if ctx.role == Role::P0 { &x } else { &y };
            mill(ctx, 32, 1, input)
        });
        let got = open_bits(&r.p0, &r.p1);
        assert!(got.iter().enumerate().all(|(i, g)| *g == (x[i] < y[i])));
    }

    #[test]
    fn rejects_bad_arguments() {
        let r = run2(9, |ctx| Ok(mill(ctx, 8, 1, &[1, 2]).is_err()));
        assert!(r.p0 && r.p1);
        let r = run2(4, |ctx| {
            Ok(mill(ctx, 65, 1, &[1]).is_err() && mill(ctx, 8, 5, &[1]).is_err())
        });
        assert!(r.p0 && r.p1);
    }
}
