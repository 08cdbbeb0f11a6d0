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
//! exact cost formula of the protocol module divided by `n`. These run the
//! ring subcommands' generic workload ([`super::proto::layer_workload`])
//! with an odd [`Modulus`].
//!
//! The HE linear layers: `conv-he --channels C --size HxW --kernel K --outs O
//! [--stride S] [--pad P]` and `matmul-he --cols C --outs O` run `--n`
//! layers (random weights, elements of `(−2^12, 2^12)`) on one session;
//! `bytes` and `seconds` include the one-time key set-up (≈ 11.8 MB, sent by
//! the client in the first layer), `in_cts` / `out_cts` give the
//! ciphertexts per layer.
//!
//! `conv-rlwe` (same flags, `--bits` the width ℓ) runs the same convolution
//! by RLWE over `Z_{2^ℓ}` shares ([`sci_runtime::cheetah`], Cheetah's
//! coefficient encoding): `bytes_up` / `bytes_down` per layer from the
//! layout, the public key (`key_bytes`) in the first layer.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use sci_ir::ConvGeom;
use sci_runtime::cheetah;
use sci_runtime::crypto::Prg;
use sci_runtime::he::{self, Packing};
use sci_runtime::ot::Session;
use sci_runtime::proto::engine::Engine;
use sci_runtime::proto::{DEFAULT_RADIX, Modulus, default_radix};
use serde_json::{Map, Value, json};

use super::proto::{Layer, LayerParams, layer_workload};
use super::{Common, Work};

