//! The compile-time report (`sci-compile --report FILE.json`) and the human summary.
//!
//! JSON schema (all keys always present; `null` where not applicable):
//!
//! ```text
//! {
//!   "model": "path/to/model.onnx",
//!   "format": "onnx" | "ir",
//!   "frontend_notes": ["Softmax node ... dropped: ...", ...],
//!   "outputs": [{"name": "probabilities", "logits": true}, ...], // logits: a dropped
//!                                                // trailing Softmax's input (pre-softmax)
//!   "passes": ["remove_identity", ..., "dce"],
//!   "bits": 16, "scale": 4,                      // ℓ and s of the final program
//!   "choice": "autotuned" | "flags" | "default" | "input_ir",
//!   "params": {"mill_radix": 4, "threads": 1, "backend": "ot" | "he" | "rlwe",
//!              "ot": "iknp" | "silent",          // the OT engine
//!              "modulus": null | 4294475777},    // the field of SCI_HE
//!   "plan_hash": "hex SHA-256 of the public part",
//!   "autotune": null | {
//!     "samples": 359, "float_accuracy": 97.21, "tolerance": 0.5, "margin_bits": 1,
//!     "trials": [{"scale": 4, "accuracy": 98.05, "max_magnitude": 8420,
//!                 "needed_bits": 15, "bits": 16, "admissible": true, "error": null}, ...],
//!     "bits": 16, "scale": 4, "accuracy": 98.05, "verified_accuracy": 98.05
//!   },
//!   "layers": [{
//!     "name": "conv1", "op": "conv2d",
//!     "inputs": [{"name": "input", "shape": [1,1,8,8], "scale": 4}, ...],
//!     "shape": [1,6,8,8], "owner": "shared", "bits": 16, "scale": 8,
//!     "ir": "%conv1: shared i16.8[1,6,8,8] = conv2d %input, %w, %b strides=[1,1] ...",
//!     "backend": null | "ot" | "he" | "rlwe",   // a product with the server's weights:
//!                                                // the backend that runs it
//!     "secret_backend": null | "ot" | "rlwe",   // a product of two secret operands:
//!                                                // the backend that runs it
//!     "calls": {"relu": 0, "drelu": 0, "trunc": 0, "trunc_nonneg": 0, "comparisons": 0,
//!               "divisions": {"4": 96}, "multiplications": 3456, "cots": 9216,
//!               "ciphertexts_up": 0, "ciphertexts_down": 0},  // SCI_HE's HE layers
//!     "cost": {"server_bytes": 1234567, "client_bytes": 147456,
//!              "server_rounds": 1, "client_rounds": 1, "rounds": 1},
//!     "seconds": null | 0.0123                   // network time on --net's profile
//!   }, ...],                                     // every instruction except constants
//!   "totals": { same keys as "calls", summed },
//!   "setup_cost": { same keys as "cost": the OT set-up's bytes, rounds 0 },
//!   "he_keys_cost": { same keys as "cost": SCI_HE's key set-up (client's keys), zeros
//!                     for SCI_OT },
//!   "total_cost": { same keys as "cost": bytes summed over all instructions, rounds
//!                   per party of the slowest lane over the run (with one thread, the sum) },
//!   "net": null | {                              // with --net PROFILE
//!     "profile": "40 MB/s, 80 ms RTT", "bandwidth": 40000000.0, "rtt": 0.08,
//!     "setup_seconds": 0.2, "transfer_seconds": 3.1, "latency_seconds": 9.4,
//!     "total_seconds": 12.5
//!   },
//!   "backend_choice": null | {                   // with --backend auto
//!     "profile": "...", "chosen": "ot" | "he" | "rlwe", "engine": "silent" | "iknp",
//!     "why": "...", "ot": ESTIMATE, "he": null | ESTIMATE, "rlwe": null | ESTIMATE (each
//!     on its faster engine; RLWE after the per-layer choice), "rlwe_products": 8,
//!     "rlwe_on_ot": 1 (RLWE's products by RLWE and kept on OT),
//!     "candidates": [ESTIMATE, ...] (every backend and engine tried),
//!     "he_error": null | "...", "rlwe_error": null | "...",
//!     "mix": null | {"seconds": 1.2, "ot_layers": 20, "he_layers": 9}
//!   }                                            // ESTIMATE: crate::auto::Estimate
//! }
//! ```
//!
//! The network time (`seconds`, `net`) is [`sci_ir::cost::net`]'s: per step
//! `max(S, C, L)/B + H·RTT/2` (bytes each way and on the busiest lane over the
//! bandwidth, plus half a round trip per reversal of direction), summed with the OT
//! set-up (for SCI_HE, with the key set-up).
//!
//! Accuracies are percentages; the meaning of every count is documented in
//! [`crate::cost`]. `cost` is exact, from the cost model
//! ([`sci_ir::cost::predict_program`], over plain TCP with the plan's threads): bytes
//! each party sends and rounds each waits for; a local instruction has all zeros.

