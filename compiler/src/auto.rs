//! `sci-compile --backend auto --net PROFILE`: compile for every backend, predict each
//! on the network, keep the fastest (CrypTFlow2 §2.2.4: "one can choose a specific
//! backend depending on the network statistics"); without `--ot`, on both OT engines;
//! on the ring, the backend of each product chosen per layer.
//!
//! The model is compiled for SCI_OT, SCI_HE and RLWE with the same options; without
//! `--ot` each program is also taken on the other OT engine (the same instructions with
//! that engine's parameters, [`crate::driver::with_run_params`]: the silent engine sends
//! about 1 bit per OT where IKNP sends 128, but sets up 1.4 MB each way per lane and
//! takes more rounds). Each candidate's run is predicted by the cost model
//! ([`sci_ir::cost::predict_program`] over its plan's lanes, plain TCP) and priced on
//! the profile ([`sci_ir::cost::predict_time`]: the OT set-up and every instruction,
//! `max(S, C, L)/B + H·RTT/2` each). The one predicted fastest wins; on a tie OT beats
//! HE, HE beats RLWE and silent beats IKNP; OT wins when the model cannot be compiled
//! for the others (the reason is reported).
//!
//! **Per layer.** OT-based and RLWE products share the ring's shares, so one plan can
//! mix them ([`sci_ir::Program::set_product_backend`], recorded per instruction in the
//! plan). The RLWE candidate starts with every product RLWE can run on RLWE and moves
//! each, in program order, back to OT where that lowers the whole run's predicted
//! time ([`per_layer`]): a small product (a classifier head, a scalar scale) can cost
//! less as OTs than as one ciphertext each way. The report counts the products left on
//! OT.
//!
//! The choice is as exact as the cost model, which counts every byte and round of every
//! backend (SCI_HE's ciphertexts and key set-up, RLWE's ciphertexts and public keys
//! included); it prices the network only: the parties' computation (the homomorphic
//! products above all) comes on top, so on a fast link the choice can favour HE or RLWE
//! more than the wall time would.
//!
//! Where a per-layer mix of SCI_OT and SCI_HE would beat both — each instruction on
//! the backend predicted faster for it, when both programs have the same instructions —
//! its figures are reported ([`Mix`]): no plan can mix those two (their shares live in
//! different rings; share conversions are not priced).

use crate::driver::{CompileError, Compiled, Options, compile, with_run_params};
use sci_ir::cost::{Lanes, NetProfile, Timing, predict_program, predict_time};
use sci_ir::{Backend, OtKind, Program};
use serde::Serialize;
use std::fmt::Write as _;

/// One backend's predicted run on the profile, on one OT engine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// `ot`, `he` or `rlwe`.
    pub backend: &'static str,
    /// The OT engine: `silent` or `iknp`.
    pub engine: &'static str,
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
    /// The backend kept: `ot`, `he` or `rlwe` (RLWE with the products of
    /// [`AutoChoice::rlwe_on_ot`] on OT).
    pub chosen: &'static str,
    /// The OT engine kept: `silent` or `iknp`.
    pub engine: &'static str,
    /// Why, in words.
    pub why: String,
    /// SCI_OT's estimate on its faster engine.
    pub ot: Estimate,
    /// SCI_HE's estimate on its faster engine, if the model compiles for HE.
    pub he: Option<Estimate>,
    /// RLWE's estimate on its faster engine, per-layer choice made, if the model
    /// compiles for it.
    pub rlwe: Option<Estimate>,
    /// Of the RLWE candidate's products (with the server's weights, and matrix
    /// products of two secret operands), those the per-layer choice keeps on OT (or
    /// that RLWE cannot run).
    pub rlwe_on_ot: usize,
    /// Of the RLWE candidate's products, those run by RLWE.
    pub rlwe_products: usize,
    /// Every candidate's estimate: each backend on each engine tried.
    pub candidates: Vec<Estimate>,
    /// Why the model does not compile for HE, if it does not.
    pub he_error: Option<String>,
    /// Why the model does not compile for RLWE, if it does not.
    pub rlwe_error: Option<String>,
    /// A per-layer mix, where it would beat both.
    pub mix: Option<Mix>,
}

