//! OT-based linear layers (CrypTFlow2 §5.1.1, after Mohassel–Zhang 2017 and
//! Demmler et al. 2015): products of secret-shared activations with weights
//! known to the server.
//!
//! # The product of a shared value with a known one
//! For `y = x·w` with `x = x_0 + x_1` shared and `w` known to the server
//! (who plays role `P0`, the OT sender, in every run), the server computes
//! `x_0·w` itself, and `x_1·w = Σ_i 2^i·x_{1,i}·w` over the bits `x_{1,i}` of
//! the client's share: for each bit one correlated OT in which the server
//! sends the correlation `w` and gets `r`, the client chooses with
//! `x_{1,i}` and gets `r + x_{1,i}·w`. Only `2^i·(…) mod 2^ℓ` is needed, so the
//! OT for bit `i` works mod `2^{ℓ−i}` (ℓ − i bits). The server's share is
//! `x_0·w − Σ_i 2^i·r_i`, the client's `Σ_i 2^i·(r_i + x_{1,i}·w)`.
//!
//! # Matrices
//! `Y = X·W` with `X` (`R×C`) shared and `W` (`C×O`) the server's: element
//! `X[r][c]` multiplies row `W[c][·]`, so the `ℓ` OTs of `X[r][c]` each carry
//! the whole vector `W[c][·]` (`O` elements; the optimization of §5.1.1 that
//! combines the sender messages for the same element). Cost: `R·C·ℓ`
//! correlated OTs of `O·(ℓ − i)` bits, i.e. `R·C·(ℓλ + O·ℓ(ℓ+1)/2)` bits — the
//! paper's `NKℓ` instances of `COT_{M(ℓ+1)/2}` — plus the OT layer's padding
//! of each call to a multiple of 8 instances. `W·X` is the same with the
//! roles of the dimensions exchanged ([`matmul_wx`], by transposition), a
//! convolution is a product with the `im2col` matrix ([`conv2d`], per
//! group), and an elementwise product with a server tensor is the case `C =
//! O = 1` ([`mul`]).
//!
//! When the client holds the whole input (first layer) the server's share
//! is zero: nothing about the input is revealed and the same protocol
//! applies.
//!
//! # Memory and rounds
//! The OTs are run in batches of at most [`BATCH_WORDS`] correlation words,
//! accumulating the outputs on the fly, so memory stays bounded for any
//! layer size. The batch count, `⌈R·C·ℓ·O / BATCH_WORDS⌉` up to rounding to
//! whole rows, is a function of the public dimensions, and each batch is an
//! OT call of its own on the wire (its own padding, [`cost_bits`]). The
//! batches are streamed ([`crate::ot::derived`]): the
//! client sends its extension messages ahead, a bounded window of batches
//! before the answers it decodes, while the server answers batch after
//! batch, so both directions of the link are busy at once and a product
//! costs [`ROUNDS`] round for each party whatever its size (over a
//! full-duplex channel; the first OT use of a channel adds the set-up's).
//!
//! # Several products in one call
//! Independent products ([`Product`]: the groups of a convolution, the
//! products of one wave of the executor) run as **one** OT call
//! ([`products`]): the batches of every product one after the other in one
//! stream, each product's batches padded as if it ran alone. Bytes: the
//! products' summed, exactly; rounds: [`ROUNDS`], as for one product. Over
//! a session's lanes ([`crate::proto::engine::Engine::products`]) each
//! product's rows are cut into one chunk per lane, and lane `i` runs chunk
//! `i` of every product in its one call.

use super::{Ctx, ProtoError, Role, check, check_ell};
use crate::ot::CotFields;
use crate::pack::mask;
use sci_ir::ConvGeom;
use sci_ir::cost;
use sci_ir::params::linear::batch_pairs;
use std::borrow::Cow;
use std::ops::Range;

/// Largest number of correlation words (`u64`) of one OT batch. The
/// correlated OTs stream through cache-sized steps
/// ([`crate::ot::OtPack::send_cot_batches`]), so a batch holds only the
/// receiver's pads (16 bytes per instance) and its correction message
/// (`BATCH_WORDS·ℓ/2` bits on average).
pub const BATCH_WORDS: usize = sci_ir::params::linear::BATCH_WORDS;

/// Rounds of a product ([`matmul`], [`matmul_wx`], [`mul`]) for each party,
/// once the channel's OTs are set up, whatever the dimensions: the client's
/// wait for the first answer of the stream; the server's, for the client's
/// first message after the server last spoke.
pub const ROUNDS: u64 = 1;

