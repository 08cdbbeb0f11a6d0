//! Compile-time prediction of the protocol calls each instruction makes at run time
//! (CrypTFlow2's protocols; counts, not timings).
//!
//! Per instruction whose result is secret-shared:
//!
//! * `relu`: one ReLU per element (Algorithm 8: one DReLU and one MUX).
//! * `maxpool`: per output element, one comparison per window element beyond the first
//!   (padded positions are not compared); each comparison is a DReLU of a difference and
//!   a MUX (§5.2.2). `argmax`: `n − 1` comparisons per reduced slice of `n` elements.
//!   Unless the operand is provably non-negative ([`sci_ir::analysis::nonneg`]), the
//!   runtime compares exactly: one more DReLU per *input* element (its sign) and an AND
//!   per comparison.
//! * `trunc`: one truncation per element (Algorithm 5), counted apart when its input is
//!   known non-negative (`trunc_nonneg`: the DReLU of step 2 is skipped, §6.2).
//! * `div_public`, `avgpool`, `global_avgpool`: one division (Theorem 4.1 / Appendix D)
//!   per output element, grouped by divisor (`avgpool` without `count_include_pad` divides
//!   border windows by their smaller counts).
//! * `conv2d`, `matmul`, `mul` (by server weights): `multiplications` is the number of
//!   scalar products; `cots` the number of correlated OTs of the OT-based product of §5.1.1
//!   (one `COT` per bit of each element of the shared operand, its sender messages
//!   combined over all the weights that element meets; a convolution is lowered to a
//!   matrix product over its `im2col` matrix, whose elements repeat input elements);
//!   under SCI_HE instead `ciphertexts_up` and `ciphertexts_down`, the BFV ciphertexts
//!   of the HE layer each way ([`sci_ir::cost::he::product`]).
//! * `mul`, `matmul` of two secret operands (`proto::secmul`): `multiplications` as
//!   above; `cots`: `2ℓ` per element of the left operand (one OT-based product with each
//!   party's share of the right operand as the correlations, [`sci_ir::cost::secmul`]).
//! * `drelu`: the ℓ-bit DReLU invocations in all of the above: one per ReLU, per
//!   comparison, per general truncation and per division (which also runs three DReLUs
//!   over δ-bit values, not counted here).
//!
//! `add`, `sub`, `scale_up`, `mul_public` and data movement are local (no protocol call).
//!
//! The exact communication — bytes each party sends and rounds each waits for, per
//! instruction — is not estimated here: it is the cost model's
//! ([`sci_ir::cost::predict_program`]), reported as [`Traffic`] by [`traffic`].

use sci_ir::cost::Cost;
use sci_ir::cost::predict::Prediction;
use sci_ir::math::{RsqrtParams, SmoothParams, SoftmaxParams};
use sci_ir::schedule::Step;
use sci_ir::spline::SplineParams;
use sci_ir::{Backend, Op, Pool2d, Program, ValueId};
use serde::Serialize;
use std::collections::BTreeMap;

/// Predicted communication of one instruction, of the OT set-up, or of a sum of them
/// (the cost model's [`Cost`], with its latency).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// Bytes the server sends.
    pub server_bytes: u64,
    /// Bytes the client sends.
    pub client_bytes: u64,
    /// Rounds the server waits for.
    pub server_rounds: u64,
    /// Rounds the client waits for.
    pub client_rounds: u64,
    /// The larger of the two (the latency in round trips).
    pub rounds: u64,
}

impl From<Cost> for Traffic {
    fn from(c: Cost) -> Traffic {
        Traffic {
            server_bytes: c.server_bytes,
            client_bytes: c.client_bytes,
            server_rounds: c.server_rounds,
            client_rounds: c.client_rounds,
            rounds: c.rounds(),
        }
    }
}

