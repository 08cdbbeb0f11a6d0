//! Autotuning of the bit width ℓ and the scale s on a validation set (CrypTFlow2 §6.2:
//! "we extend Athos to set both the bitwidth and the scale optimally by autotuning on
//! the validation set").
//!
//! 1. The float program (after the float stage of the [`Pipeline`]) is run by the
//!    reference interpreter on every validation input: the float top-1 accuracy.
//! 2. For every candidate scale s, the fixed stage (quantization, truncation placement,
//!    ...) is run at ℓ = 64 — the final pipeline, so the ranges are those of the program
//!    that will run, with its truncations moved and its intermediates widened — and the
//!    result is run on every input with range tracking: the top-1 accuracy at ℓ = 64 and,
//!    per value, the largest magnitude reached.
//! 3. The smallest ring holding every value is `Z_{2^ℓ}` with ℓ = 1 + bits(M), where M
//!    bounds the magnitudes the protocols meet: every value's, and the window sum
//!    `K·min(|x|, |y|+1)` for `avgpool`/`global_avgpool`
//!    (`K` elements are summed before the division, and `|sum| < K·(|y|+1)` for the
//!    output `y = ⌊sum/K'⌋`, `K' ≤ K`). Sums inside `conv2d`/`matmul` need nothing: ring
//!    arithmetic is exact modulo 2^ℓ, so only results must fit. Then a **safety margin**
//!    of [`AutotuneConfig::margin_bits`] bits (default 1, i.e. inputs up to twice as large
//!    as any seen) is added, and ℓ is at least one more than the largest scale (2s), and
//!    at least `2s + 7` where a `sigmoid`/`tanh` runs at scale `s` (its internal products
//!    must not wrap: `sci_ir::math::SmoothParams`), and at least `max(10, s +
//!    ⌈s/2⌉ + 3)` where an `rsqrt` does (`sci_ir::math::RsqrtParams`), and at least the
//!    narrowest ring `sci_ir::math::SoftmaxParams` accepts where a `softmax` does (`2s +
//!    4`, more for long lines; its differences `x − max` are exact while the operand's
//!    magnitude stays below `2^{ℓ−2}`, which a margin of at least one bit keeps).
//!    `maxpool`/`argmax` need no headroom beyond their operand's own magnitude: the
//!    paper's comparison of §5.2.2 takes the sign of a difference of two operands, which
//!    needs twice the range, but the runtime compares exactly (the sign of the
//!    difference corrected by the operands' signs, `runtime/src/proto/maxpool.rs`) and
//!    uses the paper's comparison only on operands provably non-negative
//!    ([`sci_ir::analysis::nonneg`]), whose differences of values in `[0, 2^(ℓ−1))`
//!    always fit ℓ signed bits.
//!    Since no value leaves the signed range of that ℓ, running at ℓ computes the same
//!    values as at 64 bits (the ℓ-bit results are the 64-bit ones reduced mod 2^ℓ, and
//!    every non-linear op sees in-range inputs), so the accuracy at ℓ equals the accuracy
//!    at 64. A scale whose M needs more than 62 bits is rejected (a 64-bit run could have
//!    wrapped).
//! 4. Among scales whose accuracy is within [`AutotuneConfig::tolerance`] percentage
//!    points of float (default 0.5), the smallest ℓ wins (communication grows with ℓ),
//!    then the highest accuracy, then the smaller s (more headroom at the same ℓ).
//! 5. The choice is compiled at its ℓ and run on the validation set again: its
//!    predictions must equal the 64-bit ones (a check of step 3).
//!
//! Samples are evaluated in parallel (rayon).

use crate::manager::{Pipeline, PipelineError};
use crate::quantize::Quantize;
use rayon::prelude::*;
use sci_ir::dataset::Dataset;
use sci_ir::fixed::encode_tensor;
use sci_ir::interp::{self, InterpError, Magnitude, Options};
use sci_ir::math::SoftmaxParams;
use sci_ir::{Encoding, Op, Program, Tensor};
use serde::Serialize;
use std::fmt::{self, Write as _};
use thiserror::Error;

/// What to try and how to choose.
#[derive(Clone, Debug, PartialEq)]
pub struct AutotuneConfig {
    /// Candidate scales s, tried in order.
    pub scales: Vec<u32>,
    /// Largest allowed drop of top-1 accuracy below float, in percentage points.
    pub tolerance: f64,
    /// Extra bits of ℓ beyond what the validation set needs (headroom for unseen inputs).
    pub margin_bits: u32,
}

