//! The arithmetic of every op, written once, generic over the element domain ([`Dom`]) or
//! over any `Copy` element (data movement). Shapes are trusted: the type checker has
//! validated them and the driver passes the inferred output shapes.

use super::domain::Dom;
use crate::ops::{Conv2d, ConvGeom, Pool2d};
use rayon::prelude::*;

/// Minimum number of multiply-accumulates before a kernel spreads work over threads.
const PAR_THRESHOLD: usize = 1 << 15;

/// Row-major strides of a shape.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Calls `f(offset)` for every position of `shape` in row-major order, where `offset` is
/// `Σ idx[d] · st[d]`.
fn for_each_offset(shape: &[usize], st: &[usize], mut f: impl FnMut(usize)) {
    if shape.contains(&0) {
        return;
    }
    let r = shape.len();
    let mut idx = vec![0usize; r];
    let mut off = 0usize;
    loop {
        f(off);
        // Increment the multi-index, last dimension fastest.
        let mut d = r;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            off += st[d];
            if idx[d] < shape[d] {
                break;
            }
            off -= st[d] * shape[d];
            idx[d] = 0;
        }
    }
}

/// Elementwise `f(a, b)` with numpy broadcasting to `out_shape`.
pub(crate) fn broadcast<E: Copy>(
    a: &[E],
    ash: &[usize],
    b: &[E],
    bsh: &[usize],
    out_shape: &[usize],
    f: impl Fn(E, E) -> E,
) -> Vec<E> {
    if ash == bsh && ash == out_shape {
        return a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect();
    }
    let r = out_shape.len();
    // Strides of each operand in the output's index space (0 along broadcast dims).
    let bstrides = |sh: &[usize]| {
        let st = strides(sh);
        let mut out = vec![0; r];
        for (i, (&d, &s)) in sh.iter().zip(&st).enumerate() {
            if d != 1 {
                out[r - sh.len() + i] = s;
            }
        }
        out
    };
    let (sa, sb) = (bstrides(ash), bstrides(bsh));
    // Walk the output with two offsets; reuse for_each_offset on a combined stride by
    // tracking the multi-index explicitly.
    let n: usize = out_shape.iter().product();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let mut idx = vec![0usize; r];
    let (mut oa, mut ob) = (0usize, 0usize);
    for _ in 0..n {
        out.push(f(a[oa], b[ob]));
        let mut d = r;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            oa += sa[d];
            ob += sb[d];
            if idx[d] < out_shape[d] {
                break;
            }
            oa -= sa[d] * out_shape[d];
            ob -= sb[d] * out_shape[d];
            idx[d] = 0;
        }
    }
    out
}

/// The output positions `o` in `0..out` whose input coordinate `o·stride + k·dil − pad`
/// lies in `0..size`, as a range.
fn valid_range(
    out: usize,
    size: usize,
    stride: usize,
    k: usize,
    dil: usize,
    pad: usize,
) -> (usize, usize) {
    let off = (k * dil) as i64 - pad as i64; // input = o·stride + off
    let s = stride as i64;
    // o ≥ ceil(−off / s) and o·s + off < size ⇔ o < ceil((size − off) / s).
    let lo = if off >= 0 { 0 } else { (-off + s - 1) / s };
    let hi = (size as i64 - off + s - 1).div_euclid(s).max(0);
    let lo = (lo as usize).min(out);
    let hi = (hi as usize).clamp(lo, out);
    (lo, hi)
}