use crate::auto::AutoChoice;
use crate::cost::{Calls, Traffic, calls, traffic};
use crate::driver::{Choice, Compiled};
use sci_ir::cost::{Lanes, NetProfile, Timing, predict_program, predict_time};
use sci_ir::plan::Plan;
use sci_ir::{Op, Program};
use sci_passes::autotune::Tuning;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// One operand of a layer.
#[derive(Clone, Debug, Serialize)]
pub struct Operand {
    /// Its value name.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its scale.
    pub scale: u32,
}

/// One instruction of the final program.
#[derive(Clone, Debug, Serialize)]
pub struct Layer {
    /// The value name.
    pub name: String,
    /// The op's mnemonic.
    pub op: &'static str,
    /// Its operands.
    pub inputs: Vec<Operand>,
    /// The result's shape.
    pub shape: Vec<usize>,
    /// The result's owner.
    pub owner: String,
    /// ℓ of the result's ring.
    pub bits: u32,
    /// The result's scale.
    pub scale: u32,
    /// The instruction in the IR text format (operands, attributes).
    pub ir: String,
    /// How its product with the server's weights runs (`ot`, `he` or `rlwe`;
    /// [`sci_ir::Program::product_backend`]), `None` for any other instruction.
    pub backend: Option<&'static str>,
    /// How its product of two secret operands runs (`ot`, or `rlwe` for a `matmul`;
    /// [`sci_ir::Program::secret_product_backend`]), `None` for any other instruction.
    pub secret_backend: Option<&'static str>,
    /// Predicted protocol calls.
    pub calls: Calls,
    /// Predicted bytes per party and rounds (exact).
    pub cost: Traffic,
    /// Predicted network time on the `--net` profile, in seconds (`None` without one).
    pub seconds: Option<f64>,
}

/// The predicted network time of the whole run on a profile (`sci-compile --net`).
#[derive(Clone, Debug, Serialize)]
pub struct NetTime {
    /// The profile, e.g. `40 MB/s, 80 ms RTT`.
    pub profile: String,
    /// Its bandwidth, bytes per second each way.
    pub bandwidth: f64,
    /// Its round-trip time, seconds.
    pub rtt: f64,
    /// The set-up's time (OT set-up, and SCI_HE's key set-up).
    pub setup_seconds: f64,
    /// Time spent transferring bytes (set-up included).
    pub transfer_seconds: f64,
    /// Time spent waiting for round trips (set-up included).
    pub latency_seconds: f64,
    /// The whole run's network time.
    pub total_seconds: f64,
}

impl NetTime {
    /// The run's `timing` on `profile`.
    pub fn new(profile: &NetProfile, timing: &Timing) -> NetTime {
        NetTime {
            profile: profile.to_string(),
            bandwidth: profile.bandwidth,
            rtt: profile.rtt,
            setup_seconds: timing.setup,
            transfer_seconds: timing.transfer,
            latency_seconds: timing.latency,
            total_seconds: timing.total,
        }
    }
}

/// Protocol parameters.
#[derive(Clone, Debug, Serialize)]
pub struct ParamsReport {
    /// The millionaires' radix m.
    pub mill_radix: u32,
    /// The runtime's thread count.
    pub threads: u32,
    /// `ot` (SCI_OT) or `he` (SCI_HE).
    pub backend: &'static str,
    /// The OT engine: `iknp` or `silent`.
    pub ot: &'static str,
    /// The field modulus `n` for SCI_HE (`null` for a ring).
    pub modulus: Option<u64>,
}

/// What the summary says when (ℓ, s) are the defaults: how to tune them.
pub const UNTUNED: &str = "note: ℓ = 32, s = 12 are untuned defaults: nothing checked that they \
keep this model's predictions (near-ties can flip, values can overflow). Tune them on data with \
--validation DIR (x.npy and y.npy, or an .npz), or give more fractional bits with --bits 37 --scale 14\n";

/// An output of the program.
#[derive(Clone, Debug, Serialize)]
pub struct OutputReport {
    /// The external (ONNX) name.
    pub name: String,
    /// It holds logits (pre-softmax): the frontend dropped a trailing
    /// Softmax/LogSoftmax before it, which leaves the argmax unchanged.
    pub logits: bool,
}