impl Default for AutotuneConfig {
    /// Scales 4..=16, tolerance 0.5 points, margin 1 bit.
    fn default() -> Self {
        AutotuneConfig {
            scales: (4..=16).collect(),
            tolerance: 0.5,
            margin_bits: 1,
        }
    }
}

/// One tried scale.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trial {
    /// The scale s.
    pub scale: u32,
    /// Top-1 accuracy (percent) at ℓ = 64; `None` if the trial failed.
    pub accuracy: Option<f64>,
    /// M: the largest magnitude the protocols meet (see the module docs).
    pub max_magnitude: Option<u128>,
    /// 1 + bits(M): the smallest ℓ holding every value seen.
    pub needed_bits: Option<u32>,
    /// ℓ with the safety margin (and at least 2s + 1); `None` if it would exceed 64.
    pub bits: Option<u32>,
    /// Whether the accuracy is within the tolerance of float and ℓ is available.
    pub admissible: bool,
    /// Why the trial failed (e.g. a weight does not fit), if it did.
    pub error: Option<String>,
}

/// The result of autotuning.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tuning {
    /// Number of validation samples.
    pub samples: usize,
    /// Float top-1 accuracy (percent).
    pub float_accuracy: f64,
    /// The tolerance used (percentage points).
    pub tolerance: f64,
    /// The safety margin used (bits).
    pub margin_bits: u32,
    /// Every tried scale.
    pub trials: Vec<Trial>,
    /// The chosen ℓ.
    pub bits: u32,
    /// The chosen s.
    pub scale: u32,
    /// Top-1 accuracy (percent) of the chosen program at ℓ = 64.
    pub accuracy: f64,
    /// Top-1 accuracy (percent) of the chosen program compiled at the chosen ℓ (equal to
    /// `accuracy`: checked).
    pub verified_accuracy: f64,
}

impl Tuning {
    /// The table of trials as text, one row per scale, the choice marked with `*`.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "autotuning on {} samples: float top-1 {:.2}%, tolerance {} points, margin {} bit(s)",
            self.samples, self.float_accuracy, self.tolerance, self.margin_bits
        );
        let _ = writeln!(out, "     s  top-1@64   max|value|  needed ℓ   ℓ  ok");
        for t in &self.trials {
            let mark = if t.scale == self.scale { '*' } else { ' ' };
            let opt = |v: Option<u32>| v.map_or("-".to_string(), |b| b.to_string());
            let _ = write!(
                out,
                "  {mark} {:>3}  {:>8}  {:>11}  {:>8}  {:>2}  {}",
                t.scale,
                t.accuracy.map_or("-".into(), |a| format!("{a:.2}%")),
                t.max_magnitude.map_or("-".into(), |m| m.to_string()),
                opt(t.needed_bits),
                opt(t.bits),
                if t.admissible { "yes" } else { "no" }
            );
            if let Some(e) = &t.error {
                let _ = write!(out, "  ({e})");
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "chosen: ℓ = {}, s = {}: top-1 {:.2}% (verified at ℓ = {}: {:.2}%)",
            self.bits, self.scale, self.accuracy, self.bits, self.verified_accuracy
        );
        out
    }
}

/// Why autotuning failed.
#[derive(Debug, Error)]
pub enum AutotuneError {
    /// The program's interface does not suit a classification set.
    #[error("{0}")]
    Program(String),
    /// The float program failed on a sample.
    #[error("float evaluation of sample {sample}: {error}")]
    Float {
        /// The sample's index.
        sample: usize,
        /// The error.
        error: InterpError,
    },
    /// No scale was admissible.
    #[error(
        "no scale reaches the float top-1 accuracy ({float_accuracy:.2}%) within {tolerance} points without overflow; tried:\n{table}"
    )]
    NoCandidate {
        /// Float accuracy.
        float_accuracy: f64,
        /// The tolerance.
        tolerance: f64,
        /// The trials, as a table.
        table: String,
    },
    /// Compiling the chosen (ℓ, s) failed.
    #[error("compiling at ℓ = {bits}, s = {scale}: {error}")]
    Compile {
        /// ℓ.
        bits: u32,
        /// s.
        scale: u32,
        /// The error.
        error: PipelineError,
    },
    /// The program compiled at the chosen ℓ does not reproduce the 64-bit predictions.
    #[error(
        "at ℓ = {bits}, s = {scale} the predictions differ from ℓ = 64 on {differing} samples (an overflow the range analysis missed)"
    )]
    Mismatch {
        /// ℓ.
        bits: u32,
        /// s.
        scale: u32,
        /// How many samples differ.
        differing: usize,
    },
    /// Evaluation of a fixed-point program failed.
    #[error("fixed-point evaluation of sample {sample}: {error}")]
    Fixed {
        /// The sample's index.
        sample: usize,
        /// The error.
        error: EvalError,
    },
}