/// Convolution: see [`crate::Op::Conv2d`]. Parallel over (batch, output channel) planes.
pub(crate) fn conv2d<D: Dom>(
    d: D,
    x: &[D::E],
    w: &[D::E],
    bias: Option<&[D::E]>,
    geom: &ConvGeom,
) -> Vec<D::E> {
    let [bn, c, h, wi] = geom.input;
    let [kh, kw] = geom.kernel;
    let [oh, ow] = geom.output_hw();
    let co = geom.c_out;
    let Conv2d {
        strides,
        pads,
        dilations,
        groups,
    } = geom.conv;
    let plane = oh * ow;
    let mut out = vec![d.zero(); bn * co * plane];
    if plane == 0 {
        return out;
    }
    let cg = c / groups; // input channels per group
    let cog = co / groups; // output channels per group
    let work = bn * co * plane * cg * kh * kw;
    let body = |(p, out_plane): (usize, &mut [D::E])| {
        let (n, o) = (p / co, p % co);
        let grp = o / cog;
        let init = bias.map_or(d.acc(d.zero()), |b| d.acc(b[o]));
        let mut acc = vec![init; plane];
        for ci in 0..cg {
            let cin = grp * cg + ci;
            let xp = &x[(n * c + cin) * h * wi..][..h * wi];
            for ky in 0..kh {
                let (y0, y1) = valid_range(oh, h, strides[0], ky, dilations[0], pads[0]);
                for kx in 0..kw {
                    let wv = w[((o * cg + ci) * kh + ky) * kw + kx];
                    let (x0, x1) = valid_range(ow, wi, strides[1], kx, dilations[1], pads[1]);
                    if x0 >= x1 {
                        // This kernel column only ever meets padding (and the first
                        // input column below would be negative).
                        continue;
                    }
                    for oy in y0..y1 {
                        let iy = oy * strides[0] + ky * dilations[0] - pads[0];
                        let row = &xp[iy * wi..][..wi];
                        let arow = &mut acc[oy * ow..][..ow];
                        let ix0 = x0 * strides[1] + kx * dilations[1] - pads[1];
                        if strides[1] == 1 {
                            let n = x1 - x0;
                            for (a, &xv) in arow[x0..x1].iter_mut().zip(&row[ix0..ix0 + n]) {
                                *a = d.mac(*a, xv, wv);
                            }
                        } else {
                            for (j, a) in arow[x0..x1].iter_mut().enumerate() {
                                *a = d.mac(*a, row[ix0 + j * strides[1]], wv);
                            }
                        }
                    }
                }
            }
        }
        for (o, a) in out_plane.iter_mut().zip(acc) {
            *o = d.fin(a);
        }
    };
    if work >= PAR_THRESHOLD {
        out.par_chunks_mut(plane).enumerate().for_each(body);
    } else {
        out.chunks_mut(plane).enumerate().for_each(body);
    }
    out
}

/// `[m, k] × [k, n] (+ bias[n])`, parallel over rows.
pub(crate) fn matmul<D: Dom>(
    d: D,
    a: &[D::E],
    b: &[D::E],
    bias: Option<&[D::E]>,
    (m, k, n): (usize, usize, usize),
) -> Vec<D::E> {
    let mut out = vec![d.zero(); m * n];
    if n == 0 {
        return out;
    }
    let body = |(i, orow): (usize, &mut [D::E])| {
        let mut acc: Vec<D::Acc> = match bias {
            Some(bv) => bv.iter().map(|&x| d.acc(x)).collect(),
            None => vec![d.acc(d.zero()); n],
        };
        for (kk, &av) in a[i * k..][..k].iter().enumerate() {
            for (c, &bv) in acc.iter_mut().zip(&b[kk * n..][..n]) {
                *c = d.mac(*c, av, bv);
            }
        }
        for (o, c) in orow.iter_mut().zip(acc) {
            *o = d.fin(c);
        }
    };
    if m * k * n >= PAR_THRESHOLD {
        out.par_chunks_mut(n).enumerate().for_each(body);
    } else {
        out.chunks_mut(n).enumerate().for_each(body);
    }
    out
}

/// Which pooling reduction to apply.
#[derive(Clone, Copy)]
pub(crate) enum PoolKind {
    /// Maximum (first maximum wins, padding ignored).
    Max,
    /// Sum of the window (padding contributes nothing).
    Sum,
    /// Sum then `rdiv` by the count (with or without padding).
    Avg { count_include_pad: bool },
}

/// Pooling over 2-D windows ([`Pool2d::window`]) of an `[n, c, h, w]` tensor into
/// `[n, c, oh, ow]`.
pub(crate) fn pool2d<D: Dom>(
    d: D,
    x: &[D::E],
    [n, c, h, w]: [usize; 4],
    (oh, ow): (usize, usize),
    pool: &Pool2d,
    kind: PoolKind,
) -> Vec<D::E> {
    let plane = oh * ow;
    let mut out = vec![d.zero(); n * c * plane];
    if plane == 0 {
        return out;
    }
    let body = |(p, out_plane): (usize, &mut [D::E])| {
        let xp = &x[p * h * w..][..h * w];
        for oy in 0..oh {
            for ox in 0..ow {
                let win = pool.window([oy, ox], [h, w]);
                let rows = || {
                    win.rows
                        .clone()
                        .flat_map(|iy| xp[iy * w..][win.cols.clone()].iter().copied())
                };
                let sum = || d.fin(rows().fold(d.acc(d.zero()), |a, v| d.acc_add(a, v)));
                out_plane[oy * ow + ox] = match kind {
                    PoolKind::Max => {
                        // Pads are smaller than the kernel, so the window is never empty.
                        let mut it = rows();
                        let first = it.next().unwrap_or(d.zero());
                        it.fold(first, |m, v| if d.gt(v, m) { v } else { m })
                    }
                    PoolKind::Sum => sum(),
                    PoolKind::Avg { count_include_pad } => {
                        d.div_public(sum(), win.count(count_include_pad))
                    }
                };
            }
        }
    };
    if x.len() * pool.kernel[0] * pool.kernel[1] >= PAR_THRESHOLD {
        out.par_chunks_mut(plane).enumerate().for_each(body);
    } else {
        out.chunks_mut(plane).enumerate().for_each(body);
    }
    out
}