/// The predicted traffic of a program run over plain TCP with its thread count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Predicted {
    /// One entry per instruction, in program order.
    pub instrs: Vec<Traffic>,
    /// The OT set-up (bytes only; the handshake before it is not counted).
    pub setup: Traffic,
    /// SCI_HE's key set-up (the client's keys, once per session; zero for SCI_OT).
    pub he_keys: Traffic,
    /// The run after the set-ups: bytes summed; rounds per party those of its slowest
    /// lane over the whole run, as the run report's totals count them after the
    /// set-ups.
    pub total: Traffic,
}

/// The predicted traffic of a run ([`Predicted`]) from the cost model's prediction
/// ([`sci_ir::cost::predict_program`]). Exact: `tests/cost_model.rs` checks it against
/// measured runs.
pub fn traffic(pr: &Prediction) -> Predicted {
    Predicted {
        instrs: pr.instrs.iter().copied().map(Traffic::from).collect(),
        setup: pr.setup.into(),
        he_keys: pr.he_keys.into(),
        total: pr.total.into(),
    }
}

/// Predicted protocol calls of one instruction (or a sum of them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Calls {
    /// ReLUs (Algorithm 8).
    pub relu: u64,
    /// ℓ-bit DReLU invocations in total.
    pub drelu: u64,
    /// General truncations (Algorithm 5).
    pub trunc: u64,
    /// Truncations of known non-negative values (no DReLU).
    pub trunc_nonneg: u64,
    /// Pairwise comparisons of MaxPool and ArgMax.
    pub comparisons: u64,
    /// Divisions by a public divisor: divisor → count.
    pub divisions: BTreeMap<u64, u64>,
    /// Scalar products of linear layers.
    pub multiplications: u64,
    /// Correlated OTs of the OT-based linear layers.
    pub cots: u64,
    /// SCI_HE: ciphertexts the client sends in the HE-based linear layers
    /// ([`sci_ir::cost::he::product`]).
    pub ciphertexts_up: u64,
    /// SCI_HE: ciphertexts the server sends back.
    pub ciphertexts_down: u64,
}

impl Calls {
    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &Calls) {
        self.relu += other.relu;
        self.drelu += other.drelu;
        self.trunc += other.trunc;
        self.trunc_nonneg += other.trunc_nonneg;
        self.comparisons += other.comparisons;
        for (d, n) in &other.divisions {
            *self.divisions.entry(*d).or_default() += n;
        }
        self.multiplications += other.multiplications;
        self.cots += other.cots;
        self.ciphertexts_up += other.ciphertexts_up;
        self.ciphertexts_down += other.ciphertexts_down;
    }

    /// Whether the instruction calls no protocol.
    pub fn is_local(&self) -> bool {
        *self == Calls::default()
    }
}