/// The whole report: see the module docs for the schema.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The model file.
    pub model: String,
    /// `onnx` or `ir`.
    pub format: &'static str,
    /// The frontend's notes.
    pub frontend_notes: Vec<String>,
    /// The program's outputs, in order.
    pub outputs: Vec<OutputReport>,
    /// The passes run.
    pub passes: Vec<&'static str>,
    /// ℓ.
    pub bits: u32,
    /// s.
    pub scale: u32,
    /// How (ℓ, s) was chosen.
    pub choice: Choice,
    /// Protocol parameters.
    pub params: ParamsReport,
    /// SHA-256 of the plan's public part (equal for the server's and the client's plan).
    pub plan_hash: String,
    /// The autotuning result.
    pub autotune: Option<Tuning>,
    /// Every instruction except constants.
    pub layers: Vec<Layer>,
    /// The calls of all layers.
    pub totals: Calls,
    /// The OT set-up's bytes per party (before the first instruction).
    pub setup_cost: Traffic,
    /// SCI_HE's key set-up (the client's keys, after the OT set-up; zero for SCI_OT).
    pub he_keys_cost: Traffic,
    /// The communication of the whole run after the set-up (bytes summed over the layers;
    /// rounds per party of the slowest lane, see [`crate::cost::traffic`]).
    pub total_cost: Traffic,
    /// The predicted network time on the `--net` profile.
    pub net: Option<NetTime>,
    /// With `--backend auto`: both backends' predictions and the choice.
    pub backend_choice: Option<AutoChoice>,
}

impl Report {
    /// The report of a compilation of `model`, with the network time on `net` if given.
    pub fn new(model: &Path, c: &Compiled, net: Option<&NetProfile>) -> Report {
        let p = &c.program;
        let lanes = Lanes::of(p);
        let pr = predict_program(p, lanes);
        let predicted = traffic(&pr);
        let timing = net.map(|n| (n, predict_time(&pr, lanes.threads, n)));
        let seconds = timing.as_ref().map(|(_, t)| t.instrs.as_slice());
        let layers = layers(p, &predicted.instrs, seconds);
        let mut totals = Calls::default();
        for l in &layers {
            totals.add(&l.calls);
        }
        Report {
            model: model.display().to_string(),
            format: c.format,
            frontend_notes: c.notes.clone(),
            outputs: p
                .output_names()
                .into_iter()
                .map(|(name, logits)| OutputReport {
                    name: name.to_string(),
                    logits,
                })
                .collect(),
            passes: c.passes.clone(),
            bits: c.bits,
            scale: c.scale,
            choice: c.choice,
            params: ParamsReport {
                mill_radix: p.params().mill_radix,
                threads: p.params().threads,
                backend: p.params().backend.name(),
                ot: p.params().ot.name(),
                modulus: match p.encoding() {
                    Some(sci_ir::Encoding::Field { modulus }) => Some(modulus),
                    _ => None,
                },
            },
            plan_hash: Plan::new(p.clone()).hash_hex(),
            autotune: c.tuning.clone(),
            layers,
            totals,
            setup_cost: predicted.setup,
            he_keys_cost: predicted.he_keys,
            total_cost: predicted.total,
            net: timing.map(|(n, t)| NetTime::new(n, &t)),
            backend_choice: None,
        }
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report has only serializable fields")
    }