/// Index of the first maximum along `axis` (`outer × len × inner` layout).
pub(crate) fn argmax<D: Dom>(d: D, x: &[D::E], shape: &[usize], axis: usize) -> Vec<D::E> {
    let outer: usize = shape[..axis].iter().product();
    let len = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| x[(o * len + j) * inner + i];
            let mut best = 0;
            for j in 1..len {
                if d.gt(at(j), at(best)) {
                    best = j;
                }
            }
            out.push(d.index(best));
        }
    }
    out
}

/// Permutes dimensions: output dim `i` is input dim `perm[i]`.
pub(crate) fn transpose<E: Copy>(x: &[E], shape: &[usize], perm: &[usize]) -> Vec<E> {
    let st = strides(shape);
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let in_st: Vec<usize> = perm.iter().map(|&p| st[p]).collect();
    let mut out = Vec::with_capacity(x.len());
    for_each_offset(&out_shape, &in_st, |off| out.push(x[off]));
    out
}

/// Selection along `axis`: output index `j` on that axis is input index
/// `indices[j]` (every index below `shape[axis]`, checked by the type checker).
pub(crate) fn gather<E: Copy>(x: &[E], shape: &[usize], axis: usize, indices: &[usize]) -> Vec<E> {
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let mut out = Vec::with_capacity(outer * indices.len() * inner);
    for block in x.chunks_exact(shape[axis] * inner).take(outer) {
        for &i in indices {
            out.extend_from_slice(&block[i * inner..][..inner]);
        }
    }
    out
}

/// Concatenation along `axis`.
pub(crate) fn concat<E: Copy>(xs: &[(&[E], &[usize])], axis: usize) -> Vec<E> {
    let Some((_, shape0)) = xs.first() else {
        return Vec::new();
    };
    let outer: usize = shape0[..axis].iter().product();
    let inner: usize = shape0[axis + 1..].iter().product();
    let mut out = Vec::with_capacity(xs.iter().map(|(x, _)| x.len()).sum());
    for o in 0..outer {
        for (x, sh) in xs {
            let chunk = sh[axis] * inner;
            out.extend_from_slice(&x[o * chunk..][..chunk]);
        }
    }
    out
}

/// Constant padding (`pads`: all begins, then all ends).
pub(crate) fn pad<E: Copy>(
    x: &[E],
    shape: &[usize],
    pads: &[usize],
    out_shape: &[usize],
    value: E,
) -> Vec<E> {
    let r = shape.len();
    let ost = strides(out_shape);
    let mut out = vec![value; out_shape.iter().product()];
    let base: usize = (0..r).map(|d| pads[d] * ost[d]).sum();
    let mut i = 0;
    for_each_offset(shape, &ost, |off| {
        out[base + off] = x[i];
        i += 1;
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ranges() {
        // out 4, size 5, stride 1, k 0, pad 1: inputs −1..3 → o ≥ 1.
        assert_eq!(valid_range(4, 5, 1, 0, 1, 1), (1, 4));
        // k 2, dil 1, pad 1: inputs 1..5 → all valid up to o = 3 (input 4).
        assert_eq!(valid_range(4, 5, 1, 2, 1, 1), (0, 4));
        // stride 2, k 2, pad 0, size 5, out 2: inputs 2, 4.
        assert_eq!(valid_range(2, 5, 2, 2, 1, 0), (0, 2));
        // everything in padding
        assert_eq!(valid_range(3, 1, 1, 0, 1, 5), (3, 3));
    }

    #[test]
    fn offsets_and_transpose() {
        let x: Vec<u32> = (0..6).collect();
        assert_eq!(transpose(&x, &[2, 3], &[1, 0]), vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(transpose(&x, &[2, 3], &[0, 1]), x);
        let mut offs = vec![];
        for_each_offset(&[], &[], |o| offs.push(o));
        assert_eq!(offs, vec![0]);
    }
}