/// Division of instance indices by a fixed `d ≥ 1` with one multiplication
/// for `j < 2^32` (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019: `⌊j/d⌋ = ⌊M·j / 2^64⌋` with `M = ⌊(2^64 − 1)/d⌋ + 1`,
/// exact for 32-bit `j` and `d`), a hardware division otherwise. The OT
/// callbacks map every instance to its pair and bit this way, several
/// times per instance.
#[derive(Clone, Copy)]
struct IndexDiv {
    d: usize,
    m: u128,
}

impl IndexDiv {
    fn new(d: usize) -> Self {
        IndexDiv {
            d,
            m: u128::from(u64::MAX) / d.max(1) as u128 + 1,
        }
    }

    /// `(j / d, j % d)`.
    #[inline(always)]
    fn div_rem(self, j: usize) -> (usize, usize) {
        let q = if j >> 32 == 0 && self.d >> 32 == 0 {
            ((self.m * j as u128) >> 64) as usize
        } else {
            j / self.d
        };
        (q, j - q * self.d)
    }
}

/// `y ← y ± (v << sh)` mod `2^64`, element by element (`−` for `neg`, the
/// server's side): one instance's output, times `2^i`, into its output
/// row. Also compiled for AVX2, chosen at run time: four words per
/// operation (the OT callbacks that call it are compiled for baseline
/// x86-64).
#[inline]
fn add_shifted(y: &mut [u64], v: &[u64], sh: usize, neg: bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked).
        return unsafe { add_shifted_avx2(y, v, sh, neg) };
    }
    add_shifted_in(y, v, sh, neg)
}

/// [`add_shifted`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_shifted_avx2(y: &mut [u64], v: &[u64], sh: usize, neg: bool) {
    add_shifted_in(y, v, sh, neg)
}

#[inline(always)]
fn add_shifted_in(y: &mut [u64], v: &[u64], sh: usize, neg: bool) {
    // `(t ^ s) − s` is `t` for `s = 0` and `−t` for `s = −1`.
    let s = u64::from(neg).wrapping_neg();
    for (a, &e) in y.iter_mut().zip(v) {
        *a = a.wrapping_add(((e << sh) ^ s).wrapping_sub(s));
    }
}

/// The server's weights of one product: the weight vector that element
/// `(r, c)` of the shared operand multiplies.
#[derive(Clone, Debug)]
enum Weights<'a> {
    /// `W` (`C×O`, row-major): element `(r, c)` multiplies row `c`.
    Matrix(Cow<'a, [u64]>),
    /// Elementwise (`C = O = 1`): element `(r, 0)` multiplies `w[r]`.
    Diagonal(Cow<'a, [u64]>),
}

impl Weights<'_> {
    /// The weight vector multiplied by element `(r, c)` (length `outs`).
    #[inline(always)]
    fn row(&self, r: usize, c: usize, outs: usize) -> &[u64] {
        match self {
            Weights::Matrix(w) => &w[c * outs..(c + 1) * outs],
            Weights::Diagonal(w) => &w[r..r + 1],
        }
    }
}

/// One matrix product `X·W` of an OT call: this party's share `x` of `X`
/// (`R×C`, row-major) and, at the server, the weights. A [`Product`] is
/// one job, or one per group for a convolution ([`lower`]).
#[derive(Clone, Debug)]
pub(crate) struct Job<'a> {
    /// `(R, C, O)`.
    dims: (usize, usize, usize),
    x: Cow<'a, [u64]>,
    w: Option<Weights<'a>>,
}

impl Job<'_> {
    /// Rows of the shared operand (the unit a session chunks over its lanes).
    pub(crate) fn rows(&self) -> usize {
        self.dims.0
    }

    /// The product restricted to the rows `r` (borrowing this one's data).
    pub(crate) fn chunk(&self, r: Range<usize>) -> Job<'_> {
        let (_, cols, outs) = self.dims;
        Job {
            dims: (r.len(), cols, outs),
            x: Cow::Borrowed(&self.x[r.start * cols..r.end * cols]),
            w: self.w.as_ref().map(|w| match w {
                Weights::Matrix(m) => Weights::Matrix(Cow::Borrowed(m)),
                Weights::Diagonal(d) => Weights::Diagonal(Cow::Borrowed(&d[r])),
            }),
        }
    }
}