    /// A short human summary: the choice of (ℓ, s), the autotuning table, the notes and
    /// the predicted protocol calls and communication.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "model: {} ({})", self.model, self.format);
        for n in &self.frontend_notes {
            let _ = writeln!(s, "note: {n}");
        }
        for o in self.outputs.iter().filter(|o| o.logits) {
            let _ = writeln!(
                s,
                "output '{}' holds logits (pre-softmax), not probabilities: sci-run's y.npy has the Softmax's input",
                o.name
            );
        }
        if let Some(t) = &self.autotune {
            s.push_str(&t.table());
        }
        let how = match self.choice {
            Choice::Autotuned => "autotuned",
            Choice::Flags => "from --bits/--scale (defaults for the one not given: ℓ = 32, s = 12)",
            Choice::Default => {
                "defaults (no --validation, no --bits/--scale): overflow NOT checked on data"
            }
            Choice::InputIr => "from the quantized IR file",
        };
        let count = |b: &str| self.layers.iter().filter(|l| l.backend == Some(b)).count();
        let shares = match (self.params.modulus, self.params.backend) {
            (Some(n), _) => format!("SCI_HE: field Z_n, n = {n} ({} bits)", self.bits),
            (None, "ot") if count("rlwe") == 0 => format!("SCI_OT: ring Z_2^{}", self.bits),
            (None, _) => format!(
                "ring Z_2^{}, products with the weights: {} by RLWE, {} by OT",
                self.bits,
                count("rlwe"),
                count("ot")
            ),
        };
        let secret = |b: &str| {
            let matmul = |l: &&Layer| l.op == "matmul" && l.secret_backend == Some(b);
            self.layers.iter().filter(matmul).count()
        };
        let secret = match (secret("rlwe"), secret("ot")) {
            (0, 0) => String::new(),
            (r, o) => format!(", secret × secret matmuls: {r} by RLWE, {o} by OT"),
        };
        let _ = writeln!(
            s,
            "{shares}{secret}, scale {} ({how}); OT engine {}, millionaires' radix m = {}, threads = {}",
            self.scale, self.params.ot, self.params.mill_radix, self.params.threads
        );
        if self.choice == Choice::Default {
            s.push_str(UNTUNED);
        }
        let t = &self.totals;
        let divs: u64 = t.divisions.values().sum();
        let products = match self.params.modulus {
            Some(_) => format!(
                "by HE: {} ciphertexts up, {} down",
                t.ciphertexts_up, t.ciphertexts_down
            ),
            None => format!("{} COTs", t.cots),
        };
        let _ = writeln!(
            s,
            "{} layers: {} ReLUs, {} truncations ({} non-negative), {} comparisons, {} divisions, {} multiplications ({products}), {} DReLUs",
            self.layers.len(),
            t.relu,
            t.trunc + t.trunc_nonneg,
            t.trunc_nonneg,
            t.comparisons,
            divs,
            t.multiplications,
            t.drelu
        );
        let mib = |b: u64| b as f64 / 1024.0 / 1024.0;
        let (c, su, keys) = (&self.total_cost, &self.setup_cost, &self.he_keys_cost);
        let _ = writeln!(
            s,
            "predicted communication: server sends {:.2} MiB, client {:.2} MiB, {} rounds (server {}, client {}); OT set-up {:.2} MiB each way",
            mib(c.server_bytes),
            mib(c.client_bytes),
            c.rounds,
            c.server_rounds,
            c.client_rounds,
            mib(su.server_bytes)
        );
        if let Some(n) = &self.net {
            let _ = writeln!(
                s,
                "predicted network time on {}: {:.3} s ({:.3} s transferring, {:.3} s waiting for round trips; OT set-up {:.3} s)",
                n.profile, n.total_seconds, n.transfer_seconds, n.latency_seconds, n.setup_seconds
            );
        }
        if self.params.modulus.is_some() {
            let he: u64 = self
                .layers
                .iter()
                .filter(|l| l.calls.ciphertexts_up > 0)
                .map(|l| l.cost.server_bytes + l.cost.client_bytes)
                .sum();
            let _ = writeln!(
                s,
                "  SCI_HE: HE layers {:.2} MiB of it, the rest {:.2} MiB; HE key set-up {:.2} MiB from the client",
                mib(he),
                mib(c.server_bytes + c.client_bytes - he),
                mib(keys.client_bytes)
            );
        }
        if let Some(a) = &self.backend_choice {
            s.push_str(&a.summary());
        }
        s
    }
}

/// The layers of `p` (constants skipped) with their predicted traffic `costs` and network
/// times `seconds` (one per instruction).
fn layers(p: &Program, costs: &[Traffic], seconds: Option<&[f64]>) -> Vec<Layer> {
    // The text format prints one line per instruction starting with `%` (long constants
    // continue on indented lines).
    let text = p.to_text();
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with('%')).collect();
    let nonneg = sci_ir::analysis::nonneg::nonneg(p);
    p.ids()
        .zip(lines)
        .zip(costs)
        .enumerate()
        .filter(|(_, ((v, _), _))| !matches!(p.instr(*v).op, Op::Const { .. }))
        .map(|(k, ((v, line), cost))| {
            let i = p.instr(v);
            let bits = match i.ty.encoding() {
                sci_ir::Encoding::Ring { bits } => bits,
                sci_ir::Encoding::Field { modulus } => 64 - modulus.leading_zeros(),
                sci_ir::Encoding::Real => 0,
            };
            Layer {
                name: i.name.clone(),
                op: i.op.mnemonic(),
                inputs: i
                    .op
                    .operands()
                    .iter()
                    .map(|v| Operand {
                        name: p.name(**v).to_string(),
                        shape: p.ty(**v).shape().to_vec(),
                        scale: p.ty(**v).scale(),
                    })
                    .collect(),
                shape: i.ty.shape().to_vec(),
                owner: i.ty.owner().to_string(),
                bits,
                scale: i.ty.scale(),
                ir: line.to_string(),
                backend: p.product_backend(v).map(sci_ir::Backend::name),
                secret_backend: p.secret_product_backend(v).map(sci_ir::Backend::name),
                calls: calls(p, &nonneg, v),
                cost: *cost,
                seconds: seconds.and_then(|s| s.get(k).copied()),
            }
        })
        .collect()
}
