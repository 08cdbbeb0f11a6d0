//! `sci-bench` subcommands for the CrypTFlow2 protocols ([`sci_runtime::proto`]).
//!
//! `sci-bench PROTOCOL --bits L --n N [--m M] [--scale S] [--d D] [--digit D]
//! [--threads T] --json`, PROTOCOL one of `mill`, `drelu`, `relu`, `trunc`,
//! `trunc-nonneg`, `div`, `maxpool`, `argmax`, `matmul`, `secmul`, `exp`, `recip`,
//! `sigmoid`, `tanh`, `rsqrt`, `erf`, `gelu`, `gelu-tanh`, `softmax`. Each party draws its
//! own random shares (the cost does not depend on the values). `n` counts:
//! comparisons (`mill`), elements (`drelu`, `relu`, `trunc`, `trunc-nonneg`,
//! `div`), windows of `d` elements, i.e. outputs (`maxpool`, `argmax`), lines of
//! `d` elements (`softmax`), and
//! shared elements of the `n × cols` operand (`matmul`, by a `cols × outs`
//! server matrix). `formula_bits_per_op` is the cost model's exact transcript
//! of the protocol divided by `n`, without the one-time OT set-up: on IKNP
//! its bits; on silent its bits on the wire plus the Ferret COTs it draws at
//! the main LPN set's amortised 0.447 bits each ([`formula_bits`]). The
//! protocols run on an [`Engine`] over all `T` lanes (alternating roles).
//! The non-linear layers are one generic workload over the [`Modulus`]
//! ([`layer_workload`]), shared with their `-field` twins.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use sci_ir::cost::{self, Transcript};
use sci_ir::math::{ExpParams, RecipParams, RsqrtParams, Smooth, SmoothParams, SoftmaxParams};
use sci_ir::spline::{SplineFn, SplineParams};
use sci_runtime::crypto::Prg;
use sci_runtime::ot::{OtKind, Session};
use sci_runtime::proto::engine::Engine;
use sci_runtime::proto::maxpool::Compare;
use sci_runtime::proto::rdiv::Sign;
use sci_runtime::proto::secmul::SecretProduct;
use sci_runtime::proto::{
    Ctx, DEFAULT_RADIX, Modulus, ProtoError, Role, default_radix, exp, mill, rdiv, recip,
};
use serde_json::{Map, Value, json};

use super::{Common, Work};

/// Parameters of the protocol benchmarks.
#[derive(Args, Debug, Clone)]
pub struct ProtoArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    layer: LayerParams,
    /// `matmul`: columns of the shared operand (rows of the weights).
    #[arg(long, default_value_t = 64)]
    cols: usize,
    /// `matmul`: columns of the weights.
    #[arg(long, default_value_t = 64)]
    outs: usize,
    /// `exp`: the digit width `d` of its table lookups (`K = ⌈ℓ/d⌉` tables of `2^d`
    /// entries; 8, the IR's sigmoid/tanh's).
    #[arg(long, default_value_t = SmoothParams::OP_DIGIT)]
    digit: u32,
}

