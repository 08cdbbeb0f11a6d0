//! `Maxpool_d` and `Argmax_d` (CrypTFlow2 §5.2.2), reduced in a tree, over
//! any [`Modulus`] (`Z_{2^ℓ}`, or an odd `Z_n` for SCI_HE).
//!
//! The paper folds a window of `d` elements in `d − 1` sequential steps, each
//! a `DReLU` of a difference and a multiplexer. Here adjacent candidates of
//! every window are compared pairwise, all windows and pairs of a level in
//! one batch, and an odd last candidate moves up unchanged: `⌈log₂ d⌉`
//! levels, `d − 1` comparisons per window (the same number). The result and
//! the tie-break are those of the reference interpreter: windows list their
//! elements in row-major order, and a pair `(L, R)` (L holding the lower
//! positions) keeps `R` only if `R > L` strictly, so the first maximum wins
//! in every subtree and hence overall.
//!
//! # One comparison
//! `gt = 1{R > L}` for the signed views of `L`, `R` (elements of `Z_n`;
//! `n = 2^ℓ` or odd). Let `s_W = 1{L − R < 0}` (the sign of the signed view
//! of `L − R mod n`) from one [`sign::negative`] (`MSB` for `2^ℓ`, Algorithm
//! 2; `1 ⊕ DReLU^{ring,n}`, Algorithm 4, for odd `n`). If the true difference
//! `L − R` lies in the signed range (`[−2^{ℓ−1}, 2^{ℓ−1})`, or `|L − R| ≤ (n −
//! 1)/2`), `gt = s_W`. That always holds when the signs `s_L`, `s_R` agree;
//! when they differ, `R > L` iff `L` is negative, whatever `s_W`:
//!
//! `gt = s_W ⊕ ((s_L ⊕ s_R) ∧ (s_L ⊕ s_W))`
//!
//! — one AND, exact on every input. The signs of the inputs come from one
//! sign test per input element (the [`Compare::Exact`] mode); each
//! comparison's multiplexer then carries the sign along with the value (a
//! field in `Z_2`, `s_new = s_L ⊕ gt·(s_L ⊕ s_R)`). If the inputs' signed
//! views are known to differ by at most `2^{ℓ−1} − 1` (resp. `(n − 1)/2`) —
//! e.g. all non-negative, as after a ReLU, or all in `(−n/4, n/4)` — no
//! difference leaves the signed range and [`Compare::Narrow`] skips the signs
//! and the AND: the paper's protocol (§5.2.2, over `Z_n` with `DReLU^{ring,n}`
//! of the differences).
//!
//! The winner is `L + gt·(R − L)`: one multiplexer ([`mux::mux_fields`])
//! whose fields are the value difference (mod `n`), for ArgMax the index
//! difference (mod `n`), and in exact mode the sign difference (mod 2).
//! ArgMax indices start as public positions (held by role `P0`).
//!
//! # Cost
//! Per comparison: a sign test + a multiplexer of `2λ + 2Σw` bits (Σw = η,
//! 2η, η + 1 or 2η + 1, `η = ⌈log₂ n⌉`) and, in exact mode, one AND (λ + 16 +
//! 4 bits, the triples of all levels generated up front); in exact mode also
//! one sign test per input element. [`cost_bits`] is exact.
//!
//! # Rounds (role `P1`)
//! Per level: the sign test, the multiplexer's, and in exact mode one for
//! the AND (over `Z_{2^ℓ}`, when the sign test's millionaires' has tree
//! levels); plus, in exact mode, one sign test and one triple-generation
//! round up front.

use std::ops::Range;

use super::Modulus;
use super::and::{self, Job};
use super::bits::Bits;
use super::{Ctx, ProtoError, Role, check, mux, sign};
use sci_ir::Pool2d;
use sci_ir::cost;