/// Why one sample could not be evaluated.
#[derive(Debug, Error)]
pub enum EvalError {
    /// The input does not fit the ring at the input's scale.
    #[error("input: {0}")]
    Encode(sci_ir::fixed::FixedError),
    /// The interpreter failed.
    #[error(transparent)]
    Interp(#[from] InterpError),
    /// The output is empty.
    #[error("the program's first output is empty")]
    EmptyOutput,
}

/// The class a program output stands for: the index of the first maximum of the
/// (flattened) first output, or, for a one-element output (an `argmax`), its value.
pub fn predicted_class(out: &Tensor, scale: u32) -> Option<i64> {
    let values: Vec<f64> = match (out.as_f32(), out.to_signed()) {
        (Some(f), _) => f.iter().map(|&x| f64::from(x)).collect(),
        (None, Some(i)) => i.iter().map(|&x| x as f64).collect(),
        _ => return None,
    };
    if values.len() == 1 {
        return Some((values[0] / f64::from(1u32 << scale.min(31))).round() as i64);
    }
    let mut best: Option<(usize, f64)> = None;
    for (i, &v) in values.iter().enumerate() {
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i as i64)
}

/// Runs `p` on sample input `x` (f32): encoded at the input's ring and scale for a
/// fixed-point program. Returns the predicted class and, if asked, the per-value ranges.
pub fn run_sample(
    p: &Program,
    x: &Tensor,
    track_ranges: bool,
) -> Result<(i64, Option<Vec<Magnitude>>), EvalError> {
    let input = p
        .inputs()
        .first()
        .map(|&i| p.ty(i).clone())
        .ok_or(EvalError::EmptyOutput)?;
    let x = match input.encoding() {
        Encoding::Real => x.clone(),
        enc => encode_tensor(x, input.scale(), enc).map_err(EvalError::Encode)?,
    };
    let opts = Options {
        keep_values: false,
        track_ranges,
    };
    let e = interp::eval(p, &[x], opts)?;
    let out = p.outputs();
    let scale = out.first().map_or(0, |&o| p.ty(o).scale());
    let class = e
        .outputs
        .first()
        .and_then(|t| predicted_class(t, scale))
        .ok_or(EvalError::EmptyOutput)?;
    Ok((class, e.ranges))
}

/// The samples of `data` as `f32` tensors of the program's input shape.
pub fn samples(p: &Program, data: &Dataset) -> Result<Vec<Tensor>, String> {
    let shape = p
        .inputs()
        .first()
        .map(|&i| p.ty(i).shape().to_vec())
        .ok_or("the program has no input")?;
    (0..data.len())
        .map(|i| {
            data.sample(i, &shape).map_err(|e| {
                format!(
                    "sample {i} of the validation set (x has shape {:?}) does not fit the program's input shape {shape:?}: {e}",
                    data.x.shape
                )
            })
        })
        .collect()
}

/// Predicted classes, and optionally per-value ranges.
pub type Predictions = (Vec<i64>, Option<Vec<Magnitude>>);

/// Predictions of `p` on every sample (in parallel); with ranges, the per-value maximum
/// over all samples.
pub fn predict(
    p: &Program,
    inputs: &[Tensor],
    track_ranges: bool,
) -> Result<Predictions, (usize, EvalError)> {
    let results: Vec<(i64, Option<Vec<Magnitude>>)> = inputs
        .par_iter()
        .enumerate()
        .map(|(i, x)| run_sample(p, x, track_ranges).map_err(|e| (i, e)))
        .collect::<Result<_, _>>()?;
    let mut ranges: Option<Vec<Magnitude>> = None;
    let mut preds = Vec::with_capacity(results.len());
    for (c, r) in results {
        preds.push(c);
        if let Some(r) = r {
            ranges = Some(match ranges {
                None => r,
                Some(acc) => acc.into_iter().zip(r).map(|(a, b)| a.max(b)).collect(),
            });
        }
    }
    Ok((preds, ranges))
}

/// Top-1 accuracy in percent of predictions against labels.
pub fn accuracy(preds: &[i64], labels: &[i64]) -> f64 {
    let correct = preds.iter().zip(labels).filter(|(p, l)| p == l).count();
    100.0 * correct as f64 / labels.len().max(1) as f64
}

/// M of the module docs: the largest magnitude the protocols meet, from per-value ranges
/// of a fixed-point program.
pub fn protocol_magnitude(p: &Program, ranges: &[Magnitude]) -> u128 {
    let mag = |v: sci_ir::ValueId| match ranges.get(v.index()) {
        Some(Magnitude::Int(m)) => u128::from(*m),
        _ => 0,
    };
    p.ids()
        .map(|v| {
            let own = mag(v);
            match &p.instr(v).op {
                Op::AvgPool { x, pool, .. } => {
                    let k = (pool.kernel[0] * pool.kernel[1]) as u128;
                    own.max(k * mag(*x).min(own + 1))
                }
                Op::GlobalAvgPool { x } => {
                    let s = p.ty(*x).shape();
                    let k = s.get(2..4).map_or(1, |d| d.iter().product::<usize>()) as u128;
                    own.max(k * mag(*x).min(own + 1))
                }
                _ => own,
            }
        })
        .max()
        .unwrap_or(0)
}

/// Bits of a two's-complement ring holding every value of magnitude at most `m`.
fn ring_bits(m: u128) -> u32 {
    128 - m.leading_zeros() + 1
}

/// Autotunes (ℓ, s) for the float program `float` (the output of
/// [`Pipeline::float_stage`]) on `data`: see the module docs.
pub fn autotune(
    float: &Program,
    data: &Dataset,
    cfg: &AutotuneConfig,
) -> Result<Tuning, AutotuneError> {
    if float.inputs().len() != 1 || float.outputs().is_empty() {
        return Err(AutotuneError::Program(format!(
            "autotuning needs a program with one input and at least one output (this one has {} inputs, {} outputs)",
            float.inputs().len(),
            float.outputs().len()
        )));
    }
    let inputs = samples(float, data).map_err(AutotuneError::Program)?;
    let labels = &data.y;
    let (float_preds, _) = predict(float, &inputs, false).map_err(|(sample, e)| match e {
        EvalError::Interp(error) => AutotuneError::Float { sample, error },
        other => AutotuneError::Program(format!("float evaluation of sample {sample}: {other}")),
    })?;
    let float_accuracy = accuracy(&float_preds, labels);
    // The narrowest ring every scale fits, and the internal products of `sigmoid`/`tanh`
    // (`2s + 7` bits, `sci_ir::math::SmoothParams`) and `rsqrt` (`max(10, s +
    // ⌈s/2⌉ + 3)`, `sci_ir::math::RsqrtParams`), `spline` (`2s + 6`, the powers'
    // products: `sci_ir::spline::SplineParams`) and `softmax` (the narrowest ring
    // `sci_ir::math::SoftmaxParams` accepts for its line length: `2s + 4` at least)
    // do not wrap in.
    let min_bits = |p: &Program| {
        p.instrs()
            .iter()
            .map(|i| {
                let s = i.ty.scale();
                match (&i.op, i.op.smooth()) {
                    (_, Some(_)) => 2 * s + 7,
                    (Op::Rsqrt { .. }, _) => (s + s.div_ceil(2) + 3).max(10),
                    (Op::Spline { .. }, _) => 2 * s + 6,
                    (Op::Softmax { x, axis }, _) => {
                        let n = p.ty(*x).shape().get(*axis).copied().unwrap_or(1);
                        (s + 1..=64)
                            .find(|&bits| SoftmaxParams::new(bits, s, n).is_ok())
                            .unwrap_or(65)
                    }
                    _ => s + 1,
                }
            })
            .max()
            .unwrap_or(1)
    };
    let mut trials = Vec::new();
    let mut best: Option<(u32, f64, u32, Vec<i64>)> = None; // (ℓ, accuracy, s, preds)
    for &s in &cfg.scales {
        let mut trial = Trial {
            scale: s,
            accuracy: None,
            max_magnitude: None,
            needed_bits: None,
            bits: None,
            admissible: false,
            error: None,
        };
        let q = Quantize { bits: 64, scale: s };
        let fixed = match Pipeline::fixed_stage(Some(q)).run(float) {
            Ok(p) => p,
            Err(e) => {
                trial.error = Some(e.to_string());
                trials.push(trial);
                continue;
            }
        };
        let (preds, ranges) = match predict(&fixed, &inputs, true) {
            Ok(r) => r,
            Err((i, e)) => {
                trial.error = Some(format!("sample {i}: {e}"));
                trials.push(trial);
                continue;
            }
        };
        let acc = accuracy(&preds, labels);
        let m = protocol_magnitude(&fixed, ranges.as_deref().unwrap_or(&[]));
        let needed = ring_bits(m);
        let bits = (needed <= 62)
            .then(|| (needed + cfg.margin_bits).max(min_bits(&fixed)))
            .filter(|&b| b <= 64);
        trial.accuracy = Some(acc);
        trial.max_magnitude = Some(m);
        trial.needed_bits = Some(needed);
        trial.bits = bits;
        if needed > 62 {
            trial.error =
                Some("values need more than 62 bits: a 64-bit run may have wrapped".into());
        }
        trial.admissible = bits.is_some() && acc >= float_accuracy - cfg.tolerance - 1e-9;
        if let (true, Some(b)) = (trial.admissible, bits) {
            let better = match &best {
                None => true,
                Some((bb, ba, _, _)) => b < *bb || (b == *bb && acc > *ba),
            };
            if better {
                best = Some((b, acc, s, preds));
            }
        }
        trials.push(trial);
    }
    let mut tuning = Tuning {
        samples: data.len(),
        float_accuracy,
        tolerance: cfg.tolerance,
        margin_bits: cfg.margin_bits,
        trials,
        bits: 0,
        scale: 0,
        accuracy: 0.0,
        verified_accuracy: 0.0,
    };
    let Some((bits, acc, scale, preds64)) = best else {
        return Err(AutotuneError::NoCandidate {
            float_accuracy,
            tolerance: cfg.tolerance,
            table: tuning.table(),
        });
    };
    // Step 5: compile at the chosen ℓ and check the predictions.
    let q = Quantize { bits, scale };
    let fixed = Pipeline::fixed_stage(Some(q))
        .run(float)
        .map_err(|error| AutotuneError::Compile { bits, scale, error })?;
    let (preds, _) = predict(&fixed, &inputs, false)
        .map_err(|(sample, error)| AutotuneError::Fixed { sample, error })?;
    let differing = preds.iter().zip(&preds64).filter(|(a, b)| a != b).count();
    if differing > 0 {
        return Err(AutotuneError::Mismatch {
            bits,
            scale,
            differing,
        });
    }
    tuning.bits = bits;
    tuning.scale = scale;
    tuning.accuracy = acc;
    tuning.verified_accuracy = accuracy(&preds, labels);
    Ok(tuning)
}

impl fmt::Display for Tuning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn testdata(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata")
            .join(rel)
    }