/// A product of a secret-shared operand with the server's weights, one
/// member of an OT call ([`products`]; the server passes the weights, the
/// client `None`).
#[derive(Clone, Copy, Debug)]
pub enum Product<'a> {
    /// `Y = X·W`, `[R, C] × [C, O] → [R, O]` (the orientation of
    /// [`sci_ir::Op::MatMul`]).
    MatMul {
        /// `(R, C, O)`.
        dims: (usize, usize, usize),
        /// This party's share of `X`.
        x: &'a [u64],
        /// `W`, row-major.
        w: Option<&'a [u64]>,
    },
    /// The elementwise product `x ⊙ w` (same length; broadcast both
    /// operands to the output shape first).
    Mul {
        /// This party's share.
        x: &'a [u64],
        /// The weights.
        w: Option<&'a [u64]>,
    },
    /// The convolution of `x` (`[N, C, H, W]`) with `w` (`[C_out,
    /// C/groups, kh, kw]`), without bias: per group, the product of the
    /// `im2col` matrix (`N·oh·ow × (C/g)·kh·kw`, padding as 0) with the
    /// transposed group weights.
    Conv {
        /// The geometry.
        geom: &'a ConvGeom,
        /// This party's share of the input.
        x: &'a [u64],
        /// The filters.
        w: Option<&'a [u64]>,
    },
}

/// The jobs of product `p`: one, or one per group of a convolution.
/// Checks the lengths of the operands against the dimensions.
fn lower<'a>(p: &Product<'a>) -> Result<Vec<Job<'a>>, ProtoError> {
    match *p {
        Product::MatMul {
            dims: (rows, cols, outs),
            x,
            w,
        } => {
            check(x.len() == rows * cols, || {
                format!("{} shares for a {rows}×{cols} operand", x.len())
            })?;
            if let Some(w) = w {
                check(w.len() == cols * outs, || {
                    format!("{} weights for a {cols}×{outs} matrix", w.len())
                })?;
            }
            Ok(vec![Job {
                dims: (rows, cols, outs),
                x: Cow::Borrowed(x),
                w: w.map(|w| Weights::Matrix(Cow::Borrowed(w))),
            }])
        }
        Product::Mul { x, w } => {
            if let Some(w) = w {
                check(w.len() == x.len(), || {
                    format!("{} weights for {} elements", w.len(), x.len())
                })?;
            }
            Ok(vec![Job {
                dims: (x.len(), 1, 1),
                x: Cow::Borrowed(x),
                w: w.map(|w| Weights::Diagonal(Cow::Borrowed(w))),
            }])
        }
        Product::Conv { geom, x, w } => conv_jobs(geom, x, w),
    }
}

/// Product `p`'s output from the outputs of its jobs ([`lower`]): a
/// convolution's groups into `[N, C_out, oh, ow]`.
fn raise(p: &Product<'_>, ys: Vec<Vec<u64>>) -> Vec<u64> {
    match p {
        Product::Conv { geom, .. } => conv_output(geom, &ys),
        _ => ys.into_iter().next().unwrap_or_default(),
    }
}

