//! `sci-compile --backend auto --net PROFILE`: compile for both backends, predict each
//! on the network, keep the faster (CrypTFlow2 §2.2.4: "one can choose a specific
//! backend depending on the network statistics").
//!
//! The model is compiled for SCI_OT and for SCI_HE with the same options; each program's
//! run is predicted by the cost model ([`sci_ir::cost::predict_program`] over its plan's
//! lanes, plain TCP) and priced on the profile ([`sci_ir::cost::predict_time`]: the OT
//! set-up and every instruction, `max(S, C, L)/B + H·RTT/2` each). The one predicted
//! faster wins; OT wins ties, and wins when the model cannot be compiled for HE (the
//! reason is reported). Both are compiled on the same OT engine (`--ot`, silent by
//! default), whose set-up and instructions the cost model prices exactly on either engine.
//!
//! The choice is as exact as the cost model, which counts every byte and round of both
//! backends (SCI_HE's ciphertexts and key set-up included, [`sci_ir::cost::he`]); it
//! prices the network only: the parties' computation (SCI_HE's homomorphic products
//! above all) comes on top, so on a fast link the choice can favour HE more than the
//! wall time would.
//!
//! Where a per-layer mix would beat both — each instruction on the backend predicted
//! faster for it, when both programs have the same instructions — its figures are
//! reported ([`Mix`]): no plan can mix them yet (that needs ring-based HE layers or
//! share conversions, which the mix does not price).

use crate::driver::{CompileError, Compiled, Options, compile};
use sci_ir::cost::{Lanes, NetProfile, Timing, predict_program, predict_time};
use sci_ir::{Backend, Program};
use serde::Serialize;
use std::fmt::Write as _;

/// One backend's predicted run on the profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// `ot` or `he`.
    pub backend: &'static str,
    /// Network time of the whole run (set-up included), seconds.
    pub seconds: f64,
    /// Of which transferring bytes.
    pub transfer_seconds: f64,
    /// Of which waiting for round trips.
    pub latency_seconds: f64,
    /// Bytes the server sends (OT set-up included).
    pub server_bytes: u64,
    /// Bytes the client sends (OT set-up included).
    pub client_bytes: u64,
    /// Rounds after the set-up (the larger party's).
    pub rounds: u64,
}

/// A per-layer mix of the two backends (not executable yet; see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mix {
    /// Predicted network time, seconds: the larger set-up plus, per instruction, the
    /// faster backend's time.
    pub seconds: f64,
    /// Instructions that communicate and are faster under SCI_OT.
    pub ot_layers: usize,
    /// Instructions that communicate and are faster under SCI_HE.
    pub he_layers: usize,
}

/// The outcome of `--backend auto`.
#[derive(Clone, Debug, Serialize)]
pub struct AutoChoice {
    /// The network profile, e.g. `40 MB/s, 80 ms RTT`.
    pub profile: String,
    /// The backend kept: `ot` or `he`.
    pub chosen: &'static str,
    /// Why, in words.
    pub why: String,
    /// SCI_OT's estimate.
    pub ot: Estimate,
    /// SCI_HE's estimate, if the model compiles for HE.
    pub he: Option<Estimate>,
    /// Why the model does not compile for HE, if it does not.
    pub he_error: Option<String>,
    /// A per-layer mix, where it would beat both.
    pub mix: Option<Mix>,
}

/// A program's predicted run on `profile`: its estimate and per-instruction times.
pub fn estimate(program: &Program, profile: &NetProfile) -> (Estimate, Timing) {
    let lanes = Lanes::of(program);
    let pr = predict_program(program, lanes);
    let t = predict_time(&pr, lanes.threads, profile);
    let backend = program.params().backend;
    let e = Estimate {
        backend: backend.name(),
        seconds: t.total,
        transfer_seconds: t.transfer,
        latency_seconds: t.latency,
        server_bytes: pr.setup.server_bytes + pr.he_keys.server_bytes + pr.total.server_bytes,
        client_bytes: pr.setup.client_bytes + pr.he_keys.client_bytes + pr.total.client_bytes,
        rounds: pr.total.rounds(),
    };
    (e, t)
}