    /// Without the MaxPool/ArgMax headroom (and without the safety margin), the chosen ℓ
    /// holds every value of the program on every validation sample: the 64-bit run at
    /// the chosen scale never leaves the signed range of ℓ bits, every MaxPool/ArgMax
    /// the runtime runs with the paper's comparison of differences (operand provably
    /// non-negative) sees differences inside that range, and the program compiled at ℓ
    /// predicts exactly what the 64-bit one does.
    #[test]
    fn chosen_bits_never_overflow_on_the_validation_set() {
        let val = Dataset::load(testdata("digits/val")).expect("validation split");
        let cfg = AutotuneConfig {
            margin_bits: 0,
            ..AutotuneConfig::default()
        };
        for model in ["digits/digits_lenet.onnx", "digits/digits_resnet.onnx"] {
            let (p, _) = sci_frontend::load(testdata(model))
                .expect("model")
                .lower(None)
                .expect("lowered");
            let float = Pipeline::float_stage().run(&p).expect("float stage");
            let t = autotune(&float, &val, &cfg).expect("autotuned");
            let at = |bits| {
                Pipeline::fixed_stage(Some(Quantize {
                    bits,
                    scale: t.scale,
                }))
                .run(&float)
                .expect("fixed stage")
            };
            let (narrow, wide) = (at(t.bits), at(64));
            let pools: Vec<_> = wide
                .ids()
                .filter(|&v| matches!(wide.instr(v).op, Op::MaxPool { .. } | Op::ArgMax { .. }))
                .collect();
            assert!(!pools.is_empty(), "{model} has a MaxPool or ArgMax");
            let nonneg = sci_ir::analysis::nonneg::nonneg(&wide);
            let xs = samples(&float, &val).expect("samples");
            let limit = 1u128 << (t.bits - 1);
            for x in &xs {
                let e = interp::eval(
                    &wide,
                    &[
                        encode_tensor(x, t.scale, wide.ty(wide.inputs()[0]).encoding())
                            .expect("encoded"),
                    ],
                    Options {
                        keep_values: true,
                        track_ranges: true,
                    },
                )
                .expect("64-bit run");
                for (i, r) in e.ranges.expect("ranges").iter().enumerate() {
                    if let Magnitude::Int(m) = r {
                        assert!(
                            u128::from(*m) < limit,
                            "{model}: value {i} needs more than ℓ = {}",
                            t.bits
                        );
                    }
                }
                let values = e.values.expect("values");
                for &v in &pools {
                    let (Op::MaxPool { x, .. } | Op::ArgMax { x, .. }) = &wide.instr(v).op else {
                        unreachable!("filtered above")
                    };
                    if nonneg[x.index()] {
                        let vals = values[x.index()].to_signed().expect("ring values");
                        let (lo, hi) = (vals.iter().min(), vals.iter().max());
                        if let (Some(&lo), Some(&hi)) = (lo, hi) {
                            assert!(lo >= 0 && ((hi - lo) as u128) < limit, "{model}");
                        }
                    }
                }
            }
            let (p64, _) = predict(&wide, &xs, false).expect("64-bit predictions");
            let (pl, _) = predict(&narrow, &xs, false).expect("ℓ-bit predictions");
            assert_eq!(p64, pl, "{model}");
        }
    }