/// The protocol benchmarks.
#[derive(Subcommand, Debug)]
pub enum ProtoCmd {
    /// Millionaires' Π_MILL^{ℓ,m} (Alg. 1) on `n` random pairs.
    Mill(ProtoArgs),
    /// DReLU over Z_{2^ℓ} (Alg. 2).
    Drelu(ProtoArgs),
    /// ReLU over Z_{2^ℓ} (Alg. 8).
    Relu(ProtoArgs),
    /// Truncation by `--scale` (Alg. 5).
    Trunc(ProtoArgs),
    /// Truncation of non-negative inputs (no DReLU).
    TruncNonneg(ProtoArgs),
    /// Division by `--d` (Thm. 4.1, Alg. 9).
    Div(ProtoArgs),
    /// Max of `n` windows of `--d` elements (tree reduction).
    Maxpool(ProtoArgs),
    /// Position of the first max of `n` windows of `--d` elements.
    Argmax(ProtoArgs),
    /// `n × cols` shared times `cols × outs` server weights (OT-based).
    Matmul(ProtoArgs),
    /// `n × cols` shared times `cols × outs` shared (secret × secret, `secmul`: two
    /// OT-based products); `--cols 1 --outs 1` is the elementwise product.
    Secmul(ProtoArgs),
    /// `exp` of `n` random inputs (`proto::exp::exp_neg`, SIRNN's digit tables; a
    /// positive input gives 0): input and output scale `--scale`, `--digit`-bit digits.
    Exp(ProtoArgs),
    /// The reciprocal of `n` inputs in `[1, 2]` at scale `--scale` (`proto::recip`,
    /// Goldschmidt: the iterations that its error bound needs).
    Recip(ProtoArgs),
    /// Sigmoid of `n` random inputs at scale `--scale` (`proto::sigmoid`, the IR op's
    /// parameters: exp, reciprocal, sign).
    Sigmoid(ProtoArgs),
    /// Tanh, as `sigmoid`.
    Tanh(ProtoArgs),
    /// Reciprocal square root of `n` random inputs at scale `--scale` (`proto::rsqrt`:
    /// range reduction, Newton's iteration).
    Rsqrt(ProtoArgs),
    /// Erf of `n` random inputs at scale `--scale` (`proto::spline`: a piecewise cubic
    /// of `|x|` on public knots).
    Erf(ProtoArgs),
    /// GELU (exact), as `erf`.
    Gelu(ProtoArgs),
    /// GELU (tanh approximation), as `erf`.
    GeluTanh(ProtoArgs),
    /// Softmax of `n` random lines of `--d` elements at scale `--scale`
    /// (`proto::softmax`: the lines' maxima, exp, the sums' reciprocal, one secret
    /// product; exact comparisons unless `--narrow`).
    Softmax(ProtoArgs),
}

impl ProtoCmd {
    /// The common arguments.
    pub fn common(&self) -> &Common {
        &self.args().common
    }

    fn args(&self) -> &ProtoArgs {
        match self {
            ProtoCmd::Mill(a)
            | ProtoCmd::Drelu(a)
            | ProtoCmd::Relu(a)
            | ProtoCmd::Trunc(a)
            | ProtoCmd::TruncNonneg(a)
            | ProtoCmd::Div(a)
            | ProtoCmd::Maxpool(a)
            | ProtoCmd::Argmax(a)
            | ProtoCmd::Matmul(a)
            | ProtoCmd::Secmul(a)
            | ProtoCmd::Exp(a)
            | ProtoCmd::Recip(a)
            | ProtoCmd::Sigmoid(a)
            | ProtoCmd::Tanh(a)
            | ProtoCmd::Rsqrt(a)
            | ProtoCmd::Erf(a)
            | ProtoCmd::Gelu(a)
            | ProtoCmd::GeluTanh(a)
            | ProtoCmd::Softmax(a) => a,
        }
    }

    /// Extra JSON fields (parameters) of the benchmark.
    pub fn extra(&self) -> Map<String, Value> {
        let mut a = self.args().layer;
        let (ot, ell) = (self.common().ot, self.common().bits);
        let m =
            *a.m.get_or_insert(default_radix(ot, sci_ir::params::Modulus::Pow2(ell)));
        let v = match self {
            ProtoCmd::Mill(_) | ProtoCmd::Drelu(_) | ProtoCmd::Relu(_) => json!({"m": m}),
            ProtoCmd::Trunc(_)
            | ProtoCmd::TruncNonneg(_)
            | ProtoCmd::Recip(_)
            | ProtoCmd::Sigmoid(_)
            | ProtoCmd::Tanh(_)
            | ProtoCmd::Rsqrt(_)
            | ProtoCmd::Erf(_)
            | ProtoCmd::Gelu(_)
            | ProtoCmd::GeluTanh(_) => json!({"m": m, "scale": a.scale}),
            ProtoCmd::Div(_) => json!({"m": m, "d": a.d}),
            ProtoCmd::Exp(_) => json!({"m": m, "scale": a.scale, "digit": self.args().digit}),
            ProtoCmd::Maxpool(_) | ProtoCmd::Argmax(_) => {
                json!({"m": m, "d": a.d, "window": a.d, "narrow": a.narrow})
            }
            ProtoCmd::Softmax(_) => {
                json!({"m": m, "scale": a.scale, "d": a.d, "narrow": a.narrow})
            }
            ProtoCmd::Matmul(_) | ProtoCmd::Secmul(_) => {
                json!({"cols": self.args().cols, "outs": self.args().outs})
            }
        };
        match v {
            Value::Object(o) => o,
            _ => Map::new(),
        }
    }
}