/// The calls of instruction `v` of `p` (ring bit width taken from its type), those of
/// its [`Step`] ([`Step::of`]: the protocol the runtime runs); `nonneg` is
/// [`sci_ir::analysis::nonneg`] of `p`.
pub fn calls(p: &Program, nonneg: &[bool], v: ValueId) -> Calls {
    let i = p.instr(v);
    let mut c = Calls::default();
    let bits = match i.ty.encoding() {
        sci_ir::Encoding::Ring { bits } => u64::from(bits),
        sci_ir::Encoding::Field { modulus } => u64::from(64 - modulus.leading_zeros()),
        sci_ir::Encoding::Real => 32,
    };
    let numel = i.ty.numel() as u64;
    let shape = |v: &sci_ir::ValueId| p.ty(*v).shape().to_vec();
    let shared = |v: &sci_ir::ValueId| !p.ty(*v).owner().server_knows();
    // The sign DReLUs of an exact MaxPool/ArgMax over `x`: one per element.
    let signs = |x: &sci_ir::ValueId, exact: bool| {
        if exact { p.ty(*x).numel() as u64 } else { 0 }
    };
    match (Step::of(p, nonneg, v), &i.op) {
        (Step::Relu, _) => {
            c.relu = numel;
            c.drelu = numel;
        }
        (Step::ReluTrunc { .. }, _) => {
            c.relu = numel;
            c.drelu = numel;
            c.trunc_nonneg = numel;
        }
        (Step::MaxPool { exact }, Op::MaxPool { x, pool }) => {
            let xs = shape(x);
            let pairs = |lens: Vec<usize>| lens.iter().map(|&k| k as u64 - 1).sum::<u64>();
            let per_plane = match sci_ir::params::pool::separable(pool, [xs[2], xs[3]], exact) {
                Some(sep) => pairs(sep.cols_lens(1)) + pairs(sep.rows_lens(1)),
                None => window_counts(pool, &xs, false)
                    .iter()
                    .map(|&k| k.saturating_sub(1))
                    .sum::<u64>(),
            };
            c.comparisons = per_plane * (xs[0] * xs[1]) as u64;
            c.drelu = c.comparisons + signs(x, exact);
        }
        (Step::ArgMax { exact }, Op::ArgMax { x, axis, .. }) => {
            let n = shape(x).get(*axis).copied().unwrap_or(1).max(1) as u64;
            let slices = p.ty(*x).numel() as u64 / n;
            c.comparisons = slices * (n - 1);
            c.drelu = c.comparisons + signs(x, exact);
        }
        (Step::Trunc { nonneg, .. }, _) => {
            if nonneg {
                c.trunc_nonneg = numel;
            } else {
                c.trunc = numel;
                c.drelu = numel;
            }
        }
        (Step::Div { d, .. }, _) => {
            c.divisions.insert(d, numel);
        }
        (
            Step::AvgPool,
            Op::AvgPool {
                x,
                pool,
                count_include_pad,
            },
        ) => {
            let xs = shape(x);
            let planes = (xs[0] * xs[1]) as u64;
            for k in window_counts(pool, &xs, *count_include_pad) {
                *c.divisions.entry(k).or_default() += planes;
            }
        }
        (Step::AvgPool, Op::GlobalAvgPool { x }) => {
            let xs = shape(x);
            c.divisions.insert((xs[2] * xs[3]) as u64, numel);
        }
        (Step::Product { backend }, op) => {
            // The scalar products and the elements of the shared operand (a
            // convolution's `im2col` matrix, a `mul`'s operand broadcast to the output).
            let (mults, elems) = match op {
                Op::Conv2d {
                    w,
                    conv: sci_ir::Conv2d { groups, .. },
                    ..
                } => {
                    let (ws, ys) = (shape(w), i.ty.shape().to_vec());
                    let k = (ws[1] * ws[2] * ws[3]) as u64; // per output: C/g·kH·kW
                    let im2col = (ys[0] * ws[1] * ws[2] * ws[3] * ys[2] * ys[3] * groups) as u64;
                    (numel * k, im2col)
                }
                Op::MatMul { a, b, .. } => {
                    let (sa, sb) = (shape(a), shape(b));
                    let x = if shared(a) { &sa } else { &sb };
                    ((sa[0] * sa[1] * sb[1]) as u64, (x[0] * x[1]) as u64)
                }
                _ => (numel, numel),
            };
            c.multiplications += mults;
            match (backend, sci_ir::cost::he::product(p, v)) {
                // ℓ COTs per element of the shared operand.
                (Backend::Ot, _) => c.cots += elems * bits,
                (Backend::Rlwe, _) => {
                    if let Some(Ok(l)) = sci_ir::rlwe::layout(p, v) {
                        c.ciphertexts_up += l.in_cts() as u64;
                        c.ciphertexts_down += l.out_cts() as u64;
                    }
                }
                (Backend::He, Some(counts)) => {
                    c.ciphertexts_up += counts.up as u64;
                    c.ciphertexts_down += counts.down as u64;
                }
                (Backend::He, None) => {}
            }
        }
        (Step::SecretProduct { backend }, _) => {
            if let Some((rows, cols, outs)) = sci_ir::cost::predict::secret_product_dims(p, v) {
                c.multiplications += (rows * cols * outs) as u64;
                match sci_ir::rlwe::layouts(p, v) {
                    // The two cross terms' ciphertexts.
                    Some(Ok(ls)) if backend == Backend::Rlwe => {
                        for l in ls {
                            c.ciphertexts_up += l.in_cts() as u64;
                            c.ciphertexts_down += l.out_cts() as u64;
                        }
                    }
                    // Two products X·Y_b: ℓ COTs per element of X each.
                    _ => c.cots += 2 * (rows * cols) as u64 * bits,
                }
            }
        }
        (Step::Smooth { kind, s }, _) => {
            // One DReLU (the sign); the secret products of exp's tree (K − 1) and of
            // the reciprocal (2 per iteration), each rounded by a non-negative
            // truncation, and the final rounding (`proto::sigmoid`).
            if let Ok(sp) = SmoothParams::of_op(kind, bits as u32, s) {
                let products = (sp.exp().digits() - 1) as u64 + 2 * u64::from(sp.recip().iters());
                c.drelu = numel;
                c.multiplications = products * numel;
                c.trunc_nonneg = (products + 1) * numel;
                // Two products X·Y_b: ℓ COTs per element each.
                c.cots = 2 * products * numel * bits;
            }
        }
        (Step::Spline { func, s }, _) => {
            // The sign and one DReLU per knot; two rounded products (the powers), each
            // truncated, and the final non-negative truncation (`proto::spline`).
            if let Ok(sp) = SplineParams::new(func, bits as u32, s) {
                c.drelu = (1 + sp.knots().len() as u64) * numel;
                c.multiplications = 2 * numel;
                c.trunc_nonneg = 3 * numel;
                c.cots = 4 * numel * bits;
            }
        }
        (Step::Rsqrt { s }, _) => {
            // The range reduction's ReLU and ℓ − 1 comparisons (DReLUs); its product
            // `v·M`, three per Newton step and the output factor's, each truncated
            // (`proto::rsqrt`).
            if let Ok(rp) = RsqrtParams::new(bits as u32, s) {
                let products = 2 + 3 * u64::from(rp.iters());
                c.drelu = bits * numel;
                c.multiplications = products * numel;
                c.trunc_nonneg = products * numel;
                c.cots = 2 * products * numel * bits;
            }
        }
        (Step::Softmax { s, exact }, Op::Softmax { x, axis }) => {
            // The lines' tournaments (MaxPool's: `n − 1` comparisons per line, the
            // signs in exact mode); exp's tree (`K − 1` products per element); per line
            // the range reduction (a ReLU and ℓ − 1 DReLUs, one product), the
            // reciprocal's `2n` products and the output factor's; the final product per
            // element; every product rounded by a non-negative truncation
            // (`proto::softmax`).
            let n = shape(x).get(*axis).copied().unwrap_or(1).max(1);
            if let Ok(sp) = SoftmaxParams::new(bits as u32, s, n) {
                let rows = numel / n as u64;
                let products = sp.exp().digits() as u64 * numel
                    + (2 + 2 * u64::from(sp.recip().recip().iters())) * rows;
                c.comparisons = rows * (n as u64 - 1);
                c.drelu = c.comparisons + signs(x, exact) + bits * rows;
                c.multiplications = products;
                c.trunc_nonneg = products;
                c.cots = 2 * products * bits;
            }
        }
        _ => {}
    }
    // Each division runs one ℓ-bit DReLU (Appendix D).
    c.drelu += c.divisions.values().sum::<u64>();
    c
}

/// The window sizes ([`Pool2d::window_counts`]) of one plane of a pooling over an
/// `[n, c, h, w]` operand (the program is type-checked, so the geometry is valid).
fn window_counts(pool: &Pool2d, shape: &[usize], include_pad: bool) -> Vec<u64> {
    let d = |i: usize| shape.get(i).copied().unwrap_or(1);
    pool.window_counts([d(2), d(3)], include_pad)
        .unwrap_or_default()
}
