//! Float baseline against onnxruntime: every model of `testdata/manifest.json` is
//! loaded, lowered to a float-stage IR program, and run by the IR's reference
//! interpreter on each committed case; the outputs must match onnxruntime's
//! (`output_<j>.npy`) within the manifest's tolerance (rtol 1e-4, atol 1e-5).
//!
//! The test is data-driven: it loops over the manifest, so coverage grows with the
//! test data. `float-allow-list.txt` names the models that must pass (coverage can
//! only grow: a listed model that fails fails the test, and so does a smaller
//! number of passing models than listed; a renamed model is tolerated); models
//! that pass but are not listed are printed so they can be added.
//!
//! A trailing Softmax/LogSoftmax is dropped by the frontend (the program outputs
//! its input); for those outputs the test applies the op itself before comparing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sci_frontend::Model;
use sci_frontend::Note;
use sci_ir::npy::Array;
use sci_ir::{Op, Tensor};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

struct Entry {
    path: String,
    rtol: f64,
    atol: f64,
    cases: usize,
    /// `--output` to compile with, and the file holding its reference.
    compile_output: Option<(String, String)>,
}

fn manifest() -> Vec<Entry> {
    let text =
        std::fs::read_to_string(testdata().join("manifest.json")).expect("testdata/manifest.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("manifest is JSON");
    let models = json["models"].as_object().expect("manifest has models");
    models
        .values()
        .map(|m| Entry {
            path: m["path"].as_str().expect("path").to_string(),
            rtol: m["rtol"].as_f64().unwrap_or(1e-4),
            atol: m["atol"].as_f64().unwrap_or(1e-5),
            cases: m["cases"].as_u64().unwrap_or(0) as usize,
            compile_output: m.get("compile_output").map(|c| {
                (
                    c["name"].as_str().expect("name").to_string(),
                    c["file"].as_str().expect("file").to_string(),
                )
            }),
        })
        .collect()
}

fn allow_list() -> BTreeSet<String> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/float-allow-list.txt"),
    )
    .expect("tests/float-allow-list.txt");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Softmax (or log-softmax) of `x` with ONNX semantics for `opset`: from opset 13
/// along `axis` (default −1); before, over the input coerced to 2-D at `axis`
/// (default 1).
fn softmax(x: &[f32], shape: &[usize], axis: i64, opset: i64, log: bool) -> Vec<f32> {
    let rank = shape.len() as i64;
    let axis = if axis < 0 { axis + rank } else { axis } as usize;
    // Groups of `len` elements at stride `stride`.
    let (outer, len, stride) = if opset >= 13 {
        let inner: usize = shape[axis + 1..].iter().product();
        (
            shape[..axis].iter().product::<usize>() * inner,
            shape[axis],
            inner,
        )
    } else {
        (
            shape[..axis].iter().product::<usize>(),
            shape[axis..].iter().product(),
            1,
        )
    };
    let mut y = vec![0f32; x.len()];
    for g in 0..outer {
        let base = if stride == 1 {
            g * len
        } else {
            (g / stride) * len * stride + g % stride
        };
        let idx: Vec<usize> = (0..len).map(|i| base + i * stride).collect();
        let m = idx
            .iter()
            .map(|&i| f64::from(x[i]))
            .fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = idx.iter().map(|&i| (f64::from(x[i]) - m).exp()).sum();
        for &i in &idx {
            let v = f64::from(x[i]) - m;
            y[i] = if log {
                (v - sum.ln()) as f32
            } else {
                (v.exp() / sum) as f32
            };
        }
    }
    y
}

fn close(got: &[f32], want: &[f32], rtol: f64, atol: f64) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} elements, expected {}", got.len(), want.len()));
    }
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (f64::from(g), f64::from(w));
        if (g - w).abs() > atol + rtol * w.abs() || g.is_nan() != w.is_nan() {
            return Err(format!("element {i}: got {g}, onnxruntime {w}"));
        }
    }
    Ok(())
}