/// A non-linear layer benchmarked over any [`Modulus`]: the ring
/// subcommands and their `-field` twins ([`super::he`]) share this code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// DReLU (`MSB` over a ring, [`sign::negative`]).
    Drelu,
    /// ReLU.
    Relu,
    /// Truncation by `2^scale` (`nonneg`: of non-negative inputs; over a
    /// field, the division by `2^scale`).
    Trunc {
        /// Inputs known to be non-negative.
        nonneg: bool,
    },
    /// Division by `d`.
    Div,
    /// Max of windows of `d` elements.
    Maxpool,
    /// Position of the first max of windows of `d` elements.
    Argmax,
}

/// The parameters of a [`Layer`] benchmark, over a ring or a field alike
/// (also the millionaires' radix of `mill`).
#[derive(Args, Clone, Copy, Debug)]
pub struct LayerParams {
    /// Millionaires' radix m (1..=8); default 4 over IKNP, over the silent
    /// engine the cost model's cheapest ReLU at the benchmark's ℓ or field (2 at
    /// ℓ = 32; `sci_runtime::proto::default_radix`).
    #[arg(long)]
    pub m: Option<u32>,
    /// Truncations: the shift s (over a field, the division by 2^s).
    #[arg(long, default_value_t = 12)]
    pub scale: u32,
    /// Divisions: the divisor; max-pooling and argmax: the window size.
    #[arg(long, default_value_t = 49)]
    pub d: u64,
    /// Max-pooling and argmax: inputs known to lie in a half-range interval
    /// (no sign tracking).
    #[arg(long)]
    pub narrow: bool,
}