/// Parameters of the field benchmarks.
#[derive(Args, Debug, Clone)]
pub struct FieldArgs {
    #[command(flatten)]
    pub common: Common,
    /// The odd modulus n (default: the 32-bit HE prime 2^32 − 2^20 + 1).
    #[arg(long, default_value_t = 4_293_918_721)]
    modulus: u64,
    #[command(flatten)]
    layer: LayerParams,
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
    /// A convolution by RLWE over `Z_2^ℓ` shares, `--bits` ℓ (`--n` layers).
    #[command(name = "conv-rlwe")]
    ConvRlwe(FieldArgs),
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
            | HeCmd::MatmulHe(a)
            | HeCmd::ConvRlwe(a) => a,
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
        let m = a.layer.m.unwrap_or_else(|| {
            default_radix(self.common().ot, sci_ir::params::Modulus::Odd(a.modulus))
        });
        let mut v = json!({"modulus": a.modulus, "eta": md.bits(), "m": m});
        if let Value::Object(o) = &mut v {
            match self {
                HeCmd::Trunc(_) => {
                    o.insert("scale".into(), a.layer.scale.into());
                }
                HeCmd::Div(_) => {
                    o.insert("d".into(), a.layer.d.into());
                }
                HeCmd::Maxpool(_) | HeCmd::Argmax(_) => {
                    o.insert("window".into(), a.layer.d.into());
                    o.insert("narrow".into(), a.layer.narrow.into());
                }
                HeCmd::Drelu(_) | HeCmd::Relu(_) => {}
                HeCmd::ConvRlwe(_) => {
                    if let Ok(l) = conv_geom(a).and_then(|g| {
                        Ok(cheetah::Layer::conv("conv-rlwe", &g, a.common.bits, None)?)
                    }) {
                        let l = &l.layout;
                        o.insert("degree".into(), l.set.degree.into());
                        o.insert("moduli".into(), l.set.moduli.len().into());
                        o.insert("in_cts".into(), l.in_cts().into());
                        o.insert("out_cts".into(), l.out_cts().into());
                        o.insert("bytes_up".into(), l.bytes_up().into());
                        o.insert("bytes_down".into(), l.bytes_down().into());
                        o.insert("key_bytes".into(), l.set.key_bytes().into());
                        o.insert("products".into(), l.products().into());
                    }
                    o.insert("channels".into(), a.channels.into());
                    o.insert("outs".into(), a.outs.into());
                    o.insert("size".into(), a.size.clone().into());
                    o.insert("kernel".into(), a.kernel.into());
                    o.insert("stride".into(), a.stride.into());
                    o.insert("pad".into(), a.pad.into());
                }
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
    let mut a = cmd.args().clone();
    let c = cmd.common();
    a.layer
        .m
        .get_or_insert(default_radix(c.ot, sci_ir::params::Modulus::Odd(a.modulus)));
    let md = Modulus::Odd(a.modulus);
    let layer = match cmd {
        HeCmd::Drelu(_) => Layer::Drelu,
        HeCmd::Relu(_) => Layer::Relu,
        HeCmd::Trunc(_) => Layer::Trunc { nonneg: false },
        HeCmd::Div(_) => Layer::Div,
        HeCmd::Maxpool(_) => Layer::Maxpool,
        HeCmd::Argmax(_) => Layer::Argmax,
        HeCmd::ConvHe(_) | HeCmd::MatmulHe(_) => {
            let (name, work) = he_workload(cmd, &a, md.check()?, c.n)?;
            return Ok((name.into(), c, work, None));
        }
        HeCmd::ConvRlwe(_) => return Ok(("conv-rlwe".into(), c, rlwe_workload(&a, c.n)?, None)),
    };
    let (name, work, formula) = layer_workload(layer, md, c.n, a.layer, c.ot)?;
    Ok((name, c, work, formula))
}

/// The HE linear layer benchmarks: `n` layers on one session.
fn he_workload(cmd: &HeCmd, a: &FieldArgs, md: Modulus, n: usize) -> Result<(&'static str, Work)> {
    let (m, t) = (a.layer.m.unwrap_or(DEFAULT_RADIX), a.modulus);
    he::Params::new(t)?;
    let x = md.random(&mut Prg::from_os()?, he_layer(cmd, None)?.in_len());
    let conv = matches!(cmd, HeCmd::ConvHe(_));
    let nw = if conv {
        a.outs * a.channels * a.kernel * a.kernel
    } else {
        a.channels * a.outs
    };
    let w: Vec<u64> = md
        .random(&mut Prg::from_os()?, nw)
        .iter()
        .map(|&v| md.reduce_i128(i128::from(v % (1 << 13)) - (1 << 12)))
        .collect();
    let ca = a.clone();
    Ok((
        if conv { "conv-he" } else { "matmul-he" },
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
    ))
}

/// The RLWE convolution benchmark: `n` layers on lane 0 of one session
/// (weights of `(−2^12, 2^12)` mod `2^ℓ`, random shares).
fn rlwe_workload(a: &FieldArgs, n: usize) -> Result<Work> {
    let ell = a.common.bits;
    let md = Modulus::Pow2(ell);
    let geom = conv_geom(a)?;
    let layer = cheetah::Layer::conv("conv-rlwe", &geom, ell, None)?;
    let x = md.random(&mut Prg::from_os()?, layer.in_len());
    let nw = a.outs * a.channels * a.kernel * a.kernel;
    let w: Vec<u64> = md
        .random(&mut Prg::from_os()?, nw)
        .iter()
        .map(|&v| md.reduce_i128(i128::from(v % (1 << 13)) - (1 << 12)))
        .collect();
    Ok(Box::new(move |s: &mut Session| {
        let server = s.party() == sci_runtime::net::Party::Server;
        let layer = cheetah::Layer::conv("conv-rlwe", &geom, ell, server.then_some(&w[..]))?;
        let mut keys = if server {
            cheetah::Keys::server()
        } else {
            cheetah::Keys::client()
        };
        let Some(lane) = s.lanes_mut().first_mut() else {
            bail!("a session without lanes");
        };
        for _ in 0..n {
            cheetah::run(&mut keys, &mut lane.ch, &mut lane.prg, &layer, &x)?;
        }
        Ok(())
    }))
}
