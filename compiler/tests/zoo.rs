//! The models people deploy today (issue 25; `testdata/gen/zoo.py`, `testdata/zoo/`):
//! reduced MobileNetV3, EfficientNet, RegNetY, ConvNeXt, ViT, a transformer text
//! encoder, a U-Net, LSTM and GRU classifiers and a LeakyReLU ResNet, each from both
//! PyTorch exporters. Every one compiles at the defaults (as `sci-compile MODEL`), and
//! on every committed case the fixed-point interpreter's argmax over the class axis
//! (axis 1; per pixel for the U-Net) equals onnxruntime's and the largest absolute
//! error of the outputs is at most the model's bound in [`TABLE`] (printed), so the
//! table is the record of how close each runs. Separately, every probe of `zoo/index.json` (the output of
//! a ConvTranspose, Resize, ReduceMean, Expand, … node, with onnxruntime's value per
//! case) is lowered up to that tensor (`--output`) and its float-stage interpreter
//! value compared with onnxruntime's: the lowerings checked on real exporter graphs.

mod common;

use common::{argmax, run_case, say, testdata};
use sci_compiler::{CompileError, Options, Quantization, compile};
use sci_frontend::{FrontendError, Model};
use sci_ir::npy::Array;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// One row per model of `testdata/zoo/index.json`: its path and the bound on the
/// absolute error of every output against onnxruntime's.
const TABLE: &[(&str, f64)] = &[
    ("zoo/mobilenet_v3_small_tiny_legacy_o17.onnx", 1e-3),
    ("zoo/mobilenet_v3_small_tiny_dynamo.onnx", 1e-3),
    ("zoo/efficientnet_b0_tiny_legacy_o17.onnx", 2e-3),
    ("zoo/efficientnet_b0_tiny_dynamo.onnx", 2e-3),
    ("zoo/regnet_y_tiny_legacy_o17.onnx", 1e-3),
    ("zoo/regnet_y_tiny_dynamo.onnx", 1e-3),
    ("zoo/convnext_tiny_tiny_legacy_o17.onnx", 1e-3),
    ("zoo/convnext_tiny_tiny_dynamo.onnx", 1e-3),
    ("zoo/vit_tiny_legacy_o17.onnx", 4e-3),
    ("zoo/vit_tiny_dynamo.onnx", 4e-3),
    ("zoo/text_encoder_tiny_legacy_o17.onnx", 1e-3),
    ("zoo/text_encoder_tiny_dynamo.onnx", 1e-3),
    ("zoo/unet_tiny_legacy_o17.onnx", 2e-3),
    ("zoo/unet_tiny_dynamo.onnx", 2e-3),
    ("zoo/lstm_classifier_legacy_o17.onnx", 1e-3),
    ("zoo/lstm_classifier_dynamo.onnx", 1e-3),
    ("zoo/gru_classifier_legacy_o17.onnx", 1e-3),
    ("zoo/gru_classifier_dynamo.onnx", 1e-3),
    ("zoo/resnet_leaky_tiny_legacy_o17.onnx", 1e-3),
    ("zoo/resnet_leaky_tiny_dynamo.onnx", 1e-3),
];