/// The benchmark of `layer` on `n` elements (windows for the pooling
/// layers) mod `md`: its name (the ring's, `-field` appended over an odd
/// modulus), the work of each party (on its own random shares: the cost does
/// not depend on the values) and the exact formula bits per op.
pub fn layer_workload(
    layer: Layer,
    md: Modulus,
    n: usize,
    p: LayerParams,
    ot: OtKind,
) -> Result<(String, Work, Option<f64>)> {
    let md = md.check()?;
    let m = p.m.unwrap_or(DEFAULT_RADIX);
    if !(1..=8).contains(&m) {
        bail!("--m must be in 1..=8");
    }
    let per = |t: Transcript| Some(formula_bits(ot, &t) / n.max(1) as f64);
    let window = p.d as usize;
    let pooling = matches!(layer, Layer::Maxpool | Layer::Argmax);
    if pooling && window == 0 {
        bail!("--d (the window size) must be at least 1");
    }
    let x = md.random(&mut Prg::from_os()?, if pooling { n * window } else { n });
    let (name, work, formula): (&str, Work, Option<f64>) = match layer {
        Layer::Drelu => (
            "drelu",
            Box::new(move |s: &mut Session| Ok(Engine::new(s, m).msb(md, &x).map(drop)?)),
            per(cost::sign::drelu(md.into(), m, n)),
        ),
        Layer::Relu => (
            "relu",
            Box::new(move |s: &mut Session| Ok(Engine::new(s, m).relu(md, &x).map(drop)?)),
            per(cost::select::relu(md.into(), m, n)),
        ),
        Layer::Trunc { nonneg } => {
            let sh = p.scale;
            let f = match md {
                Modulus::Pow2(ell) if sh < ell && nonneg => cost::div::trunc_nonneg(ell, sh, m, n),
                Modulus::Pow2(ell) if sh < ell => cost::div::trunc(ell, sh, m, n),
                Modulus::Pow2(_) => bail!("--scale must be below --bits"),
                Modulus::Odd(_) if sh == 0 || sh >= md.bits() => {
                    bail!("--scale must be in 1..⌈log₂ n⌉")
                }
                Modulus::Odd(_) => {
                    let known = if nonneg { Sign::NonNeg } else { Sign::Any };
                    rdiv::transcript(md, &[1 << sh], m, n, known)
                }
            };
            (
                if nonneg { "trunc-nonneg" } else { "trunc" },
                Box::new(move |s: &mut Session| {
                    Ok(Engine::new(s, m).trunc(md, sh, &x, nonneg).map(drop)?)
                }),
                per(f),
            )
        }
        Layer::Div => {
            let d = p.d;
            if d == 0 || u128::from(d) >= md.value() {
                match md {
                    Modulus::Pow2(_) => bail!("--d must be in 1..2^ℓ"),
                    Modulus::Odd(_) => bail!("--d must be in 1..n"),
                }
            }
            (
                "div",
                Box::new(move |s: &mut Session| {
                    Ok(Engine::new(s, m).rdiv(md, &x, &[d], Sign::Any).map(drop)?)
                }),
                per(rdiv::transcript(md, &[d], m, n, Sign::Any)),
            )
        }
        Layer::Maxpool | Layer::Argmax => {
            let index = layer == Layer::Argmax;
            let cmp = if p.narrow {
                Compare::Narrow
            } else {
                Compare::Exact
            };
            let exact = cmp == Compare::Exact;
            let f = cost::pool::maxpool(md.into(), m, n * window, &vec![window; n], exact, index);
            (
                if index { "argmax" } else { "maxpool" },
                Box::new(move |s: &mut Session| {
                    let mut e = Engine::new(s, m);
                    if index {
                        e.argmax(md, &x, &[n, window], 1, cmp)?;
                    } else {
                        // Windows of d consecutive elements: an [n, d] axis.
                        let pool = sci_ir::Pool2d {
                            kernel: [1, window],
                            strides: [1, window],
                            pads: [0; 4],
                            ceil_mode: false,
                        };
                        e.maxpool(md, &x, [1, 1, n, window], &pool, cmp)?;
                    }
                    Ok(())
                }),
                per(f),
            )
        }
    };
    let name = match md {
        Modulus::Pow2(_) => name.to_string(),
        Modulus::Odd(_) => format!("{name}-field"),
    };
    Ok((name, work, formula))
}

/// The benchmark of `cmd`: name, common arguments, work, formula bits per op.
pub fn workload(cmd: &ProtoCmd) -> Result<(String, &Common, Work, Option<f64>)> {
    let mut a = cmd.args().clone();
    let c = cmd.common();
    let (n, ell) = (c.n, c.bits);
    a.layer
        .m
        .get_or_insert(default_radix(c.ot, sci_ir::params::Modulus::Pow2(ell)));
    if !(1..=64).contains(&ell) {
        bail!("--bits must be in 1..=64");
    }
    let layer = match cmd {
        ProtoCmd::Drelu(_) => Layer::Drelu,
        ProtoCmd::Relu(_) => Layer::Relu,
        ProtoCmd::Trunc(_) => Layer::Trunc { nonneg: false },
        ProtoCmd::TruncNonneg(_) => Layer::Trunc { nonneg: true },
        ProtoCmd::Div(_) => Layer::Div,
        ProtoCmd::Maxpool(_) => Layer::Maxpool,
        ProtoCmd::Argmax(_) => Layer::Argmax,
        ProtoCmd::Mill(_)
        | ProtoCmd::Matmul(_)
        | ProtoCmd::Secmul(_)
        | ProtoCmd::Exp(_)
        | ProtoCmd::Recip(_)
        | ProtoCmd::Sigmoid(_)
        | ProtoCmd::Tanh(_)
        | ProtoCmd::Rsqrt(_)
        | ProtoCmd::Erf(_)
        | ProtoCmd::Gelu(_)
        | ProtoCmd::GeluTanh(_)
        | ProtoCmd::Softmax(_) => {
            let (name, work, formula) = ring_only(cmd, &a, n, ell, c.ot)?;
            return Ok((name.into(), c, work, formula));
        }
    };
    let (name, work, formula) = layer_workload(layer, Modulus::Pow2(ell), n, a.layer, c.ot)?;
    Ok((name, c, work, formula))
}