/// The per-layer mix of two runs of the same instructions, if it beats both.
fn mix(ot: (&Program, &Timing), he: (&Program, &Timing)) -> Option<Mix> {
    let same = ot.0.instrs().len() == he.0.instrs().len()
        && ot
            .0
            .instrs()
            .iter()
            .zip(he.0.instrs())
            .all(|(a, b)| a.name == b.name);
    if !same {
        return None;
    }
    let (mut seconds, mut ot_layers, mut he_layers) = (ot.1.setup.max(he.1.setup), 0, 0);
    for (&a, &b) in ot.1.instrs.iter().zip(&he.1.instrs) {
        seconds += a.min(b);
        if a != b {
            if a < b {
                ot_layers += 1;
            } else {
                he_layers += 1;
            }
        }
    }
    let best = ot.1.total.min(he.1.total);
    (ot_layers > 0 && he_layers > 0 && seconds < best).then_some(Mix {
        seconds,
        ot_layers,
        he_layers,
    })
}

/// Compiles `opts.model` for SCI_OT and SCI_HE (`opts.backend` is ignored), predicts both
/// on `profile` and returns the compilation predicted faster with the choice. An error
/// compiling for OT is returned; one compiling for HE makes OT the choice.
pub fn choose(
    opts: &Options,
    profile: &NetProfile,
    keep_dumps: bool,
) -> Result<(Compiled, AutoChoice), CompileError> {
    let with = |backend| Options {
        backend,
        ..opts.clone()
    };
    let ot = compile(&with(Backend::Ot), keep_dumps)?;
    let he = compile(&with(Backend::He), keep_dumps);
    let (ot_est, ot_t) = estimate(&ot.program, profile);
    let mut choice = AutoChoice {
        profile: profile.to_string(),
        chosen: "ot",
        why: String::new(),
        ot: ot_est,
        he: None,
        he_error: None,
        mix: None,
    };
    let he = match he {
        Ok(he) => he,
        Err(e) => {
            choice.why = "the model does not compile for SCI_HE".into();
            choice.he_error = Some(error_chain(&e));
            return Ok((ot, choice));
        }
    };
    let (he_est, he_t) = estimate(&he.program, profile);
    choice.mix = mix((&ot.program, &ot_t), (&he.program, &he_t));
    let he_wins = he_est.seconds < choice.ot.seconds;
    choice.why = format!(
        "SCI_{} is predicted faster on {}",
        if he_wins { "HE" } else { "OT" },
        choice.profile
    );
    choice.he = Some(he_est);
    if he_wins {
        choice.chosen = "he";
        Ok((he, choice))
    } else {
        Ok((ot, choice))
    }
}

/// An error with its causes, `a: b: c`.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let _ = write!(s, ": {c}");
        cur = c.source();
    }
    s
}

impl AutoChoice {
    /// The human summary: both estimates, the choice, the mix.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let mib = |b: u64| b as f64 / 1024.0 / 1024.0;
        let line = |s: &mut String, e: &Estimate| {
            let _ = writeln!(
                s,
                "  SCI_{}: {:.3} s ({:.3} s transferring, {:.3} s round trips), server sends {:.2} MiB, client {:.2} MiB, {} rounds",
                e.backend.to_uppercase(),
                e.seconds,
                e.transfer_seconds,
                e.latency_seconds,
                mib(e.server_bytes),
                mib(e.client_bytes),
                e.rounds,
            );
        };
        let _ = writeln!(s, "backend auto on {}:", self.profile);
        line(&mut s, &self.ot);
        match (&self.he, &self.he_error) {
            (Some(he), _) => line(&mut s, he),
            (None, Some(e)) => {
                let _ = writeln!(s, "  SCI_HE: not available: {e}");
            }
            (None, None) => {}
        }
        if let Some(m) = &self.mix {
            let _ = writeln!(
                s,
                "  a per-layer mix would be predicted {:.3} s ({} layers on OT, {} on HE; share conversions not counted, no plan can mix backends yet)",
                m.seconds, m.ot_layers, m.he_layers
            );
        }
        let _ = writeln!(
            s,
            "  chose SCI_{}: {}",
            self.chosen.to_uppercase(),
            self.why
        );
        s
    }
}