/// A program's predicted run on `profile`: its estimate and per-instruction times.
pub fn estimate(program: &Program, profile: &NetProfile) -> (Estimate, Timing) {
    let lanes = Lanes::of(program);
    let pr = predict_program(program, lanes);
    let t = predict_time(&pr, lanes.threads, profile);
    let params = program.params();
    let e = Estimate {
        backend: params.backend.name(),
        engine: params.ot.name(),
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

/// Compiles `opts.model` for SCI_OT and SCI_HE (`opts.backend` is ignored), on the OT
/// engine `opts.ot` or, if none is given, on both; predicts every candidate on `profile`
/// and returns the compilation predicted fastest with the choice. An error compiling for
/// OT is returned; one compiling for HE makes OT the choice.
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
    let rlwe = compile(&with(Backend::Rlwe), keep_dumps);
    let mut candidates = Vec::new();
    let ot = fastest(ot, opts, profile, &mut candidates)?;
    let (he, he_error) = match he {
        Ok(he) => (Some(fastest(he, opts, profile, &mut candidates)?), None),
        Err(e) => (None, Some(error_chain(&e))),
    };
    let (rlwe, rlwe_error) = match rlwe {
        Ok(r) => {
            let (c, _, _) = fastest(r, opts, profile, &mut Vec::new())?;
            let best = per_layer(c, profile)?;
            candidates.push(best.1.clone());
            (Some(best), None)
        }
        Err(e) => (None, Some(error_chain(&e))),
    };
    let mix = he
        .as_ref()
        .and_then(|he| mix((&ot.0.program, &ot.2), (&he.0.program, &he.2)));
    let ot_est = ot.1.clone();
    let he_est = he.as_ref().map(|he| he.1.clone());
    let rlwe_est = rlwe.as_ref().map(|r| r.1.clone());
    let (rlwe_products, rlwe_on_ot) = rlwe.as_ref().map_or((0, 0), |r| {
        let p = &r.0.program;
        // Products with the server's weights and secret matrix products (an
        // elementwise secret `mul` runs by OT only, whatever the choice).
        let backend = |v| {
            p.product_backend(v).or_else(|| {
                matches!(p.instr(v).op, sci_ir::Op::MatMul { .. })
                    .then(|| p.secret_product_backend(v))
                    .flatten()
            })
        };
        p.ids()
            .filter_map(backend)
            .fold((0, 0), |(r, o), b| match b {
                Backend::Rlwe => (r + 1, o),
                _ => (r, o + 1),
            })
    });
    let mut best = ot;
    for c in [he, rlwe].into_iter().flatten() {
        if c.1.seconds < best.1.seconds {
            best = c;
        }
    }
    let (compiled, est, _) = best;
    let why = format!(
        "SCI_{} on the {} OT engine is predicted fastest on {}",
        est.backend.to_uppercase(),
        est.engine,
        profile
    );
    let choice = AutoChoice {
        profile: profile.to_string(),
        chosen: est.backend,
        engine: est.engine,
        why,
        ot: ot_est,
        he: he_est,
        rlwe: rlwe_est,
        rlwe_on_ot,
        rlwe_products,
        he_error,
        rlwe_error,
        candidates,
        mix,
    };
    Ok((compiled, choice))
}

/// The per-layer choice on a ring program: each product that runs by RLWE (with the
/// server's weights, or of two secret matrices), in program order, moved to OT if
/// that lowers the predicted time of the whole run on `profile` (one prediction per
/// product). The result with its estimate and timing.
pub fn per_layer(
    compiled: Compiled,
    profile: &NetProfile,
) -> Result<(Compiled, Estimate, Timing), CompileError> {
    let mut program = compiled.program;
    let (mut est, mut timing) = estimate(&program, profile);
    let rlwe: Vec<_> = program
        .ids()
        .filter(|&v| {
            program.product_backend(v) == Some(Backend::Rlwe)
                || program.secret_product_backend(v) == Some(Backend::Rlwe)
        })
        .collect();
    for v in rlwe {
        let mut on_ot = program.clone();
        on_ot
            .set_product_backend(v, Backend::Ot)
            .map_err(|e| CompileError::Options(e.to_string()))?;
        let (e, t) = estimate(&on_ot, profile);
        if e.seconds < est.seconds {
            (program, est, timing) = (on_ot, e, t);
        }
    }
    Ok((
        Compiled {
            program,
            ..compiled
        },
        est,
        timing,
    ))
}

/// Of `compiled` on its OT engine and, when `opts.ot` names none, on the other one,
/// the faster on `profile` (its own engine on a tie) with its estimate and timing;
/// every estimate is appended to `candidates`.
fn fastest(
    compiled: Compiled,
    opts: &Options,
    profile: &NetProfile,
    candidates: &mut Vec<Estimate>,
) -> Result<(Compiled, Estimate, Timing), CompileError> {
    let (e, t) = estimate(&compiled.program, profile);
    candidates.push(e.clone());
    let mut best = (compiled, e, t);
    if opts.ot.is_none() {
        let other = match best.0.program.params().ot {
            OtKind::Silent => OtKind::Iknp,
            OtKind::Iknp => OtKind::Silent,
        };
        let program = with_run_params(best.0.program.clone(), other, opts.mill_radix, None)?;
        let (e, t) = estimate(&program, profile);
        candidates.push(e.clone());
        if e.seconds < best.1.seconds {
            best = (Compiled { program, ..best.0 }, e, t);
        }
    }
    Ok(best)
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
    /// The human summary: every candidate's estimate, the choice, the mix.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let mib = |b: u64| b as f64 / 1024.0 / 1024.0;
        let line = |s: &mut String, e: &Estimate| {
            let _ = writeln!(
                s,
                "  SCI_{} on {}: {:.3} s ({:.3} s transferring, {:.3} s round trips), server sends {:.2} MiB, client {:.2} MiB, {} rounds",
                e.backend.to_uppercase(),
                e.engine,
                e.seconds,
                e.transfer_seconds,
                e.latency_seconds,
                mib(e.server_bytes),
                mib(e.client_bytes),
                e.rounds,
            );
        };
        let _ = writeln!(s, "backend auto on {}:", self.profile);
        for e in &self.candidates {
            line(&mut s, e);
        }
        if let Some(e) = &self.he_error {
            let _ = writeln!(s, "  SCI_HE: not available: {e}");
        }
        if let Some(e) = &self.rlwe_error {
            let _ = writeln!(s, "  RLWE: not available: {e}");
        }
        if self.rlwe.is_some() {
            let _ = writeln!(
                s,
                "  per layer, SCI_RLWE runs {} products by RLWE and {} by OT",
                self.rlwe_products, self.rlwe_on_ot
            );
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
            "  chose SCI_{} on {}: {}",
            self.chosen.to_uppercase(),
            self.engine,
            self.why
        );
        s
    }
}