/// The entries of `testdata/zoo/index.json`.
fn index() -> Vec<Value> {
    let path = testdata().join("zoo/index.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: Value = serde_json::from_str(&text).expect("index.json is JSON");
    json["models"].as_array().expect("models").clone()
}

fn case_dir(path: &str, k: usize) -> PathBuf {
    testdata().join(format!("{}.cases/{k}", path.trim_end_matches(".onnx")))
}

/// Compiles `path` at the defaults, as `sci-compile MODEL` does.
fn compile_default(path: &str) -> Result<sci_compiler::Compiled, CompileError> {
    compile(
        &Options {
            model: testdata().join(path),
            outputs: Vec::new(),
            quantization: Quantization::Fixed {
                bits: None,
                scale: None,
            },
            mill_radix: None,
            ot: None,
            threads: None,
            backend: sci_ir::Backend::Ot,
            batch: 1,
        },
        false,
    )
}

/// Per position after the class axis (axis 1 of `shape`), the class with the largest
/// value: one class for `[1, C]` logits, one per pixel for `[1, C, H, W]`.
fn class_argmax(x: &[f64], shape: &[usize]) -> Vec<usize> {
    let classes = shape.get(1).copied().unwrap_or(x.len());
    let inner: usize = shape.iter().skip(2).product();
    (0..inner)
        .map(|i| {
            let column: Vec<f64> = (0..classes).map(|c| x[c * inner + i]).collect();
            argmax(&column)
        })
        .collect()
}

/// Runs a compiled model on its cases: the largest absolute error against
/// onnxruntime, or the first case whose argmax differs.
fn check_compiled(e: &Value, c: &sci_compiler::Compiled) -> Result<f64, String> {
    let path = e["path"].as_str().expect("path");
    let cases = e["cases"].as_u64().expect("cases") as usize;
    let shape: Vec<usize> = e["outputs"][0]["shape"]
        .as_array()
        .expect("output shape")
        .iter()
        .map(|d| d.as_u64().expect("static output shape") as usize)
        .collect();
    let mut worst = 0.0f64;
    for k in 0..cases {
        let dir = case_dir(path, k);
        let got = run_case(&c.program, &dir)?;
        let want = Array::read(dir.join("output_0.npy")).map_err(|e| e.to_string())?;
        let (got, want) = (&got[0], want.to_f64());
        if got.len() != want.len() {
            return Err(format!(
                "case {k}: {} values, onnxruntime {}",
                got.len(),
                want.len()
            ));
        }
        for (g, w) in got.iter().zip(&want) {
            worst = worst.max((g - w).abs());
        }
        let (ag, aw) = (class_argmax(got, &shape), class_argmax(&want, &shape));
        if let Some(i) = (0..ag.len()).find(|&i| ag[i] != aw[i]) {
            return Err(format!(
                "case {k} position {i}: fixed-point argmax {}, onnxruntime {}",
                ag[i], aw[i]
            ));
        }
    }
    Ok(worst)
}

#[test]
fn zoo_table_says_what_the_compiler_does_today() {
    let entries = index();
    let listed: BTreeSet<&str> = entries.iter().filter_map(|e| e["path"].as_str()).collect();
    let rows: BTreeSet<&str> = TABLE.iter().map(|(p, _)| *p).collect();
    assert_eq!(listed, rows, "every zoo model has one row of TABLE");
    let mut failures = Vec::new();
    for (path, max_error) in TABLE {
        let e = entries
            .iter()
            .find(|e| e["path"].as_str() == Some(path))
            .expect("listed");
        let line = match compile_default(path) {
            Ok(c) => check_compiled(e, &c).and_then(|worst| {
                let line = format!(
                    "compiles (ℓ = {}, s = {}); argmax = onnxruntime's; max abs error {worst:.3e}",
                    c.bits, c.scale
                );
                if worst <= *max_error {
                    Ok(line)
                } else {
                    Err(format!("{line}, above the row's bound {max_error:.1e}"))
                }
            }),
            Err(err) => Err(format!("does not compile: {}", anyhow_chain(&err))),
        };
        match line {
            Ok(l) => say(&format!("{path}: {l}")),
            Err(m) => failures.push(format!("{path}: {m}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `err` with its sources, `: `-separated.
fn anyhow_chain(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut e = err.source();
    while let Some(cause) = e {
        s.push_str(&format!(": {cause}"));
        e = cause.source();
    }
    s
}

/// Lowers `path` up to `tensor` and runs the float-stage interpreter on its cases: the
/// largest difference from onnxruntime's value (file `probe` of each case), relative to
/// `1 + |onnxruntime|`; an error starting with `blocked by` when an unsupported op
/// comes first.
fn probe_error(path: &str, tensor: &str, probe: &str, cases: usize) -> Result<f64, String> {
    let model = Model::load(testdata().join(path)).map_err(|e| format!("load: {e}"))?;
    let (program, _) = model
        .lower(Some(&[tensor.to_string()]))
        .map_err(|e| match e {
            FrontendError::UnsupportedOp { node, .. } | FrontendError::Node { node, .. } => {
                format!("blocked by {node}")
            }
            other => format!("lower: {other}"),
        })?;
    let mut worst = 0.0f64;
    for k in 0..cases {
        let dir = case_dir(path, k);
        let x = Array::read(dir.join("input_0.npy")).map_err(|e| e.to_string())?;
        let x = x.to_real_tensor().map_err(|e| e.to_string())?;
        // A probe of constants only (ViT's class token expanded to the batch) folds to
        // a program without inputs.
        let inputs = if program.inputs().is_empty() {
            Vec::new()
        } else {
            vec![x]
        };
        let got = sci_ir::interp::run(&program, &inputs).map_err(|e| format!("case {k}: {e}"))?;
        let got = got[0].as_f32().ok_or("non-float probe")?;
        let want = Array::read(dir.join(probe)).map_err(|e| e.to_string())?;
        if got.len() != want.len() {
            return Err(format!(
                "case {k}: {} values, onnxruntime {}",
                got.len(),
                want.len()
            ));
        }
        for (&g, w) in got.iter().zip(want.to_f64()) {
            worst = worst.max((f64::from(g) - w).abs() / (1.0 + w.abs()));
        }
    }
    Ok(worst)
}

#[test]
fn landed_lowerings_match_onnxruntime_on_zoo_probes() {
    let mut failures = Vec::new();
    let mut checked = BTreeSet::new();
    for e in index() {
        let path = e["path"].as_str().expect("path");
        let cases = e["cases"].as_u64().expect("cases") as usize;
        for p in e["probes"].as_array().expect("probes") {
            let (op, tensor, file) = (
                p["op"].as_str().expect("op"),
                p["tensor"].as_str().expect("tensor"),
                p["file"].as_str().expect("file"),
            );
            match probe_error(path, tensor, file, cases) {
                Ok(err) if err <= 1e-4 => {
                    checked.insert(op.to_string());
                    say(&format!(
                        "{path}: {op} '{tensor}' = onnxruntime's (max rel. error {err:.1e})"
                    ));
                }
                Ok(err) => failures.push(format!(
                    "{path}: {op} '{tensor}': max rel. error {err:.3e} against onnxruntime"
                )),
                Err(m) => failures.push(format!("{path}: {op} '{tensor}': {m}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} probes fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The U-Net and the encoders reach these lowerings on both exporters' graphs.
    for op in ["ConvTranspose", "Resize", "ReduceMean", "Expand"] {
        assert!(checked.contains(op), "no {op} probe was checked");
    }
}

/// The legacy exporter's decomposed GELU (`Div √2, Erf, Add 1, Mul, Mul 0.5`) is fused
/// into one GELU spline (`sci-passes`' `fuse_gelu`), as the dynamo exporter's `Gelu`
/// node is lowered: both exports of ViT and ConvNeXt compile to the same number of GELU
/// splines, with no Erf spline left.
#[test]
fn both_exporters_gelu_is_one_spline() {
    use sci_ir::Op;
    use sci_ir::spline::SplineFn;
    let count = |path: &str, f: SplineFn| {
        let c = compile_default(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        c.program
            .instrs()
            .iter()
            .filter(|i| matches!(&i.op, Op::Spline { func, .. } if *func == f))
            .count()
    };
    for model in ["vit_tiny", "convnext_tiny_tiny"] {
        let legacy = format!("zoo/{model}_legacy_o17.onnx");
        let dynamo = format!("zoo/{model}_dynamo.onnx");
        let gelus = count(&legacy, SplineFn::Gelu);
        say(&format!("{model}: {gelus} GELU splines"));
        assert!(gelus > 0, "{legacy}: no GELU spline");
        assert_eq!(gelus, count(&dynamo, SplineFn::Gelu), "{model}");
        assert_eq!(count(&legacy, SplineFn::Erf), 0, "{legacy}: an Erf left");
    }
}
