//! Malformed and unsupported models are errors, never panics: the committed
//! `testdata/errors/` models (their expectations in `errors.json`), and random
//! bytes, truncations and byte mutations of real models (proptest).

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sci_frontend::Model;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// Loads and lowers (to the graph outputs); the error message, if any.
fn outcome(bytes: &[u8], dir: Option<PathBuf>) -> Option<String> {
    match Model::from_bytes(bytes, dir).and_then(|m| m.lower(None)) {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// ONNX type name of a numpy dtype name used in `errors.json`.
fn onnx_dtype(numpy: &str) -> String {
    match numpy {
        "float64" => "DOUBLE".into(),
        "float32" => "FLOAT".into(),
        "float16" => "FLOAT16".into(),
        other => other.to_ascii_uppercase(),
    }
}

/// Models of `testdata/errors/` that this frontend deliberately accepts:
/// opsets 1 to 5 are supported (testdata's own `ops/` group has opset-2, -4 and -5
/// models with onnxruntime references), INT8 weights cast to float are decoded
/// exactly (the weights' dtype list of the frontend includes INT8), `Pad` in
/// `reflect` mode is data movement (IR `gather`s, checked against onnxruntime by the
/// `ops/pad_reflect_*` models), DOUBLE inputs and weights are read (PyTorch
/// double-precision exports; the client encodes its float64 input from float64), and
/// `Clip` to any constant bounds is a combination of ReLUs (`ops/clip_*`).
const ACCEPTED: &[&str] = &[
    "unsupported_attr_clip_bounds.onnx",
    "unsupported_opset_5.onnx",
    "unsupported_dtype_int8_weights.onnx",
    "unsupported_attr_pad_reflect.onnx",
    "unsupported_dtype_float64.onnx",
];

#[test]
fn testdata_error_models_fail_with_messages_naming_node_op_and_attribute() {
    let dir = testdata().join("errors");
    let text =
        std::fs::read_to_string(dir.join("errors.json")).expect("testdata/errors/errors.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("errors.json is JSON");
    let entries = json.as_object().expect("an object of models");
    assert!(entries.len() >= 10, "expected the errors group of testdata");
    for (file, e) in entries {
        let bytes = std::fs::read(dir.join(file)).expect("model file");
        let result = outcome(&bytes, Some(dir.clone()));
        if ACCEPTED.contains(&file.as_str()) {
            assert_eq!(result, None, "{file} should lower");
            continue;
        }
        let msg =
            result.unwrap_or_else(|| panic!("{file}: lowering should fail ({})", e["expect"]));
        let mut expect = Vec::new();
        if let Some(node) = e["node"].as_str() {
            expect.push(format!("node '{node}'"));
        }
        for key in ["op_type", "attribute", "tensor"] {
            if let Some(v) = e[key].as_str() {
                expect.push(v.to_string());
            }
        }
        if let Some(d) = e["dtype"].as_str() {
            expect.push(onnx_dtype(d));
        }
        if let Some(o) = e["opset"].as_i64() {
            expect.push(format!("opset {o}"));
        }
        for part in expect {
            assert!(msg.contains(&part), "{file}: '{part}' missing in: {msg}");
        }
    }
}

fn seed_models() -> Vec<Vec<u8>> {
    [
        "digits/digits_lenet.onnx",
        "digits/digits_resnet.onnx",
        "ops/computed_weights_o13.onnx",
        "ops/oldstyle_ir3_o7.onnx",
        "ops/shape_subgraph_reshape_o13.onnx",
        "ops/pad_input_axes_o18.onnx",
        "ops/matmul_act_const_3d_o13.onnx",
        "ops/gemm_alpha_beta_transB_o11.onnx",
        "ops/maxpool_k2s2_pads1_ceil_o12.onnx",
        "ops/concat_act_const_axis1_o11.onnx",
    ]
    .iter()
    .map(|p| std::fs::read(testdata().join(p)).expect("seed model"))
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = outcome(&bytes, None);
    }

    #[test]
    fn truncations_of_real_models_never_panic(which in 0usize..10, frac in 0.0f64..1.0) {
        let models = seed_models();
        let m = &models[which];
        let cut = (m.len() as f64 * frac) as usize;
        let _ = outcome(&m[..cut], None);
    }

    #[test]
    fn mutations_of_real_models_never_panic(
        which in 0usize..10,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let models = seed_models();
        let mut m = models[which].clone();
        for (i, b) in edits {
            let k = i.index(m.len());
            m[k] = b;
        }
        let _ = outcome(&m, None);
    }
}

#[test]
fn every_truncation_of_a_small_model_is_an_error() {
    let m = std::fs::read(testdata().join("ops/relu_o6.onnx")).expect("model");
    for cut in 0..m.len() {
        // A prefix can be a valid protobuf with fewer fields; it must never lower.
        assert!(
            outcome(&m[..cut], None).is_some(),
            "prefix of {cut} bytes lowered"
        );
    }
    assert_eq!(outcome(&m, None), None);
}

/// Values that tend to break shape arithmetic.
const EDGE: [i64; 10] = [-2, -1, 0, 1, 2, 3, 7, 1 << 20, i64::MAX, i64::MIN];
/// Op types to swap in.
const OPS: [&str; 12] = [
    "Conv",
    "Gemm",
    "MatMul",
    "MaxPool",
    "AveragePool",
    "Reshape",
    "Concat",
    "Pad",
    "Gather",
    "Slice",
    "Clip",
    "Softmax",
];

/// Applies one structural edit to a decoded model: an attribute value, an
/// initializer or input dimension, an op type, or a dropped node input.
fn edit(
    m: &mut sci_frontend::pb::ModelProto,
    kind: u8,
    a: prop::sample::Index,
    b: prop::sample::Index,
    v: usize,
) {
    use sci_frontend::pb::tensor_shape_proto::dimension::Value as Dim;
    use sci_frontend::pb::type_proto::Value as Ty;
    let Some(g) = m.graph.as_mut() else { return };
    let value = EDGE[v % EDGE.len()];
    match kind % 6 {
        0 if !g.node.is_empty() => {
            let n = a.get_mut(&mut g.node);
            if !n.attribute.is_empty() {
                let at = b.get_mut(&mut n.attribute);
                if at.i.is_some() {
                    at.i = Some(value);
                } else if !at.ints.is_empty() {
                    let k = v % at.ints.len();
                    at.ints[k] = value;
                } else if at.f.is_some() {
                    at.f = Some(value as f32);
                }
            }
        }
        1 if !g.initializer.is_empty() => {
            let t = a.get_mut(&mut g.initializer);
            if !t.dims.is_empty() {
                let d = b.get_mut(&mut t.dims);
                *d = value;
            }
        }
        2 if !g.input.is_empty() => {
            let i = a.get_mut(&mut g.input);
            if let Some(Ty::TensorType(t)) = i.r#type.as_mut().and_then(|t| t.value.as_mut())
                && let Some(s) = t.shape.as_mut()
                && !s.dim.is_empty()
            {
                b.get_mut(&mut s.dim).value = Some(Dim::DimValue(value));
            }
        }
        3 if !g.node.is_empty() => {
            a.get_mut(&mut g.node).op_type = Some(OPS[v % OPS.len()].to_string())
        }
        5 if !g.initializer.is_empty() => {
            let t = a.get_mut(&mut g.initializer);
            if !t.int64_data.is_empty() {
                *b.get_mut(&mut t.int64_data) = value;
            } else if let Some(raw) = t
                .raw_data
                .as_mut()
                .filter(|r| t.data_type == Some(7) && r.len() >= 8)
            {
                let at = b.index(raw.len() / 8) * 8;
                raw[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }
        }
        4 if !g.node.is_empty() => {
            let n = a.get_mut(&mut g.node);
            if !n.input.is_empty() {
                let k = b.index(n.input.len());
                n.input.remove(k);
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn structural_edits_of_real_models_never_panic(
        which in 0usize..10,
        edits in proptest::collection::vec((any::<u8>(), any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<usize>()), 1..4),
    ) {
        use prost::Message;
        let models = seed_models();
        let mut m = sci_frontend::pb::ModelProto::decode(models[which].as_slice()).expect("seed decodes");
        for (kind, a, b, v) in edits {
            edit(&mut m, kind, a, b, v);
        }
        let _ = outcome(&m.encode_to_vec(), None);
    }
}
