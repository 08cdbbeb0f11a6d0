//! `sci-bench` subcommands for SCI_HE: the protocols over a prime field
//! `Z_n` ([`sci_runtime::proto`] with [`Modulus::Odd`]).
//!
//! `sci-bench PROTOCOL --modulus N --n COUNT [--m M] [--scale S] [--d D]
//! [--threads T] --json`, PROTOCOL one of `relu-field`, `drelu-field`,
//! `trunc-field` (division by `2^S`), `div-field` (by `D`), `maxpool-field`,
//! `argmax-field` (windows of `D` elements, `--narrow` for the paper's
//! comparisons without sign tracking). `--n` counts elements, or windows for
//! the pooling ones; `--bits` is ignored (`eta` = `⌈log₂ N⌉` is reported).
//! Each party draws its own random shares; `formula_bits_per_op` is the
//! exact cost formula of the protocol module divided by `n`.
//!
//! The HE linear layers: `conv-he --channels C --size HxW --kernel K --outs O
//! [--stride S] [--pad P]` and `matmul-he --cols C --outs O` run `--n`
//! layers (random weights, elements of `(−2^12, 2^12)`) on one session;
//! `bytes` and `seconds` include the one-time key set-up (≈ 11.8 MB, sent by
//! the client in the first layer), `in_cts` / `out_cts` give the
//! ciphertexts per layer.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use sci_ir::ConvGeom;
use sci_runtime::crypto::Prg;
use sci_runtime::he::{self, Packing};
use sci_runtime::ot::Session;
use sci_runtime::proto::engine::Engine;
use sci_runtime::proto::maxpool::{self, Compare, Windows};
use sci_runtime::proto::{Modulus, rdiv, relu, sign};
use serde_json::{Map, Value, json};

use super::{Common, Work};

/// Parameters of the field benchmarks.
#[derive(Args, Debug, Clone)]
pub struct FieldArgs {
    #[command(flatten)]
    pub common: Common,
    /// The odd modulus n (default: the 32-bit HE prime 2^32 − 2^20 + 1).
    #[arg(long, default_value_t = 4_293_918_721)]
    modulus: u64,
    /// Millionaires' radix m (1..=8).
    #[arg(long, default_value_t = 4)]
    m: u32,
    /// `trunc-field`: divide by 2^scale.
    #[arg(long, default_value_t = 12)]
    scale: u32,
    /// `div-field`: the divisor; `maxpool-field` / `argmax-field`: the
    /// window size.
    #[arg(long, default_value_t = 49)]
    d: u64,
    /// `maxpool-field` / `argmax-field`: no sign tracking (inputs known to
    /// differ by at most (n−1)/2).
    #[arg(long)]
    narrow: bool,
    /// HE layers: input channels (`conv-he`) / columns (`matmul-he`).
    #[arg(long, default_value_t = 64)]
    channels: usize,
    /// `conv-he`: image size `HxW`.
    #[arg(long, default_value = "32x32")]
    size: String,
    /// `conv-he`: square kernel size.
    #[arg(long, default_value_t = 3)]
    kernel: usize,
    /// HE layers: output channels / columns.
    #[arg(long, default_value_t = 64)]
    outs: usize,
    /// `conv-he`: stride.
    #[arg(long, default_value_t = 1)]
    stride: usize,
    /// `conv-he`: padding on every side.
    #[arg(long, default_value_t = 1)]
    pad: usize,
}

/// The field benchmarks.
#[derive(Subcommand, Debug)]
pub enum HeCmd {
    /// DReLU over Z_n (Alg. 4).
    #[command(name = "drelu-field")]
    Drelu(FieldArgs),
    /// ReLU over Z_n (DReLU^{ring,n} + MUX^n).
    #[command(name = "relu-field")]
    Relu(FieldArgs),
    /// Truncation in Z_n: division by 2^scale (§4.2.3).
    #[command(name = "trunc-field")]
    Trunc(FieldArgs),
    /// Division by `--d` in Z_n (Alg. 9).
    #[command(name = "div-field")]
    Div(FieldArgs),
    /// Max of `n` windows of `--d` elements over Z_n.
    #[command(name = "maxpool-field")]
    Maxpool(FieldArgs),
    /// Position of the first max of `n` windows of `--d` elements over Z_n.
    #[command(name = "argmax-field")]
    Argmax(FieldArgs),
    /// A convolution by HE (`--n` layers).
    #[command(name = "conv-he")]
    ConvHe(FieldArgs),
    /// A `1 × channels` by `channels × outs` product by HE (`--n` layers).
    #[command(name = "matmul-he")]
    MatmulHe(FieldArgs),
}