/// Loads, lowers and interprets one model on all its cases.
fn check_model(e: &Entry) -> Result<(), String> {
    let dir = testdata();
    let model = Model::load(dir.join(&e.path)).map_err(|err| format!("load: {err}"))?;
    let outputs: Option<Vec<String>> = e.compile_output.as_ref().map(|(n, _)| vec![n.clone()]);
    let (program, notes) = model
        .lower(outputs.as_deref())
        .map_err(|err| format!("lower: {err}"))?;
    // The program survives the IR's text format unchanged (names, constants, types).
    let text = sci_ir::text::print(&program);
    let reparsed = sci_ir::text::parse(&text).map_err(|err| format!("text format: {err}"))?;
    if reparsed != program {
        return Err("the text format does not round-trip the lowered program".into());
    }
    let cases_dir = dir.join(e.path.replace(".onnx", ".cases"));
    if e.cases == 0 {
        return Err("no cases".into());
    }
    for k in 0..e.cases {
        let case = cases_dir.join(k.to_string());
        let inputs = program
            .inputs()
            .iter()
            .map(|&v| {
                let Op::Input { name, .. } = &program.instr(v).op else {
                    unreachable!("inputs() are inputs")
                };
                let pos = model
                    .inputs
                    .iter()
                    .position(|i| &i.name == name)
                    .ok_or("unknown input")?;
                let a = Array::read(case.join(format!("input_{pos}.npy")))
                    .map_err(|e| e.to_string())?;
                a.to_real_tensor().map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<Tensor>, String>>()?;
        let got = sci_ir::interp::run(&program, &inputs)
            .map_err(|err| format!("case {k}: interpreter: {err}"))?;
        for (j, (out_id, y)) in program.outputs().iter().zip(&got).enumerate() {
            let Op::Output { name, .. } = &program.instr(*out_id).op else {
                unreachable!("outputs() are outputs")
            };
            let file = match &e.compile_output {
                Some((_, f)) => f.clone(),
                None => format!("output_{j}.npy"),
            };
            let want = Array::read(case.join(&file)).map_err(|err| format!("{file}: {err}"))?;
            let mut y32 = y.as_f32().ok_or("non-f32 output")?.to_vec();
            if y.shape() != want.shape.as_slice() {
                return Err(format!(
                    "case {k} output '{name}': shape {:?}, onnxruntime {:?}",
                    y.shape(),
                    want.shape
                ));
            }
            for note in &notes {
                if let Note::DroppedMonotone { node, outputs } = note
                    && outputs.contains(name)
                {
                    let n = &model.nodes[node.index];
                    let default = if model.opset >= 13 { -1 } else { 1 };
                    let axis = n.attr_int_or("axis", default).map_err(|e| e.to_string())?;
                    y32 = softmax(
                        &y32,
                        y.shape(),
                        axis,
                        model.opset,
                        n.op_type() == "LogSoftmax",
                    );
                }
            }
            close(&y32, &want.to_f32(), e.rtol, e.atol)
                .map_err(|m| format!("case {k} output '{name}': {m}"))?;
        }
    }
    Ok(())
}

#[test]
fn float_interpreter_matches_onnxruntime() {
    let allow = allow_list();
    let entries = manifest();
    let mut failed = Vec::new();
    let mut unlisted = Vec::new();
    let mut passed = 0;
    for e in &entries {
        match check_model(e) {
            Ok(()) => {
                passed += 1;
                if !allow.contains(&e.path) {
                    unlisted.push(e.path.clone());
                }
            }
            Err(m) if allow.contains(&e.path) => failed.push(format!("{}: {m}", e.path)),
            Err(m) => println!("not on the allow-list, fails: {}: {m}", e.path),
        }
    }
    let known: BTreeSet<&str> = entries.iter().map(|e| e.path.as_str()).collect();
    let missing: Vec<&String> = allow
        .iter()
        .filter(|p| !known.contains(p.as_str()))
        .collect();
    println!(
        "{passed} of {} testdata models match onnxruntime; {} on the allow-list",
        entries.len(),
        allow.len()
    );
    for u in &unlisted {
        println!("passes but is not on the allow-list (add it): {u}");
    }
    for m in &missing {
        println!("on the allow-list but not in testdata (renamed?): {m}");
    }
    // A renamed test-data model is tolerated (the list is updated afterwards), a
    // lost one is not: as many models must pass as the allow-list names.
    assert!(
        passed >= allow.len(),
        "only {passed} models pass, the allow-list has {}; missing from testdata: {missing:?}",
        allow.len()
    );
    assert!(
        failed.is_empty(),
        "{} allow-listed models fail:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn softmax_reference_is_right() {
    // Rows of [[0, ln 3]] → [0.25, 0.75]; coerced (opset < 13) over all trailing dims.
    let x = [0.0, 3f32.ln()];
    let y = softmax(&x, &[1, 2], -1, 13, false);
    assert!((y[0] - 0.25).abs() < 1e-6 && (y[1] - 0.75).abs() < 1e-6);
    let y = softmax(&[0.0, 0.0, 0.0, 0.0], &[1, 2, 2], 1, 11, false);
    assert!(y.iter().all(|&v| (v - 0.25).abs() < 1e-6));
    let y = softmax(&[0.0, 5.0, 0.0, 5.0], &[1, 2, 2], 1, 13, false);
    assert!(y.iter().all(|&v| (v - 0.5).abs() < 1e-6));
}