    /// With a `sigmoid`, ℓ is at least `2s + 7` (its internal products must not wrap),
    /// however small the values: the tuned program compiles and predicts as at 64 bits.
    #[test]
    fn sigmoid_keeps_the_ring_wide_enough() {
        let float = Program::parse(
            "
%x: client f32[1,4] = input \"x\"
%w: server f32[4,2] = const [0.5, -0.25, 0.125, 1.0, -0.5, 0.75, 0.25, -1.0]
%s: client f32[1,4] = sigmoid %x
%m: shared f32[1,2] = matmul %s, %w
%o: client f32[1,2] = output %m \"o\"
",
        )
        .unwrap();
        let xs: Vec<f32> = (0..32).map(|i| (i as f32 - 16.0) / 8.0).collect();
        let data = Dataset {
            x: sci_ir::npy::Array::from_f32(vec![8, 1, 4], &xs).unwrap(),
            y: vec![0, 1, 0, 1, 0, 1, 0, 1],
        };
        let cfg = AutotuneConfig {
            scales: vec![6, 10],
            tolerance: 100.0,
            margin_bits: 0,
        };
        let t = autotune(&float, &data, &cfg).unwrap();
        assert!(t.bits >= 2 * t.scale + 7, "ℓ = {}, s = {}", t.bits, t.scale);
    }

