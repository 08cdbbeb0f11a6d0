//! `sci-bench` subcommands for the CrypTFlow2 protocols ([`sci_runtime::proto`]).
//!
//! `sci-bench PROTOCOL --bits L --n N [--m M] [--scale S] [--d D]
//! [--threads T] --json`, PROTOCOL one of `mill`, `drelu`, `relu`, `trunc`,
//! `trunc-nonneg`, `div`, `maxpool`, `argmax`, `matmul`. Each party draws its
//! own random shares (the cost does not depend on the values). `n` counts:
//! comparisons (`mill`), elements (`drelu`, `relu`, `trunc`, `trunc-nonneg`,
//! `div`), windows of `d` elements, i.e. outputs (`maxpool`, `argmax`), and
//! shared elements of the `n × cols` operand (`matmul`, by a `cols × outs`
//! server matrix). `formula_bits_per_op` is the exact cost formula of the
//! protocol module (without the one-time OT set-up) divided by `n`. The
//! protocols run on an [`Engine`] over all `T` lanes (alternating roles).

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use sci_runtime::crypto::Prg;
use sci_runtime::ot::Session;
use sci_runtime::pack::mask;
use sci_runtime::proto::engine::Engine;
use sci_runtime::proto::maxpool::{self, Compare, Windows};
use sci_runtime::proto::{Ctx, Role, drelu, matmul, mill, rdiv, relu, trunc};
use serde_json::{Map, Value, json};

use super::{Common, Work};

/// Parameters of the protocol benchmarks.
#[derive(Args, Debug, Clone)]
pub struct ProtoArgs {
    #[command(flatten)]
    pub common: Common,
    /// Millionaires' radix m (1..=8).
    #[arg(long, default_value_t = 4)]
    m: u32,
    /// Shift s of `trunc` / `trunc-nonneg`.
    #[arg(long, default_value_t = 12)]
    scale: u32,
    /// Divisor of `div`; window size of `maxpool` / `argmax`.
    #[arg(long, default_value_t = 49)]
    d: u64,
    /// `maxpool` / `argmax`: inputs known to lie in a half-range interval
    /// (no sign tracking).
    #[arg(long)]
    narrow: bool,
    /// `matmul`: columns of the shared operand (rows of the weights).
    #[arg(long, default_value_t = 64)]
    cols: usize,
    /// `matmul`: columns of the weights.
    #[arg(long, default_value_t = 64)]
    outs: usize,
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
            | ProtoCmd::Matmul(a) => a,
        }
    }

    /// Extra JSON fields (parameters) of the benchmark.
    pub fn extra(&self) -> Map<String, Value> {
        let a = self.args();
        let v = match self {
            ProtoCmd::Mill(_) | ProtoCmd::Drelu(_) | ProtoCmd::Relu(_) => json!({"m": a.m}),
            ProtoCmd::Trunc(_) | ProtoCmd::TruncNonneg(_) => json!({"m": a.m, "scale": a.scale}),
            ProtoCmd::Div(_) => json!({"m": a.m, "d": a.d}),
            ProtoCmd::Maxpool(_) | ProtoCmd::Argmax(_) => {
                json!({"m": a.m, "d": a.d, "window": a.d, "narrow": a.narrow})
            }
            ProtoCmd::Matmul(_) => json!({"cols": a.cols, "outs": a.outs}),
        };
        match v {
            Value::Object(o) => o,
            _ => Map::new(),
        }
    }
}