/// How comparisons treat overflow of the difference of two inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compare {
    /// Exact signed comparison of any elements (tracks signs).
    Exact,
    /// The inputs' signed views differ by at most `2^{ℓ−1} − 1` (resp. `(n −
    /// 1)/2`; e.g. all ≥ 0), so the sign of `L − R` is the comparison. Wrong
    /// results otherwise.
    Narrow,
}

/// The windows of a reduction: for each output, the positions of its inputs
/// in order (the first maximum wins).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Windows {
    offsets: Vec<usize>,
    indices: Vec<usize>,
}

impl Windows {
    /// Windows `indices[offsets[i]..offsets[i+1]]`; `offsets` starts at 0,
    /// ends at `indices.len()`, and every window is non-empty.
    pub fn new(offsets: Vec<usize>, indices: Vec<usize>) -> Result<Windows, ProtoError> {
        check(
            offsets.first() == Some(&0)
                && offsets.last() == Some(&indices.len())
                && offsets.windows(2).all(|w| w[0] < w[1]),
            || {
                "window offsets must start at 0, increase strictly and end at the index count"
                    .into()
            },
        )?;
        Ok(Windows { offsets, indices })
    }

    /// The windows of a 2-D pooling of an `[n, c, h, w]` tensor (row-major
    /// within each window, padding skipped), outputs in `[n, c, oh, ow]`
    /// order, as in [`sci_ir::Op::MaxPool`].
    pub fn pool2d(shape: [usize; 4], pool: &Pool2d) -> Result<Windows, ProtoError> {
        let [n, c, h, w] = shape;
        let [oh, ow] = pool
            .output([h, w])
            .map_err(|e| ProtoError::InvalidArgument(format!("pooling geometry: {e}")))?;
        let mut offsets = vec![0];
        let mut indices = Vec::new();
        for plane in 0..n * c {
            for oy in 0..oh {
                for ox in 0..ow {
                    let win = pool.window([oy, ox], [h, w]);
                    for iy in win.rows {
                        indices.extend(win.cols.clone().map(|ix| (plane * h + iy) * w + ix));
                    }
                    offsets.push(indices.len());
                }
            }
        }
        Windows::new(offsets, indices)
    }

    /// The two passes of the separable form `sep` of a 2-D max pooling of an `[n, c, h,
    /// w]` tensor ([`sci_ir::params::pool::separable`]): the columns pass over the input
    /// (outputs `[plane, row, ox]`), then the rows pass over the columns pass' output
    /// (outputs `[n, c, oh, ow]`, as [`Windows::pool2d`]'s).
    pub fn separable(
        shape: [usize; 4],
        sep: &sci_ir::params::pool::SeparablePool,
    ) -> Result<(Windows, Windows), ProtoError> {
        let [n, c, h, w] = shape;
        let (nr, ow) = (sep.rows.len(), sep.cols.len());
        let windows = |lists: &mut dyn Iterator<Item = Vec<usize>>| {
            let (mut offsets, mut indices) = (vec![0], Vec::new());
            for l in lists {
                indices.extend(l);
                offsets.push(indices.len());
            }
            Windows::new(offsets, indices)
        };
        let cols = windows(&mut (0..n * c).flat_map(|plane| {
            sep.rows.iter().flat_map(move |&iy| {
                sep.cols
                    .iter()
                    .map(move |cs| cs.clone().map(|ix| (plane * h + iy) * w + ix).collect())
            })
        }))?;
        let rows = windows(&mut (0..n * c).flat_map(|plane| {
            sep.row_windows.iter().flat_map(move |rs| {
                (0..ow).map(move |ox| rs.clone().map(|ri| (plane * nr + ri) * ow + ox).collect())
            })
        }))?;
        Ok((cols, rows))
    }