    /// With an `rsqrt`, ℓ is at least `max(10, s + ⌈s/2⌉ + 3)` however small the values.
    #[test]
    fn rsqrt_keeps_the_ring_wide_enough() {
        let float = Program::parse(
            "
%x: client f32[1,4] = input \"x\"
%r: client f32[1,4] = rsqrt %x
%w: server f32[4,2] = const [0.5, -0.25, 0.125, 1.0, -0.5, 0.75, 0.25, -1.0]
%m: shared f32[1,2] = matmul %r, %w
%o: client f32[1,2] = output %m \"o\"
",
        )
        .unwrap();
        let xs: Vec<f32> = (0..32).map(|i| 0.5 + i as f32 / 16.0).collect();
        let data = Dataset {
            x: sci_ir::npy::Array::from_f32(vec![8, 1, 4], &xs).unwrap(),
            y: vec![0, 1, 0, 1, 0, 1, 0, 1],
        };
        let cfg = AutotuneConfig {
            scales: vec![4, 10],
            tolerance: 100.0,
            margin_bits: 0,
        };
        let t = autotune(&float, &data, &cfg).unwrap();
        let need = (t.scale + t.scale.div_ceil(2) + 3).max(10);
        assert!(t.bits >= need, "ℓ = {}, s = {}", t.bits, t.scale);
    }
}
