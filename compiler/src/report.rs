//! The compile-time report (`sci-compile --report FILE.json`) and the human summary.
//!
//! JSON schema (all keys always present; `null` where not applicable):
//!
//! ```text
//! {
//!   "model": "path/to/model.onnx",
//!   "format": "onnx" | "ir",
//!   "frontend_notes": ["Softmax node ... dropped: ...", ...],
//!   "passes": ["remove_identity", ..., "dce"],
//!   "bits": 16, "scale": 4,                      // ℓ and s of the final program
//!   "choice": "autotuned" | "flags" | "default" | "input_ir",
//!   "params": {"mill_radix": 4, "threads": 1, "backend": "ot" | "he",
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
//!     "calls": {"relu": 0, "drelu": 0, "trunc": 0, "trunc_nonneg": 0, "comparisons": 0,
//!               "divisions": {"4": 96}, "multiplications": 3456, "cots": 9216,
//!               "ciphertexts_up": 0, "ciphertexts_down": 0},  // SCI_HE's HE layers
//!     "cost": {"server_bytes": 1234567, "client_bytes": 147456,
//!              "server_rounds": 1, "client_rounds": 1, "rounds": 1}
//!   }, ...],                                     // every instruction except constants
//!   "totals": { same keys as "calls", summed },
//!   "setup_cost": { same keys as "cost": the OT set-up's bytes, rounds 0 },
//!   "he_keys_cost": { same keys as "cost": SCI_HE's key set-up (client's keys), zeros
//!                     for SCI_OT },
//!   "total_cost": { same keys as "cost": bytes summed over all instructions, rounds
//!                   per party of the slowest lane over the run (with one thread, the sum) }
//! }
//! ```
//!
//! Accuracies are percentages; the meaning of every count is documented in
//! [`crate::cost`]. `cost` is exact, from the cost model
//! ([`sci_ir::cost::predict_program`], over plain TCP with the plan's threads): bytes
//! each party sends and rounds each waits for; a local instruction has all zeros.

use crate::cost::{Calls, Traffic, calls, traffic};
use crate::driver::{Choice, Compiled};
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
    /// Predicted protocol calls.
    pub calls: Calls,
    /// Predicted bytes per party and rounds (exact).
    pub cost: Traffic,
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
    /// The field modulus `n` for SCI_HE (`null` for a ring).
    pub modulus: Option<u64>,
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
}

impl Report {
    /// The report of a compilation of `model`.
    pub fn new(model: &Path, c: &Compiled) -> Report {
        let p = &c.program;
        let predicted = traffic(p);
        let layers = layers(p, &predicted.instrs);
        let mut totals = Calls::default();
        for l in &layers {
            totals.add(&l.calls);
        }
        Report {
            model: model.display().to_string(),
            format: c.format,
            frontend_notes: c.notes.clone(),
            passes: c.passes.clone(),
            bits: c.bits,
            scale: c.scale,
            choice: c.choice,
            params: ParamsReport {
                mill_radix: p.params().mill_radix,
                threads: p.params().threads,
                backend: p.params().backend.name(),
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
        let shares = match self.params.modulus {
            Some(n) => format!("SCI_HE: field Z_n, n = {n} ({} bits)", self.bits),
            None => format!("SCI_OT: ring Z_2^{}", self.bits),
        };
        let _ = writeln!(
            s,
            "{shares}, scale {} ({how}); millionaires' radix m = {}, threads = {}",
            self.scale, self.params.mill_radix, self.params.threads
        );
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
        s
    }
}

/// The layers of `p` (constants skipped) with their predicted traffic `costs` (one per
/// instruction).
fn layers(p: &Program, costs: &[Traffic]) -> Vec<Layer> {
    // The text format prints one line per instruction starting with `%` (long constants
    // continue on indented lines).
    let text = p.to_text();
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with('%')).collect();
    let nonneg = sci_ir::analysis::nonneg::nonneg(p);
    p.ids()
        .zip(lines)
        .zip(costs)
        .filter(|((v, _), _)| !matches!(p.instr(*v).op, Op::Const { .. }))
        .map(|((v, line), cost)| {
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
                calls: calls(p, &nonneg, v),
                cost: *cost,
            }
        })
        .collect()
}