/// The benchmark of `cmd`: name, common arguments, work, formula bits per op.
pub fn workload(cmd: &ProtoCmd) -> Result<(String, &Common, Work, Option<f64>)> {
    let a = cmd.args().clone();
    let c = cmd.common();
    let (n, ell, m) = (c.n, c.bits, a.m);
    if !(1..=64).contains(&ell) {
        bail!("--bits must be in 1..=64");
    }
    if !(1..=8).contains(&m) {
        bail!("--m must be in 1..=8");
    }
    let per = |bits: u64| Some(bits as f64 / n.max(1) as f64);
    // Random shares (each party draws its own; the cost does not depend on
    // the values).
    let elems = match cmd {
        ProtoCmd::Maxpool(_) | ProtoCmd::Argmax(_) => n * a.d as usize,
        ProtoCmd::Matmul(_) => n * a.cols,
        _ => n,
    };
    let x = Prg::from_os()?.ring_elems(elems, ell);
    let (name, work, formula): (&str, Work, Option<f64>) = match cmd {
        ProtoCmd::Mill(_) => (
            "mill",
            Box::new(move |s: &mut Session| {
                s.run(n, |ch| {
                    let mut ctx = Ctx::new(
                        &mut ch.lane.ch,
                        &mut ch.lane.ot,
                        Role::from_sender(ch.sender),
                    )
                    .with_radix(m);
                    mill::mill(&mut ctx, ell, 1, &x[ch.range]).map(drop)
                })?;
                Ok(())
            }),
            per(mill::cost_bits(ell, m, 1, n)),
        ),
        ProtoCmd::Drelu(_) => (
            "drelu",
            Box::new(move |s: &mut Session| Ok(Engine::new(s, m).msb(ell, &x).map(drop)?)),
            per(drelu::cost_bits(ell, m, n)),
        ),
        ProtoCmd::Relu(_) => (
            "relu",
            Box::new(move |s: &mut Session| Ok(Engine::new(s, m).relu(ell, &x).map(drop)?)),
            per(relu::cost_bits(ell, m, n)),
        ),
        ProtoCmd::Trunc(_) | ProtoCmd::TruncNonneg(_) => {
            let nonneg = matches!(cmd, ProtoCmd::TruncNonneg(_));
            let s_ = a.scale;
            if s_ >= ell {
                bail!("--scale must be below --bits");
            }
            let f = if nonneg {
                trunc::cost_bits_nonneg(ell, s_, m, n)
            } else {
                trunc::cost_bits(ell, s_, m, n)
            };
            (
                if nonneg { "trunc-nonneg" } else { "trunc" },
                Box::new(move |s: &mut Session| {
                    Ok(Engine::new(s, m).trunc(ell, s_, &x, nonneg).map(drop)?)
                }),
                per(f),
            )
        }
        ProtoCmd::Div(_) => {
            let d = a.d;
            if d == 0 || d > mask(ell) {
                bail!("--d must be in 1..2^ℓ");
            }
            (
                "div",
                Box::new(move |s: &mut Session| {
                    Ok(Engine::new(s, m).rdiv(ell, &x, &[d]).map(drop)?)
                }),
                per(rdiv::cost_bits(ell, &[d], m, n)),
            )
        }
        ProtoCmd::Maxpool(_) | ProtoCmd::Argmax(_) => {
            let index = matches!(cmd, ProtoCmd::Argmax(_));
            let d = a.d as usize;
            if d == 0 {
                bail!("--d (the window size) must be at least 1");
            }
            let cmp = if a.narrow {
                Compare::Narrow
            } else {
                Compare::Exact
            };
            let w = Windows::axis(&[n, d], 1)?;
            let f = maxpool::cost_bits(ell, m, n * d, &w, cmp, index);
            (
                if index { "argmax" } else { "maxpool" },
                Box::new(move |s: &mut Session| {
                    let mut e = Engine::new(s, m);
                    if index {
                        e.argmax(ell, &x, &[n, d], 1, cmp)?;
                    } else {
                        // Windows of d consecutive elements: an [n, d] axis.
                        let pool = sci_ir::Pool2d {
                            kernel: [1, d],
                            strides: [1, d],
                            pads: [0; 4],
                            ceil_mode: false,
                        };
                        e.maxpool(ell, &x, [1, 1, n, d], &pool, cmp)?;
                    }
                    Ok(())
                }),
                per(f),
            )
        }
        ProtoCmd::Matmul(_) => {
            let (cols, outs) = (a.cols, a.outs);
            let w = Prg::from_os()?.ring_elems(cols * outs, ell);
            (
                "matmul",
                Box::new(move |s: &mut Session| {
                    let server = s.party() == sci_runtime::net::Party::Server;
                    let w = server.then_some(&w[..]);
                    Ok(Engine::new(s, m)
                        .matmul(ell, (n, cols, outs), &x, w)
                        .map(drop)?)
                }),
                per(matmul::cost_bits(ell, (n, cols, outs))),
            )
        }
    };
    Ok((name.into(), c, work, formula))
}