impl HeCmd {
    fn args(&self) -> &FieldArgs {
        match self {
            HeCmd::Drelu(a)
            | HeCmd::Relu(a)
            | HeCmd::Trunc(a)
            | HeCmd::Div(a)
            | HeCmd::Maxpool(a)
            | HeCmd::Argmax(a)
            | HeCmd::ConvHe(a)
            | HeCmd::MatmulHe(a) => a,
        }
    }

    /// The common arguments.
    pub fn common(&self) -> &Common {
        &self.args().common
    }

    /// Extra JSON fields (parameters) of the benchmark.
    pub fn extra(&self) -> Map<String, Value> {
        let a = self.args();
        let md = Modulus::Odd(a.modulus);
        let mut v = json!({"modulus": a.modulus, "eta": md.bits(), "m": a.m});
        if let Value::Object(o) = &mut v {
            match self {
                HeCmd::Trunc(_) => {
                    o.insert("scale".into(), a.scale.into());
                }
                HeCmd::Div(_) => {
                    o.insert("d".into(), a.d.into());
                }
                HeCmd::Maxpool(_) | HeCmd::Argmax(_) => {
                    o.insert("window".into(), a.d.into());
                    o.insert("narrow".into(), a.narrow.into());
                }
                HeCmd::Drelu(_) | HeCmd::Relu(_) => {}
                HeCmd::ConvHe(_) | HeCmd::MatmulHe(_) => {
                    if let Ok(p) = he_layer(self, None) {
                        o.insert("in_cts".into(), p.in_cts().into());
                        o.insert("out_cts".into(), p.out_cts().into());
                    }
                    o.insert("channels".into(), a.channels.into());
                    o.insert("outs".into(), a.outs.into());
                    if matches!(self, HeCmd::ConvHe(_)) {
                        o.insert("size".into(), a.size.clone().into());
                        o.insert("kernel".into(), a.kernel.into());
                        o.insert("stride".into(), a.stride.into());
                        o.insert("pad".into(), a.pad.into());
                    }
                }
            }
        }
        match v {
            Value::Object(o) => o,
            _ => Map::new(),
        }
    }
}

/// The geometry of `conv-he`.
fn conv_geom(a: &FieldArgs) -> Result<ConvGeom> {
    let Some((h, w)) = a.size.split_once('x') else {
        bail!("--size must be HxW");
    };
    Ok(ConvGeom {
        input: [1, a.channels, h.parse()?, w.parse()?],
        c_out: a.outs,
        kernel: [a.kernel; 2],
        conv: sci_ir::Conv2d {
            strides: [a.stride; 2],
            pads: [a.pad; 4],
            dilations: [1, 1],
            groups: 1,
        },
    })
}

/// The packing of an HE layer benchmark (weights `w` at the server).
fn he_layer<'w>(cmd: &HeCmd, w: Option<&'w [u64]>) -> Result<Box<dyn Packing + 'w>> {
    let a = cmd.args();
    Ok(match cmd {
        HeCmd::ConvHe(_) => Box::new(he::conv::Conv::new(&conv_geom(a)?, w)?),
        _ => Box::new(he::fc::MatMul::new((1, a.channels, a.outs), w)?),
    })
}