    /// The lines along `axis` of a tensor of shape `shape` (outputs in the
    /// order of the shape without that axis), as in [`sci_ir::Op::ArgMax`].
    pub fn axis(shape: &[usize], axis: usize) -> Result<Windows, ProtoError> {
        check(axis < shape.len(), || {
            format!("axis {axis} of a rank-{} tensor", shape.len())
        })?;
        let outer: usize = shape[..axis].iter().product();
        let len = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let mut offsets = vec![0];
        let mut indices = Vec::with_capacity(outer * len * inner);
        for o in 0..outer {
            for i in 0..inner {
                indices.extend((0..len).map(|j| (o * len + j) * inner + i));
                offsets.push(indices.len());
            }
        }
        Windows::new(offsets, indices)
    }

    /// Number of windows (outputs).
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no windows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The input positions of window `i` (empty if `i ≥ len`).
    pub fn get(&self, i: usize) -> &[usize] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.indices[a..b],
            _ => &[],
        }
    }

    /// The largest input position plus one (0 if there are no windows).
    pub fn input_len(&self) -> usize {
        self.indices.iter().max().map_or(0, |m| m + 1)
    }

    /// Windows `range` only (`range` within `0..len`).
    pub(crate) fn slice(&self, range: Range<usize>) -> Windows {
        let (a, b) = (self.offsets[range.start], self.offsets[range.end]);
        Windows {
            offsets: self.offsets[range.start..=range.end]
                .iter()
                .map(|o| o - a)
                .collect(),
            indices: self.indices[a..b].to_vec(),
        }
    }

    /// Window lengths.
    pub(crate) fn lens(&self) -> Vec<usize> {
        self.offsets.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

/// The candidates of one level: flat arrays, window `i` owning `lens[i]`
/// consecutive entries.
struct Level {
    vals: Vec<u64>,
    idx: Vec<u64>,
    signs: Option<Bits>,
    lens: Vec<usize>,
}

/// Field moduli of the multiplexer: value, index (ArgMax), sign (exact)
/// ([`sci_ir::params::pool::fields`]).
fn fields(md: Modulus, index: bool, exact: bool) -> Vec<Modulus> {
    sci_ir::params::pool::fields(md.into(), index, exact)
        .into_iter()
        .map(Modulus::from)
        .collect()
}

/// The reduction: maximum values and (if `index`) the positions of the first
/// maximum within each window. `signs`: shares of `MSB(x)` for
/// [`Compare::Exact`], `None` for [`Compare::Narrow`].
fn reduce(
    ctx: &mut Ctx<'_>,
    md: Modulus,
    x: &[u64],
    signs: Option<&Bits>,
    windows: &Windows,
    index: bool,
) -> Result<(Vec<u64>, Vec<u64>), ProtoError> {
    check(windows.input_len() <= x.len(), || {
        format!(
            "windows reach position {} of {} inputs",
            windows.input_len(),
            x.len()
        )
    })?;
    if let Some(s) = signs {
        check(s.len() == x.len(), || "one sign per input".into())?;
    }
    check(x.iter().all(|&v| u128::from(v) < md.value()), || {
        format!("shares must be reduced mod {md}")
    })?;
    let exact = signs.is_some();
    let widths = fields(md, index, exact);
    let nf = widths.len();
    let p0 = ctx.role == Role::P0;
    let mut lv = Level {
        vals: windows.indices.iter().map(|&i| x[i]).collect(),
        idx: if index {
            windows
                .lens()
                .iter()
                .flat_map(|&l| (0..l as u64).map(move |j| if p0 { md.reduce(j) } else { 0 }))
                .collect()
        } else {
            Vec::new()
        },
        signs: signs.map(|s| Bits::from_fn(windows.indices.len(), |k| s.get(windows.indices[k]))),
        lens: windows.lens(),
    };
    let comparisons: usize = lv.lens.iter().map(|l| l - 1).sum();
    let mut triples = if exact {
        Some(and::generate(ctx, comparisons, 0)?)
    } else {
        None
    };
    while lv.lens.iter().any(|&l| l > 1) {
        // Pairs (L, R) of flat positions, and where each next candidate
        // comes from: a pair or a pass-through.
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut next_src: Vec<Result<usize, usize>> = Vec::new();
        let mut next_lens = Vec::with_capacity(lv.lens.len());
        let mut start = 0;
        for &l in &lv.lens {
            for p in 0..l / 2 {
                next_src.push(Ok(pairs.len()));
                pairs.push((start + 2 * p, start + 2 * p + 1));
            }
            if l % 2 == 1 {
                next_src.push(Err(start + l - 1));
            }
            next_lens.push(l.div_ceil(2));
            start += l;
        }
        let np = pairs.len();
        let diff: Vec<u64> = pairs
            .iter()
            .map(|&(l, r)| md.sub(lv.vals[l], lv.vals[r]))
            .collect();
        let mut gt = sign::negative(ctx, md, &diff)?;
        if let (Some(s), Some(t)) = (&lv.signs, triples.as_mut()) {
            // gt = s_W ⊕ ((s_L ⊕ s_R) ∧ (s_L ⊕ s_W)).
            let u = Bits::from_fn(np, |k| s.get(pairs[k].0) ^ s.get(pairs[k].1));
            let v = Bits::from_fn(np, |k| s.get(pairs[k].0) ^ gt.get(k));
            let job = Job::Reg {
                x: &u,
                y: &v,
                t: t.take_regular(np),
            };
            let fix = and::eval(ctx, vec![job])?;
            if let Some((z, _)) = fix.first() {
                gt.xor_assign(z);
            }
        }
        // Multiplex R − L (value, index, sign) on gt.
        let mut payload = Vec::with_capacity(np * nf);
        for &(l, r) in &pairs {
            payload.push(md.sub(lv.vals[r], lv.vals[l]));
            if index {
                payload.push(md.sub(lv.idx[r], lv.idx[l]));
            }
            if let Some(s) = &lv.signs {
                payload.push(s.bit(l) ^ s.bit(r));
            }
        }
        let chosen = mux::mux_fields(ctx, &widths, &payload, &gt)?;
        let pick = |src: &Result<usize, usize>, f: usize, old: &dyn Fn(usize) -> u64| match *src {
            Ok(p) => widths[f].add(old(pairs[p].0), chosen[p * nf + f]),
            Err(k) => old(k),
        };
        let vals = next_src
            .iter()
            .map(|s| pick(s, 0, &|k| lv.vals[k]))
            .collect();
        let idx = if index {
            next_src
                .iter()
                .map(|s| pick(s, 1, &|k| lv.idx[k]))
                .collect()
        } else {
            Vec::new()
        };
        let signs = lv.signs.as_ref().map(|sg| {
            let bits: Vec<u64> = next_src
                .iter()
                .map(|s| pick(s, nf - 1, &|k| sg.bit(k)))
                .collect();
            Bits::from_fn(bits.len(), |k| bits[k] == 1)
        });
        lv = Level {
            vals,
            idx,
            signs,
            lens: next_lens,
        };
    }
    Ok((lv.vals, lv.idx))
}

/// Shares of the maximum of each window (first maximum, signed views) for
/// shares `x` mod `md` (`Z_{2^ℓ}` for an ℓ given as `u32`). Cost and rounds:
/// see the [module documentation](self).
pub fn maxpool(
    ctx: &mut Ctx<'_>,
    md: impl Into<Modulus>,
    x: &[u64],
    windows: &Windows,
    cmp: Compare,
) -> Result<Vec<u64>, ProtoError> {
    let md = md.into().check()?;
    let signs = signs(ctx, md, x, cmp)?;
    Ok(reduce(ctx, md, x, signs.as_ref(), windows, false)?.0)
}

/// Shares of the position (within its window, as an element mod `md`) of
/// the first maximum of each window.
pub fn argmax(
    ctx: &mut Ctx<'_>,
    md: impl Into<Modulus>,
    x: &[u64],
    windows: &Windows,
    cmp: Compare,
) -> Result<Vec<u64>, ProtoError> {
    let md = md.into().check()?;
    let signs = signs(ctx, md, x, cmp)?;
    Ok(reduce(ctx, md, x, signs.as_ref(), windows, true)?.1)
}

/// Shares of the signs of the inputs in exact mode.
fn signs(
    ctx: &mut Ctx<'_>,
    md: Modulus,
    x: &[u64],
    cmp: Compare,
) -> Result<Option<Bits>, ProtoError> {
    Ok(match cmp {
        Compare::Exact => Some(sign::negative(ctx, md, x)?),
        Compare::Narrow => None,
    })
}

/// [`maxpool`] / [`argmax`] with the signs of `x` computed beforehand (for
/// splitting the windows over lanes): `signs` are shares of `1{x < 0}`
/// ([`sign::negative`]) for [`Compare::Exact`], `None` for
/// [`Compare::Narrow`]. Returns the values and (if `index`) the positions.
pub fn reduce_windows(
    ctx: &mut Ctx<'_>,
    md: impl Into<Modulus>,
    x: &[u64],
    signs: Option<&Bits>,
    windows: &Windows,
    index: bool,
) -> Result<(Vec<u64>, Vec<u64>), ProtoError> {
    reduce(ctx, md.into().check()?, x, signs, windows, index)
}

/// Rounds (role `P1`) of [`maxpool`] or [`argmax`] mod `md` (ℓ ≥ 2 for
/// `2^ℓ`): `⌈log₂ d⌉` levels for the largest window size `d`, each a sign
/// test and a multiplexer (and in exact mode the AND, a round of its own
/// when the sign test ends with role `P1` sending: over `Z_{2^ℓ}` when its
/// millionaires' has tree levels; over `Z_n` it ends with an OT answered by
/// role `P0`, which the AND opening follows), plus in exact mode the signs'
/// test and the triple generation ([`sci_ir::cost::pool::maxpool`]).
pub fn rounds(md: impl Into<Modulus>, m: u32, windows: &Windows, cmp: Compare) -> u64 {
    let (exact, lens) = (cmp == Compare::Exact, windows.lens());
    let n_in = windows.input_len();
    cost::pool::maxpool(md.into().into(), m, n_in, &lens, exact, false).rounds(Role::P1)
}

/// Exact bits on the wire of [`maxpool`] (`index = false`) or [`argmax`] mod
/// `md` on `n_in` inputs and `windows` at radix `m`.
pub fn cost_bits(
    md: impl Into<Modulus>,
    m: u32,
    n_in: usize,
    windows: &Windows,
    cmp: Compare,
    index: bool,
) -> u64 {
    let (exact, lens) = (cmp == Compare::Exact, windows.lens());
    cost::pool::maxpool(md.into().into(), m, n_in, &lens, exact, index).bits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::mask;
    use crate::proto::testutil;
    use crate::proto::testutil::{
        ELLS, FIELDS, measured, open, pin, prg, run2, run2_tcp, share, values_with_edges,
    };
    use proptest::prelude::*;
    use sci_ir::Op;

    /// The reference interpreter on one op over a tensor `x` mod `md`.
    fn reference(
        md: impl Into<Modulus>,
        shape: &[usize],
        x: &[u64],
        op: impl Fn(sci_ir::ValueId) -> Op,
    ) -> Vec<u64> {
        testutil::reference(md, &[(x, shape, sci_ir::Owner::Client)], |v| op(v[0])).0
    }

    /// Runs pooling or argmax securely mod `md` and returns the opened result.
    fn secure(
        md: impl Into<Modulus>,
        x: &[u64],
        w: &Windows,
        cmp: Compare,
        index: bool,
        m: u32,
    ) -> Vec<u64> {
        let md = md.into();
        let (x0, x1) = share(&mut prg(11), x, md);
        let r = run2(m, |ctx| {
            let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
            if index {
                argmax(ctx, md, x, w, cmp)
            } else {
                maxpool(ctx, md, x, w, cmp)
            }
        });
        open(&r.p0, &r.p1, md)
    }

    /// Random values; with `narrow`, non-negative ones; a few windows' worth
    /// of ties and extremes.
    fn values(ell: u32, n: usize, narrow: bool, seed: u128) -> Vec<u64> {
        let mut g = prg(seed);
        let top = if narrow { ell - 1 } else { ell };
        let half = 1u64 << (ell - 1);
        (0..n)
            .map(|i| {
                let r = g.next_block().lo();
                match (i / 16) % 4 {
                    0 => 5 & mask(top),                                               // all equal
                    1 if !narrow => [half - 1, half, 0, mask(ell)][(r % 4) as usize], // extremes
                    1 => [0, 1, half - 1][(r % 3) as usize],
                    _ => r & mask(top),
                }
            })
            .collect()
    }

    fn pool(k: usize, s: usize, p: usize) -> Pool2d {
        Pool2d {
            kernel: [k, k],
            strides: [s, s],
            pads: [p, p, p, p],
            ceil_mode: false,
        }
    }

    #[test]
    fn maxpool_equals_reference() {
        let shape = [1usize, 4, 50, 50];
        let n: usize = shape.iter().product();
        let pl = pool(3, 1, 1);
        let w = Windows::pool2d(shape, &pl).expect("windows");
        assert_eq!(w.len(), 10_000);
        for ell in ELLS {
            for cmp in [Compare::Exact, Compare::Narrow] {
                if ell == 1 && cmp == Compare::Narrow {
                    continue;
                }
                let x = values(ell, n, cmp == Compare::Narrow, ell as u128);
                let want = reference(ell, &shape, &x, |i| Op::MaxPool { x: i, pool: pl });
                assert_eq!(secure(ell, &x, &w, cmp, false, 4), want, "ℓ={ell} {cmp:?}");
            }
        }
    }

    /// The separable passes (two-party, narrow comparisons of non-negative values) give
    /// the interpreter's MaxPool on overlapping, padded and ceil-mode geometries.
    #[test]
    fn separable_maxpool_equals_reference() {
        let ceil = Pool2d {
            ceil_mode: true,
            ..pool(3, 2, 0)
        };
        for (shape, pl) in [
            ([1usize, 3, 13, 13], ceil),
            ([2, 2, 9, 11], pool(3, 2, 1)),
            ([1, 2, 8, 8], pool(3, 1, 1)),
        ] {
            let sep = sci_ir::params::pool::separable(&pl, [shape[2], shape[3]], false)
                .expect("separable");
            let (cols, rows) = Windows::separable(shape, &sep).expect("windows");
            for ell in [8u32, 37] {
                let x = values(ell, shape.iter().product(), true, u128::from(ell));
                let md = Modulus::Pow2(ell);
                let (x0, x1) = share(&mut prg(12), &x, md);
                let r = run2(4, |ctx| {
                    let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
                    let y = maxpool(ctx, md, x, &cols, Compare::Narrow)?;
                    maxpool(ctx, md, &y, &rows, Compare::Narrow)
                });
                let want = reference(ell, &shape, &x, |i| Op::MaxPool { x: i, pool: pl });
                assert_eq!(open(&r.p0, &r.p1, md), want, "ℓ={ell} {shape:?} {pl:?}");
            }
        }
    }

    #[test]
    fn argmax_equals_reference_with_ties() {
        for ell in ELLS {
            let shape = [1000usize, 11];
            let x = values(ell, 11_000, false, 100 + ell as u128);
            let w = Windows::axis(&shape, 1).expect("windows");
            let want = reference(ell.max(5), &shape, &x, |i| Op::ArgMax {
                x: i,
                axis: 1,
                keepdims: false,
            });
            if ell >= 5 {
                assert_eq!(
                    secure(ell, &x, &w, Compare::Exact, true, 4),
                    want,
                    "ℓ={ell}"
                );
            } else {
                // Indices up to 10 do not fit ℓ < 5 bits: compare the values'
                // order directly.
                let got = secure(ell, &x, &w, Compare::Exact, true, 4);
                for (o, g) in got.iter().enumerate() {
                    let line: Vec<i64> = (0..11)
                        .map(|j| crate::proto::testutil::signed(x[o * 11 + j], ell))
                        .collect();
                    let best = (1..11).fold(0, |b, j| if line[j] > line[b] { j } else { b });
                    assert_eq!(*g, best as u64 & mask(ell), "ℓ={ell}");
                }
            }
        }
        // Axis 0 of a 3-D tensor, narrow mode.
        let shape = [7usize, 3, 5];
        let x = values(16, 105, true, 3);
        let w = Windows::axis(&shape, 0).expect("windows");
        let want = reference(16, &shape, &x, |i| Op::ArgMax {
            x: i,
            axis: 0,
            keepdims: true,
        });
        assert_eq!(secure(16, &x, &w, Compare::Narrow, true, 7), want);
    }

    #[test]
    fn communication() {
        let shape = [1usize, 2, 20, 20];
        let w = Windows::pool2d(shape, &pool(3, 2, 1)).expect("windows");
        for md in [Modulus::Pow2(32), Modulus::Odd(4_293_918_721)] {
            for (cmp, index, m) in [
                (Compare::Exact, false, 4),
                (Compare::Narrow, false, 4),
                (Compare::Exact, true, 7),
            ] {
                let x = match md {
                    Modulus::Pow2(ell) => values(ell, 800, true, 9),
                    Modulus::Odd(_) => md.random(&mut prg(17), 800),
                };
                let (x0, x1) = share(&mut prg(12), &x, md);
                let r = measured(m, |ctx, warm| {
                    let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
                    let w = if warm { w.slice(0..2) } else { w.clone() };
                    reduce_windows(ctx, md, x, None, &w, false)?;
                    let s = signs(ctx, md, x, cmp)?;
                    reduce(ctx, md, x, s.as_ref(), &w, index)
                });
                let narrow_part = cost_bits(md, m, 800, &w, Compare::Narrow, false);
                pin!(
                    r.bits(),
                    narrow_part + cost_bits(md, m, 800, &w, cmp, index),
                    "{md} {cmp:?} {index}"
                );
                let narrow_rounds = rounds(md, m, &w, Compare::Narrow);
                pin!(
                    r.stats[1].rounds,
                    narrow_rounds + rounds(md, m, &w, cmp),
                    "{md} {cmp:?}"
                );
            }
        }
        // 3×3 windows: 4 levels of 3 + 1 rounds at m = 4 (the DReLU's
        // millionaires' makes one OT call for all its classes).
        assert_eq!(rounds(32, 4, &w, Compare::Narrow), 4 * 4);
        assert_eq!(rounds(32, 4, &w, Compare::Exact), 4 + 4 * 5);
    }

    #[test]
    fn narrow_mode_is_wrong_on_overflowing_differences() {
        // The signed range's ends hi and lo: hi − lo overflows it.
        for md in [Modulus::Pow2(16), Modulus::Odd(65537)] {
            let hi = md.half() - 1;
            let lo = md.reduce_i128(i128::from(hi) + 1 - md.value() as i128);
            let x = vec![hi, lo, lo, hi];
            let w = Windows::axis(&[2, 2], 1).expect("windows");
            for (cmp, ok) in [(Compare::Exact, true), (Compare::Narrow, false)] {
                let got = secure(md, &x, &w, cmp, false, 4);
                assert_eq!(got == vec![hi, hi], ok, "{md} {cmp:?}");
            }
        }
    }

    /// Secure pooling (4-D `shape`) or argmax (2-D) over `Z_n` (opened) and
    /// the reference interpreter's result over the field.
    fn field_case(
        md: Modulus,
        shape: &[usize],
        x: &[u64],
        w: &Windows,
        cmp: Compare,
        op: impl Fn(sci_ir::ValueId) -> Op,
    ) -> (Vec<u64>, Vec<u64>) {
        let index = shape.len() == 2;
        (secure(md, x, w, cmp, index, 4), reference(md, shape, x, op))
    }

    #[test]
    fn maxpool_and_argmax_over_fields() {
        let shape = [1usize, 2, 12, 12];
        let n_in: usize = shape.iter().product();
        let pl = pool(3, 2, 1);
        let w = Windows::pool2d(shape, &pl).expect("windows");
        for n in FIELDS {
            let md = Modulus::Odd(n);
            let mut g = prg(n as u128);
            // Exact: any elements (with the edges ±(n−1)/2, repeated for ties).
            let mut x = values_with_edges(&mut g, n_in - 9, md);
            x.truncate(n_in);
            let (got, want) = field_case(md, &shape, &x, &w, Compare::Exact, |i| Op::MaxPool {
                x: i,
                pool: pl,
            });
            assert_eq!(got, want, "n={n} exact");
            // Narrow: signed views in [−(n−1)/4, (n−1)/4] ⊂ (−n/4, n/4).
            let q = i128::from((n - 1) / 4);
            let y: Vec<u64> = md
                .random(&mut g, n_in)
                .iter()
                .map(|&v| md.reduce_i128(i128::from(v) % (2 * q + 1) - q))
                .collect();
            assert!(
                y.iter()
                    .all(|&v| 4 * i128::from(md.signed(v)).abs() < i128::from(n))
            );
            let (got, want) = field_case(md, &shape, &y, &w, Compare::Narrow, |i| Op::MaxPool {
                x: i,
                pool: pl,
            });
            assert_eq!(got, want, "n={n} narrow");
            if n > 11 {
                let ashape = [n_in / 11, 11];
                let aw = Windows::axis(&ashape, 1).expect("windows");
                let xs = &x[..n_in / 11 * 11];
                let arg = |i| Op::ArgMax {
                    x: i,
                    axis: 1,
                    keepdims: false,
                };
                let (got, want) = field_case(md, &ashape, xs, &aw, Compare::Exact, arg);
                assert_eq!(got, want, "n={n} argmax");
            }
        }
    }

    #[test]
    fn over_tcp_loopback() {
        let shape = [1usize, 16, 64, 64];
        let pl = pool(2, 2, 0);
        let w = Windows::pool2d(shape, &pl).expect("windows");
        let x = values(32, 1 << 16, true, 13);
        let (x0, x1) = share(&mut prg(14), &x, 32);
        let r = run2_tcp(4, |ctx| {
            maxpool(
                ctx,
                32,
                if ctx.role == Role::P0 { &x0 } else { &x1 },
                &w,
                Compare::Exact,
            )
        });
        let want = reference(32, &shape, &x, |i| Op::MaxPool { x: i, pool: pl });
        assert_eq!(open(&r.p0, &r.p1, 32), want);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn pooling_geometry(
            c in 1usize..3, h in 1usize..9, w in 1usize..9,
            k in 1usize..4, s in 1usize..4, p in 0usize..3, ceil in any::<bool>(), seed in any::<u64>(),
        ) {
            let pl = Pool2d { kernel: [k, k], strides: [s, s], pads: [p, p, p, p], ceil_mode: ceil };
            let shape = [1, c, h, w];
            prop_assume!(p < k && pl.output([h, w]).is_ok());
            let x = values(12, c * h * w, false, seed as u128);
            let win = Windows::pool2d(shape, &pl).expect("windows");
            let want = reference(12, &shape, &x, |i| Op::MaxPool { x: i, pool: pl });
            prop_assert_eq!(secure(12, &x, &win, Compare::Exact, false, 4), want);
        }
    }
}
