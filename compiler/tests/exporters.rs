//! CNNs as the exporters write them (issue 13; `testdata/gen/exporters.py`): torchvision
//! networks from both PyTorch exporters, a Keras application through tf2onnx, an skl2onnx
//! classifier, ResNet18 upgraded to the newest opset. Each compiles as `sci-compile`
//! compiles it (`--output` from the manifest, nothing else), and the fixed-point
//! interpreter's argmax equals onnxruntime's on every committed case; the largest
//! absolute error against onnxruntime (its logits where the trailing Softmax was
//! dropped) is printed per model.
//!
//! The committed models (`exporters/`, `keras/`) always run. The full-size ones
//! (`exporters-large/`, git-ignored, made by `generate.py --only exporters-large`) run
//! when present; when absent the test says so on stderr (not captured), never silently.

mod common;

use common::{argmax, run_case, say, testdata};
use sci_compiler::{Options, Quantization, compile};
use sci_ir::npy::Array;
use serde_json::Value;
use std::path::PathBuf;

/// What the largest error and the argmax agreement of one model came to.
struct Outcome {
    cases: usize,
    max_abs_error: f64,
    bits: u32,
    scale: u32,
}

/// Compiles manifest entry `e` as `sci-compile MODEL [--output NAME]` would, runs the
/// fixed-point program by the reference interpreter on each case and compares with
/// onnxruntime's outputs.
fn check(e: &Value) -> Result<Outcome, String> {
    let path = e["path"].as_str().ok_or("no path")?;
    let output = e["compile_output"]["name"].as_str();
    let opts = Options {
        model: testdata().join(path),
        outputs: output.map(|o| vec![o.to_string()]).unwrap_or_default(),
        quantization: Quantization::Fixed {
            bits: None,
            scale: None,
        },
        mill_radix: None,
        ot: None,
        threads: None,
        backend: sci_ir::Backend::Ot,
        batch: 1,
    };
    let c = compile(&opts, false).map_err(|err| format!("compile: {err:#}"))?;
    let p = &c.program;
    let graph_outputs: Vec<&str> = e["outputs"]
        .as_array()
        .ok_or("no outputs")?
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    let cases = e["cases"].as_u64().unwrap_or(0) as usize;
    let base = testdata().join(path.trim_end_matches(".onnx"));
    let mut max_abs_error = 0.0f64;
    for k in 0..cases {
        let dir = PathBuf::from(format!("{}.cases/{k}", base.display()));
        let outs = run_case(p, &dir)?;
        for ((name, logits), got) in p.output_names().into_iter().zip(&outs) {
            let j = graph_outputs
                .iter()
                .position(|&o| o == name)
                .ok_or_else(|| format!("output '{name}' is not a graph output"))?;
            let file = dir.join(format!(
                "{}_{j}.npy",
                if logits { "logits" } else { "output" }
            ));
            let want = Array::read(&file).map_err(|err| format!("{}: {err}", file.display()))?;
            let want = want.to_f64();
            if got.len() != want.len() {
                return Err(format!(
                    "case {k} '{name}': {} values, onnxruntime {}",
                    got.len(),
                    want.len()
                ));
            }
            for (g, w) in got.iter().zip(&want) {
                max_abs_error = max_abs_error.max((g - w).abs());
            }
            let (ag, aw) = (argmax(got), argmax(&want));
            if ag != aw {
                return Err(format!(
                    "case {k} '{name}': fixed-point argmax {ag} ({}), onnxruntime {aw} ({})",
                    got[ag], want[aw]
                ));
            }
        }
    }
    Ok(Outcome {
        cases,
        max_abs_error,
        bits: c.bits,
        scale: c.scale,
    })
}

/// Checks every entry, prints a line per model and panics listing the failures.
fn check_all(entries: &[Value]) {
    let mut failures = Vec::new();
    for e in entries {
        let path = e["path"].as_str().unwrap_or("?");
        match check(e) {
            Ok(o) => say(&format!(
                "{path}: compiles (ℓ = {}, s = {}); argmax = onnxruntime's on {} cases; max abs error {:.3e}",
                o.bits, o.scale, o.cases, o.max_abs_error
            )),
            Err(m) => failures.push(format!("{path}: {m}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn committed_exporter_models_match_onnxruntime() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(testdata().join("manifest.json")).unwrap())
            .unwrap();
    let entries: Vec<Value> = manifest["models"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(p, _)| p.starts_with("exporters/") || p.starts_with("keras/"))
        .map(|(_, e)| e.clone())
        .collect();
    // 4 torchvision networks × 2 exporters, the skl2onnx classifier, the Keras model.
    assert!(
        entries.len() >= 10,
        "only {} exporter models in the manifest",
        entries.len()
    );
    check_all(&entries);
}

#[test]
fn large_exporter_models_match_onnxruntime_when_present() {
    let index = testdata().join("exporters-large/index.json");
    let Ok(text) = std::fs::read_to_string(&index) else {
        say(&format!(
            "SKIPPED: {} is absent; generate the full-size exporter models with \
             `testdata/.venv/bin/python testdata/generate.py --only exporters-large`",
            index.display()
        ));
        return;
    };
    let json: Value = serde_json::from_str(&text).expect("index.json is JSON");
    let entries = json["models"].as_array().expect("models").clone();
    assert!(!entries.is_empty(), "{} lists no model", index.display());
    check_all(&entries);
}