/// The benchmarks without a field twin: the millionaires', the OT-based matrix
/// product, the secret × secret product, exp, the reciprocal, sigmoid and tanh.
fn ring_only(
    cmd: &ProtoCmd,
    a: &ProtoArgs,
    n: usize,
    ell: u32,
    ot: OtKind,
) -> Result<(&'static str, Work, Option<f64>)> {
    let m = a.layer.m.unwrap_or(DEFAULT_RADIX);
    if !(1..=8).contains(&m) {
        bail!("--m must be in 1..=8");
    }
    let per = |t: Transcript| Some(formula_bits(ot, &t) / n.max(1) as f64);
    let (cols, outs) = (a.cols, a.outs);
    Ok(match cmd {
        ProtoCmd::Matmul(_) => {
            let mut g = Prg::from_os()?;
            let x = g.ring_elems(n * cols, ell);
            let w = g.ring_elems(cols * outs, ell);
            (
                "matmul",
                Box::new(move |s: &mut Session| {
                    let server = s.party() == sci_runtime::net::Party::Server;
                    let w = server.then_some(&w[..]);
                    Ok(Engine::new(s, m)
                        .matmul(ell, (n, cols, outs), &x, w)
                        .map(drop)?)
                }),
                per(cost::linear::matmul(ell, (n, cols, outs), true)),
            )
        }
        ProtoCmd::Secmul(_) => {
            let mut g = Prg::from_os()?;
            let x = g.ring_elems(n * cols, ell);
            let y = g.ring_elems(cols * outs, ell);
            (
                "secmul",
                Box::new(move |s: &mut Session| {
                    let p = SecretProduct::MatMul {
                        dims: (n, cols, outs),
                        x: &x,
                        y: &y,
                    };
                    Ok(Engine::new(s, m).secret_products(ell, &[p]).map(drop)?)
                }),
                per(cost::secmul::matmul(ell, (n, cols, outs), true)),
            )
        }
        ProtoCmd::Sigmoid(_) | ProtoCmd::Tanh(_) => {
            let (kind, name) = match cmd {
                ProtoCmd::Tanh(_) => (Smooth::Tanh, "tanh"),
                _ => (Smooth::Sigmoid, "sigmoid"),
            };
            let s = a.layer.scale;
            let p = SmoothParams::of_op(kind, ell, s)?;
            let x = Prg::from_os()?.ring_elems(n, ell);
            (
                name,
                Box::new(move |sess: &mut Session| {
                    Ok(Engine::new(sess, m).smooth(ell, kind, s, &x).map(drop)?)
                }),
                per(cost::math::smooth(&p, m, n, true)),
            )
        }
        ProtoCmd::Exp(_) | ProtoCmd::Recip(_) => {
            let s = a.layer.scale;
            let x = Prg::from_os()?.ring_elems(n, ell);
            let err = |e: sci_ir::math::MathError| anyhow::anyhow!("{e}");
            if let ProtoCmd::Exp(_) = cmd {
                let p = ExpParams::new(ell, s, s, a.digit).map_err(err)?;
                let t = cost::math::exp_neg(&p, m, n, true);
                (
                    "exp",
                    Box::new(move |sess: &mut Session| {
                        elementwise(sess, m, &x, |ctx, x| exp::exp_neg(ctx, &p, x))
                    }),
                    per(t),
                )
            } else {
                let p = RecipParams::new(ell, s).map_err(err)?;
                let t = cost::math::recip(&p, m, n, true);
                (
                    "recip",
                    Box::new(move |sess: &mut Session| {
                        elementwise(sess, m, &x, |ctx, x| recip::recip(ctx, &p, x))
                    }),
                    per(t),
                )
            }
        }
        ProtoCmd::Rsqrt(_) => {
            let s = a.layer.scale;
            let p = RsqrtParams::new(ell, s)?;
            let x = Prg::from_os()?.ring_elems(n, ell);
            (
                "rsqrt",
                Box::new(move |sess: &mut Session| {
                    Ok(Engine::new(sess, m).rsqrt(ell, s, &x).map(drop)?)
                }),
                per(cost::math::rsqrt(&p, m, n, true)),
            )
        }
        ProtoCmd::Erf(_) | ProtoCmd::Gelu(_) | ProtoCmd::GeluTanh(_) => {
            let (func, name) = match cmd {
                ProtoCmd::Erf(_) => (SplineFn::Erf, "erf"),
                ProtoCmd::Gelu(_) => (SplineFn::Gelu, "gelu"),
                _ => (SplineFn::GeluTanh, "gelu-tanh"),
            };
            let s = a.layer.scale;
            let p = SplineParams::new(func, ell, s)?;
            let x = Prg::from_os()?.ring_elems(n, ell);
            (
                name,
                Box::new(move |sess: &mut Session| {
                    Ok(Engine::new(sess, m).spline(ell, func, s, &x).map(drop)?)
                }),
                per(cost::math::spline(&p, m, n, true)),
            )
        }
        ProtoCmd::Softmax(_) => {
            let (s, d) = (a.layer.scale, a.layer.d as usize);
            let p = SoftmaxParams::new(ell, s, d)?;
            let x = Prg::from_os()?.ring_elems(n * d, ell);
            let cmp = if a.layer.narrow {
                Compare::Narrow
            } else {
                Compare::Exact
            };
            (
                "softmax",
                Box::new(move |sess: &mut Session| {
                    let shape = [n, d];
                    Ok(Engine::new(sess, m)
                        .softmax(ell, s, &x, &shape, 1, cmp)
                        .map(drop)?)
                }),
                per(cost::math::softmax(&p, m, n, !a.layer.narrow, true)),
            )
        }
        ProtoCmd::Mill(_) => {
            let x = Prg::from_os()?.ring_elems(n, ell);
            (
                "mill",
                Box::new(move |s: &mut Session| {
                    elementwise(s, m, &x, |ctx, x| mill::mill(ctx, ell, 1, x))
                }),
                per(cost::mill::mill(ell, m, 1, n)),
            )
        }
        other => bail!("{other:?} is not a ring-only benchmark"),
    })
}

