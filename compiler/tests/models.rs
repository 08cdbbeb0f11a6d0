//! Every testdata model (`testdata/manifest.json`: digits, bench, single-op and ONNX node
//! models) compiles, and the compiled fixed-point program, run by the reference
//! interpreter on each committed case, reproduces onnxruntime's outputs within the
//! quantization error — or, where the frontend dropped a trailing Softmax/LogSoftmax (the
//! output then carries the logits), the float IR program's outputs. The ring is
//! ℓ = 44 at s = 12: some ONNX node tests have values near 200, beyond what the default
//! ℓ = 32 holds at products of scale 24.

use sci_compiler::{Options, Quantization, compile};
use sci_ir::npy::Array;
use sci_ir::{Encoding, Tensor, fixed, interp};
use sci_passes::Pipeline;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// Runs the compiled program on case `dir` and returns the largest error relative to
/// `1 + |reference|` over all outputs; the reference is onnxruntime's (`output_<j>.npy`
/// or `named_<name>.npy`), or with `float` that program's outputs.
fn check_case(
    p: &sci_ir::Program,
    float: Option<&sci_ir::Program>,
    dir: &Path,
    named_output: Option<&str>,
) -> f64 {
    let real: Vec<Tensor> = p
        .inputs()
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let a = Array::read(dir.join(format!("input_{i}.npy"))).unwrap();
            Tensor::real(p.ty(v).shape().to_vec(), a.to_f32()).unwrap()
        })
        .collect();
    let inputs: Vec<Tensor> = real
        .iter()
        .zip(p.inputs())
        .map(|(t, v)| fixed::encode_tensor(t, p.ty(v).scale(), p.ty(v).encoding()).unwrap())
        .collect();
    let outs = interp::run(p, &inputs).unwrap();
    let float_outs = float.map(|f| interp::run(f, &real).unwrap());
    let mut worst = 0.0f64;
    for (j, (o, &v)) in outs.iter().zip(&p.outputs()).enumerate() {
        let file = match named_output {
            Some(n) => dir.join(format!("named_{n}.npy")),
            None => dir.join(format!("output_{j}.npy")),
        };
        let want: Vec<f64> = match &float_outs {
            Some(f) => f[j]
                .as_f32()
                .unwrap()
                .iter()
                .map(|&x| f64::from(x))
                .collect(),
            None => Array::read(&file).unwrap().to_f64(),
        };
        let got = fixed::decode_tensor(o, p.ty(v).scale());
        let got = got.as_f32().unwrap();
        assert_eq!(got.len(), want.len(), "{}", file.display());
        for (g, &w) in got.iter().zip(&want) {
            worst = worst.max((f64::from(*g) - w).abs() / (1.0 + w.abs()));
        }
    }
    worst
}

#[test]
fn every_testdata_model_compiles_and_matches_onnxruntime() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(testdata().join("manifest.json")).unwrap())
            .unwrap();
    let models = manifest["models"].as_object().unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut worst = (0.0f64, String::new());
    for (path, entry) in models {
        let named = entry["compile_output"]["name"].as_str();
        let opts = Options {
            model: testdata().join(path),
            outputs: named.map(|n| vec![n.to_string()]).unwrap_or_default(),
            quantization: Quantization::Fixed {
                bits: Some(44),
                scale: Some(12),
            },
            mill_radix: None,
            ot: None,
            threads: None,
            backend: sci_ir::Backend::Ot,
            batch: 1,
        };
        let c = match compile(&opts, false) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{path}: {e}"));
                continue;
            }
        };
        assert_eq!(
            c.program.encoding(),
            Some(Encoding::Ring { bits: 44 }),
            "{path}"
        );
        let dropped = c.notes.iter().any(|n| n.contains("dropped"));
        let float = dropped.then(|| Pipeline::float_stage().run(&c.input).unwrap());
        // SqueezeNet's 224×224 cases take seconds in the interpreter: compile only.
        if path.starts_with("bench/squeezenet") {
            continue;
        }
        let cases = entry["cases"].as_u64().unwrap_or(0);
        let base = testdata().join(path.trim_end_matches(".onnx"));
        for k in 0..cases {
            let dir = PathBuf::from(format!("{}.cases/{k}", base.display()));
            let err = check_case(&c.program, float.as_ref(), &dir, named);
            checked += 1;
            if err > worst.0 {
                worst = (err, format!("{path} case {k}"));
            }
            if err > 0.02 {
                failures.push(format!("{path} case {k}: error {err}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 500, "only {checked} cases checked");
    println!(
        "{checked} cases; largest error {:.2e} ({})",
        worst.0, worst.1
    );
}

/// The protocol waves of `path` compiled at ℓ = 32, s = 12: per wave its step and
/// number of members.
fn waves_of(path: &str) -> Vec<(sci_ir::schedule::Step, usize)> {
    let opts = Options {
        model: testdata().join(path),
        outputs: Vec::new(),
        quantization: Quantization::Fixed {
            bits: Some(32),
            scale: Some(12),
        },
        mill_radix: None,
        ot: None,
        threads: None,
        backend: sci_ir::Backend::Ot,
        batch: 1,
    };
    let p = compile(&opts, false).unwrap().program;
    let nonneg = sci_ir::analysis::nonneg::nonneg(&p);
    sci_ir::schedule::waves(&p, &nonneg)
        .into_iter()
        .filter(|w| w.step.communicates())
        .map(|w| (w.step, w.members.len()))
        .collect()
}

/// A batch of secret × secret products is one wave (one `secmul` call, the rounds of
/// one product); a bidirectional LSTM's directions share their waves: one sigmoid
/// call over both directions' stacked gates per step.
#[test]
fn batched_secret_products_and_recurrent_steps_share_waves() {
    use sci_ir::schedule::Step;
    let w = waves_of("ops/matmul_act_act_batched_o13.onnx");
    let products: Vec<usize> = w
        .iter()
        .filter(|(s, _)| matches!(s, Step::SecretProduct { .. }))
        .map(|&(_, n)| n)
        .collect();
    assert_eq!(products, [4], "{w:?}");
    // 4 steps, 2 directions.
    let w = waves_of("ops/lstm_bidirectional_layout1_o14.onnx");
    let sigmoids: Vec<usize> = w
        .iter()
        .filter(|(s, _)| matches!(s, Step::Smooth { .. }))
        .map(|&(_, n)| n)
        .collect();
    // Per step: the gates' sigmoid and tanh(c), each over both directions.
    assert_eq!(sigmoids, [2; 8], "{w:?}");
}