/// The outputs of `ps`, in order, with their jobs run by `run` (which
/// returns the jobs' outputs in order: one OT call on one lane, or chunked
/// over a session's lanes).
pub(crate) fn products_with(
    ps: &[Product<'_>],
    run: impl FnOnce(&[Job<'_>]) -> Result<Vec<Vec<u64>>, ProtoError>,
) -> Result<Vec<Vec<u64>>, ProtoError> {
    let lowered = ps.iter().map(lower).collect::<Result<Vec<_>, _>>()?;
    let counts: Vec<usize> = lowered.iter().map(Vec::len).collect();
    let jobs: Vec<Job<'_>> = lowered.into_iter().flatten().collect();
    let mut ys = run(&jobs)?.into_iter();
    Ok(ps
        .iter()
        .zip(counts)
        .map(|(p, n)| raise(p, ys.by_ref().take(n).collect()))
        .collect())
}

/// Shares of the products `ps` (see [`Product`]) as **one** streamed OT
/// call on this lane: the batches of every product, one after the other,
/// so the call costs [`ROUNDS`] whatever the number of products, and the
/// bytes of the products run one by one (each product's batches are padded
/// as before). The server (role `P0`) passes the weights of every product,
/// the client none.
pub fn products(
    ctx: &mut Ctx<'_>,
    ell: u32,
    ps: &[Product<'_>],
) -> Result<Vec<Vec<u64>>, ProtoError> {
    products_with(ps, |jobs| run_jobs(ctx, ell, jobs))
}

/// The core: `Y_k = X_k·W_k` (`R_k×O_k`) for this party's shares `x_k` of
/// every job, in one OT call over the concatenation of the jobs' instances
/// and batches.
pub(crate) fn run_jobs(
    ctx: &mut Ctx<'_>,
    ell: u32,
    jobs: &[Job<'_>],
) -> Result<Vec<Vec<u64>>, ProtoError> {
    check_ell(ell)?;
    check(
        jobs.iter().all(|j| j.w.is_some() == (ctx.role == Role::P0)),
        || "the weight owner must play role P0 (the OT sender)".into(),
    )?;
    let m = mask(ell);
    let l = ell as usize;
    let mut ys: Vec<Vec<u64>> = jobs
        .iter()
        .map(|j| vec![0u64; j.dims.0 * j.dims.2])
        .collect();
    // Local part of the server: x_0·W.
    for (job, y) in jobs.iter().zip(&mut ys) {
        let (rows, cols, outs) = job.dims;
        let Some(w) = &job.w else { continue };
        for r in 0..rows {
            let yr = &mut y[r * outs..(r + 1) * outs];
            for c in 0..cols {
                let xv = job.x[r * cols + c];
                if xv != 0 {
                    for (a, &wv) in yr.iter_mut().zip(w.row(r, c, outs)) {
                        *a = a.wrapping_add(xv.wrapping_mul(wv));
                    }
                }
            }
        }
    }
    // OT part: job k's instances follow those of jobs 0..k; its instance
    // (pair p, bit i) has width ℓ − i and carries the weight row of p; its
    // output, times 2^i, goes to the output row of p (negated for the
    // server). Every job has a multiple of ℓ instances, so bit i is the
    // global index mod ℓ.
    let tables: Vec<Vec<Vec<u32>>> = jobs
        .iter()
        .map(|j| match j.dims.2 {
            0 => Vec::new(),
            outs => (0..ell).map(|i| vec![ell - i; outs]).collect(),
        })
        .collect();
    let shapes = tables
        .iter()
        .map(|t| t.iter().map(|t| CotFields::new(t)).collect())
        .collect::<Result<Vec<Vec<_>>, _>>()?;
    let (mut starts, mut batches, mut total) = (Vec::with_capacity(jobs.len()), Vec::new(), 0);
    for job in jobs {
        let (rows, cols, outs) = job.dims;
        let pairs = if outs == 0 { 0 } else { rows * cols };
        starts.push(total);
        batches.extend(batch_pairs(ell, pairs, outs).map(|np| np * l));
        total += pairs * l;
    }
    let by_cols: Vec<IndexDiv> = jobs.iter().map(|j| IndexDiv::new(j.dims.1)).collect();
    let by_bits = IndexDiv::new(l);
    // Global instance j → (job, its pair, bit), asked several times per
    // instance: by one division when every job has the same number of
    // instances (one product, or a convolution's groups — a depthwise one
    // has hundreds), else by a search over the jobs' starts (a wave's few
    // products). A job without instances starts where the next one does,
    // so the last job starting at or before j holds it.
    let equal = IndexDiv::new(total / jobs.len().max(1));
    let same =
        total == jobs.len() * equal.d && starts.iter().enumerate().all(|(k, &s)| s == k * equal.d);
    let locate = |j: usize| {
        let k = if same {
            equal.div_rem(j).0
        } else {
            starts.partition_point(|&s| s <= j) - 1
        };
        let (p, i) = by_bits.div_rem(j - starts[k]);
        (k, p, i)
    };
    let width = |j: usize| {
        let (k, _, i) = locate(j);
        shapes[k][i]
    };
    let mut out = |j: usize, v: &[u64], neg: bool| {
        let (k, p, i) = locate(j);
        let outs = jobs[k].dims.2;
        let r = by_cols[k].div_rem(p).0;
        add_shifted(&mut ys[k][r * outs..][..outs], v, i, neg);
    };
    if ctx.role == Role::P0 {
        let corr = |j: usize| {
            let (k, p, _) = locate(j);
            let (r, c) = by_cols[k].div_rem(p);
            let w = jobs[k]
                .w
                .as_ref()
                .expect("the sender holds every job's weights");
            w.row(r, c, jobs[k].dims.2)
        };
        ctx.ot
            .send_cot_batches(ctx.ch, &batches, width, corr, |j, r| out(j, r, true))?;
    } else {
        let choice = |j: usize| {
            let (k, p, i) = locate(j);
            (jobs[k].x[p] >> i) & 1 == 1
        };
        ctx.ot
            .recv_cot_batches(ctx.ch, &batches, choice, width, |j, v| out(j, v, false))?;
    }
    ys.iter_mut().flatten().for_each(|v| *v &= m);
    Ok(ys)
}

/// Shares of `Y = X·W` (`[R, C] × [C, O] → [R, O]`, the orientation of
/// [`sci_ir::Op::MatMul`]) for this party's share `x` of `X`; the server
/// (role `P0`) passes `w`, the client `None`. Cost: see the
/// [module documentation](self).
pub fn matmul(
    ctx: &mut Ctx<'_>,
    ell: u32,
    dims: (usize, usize, usize),
    x: &[u64],
    w: Option<&[u64]>,
) -> Result<Vec<u64>, ProtoError> {
    one(products(ctx, ell, &[Product::MatMul { dims, x, w }]))
}

/// The output of a call of one product.
pub(crate) fn one(ys: Result<Vec<Vec<u64>>, ProtoError>) -> Result<Vec<u64>, ProtoError> {
    Ok(ys?.into_iter().next().unwrap_or_default())
}

/// Shares of `Y = W·X` (`[O, C] × [C, R] → [O, R]`) with `W` the server's:
/// `Y^T = X^T·W^T`, computed by [`matmul`] on transposed operands.
pub fn matmul_wx(
    ctx: &mut Ctx<'_>,
    ell: u32,
    (outs, cols, rows): (usize, usize, usize),
    w: Option<&[u64]>,
    x: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    check(x.len() == cols * rows, || {
        format!("{} shares for a {cols}×{rows} operand", x.len())
    })?;
    let xt = transpose2(x, cols, rows);
    let wt = match w {
        Some(w) => {
            check(w.len() == outs * cols, || {
                format!("{} weights for a {outs}×{cols} matrix", w.len())
            })?;
            Some(transpose2(w, outs, cols))
        }
        None => None,
    };
    let yt = matmul(ctx, ell, (rows, cols, outs), &xt, wt.as_deref())?;
    Ok(transpose2(&yt, rows, outs))
}

/// Shares of the elementwise product `x ⊙ w` with `w` the server's (same
/// length; broadcast both operands to the output shape first).
pub fn mul(
    ctx: &mut Ctx<'_>,
    ell: u32,
    x: &[u64],
    w: Option<&[u64]>,
) -> Result<Vec<u64>, ProtoError> {
    one(products(ctx, ell, &[Product::Mul { x, w }]))
}

/// The transpose of a row-major `r×c` matrix.
pub(crate) fn transpose2(a: &[u64], r: usize, c: usize) -> Vec<u64> {
    let mut t = vec![0u64; a.len()];
    for i in 0..r {
        for j in 0..c {
            t[j * r + i] = a[i * c + j];
        }
    }
    t
}

/// Errors unless the groups divide the channels and strides and dilations are ≥ 1.
fn validate(geom: &ConvGeom) -> Result<(), ProtoError> {
    let c = &geom.conv;
    let g = c.groups;
    check(
        g >= 1
            && geom.input[1].is_multiple_of(g)
            && geom.c_out.is_multiple_of(g)
            && c.strides.iter().chain(&c.dilations).all(|&s| s >= 1),
        || format!("invalid convolution geometry {geom:?}"),
    )
}

/// Shares of the convolution of this party's share `x` (`[N, C, H, W]`) with
/// the server's weights `w` (`[C_out, C/groups, kh, kw]`), without bias
/// ([`Product::Conv`]: the products of all groups in one OT call).
pub fn conv2d(
    ctx: &mut Ctx<'_>,
    ell: u32,
    geom: &ConvGeom,
    x: &[u64],
    w: Option<&[u64]>,
) -> Result<Vec<u64>, ProtoError> {
    one(products(ctx, ell, &[Product::Conv { geom, x, w }]))
}

/// The jobs of a convolution: per group, the `im2col` matrix of `x` and the
/// transposed group weights. Checks the geometry and the lengths.
fn conv_jobs<'a>(
    geom: &ConvGeom,
    x: &[u64],
    w: Option<&[u64]>,
) -> Result<Vec<Job<'a>>, ProtoError> {
    validate(geom)?;
    let [n, c, h, wd] = geom.input;
    let [kh, kw] = geom.kernel;
    let [oh, ow] = geom.output_hw();
    let g = geom.conv.groups;
    let (cg, cog) = (c / g, geom.c_out / g);
    check(x.len() == n * c * h * wd, || {
        format!("{} shares for an input of shape {:?}", x.len(), geom.input)
    })?;
    if let Some(w) = w {
        check(w.len() == geom.c_out * cg * kh * kw, || {
            format!(
                "{} weights for {} filters of {cg}×{kh}×{kw}",
                w.len(),
                geom.c_out
            )
        })?;
    }
    let (rows, cols) = (n * oh * ow, cg * kh * kw);
    let job = |grp: usize| {
        // im2col: row (b, i, j), column (ci, a, bb).
        let mut xc = vec![0u64; rows * cols];
        for b in 0..n {
            for i in 0..oh {
                for j in 0..ow {
                    let row = &mut xc[((b * oh + i) * ow + j) * cols..][..cols];
                    for ci in 0..cg {
                        let plane = &x[(b * c + grp * cg + ci) * h * wd..][..h * wd];
                        for a in 0..kh {
                            let iy = (i * geom.conv.strides[0] + a * geom.conv.dilations[0]) as i64
                                - geom.conv.pads[0] as i64;
                            if iy < 0 || iy >= h as i64 {
                                continue;
                            }
                            for bb in 0..kw {
                                let ix = (j * geom.conv.strides[1] + bb * geom.conv.dilations[1])
                                    as i64
                                    - geom.conv.pads[1] as i64;
                                if ix >= 0 && ix < wd as i64 {
                                    row[(ci * kh + a) * kw + bb] =
                                        plane[iy as usize * wd + ix as usize];
                                }
                            }
                        }
                    }
                }
            }
        }
        // Group weights transposed: (ci, a, bb) × o.
        let wt = w.map(|w| transpose2(&w[grp * cog * cols..(grp + 1) * cog * cols], cog, cols));
        Job {
            dims: (rows, cols, cog),
            x: Cow::Owned(xc),
            w: wt.map(|wt| Weights::Matrix(Cow::Owned(wt))),
        }
    };
    Ok((0..g).map(job).collect())
}

/// A convolution's output (`[N, C_out, oh, ow]`) from its groups' products
/// (`N·oh·ow × C_out/g` each).
fn conv_output(geom: &ConvGeom, ys: &[Vec<u64>]) -> Vec<u64> {
    let n = geom.input[0];
    let [oh, ow] = geom.output_hw();
    let cog = geom.c_out / geom.conv.groups.max(1);
    let mut y = vec![0u64; n * geom.c_out * oh * ow];
    for (grp, yg) in ys.iter().enumerate() {
        for b in 0..n {
            for o in 0..cog {
                let dst = &mut y[(b * geom.c_out + grp * cog + o) * oh * ow..][..oh * ow];
                for (p, d) in dst.iter_mut().enumerate() {
                    *d = yg[(b * oh * ow + p) * cog + o];
                }
            }
        }
    }
    y
}

/// Exact bits on the wire of [`matmul`] (`R×C` by `C×O`;
/// [`sci_ir::cost::linear::matmul`]).
pub fn cost_bits(ell: u32, dims: (usize, usize, usize)) -> u64 {
    cost::linear::matmul_bits(ell, dims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil;
    use crate::proto::testutil::{ELLS, costed, measured, open, pin, prg, run2, run2_tcp, share};
    use sci_ir::{Op, Owner, ValueId};

    /// [`IndexDiv`] is exact: 32-bit indices and divisors at the edges, and
    /// the hardware fallback beyond.
    #[test]
    fn index_division_is_exact() {
        let ds = [1usize, 2, 3, 7, 32, 144, 1000, 65_537, u32::MAX as usize];
        let js = [
            0usize,
            1,
            2,
            31,
            32,
            33,
            13_939_199,
            1 << 31,
            u32::MAX as usize,
        ];
        for &d in &ds {
            let f = IndexDiv::new(d);
            for &j in js.iter().chain(&[(u32::MAX as usize) + 5, usize::MAX]) {
                assert_eq!(f.div_rem(j), (j / d, j % d), "{j} / {d}");
            }
            for j in 0..10_000usize {
                let j = j.wrapping_mul(0x9e37_79b9) % (1 << 32);
                assert_eq!(f.div_rem(j), (j / d, j % d), "{j} / {d}");
            }
        }
    }

    /// The reference interpreter on `op(x, w)` with `x` a client input and
    /// `w` a server constant.
    fn reference(
        ell: u32,
        (xs, x): (&[usize], &[u64]),
        (ws, w): (&[usize], &[u64]),
        op: impl Fn(ValueId, ValueId) -> Op,
    ) -> Vec<u64> {
        let inputs = [(x, xs, Owner::Client), (w, ws, Owner::Server)];
        testutil::reference(ell, &inputs, |v| op(v[0], v[1])).0
    }

    fn secure<F>(ell: u32, x: &[u64], w: &[u64], client_only: bool, tcp: bool, f: F) -> Vec<u64>
    where
        F: Fn(&mut Ctx<'_>, &[u64], Option<&[u64]>) -> Result<Vec<u64>, ProtoError> + Sync,
    {
        let (x0, x1) = if client_only {
            (vec![0; x.len()], x.to_vec())
        } else {
            share(&mut prg(21), x, ell)
        };
        let g = |ctx: &mut Ctx<'_>| match ctx.role {
            Role::P0 => f(ctx, &x0, Some(w)),
            Role::P1 => f(ctx, &x1, None),
        };
        let r = if tcp { run2_tcp(4, g) } else { run2(4, g) };
        open(&r.p0, &r.p1, ell)
    }

    #[test]
    fn matmul_equals_reference() {
        for ell in ELLS {
            let (m, k, n) = (20, 25, 20);
            let mut g = prg(ell as u128);
            let x = g.ring_elems(m * k, ell);
            let w = g.ring_elems(k * n, ell);
            let want = reference(ell, (&[m, k], &x), (&[k, n], &w), |a, b| Op::MatMul {
                a,
                b,
                bias: None,
            });
            for client_only in [false, true] {
                let got = secure(ell, &x, &w, client_only, false, |ctx, x, w| {
                    matmul(ctx, ell, (m, k, n), x, w)
                });
                assert_eq!(got, want, "ℓ={ell}");
            }
            // W·X: (W·X)^T = X^T·W^T.
            let got = secure(
                ell,
                &transpose2(&x, m, k),
                &transpose2(&w, k, n),
                false,
                false,
                |ctx, x, w| matmul_wx(ctx, ell, (n, k, m), w, x),
            );
            assert_eq!(transpose2(&got, n, m), want, "ℓ={ell} W·X");
        }
    }

    /// Products of unequal sizes in one call, including sizes where the
    /// jobs' starts are those of equal jobs but the last is longer (6, 6
    /// and 7 pairs): every output as the interpreter's.
    #[test]
    fn unequal_products_in_one_call() {
        let dims = [(2usize, 3usize, 4usize), (3, 2, 4), (7, 1, 2)];
        for ell in [2u32, 37] {
            let mut g = prg(u128::from(ell) + 40);
            let xs: Vec<Vec<u64>> = dims.iter().map(|d| g.ring_elems(d.0 * d.1, ell)).collect();
            let ws: Vec<Vec<u64>> = dims.iter().map(|d| g.ring_elems(d.1 * d.2, ell)).collect();
            let (x, w) = (xs.concat(), ws.concat());
            let got = secure(ell, &x, &w, false, false, |ctx, x, w| {
                let (mut xo, mut wo) = (0, 0);
                let ps: Vec<Product<'_>> = dims
                    .iter()
                    .map(|&(r, c, o)| {
                        let p = Product::MatMul {
                            dims: (r, c, o),
                            x: &x[xo..xo + r * c],
                            w: w.map(|w| &w[wo..wo + c * o]),
                        };
                        (xo, wo) = (xo + r * c, wo + c * o);
                        p
                    })
                    .collect();
                Ok(products(ctx, ell, &ps)?.concat())
            });
            let want: Vec<u64> = dims
                .iter()
                .zip(xs.iter().zip(&ws))
                .flat_map(|(&(r, c, o), (x, w))| {
                    reference(ell, (&[r, c], x), (&[c, o], w), |a, b| Op::MatMul {
                        a,
                        b,
                        bias: None,
                    })
                })
                .collect();
            assert_eq!(got, want, "ℓ={ell}");
        }
    }

    #[test]
    fn elementwise_product_equals_reference() {
        let ell = 37;
        let mut g = prg(3);
        let x = g.ring_elems(10_000, ell);
        let w = g.ring_elems(10_000, ell);
        let want = reference(ell, (&[10_000], &x), (&[10_000], &w), |a, b| Op::Mul {
            a,
            b,
        });
        assert_eq!(
            secure(ell, &x, &w, false, false, |ctx, x, w| mul(ctx, ell, x, w)),
            want
        );
    }

    #[test]
    fn conv2d_equals_reference() {
        let cases = [
            // (input, c_out, kernel, strides, pads, dilations, groups)
            (
                [2usize, 3, 9, 8],
                4usize,
                [3usize, 3],
                [1usize, 1],
                [1usize, 1, 1, 1],
                [1usize, 1],
                1usize,
            ),
            ([1, 4, 11, 11], 6, [3, 2], [2, 1], [0, 2, 1, 0], [1, 2], 2),
            ([1, 6, 7, 7], 6, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 6),
            ([1, 2, 5, 5], 3, [1, 1], [1, 1], [0, 0, 0, 0], [1, 1], 1),
        ];
        for (ell, (input, c_out, kernel, strides, pads, dilations, groups)) in
            [32u32, 8, 64, 41].into_iter().zip(cases)
        {
            let geom = ConvGeom {
                input,
                c_out,
                kernel,
                conv: sci_ir::Conv2d {
                    strides,
                    pads,
                    dilations,
                    groups,
                },
            };
            let mut g = prg(ell as u128 + 5);
            let x = g.ring_elems(input.iter().product(), ell);
            let ws = [c_out, input[1] / groups, kernel[0], kernel[1]];
            let w = g.ring_elems(ws.iter().product(), ell);
            let want = reference(ell, (&input, &x), (&ws, &w), |x, w| Op::Conv2d {
                x,
                w,
                bias: None,
                conv: sci_ir::Conv2d {
                    strides,
                    pads,
                    dilations,
                    groups,
                },
            });
            let got = secure(ell, &x, &w, false, false, |ctx, x, w| {
                conv2d(ctx, ell, &geom, x, w)
            });
            assert_eq!(got.len(), geom.output_shape().iter().product::<usize>());
            assert_eq!(got, want, "ℓ={ell} {geom:?}");
        }
    }

    #[test]
    fn communication() {
        // (300, 8, 64) at ℓ = 32 needs two OT batches of at most 2048 pairs,
        // (100, 3, 1) at ℓ = 8 one; one round each.
        for (ell, dims) in [
            (32u32, (7usize, 9usize, 5usize)),
            (8, (100, 3, 1)),
            (64, (2, 2, 70)),
            (32, (300, 8, 64)),
        ] {
            let mut g = prg(9);
            let x = g.ring_elems(dims.0 * dims.1, ell);
            let w = g.ring_elems(dims.1 * dims.2, ell);
            let (x0, x1) = share(&mut g, &x, ell);
            let r = measured(4, |ctx, warm| {
                let d = if warm { (1, 1, dims.2) } else { dims };
                match ctx.role {
                    Role::P0 => matmul(ctx, ell, d, &x0[..d.0 * d.1], Some(&w[..d.1 * d.2])),
                    Role::P1 => matmul(ctx, ell, d, &x1[..d.0 * d.1], None),
                }
            });
            pin!(r.bits(), cost_bits(ell, dims), "ℓ={ell} {dims:?}");
            pin!(r.stats.map(|s| s.rounds), [ROUNDS; 2], "ℓ={ell} {dims:?}");
        }
        // NKℓ instances of COT_{M(ℓ+1)/2}: for ℓ = 32, 64 outputs per element,
        // 32·128 + 64·528 bits per shared element.
        assert_eq!(cost_bits(32, (1000, 8, 64)), 8000 * (32 * 128 + 64 * 528));
    }

    #[test]
    fn over_tcp_loopback() {
        // 2^16 shared elements against a 16×4 weight matrix (two batches), and
        // a layer of 64 batches whose messages, 1 MiB and 8.6 MB each, are far
        // beyond the socket buffers: the pipeline must not deadlock.
        let ell = 32;
        for (m, k, n) in [(4096, 16, 4), (4096, 32, 64)] {
            let mut g = prg(4);
            let x = g.ring_elems(m * k, ell);
            let w = g.ring_elems(k * n, ell);
            let want = reference(ell, (&[m, k], &x), (&[k, n], &w), |a, b| Op::MatMul {
                a,
                b,
                bias: None,
            });
            let batches = batch_pairs(ell, m * k, n).count();
            assert_eq!(batches, if n == 64 { 64 } else { 2 });
            let got = secure(ell, &x, &w, false, true, |ctx, x, w| {
                // A one-row product sets the OTs up, then the layer's rounds.
                matmul(ctx, ell, (1, k, n), &x[..k], w)?;
                let before = ctx.ch.stats().rounds;
                let y = matmul(ctx, ell, (m, k, n), x, w)?;
                let rounds = ctx.ch.stats().rounds - before;
                check(!costed() || rounds == ROUNDS, || format!("{rounds} rounds"))?;
                Ok(y)
            });
            assert_eq!(got, want, "{m}×{k}×{n}");
        }
    }
}