/// The benchmark of `cmd`: name, common arguments, work, formula bits per op.
pub fn workload(cmd: &HeCmd) -> Result<(String, &Common, Work, Option<f64>)> {
    let a = cmd.args().clone();
    let c = cmd.common();
    let (n, m) = (c.n, a.m);
    let md = Modulus::Odd(a.modulus).check()?;
    if !(1..=8).contains(&m) {
        bail!("--m must be in 1..=8");
    }
    let per = |bits: u64| Some(bits as f64 / n.max(1) as f64);
    let window = a.d as usize;
    let elems = match cmd {
        HeCmd::Maxpool(_) | HeCmd::Argmax(_) => n * window,
        HeCmd::ConvHe(_) | HeCmd::MatmulHe(_) => he_layer(cmd, None)?.in_len(),
        _ => n,
    };
    let x = md.random(&mut Prg::from_os()?, elems);
    let (name, work, formula): (&str, Work, Option<f64>) = match cmd {
        HeCmd::ConvHe(_) | HeCmd::MatmulHe(_) => {
            let t = a.modulus;
            he::Params::new(t)?;
            let packing = he_layer(cmd, None)?;
            let nw = match cmd {
                HeCmd::ConvHe(_) => a.outs * a.channels * a.kernel * a.kernel,
                _ => a.channels * a.outs,
            };
            let w: Vec<u64> = md
                .random(&mut Prg::from_os()?, nw)
                .iter()
                .map(|&v| md.reduce_i128(i128::from(v % (1 << 13)) - (1 << 12)))
                .collect();
            let cmd_name = if matches!(cmd, HeCmd::ConvHe(_)) {
                "conv-he"
            } else {
                "matmul-he"
            };
            let (ca, conv) = (a.clone(), matches!(cmd, HeCmd::ConvHe(_)));
            drop(packing);
            (
                cmd_name,
                Box::new(move |s: &mut Session| {
                    let server = s.party() == sci_runtime::net::Party::Server;
                    let geom = conv_geom(&ca)?;
                    let wr = server.then_some(&w[..]);
                    let p: Box<dyn Packing + '_> = if conv {
                        Box::new(he::conv::Conv::new(&geom, wr)?)
                    } else {
                        Box::new(he::fc::MatMul::new((1, ca.channels, ca.outs), wr)?)
                    };
                    let mut e = Engine::new(s, m);
                    for _ in 0..n {
                        e.he_linear(t, p.as_ref(), &x)?;
                    }
                    Ok(())
                }),
                None,
            )
        }
        HeCmd::Drelu(_) => (
            "drelu-field",
            Box::new(move |s: &mut Session| Ok(Engine::new(s, m).msb(md, &x).map(drop)?)),
            per(sign::cost_bits(md, m, n)),
        ),
        HeCmd::Relu(_) => (
            "relu-field",
            Box::new(move |s: &mut Session| Ok(Engine::new(s, m).relu(md, &x).map(drop)?)),
            per(relu::cost_bits(md, m, n)),
        ),
        HeCmd::Trunc(_) | HeCmd::Div(_) => {
            let trunc = matches!(cmd, HeCmd::Trunc(_));
            if trunc && (a.scale == 0 || u128::from(a.scale) >= u128::from(md.bits())) {
                bail!("--scale must be in 1..⌈log₂ n⌉");
            }
            let d = if trunc { 1u64 << a.scale } else { a.d };
            if d == 0 || u128::from(d) >= md.value() {
                bail!("--d must be in 1..n");
            }
            (
                if trunc { "trunc-field" } else { "div-field" },
                Box::new(move |s: &mut Session| {
                    Ok(Engine::new(s, m).rdiv(md, &x, &[d]).map(drop)?)
                }),
                per(rdiv::cost_bits(md, &[d], m, n)),
            )
        }
        HeCmd::Maxpool(_) | HeCmd::Argmax(_) => {
            let index = matches!(cmd, HeCmd::Argmax(_));
            if window == 0 {
                bail!("--d (the window size) must be at least 1");
            }
            let cmp = if a.narrow {
                Compare::Narrow
            } else {
                Compare::Exact
            };
            let w = Windows::axis(&[n, window], 1)?;
            let f = maxpool::cost_bits(md, m, n * window, &w, cmp, index);
            (
                if index {
                    "argmax-field"
                } else {
                    "maxpool-field"
                },
                Box::new(move |s: &mut Session| {
                    let mut e = Engine::new(s, m);
                    if index {
                        e.argmax(md, &x, &[n, window], 1, cmp)?;
                    } else {
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
    Ok((name.into(), c, work, formula))
}