/// Runs `f` at radix `m` on each lane's chunk of `x`, roles alternating across lanes
/// (as the engine's elementwise layers): the benchmarks of protocols that have no
/// engine method (`mill`, `exp`, `recip`).
fn elementwise<R: Send>(
    sess: &mut Session,
    m: u32,
    x: &[u64],
    f: impl Fn(&mut Ctx<'_>, &[u64]) -> Result<R, ProtoError> + Sync,
) -> Result<()> {
    sess.run(x.len(), |ch| {
        let mut ctx = Ctx::new(
            &mut ch.lane.ch,
            &mut ch.lane.ot,
            &mut ch.lane.prg,
            Role::from_sender(ch.sender),
        )
        .with_radix(m);
        f(&mut ctx, &x[ch.range]).map(drop)
    })?;
    Ok(())
}

/// Bits of transcript `t` on engine `ot`, without the OT set-up: IKNP's as they are;
/// on silent its bits on the wire plus the COTs it draws at the main LPN set's
/// amortised rate ([`cost::ferret::amortized_bits`]).
pub fn formula_bits(ot: OtKind, t: &Transcript) -> f64 {
    match ot {
        OtKind::Iknp => t.bits() as f64,
        OtKind::Silent => cost::ferret::amortized_bits(t),
    }
}
