//! Lowering behaviour on small hand-built models: what each ONNX construct becomes
//! in the IR, the `--output` selection, notes, external data, and error messages.

mod common;

use common::{D, Graph, attr_f, attr_i, attr_ints, attr_s};
use sci_frontend::Note;
use sci_frontend::pb::TensorProto;
use sci_frontend::{FrontendError, Model};
use sci_ir::{Program, Tensor};

fn load(g: &Graph) -> Model {
    Model::from_bytes(&g.bytes(), None).expect("the test model loads")
}

fn mnemonics(p: &Program) -> Vec<&'static str> {
    p.instrs().iter().map(|i| i.op.mnemonic()).collect()
}

fn run(p: &Program, inputs: &[(Vec<usize>, Vec<f32>)]) -> Vec<Vec<f32>> {
    let inputs: Vec<Tensor> = inputs
        .iter()
        .map(|(s, v)| Tensor::real(s.clone(), v.clone()).unwrap())
        .collect();
    sci_ir::interp::run(p, &inputs)
        .unwrap()
        .iter()
        .map(|t| t.as_f32().unwrap().to_vec())
        .collect()
}

fn lower_err(m: &Model, outputs: Option<&[String]>) -> String {
    match m.lower(outputs) {
        Ok(_) => panic!("lowering should fail"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn gemm_folds_transpose_alpha_and_beta_into_constants() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("y");
    g.init_f32("B", &[2, 3], &[1.0, 0.0, 0.0, 0.0, 1.0, 1.0])
        .init_f32("C", &[2], &[4.0, -2.0]);
    let n = g.node("fc", "Gemm", &["x", "B", "C"], &["y"]);
    attr_i(n, "transB", 1);
    attr_f(n, "alpha", 2.0);
    attr_f(n, "beta", 0.5);
    let (p, notes) = load(&g).lower(None).unwrap();
    assert!(notes.is_empty());
    assert_eq!(
        mnemonics(&p),
        ["input", "const", "const", "matmul", "output"]
    );
    // 2·(x·Bᵀ) + 0.5·C = 2·[1, 5] + [2, −1].
    assert_eq!(
        run(&p, &[(vec![1, 3], vec![1.0, 2.0, 3.0])]),
        [vec![4.0, 9.0]]
    );
}

#[test]
fn relu6_is_relu_minus_shifted_relu() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(4)]).output("y");
    g.init_f32("lo", &[], &[0.0]).init_f32("hi", &[], &[6.0]);
    g.node("clip", "Clip", &["x", "lo", "hi"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(
        mnemonics(&p),
        ["input", "const", "relu", "sub", "relu", "sub", "output"]
    );
    // The 6 is structure, not a weight.
    assert_eq!(p.instrs()[1].ty.owner(), sci_ir::Owner::Public);
    assert_eq!(
        run(&p, &[(vec![4], vec![-1.0, 3.0, 7.5, 6.0])]),
        [vec![0.0, 3.0, 6.0, 6.0]]
    );

    // Opset < 11: bounds are attributes; min = 0 alone is a ReLU.
    let mut g = Graph::new(6);
    g.input("x", &[D::N(2)]).output("y");
    attr_f(g.node("clip", "Clip", &["x"], &["y"]), "min", 0.0);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "relu", "output"]);
}

#[test]
fn clip_to_any_constant_bounds_is_relus() {
    let xs = vec![-3.0, -1.0, -0.25, 0.0, 0.5, 1.0, 2.5];
    for (lo, hi, mnem) in [
        (
            Some(-1.0f32),
            Some(1.0f32),
            vec![
                "input", "const", "const", "sub", "relu", "sub", "relu", "sub", "add", "output",
            ],
        ),
        (
            Some(0.5),
            None,
            vec!["input", "const", "sub", "relu", "add", "output"],
        ),
        (
            None,
            Some(-0.25),
            vec!["input", "const", "sub", "relu", "sub", "output"],
        ),
    ] {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(7)]).output("y");
        let mut inputs = vec!["x"];
        match lo {
            Some(l) => {
                g.init_f32("lo", &[], &[l]);
                inputs.push("lo");
            }
            None => inputs.push(""),
        }
        if let Some(h) = hi {
            g.init_f32("hi", &[], &[h]);
            inputs.push("hi");
        }
        g.node("clip", "Clip", &inputs, &["y"]);
        let (p, _) = load(&g).lower(None).unwrap();
        assert_eq!(mnemonics(&p), mnem, "[{lo:?}, {hi:?}]");
        let want: Vec<f32> = xs
            .iter()
            .map(|&x: &f32| x.max(lo.unwrap_or(f32::MIN)).min(hi.unwrap_or(f32::MAX)))
            .collect();
        assert_eq!(
            run(&p, &[(vec![7], xs.clone())]),
            [want],
            "[{lo:?}, {hi:?}]"
        );
    }
    // Bounds in the wrong order are an error naming the node.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(4)]).output("y");
    g.init_f32("lo", &[], &[1.0]).init_f32("hi", &[], &[-1.0]);
    g.node("clip_bad", "Clip", &["x", "lo", "hi"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'clip_bad'") && e.contains("greater than max"),
        "{e}"
    );
}

/// Lowers the one-node model `op` over `x` (7 values) with `attrs` (and the constant
/// second input `slope` if given) and runs the float interpreter on `xs`.
fn activation(op: &str, attrs: &[(&str, f32)], slope: Option<&[f32]>) -> (Program, Vec<f32>) {
    let mut g = Graph::new(16);
    g.input("x", &[D::N(1), D::N(7)]).output("y");
    let mut inputs = vec!["x"];
    if let Some(s) = slope {
        g.init_f32("slope", &[s.len() as i64], s);
        inputs.push("slope");
    }
    let n = g.node("act", op, &inputs, &["y"]);
    for (k, v) in attrs {
        attr_f(n, k, *v);
    }
    let (p, _) = load(&g).lower(None).unwrap();
    let y = run(&p, &[(vec![1, 7], ACT_XS.to_vec())]).remove(0);
    (p, y)
}

const ACT_XS: [f32; 7] = [-6.0, -3.0, -1.5, 0.0, 0.5, 3.0, 7.0];

fn close(got: &[f32], want: impl Iterator<Item = f32>, what: &str) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-6, "{what}: {got:?}");
    }
}

/// As [`close`] within `tol` (float sums in another order).
fn near(got: &[f32], want: impl Iterator<Item = f32>, what: &str, tol: f32) {
    let want: Vec<f32> = want.collect();
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= tol, "{what}: {got:?} vs {want:?}");
    }
}

#[test]
fn leaky_relu_and_prelu_are_one_relu_and_a_product() {
    let (p, y) = activation("LeakyRelu", &[("alpha", 0.1)], None);
    assert_eq!(
        mnemonics(&p),
        ["input", "const", "relu", "sub", "mul", "add", "output"]
    );
    // α is structure (public); the default is 0.01.
    assert_eq!(p.instrs()[1].ty.owner(), sci_ir::Owner::Public);
    close(
        &y,
        ACT_XS.iter().map(|&x| if x < 0.0 { 0.1 * x } else { x }),
        "alpha 0.1",
    );
    let (_, y) = activation("LeakyRelu", &[], None);
    close(
        &y,
        ACT_XS.iter().map(|&x| if x < 0.0 { 0.01 * x } else { x }),
        "default",
    );
    // PRelu's slope is a weight: the server's.
    let slope = [0.25, -0.5, 0.0, 1.0, 2.0, 0.1, 0.3];
    let (p, y) = activation("PRelu", &[], Some(&slope));
    assert_eq!(p.instrs()[1].ty.owner(), sci_ir::Owner::Server);
    close(
        &y,
        ACT_XS
            .iter()
            .zip(slope)
            .map(|(&x, a)| if x < 0.0 { a * x } else { x }),
        "prelu",
    );
}

#[test]
fn hard_sigmoid_and_hard_swish_are_clipped_lines() {
    let hs = |x: f32, a: f32, b: f32| (a * x + b).clamp(0.0, 1.0);
    let (p, y) = activation("HardSigmoid", &[], None);
    assert_eq!(
        p.instrs()
            .iter()
            .filter(|i| i.op.mnemonic() == "relu")
            .count(),
        2
    );
    close(&y, ACT_XS.iter().map(|&x| hs(x, 0.2, 0.5)), "defaults");
    let (_, y) = activation("HardSigmoid", &[("alpha", 0.5), ("beta", 0.25)], None);
    close(&y, ACT_XS.iter().map(|&x| hs(x, 0.5, 0.25)), "alpha, beta");
    let (p, y) = activation("HardSwish", &[], None);
    // x times its gate: a product of two run-time tensors.
    let last = &p.instrs()[p.instrs().len() - 2];
    assert_eq!(last.op.mnemonic(), "mul");
    assert!(
        last.op
            .operands()
            .iter()
            .all(|&&o| p.ty(o).owner() == sci_ir::Owner::Client)
    );
    close(
        &y,
        ACT_XS.iter().map(|&x| x * hs(x, 1.0 / 6.0, 0.5)),
        "hardswish",
    );
}

#[test]
fn sigmoid_and_tanh_are_ops_and_silu_a_secret_product() {
    let (p, y) = activation("Sigmoid", &[], None);
    assert_eq!(mnemonics(&p), ["input", "sigmoid", "output"]);
    close(
        &y,
        ACT_XS.iter().map(|&x| 1.0 / (1.0 + (-x).exp())),
        "sigmoid",
    );
    let (p, y) = activation("Tanh", &[], None);
    assert_eq!(mnemonics(&p), ["input", "tanh", "output"]);
    close(&y, ACT_XS.iter().map(|&x| x.tanh()), "tanh");
    // SiLU: x · Sigmoid(x), a product of two client tensors.
    let mut g = Graph::new(14);
    g.input("x", &[D::N(1), D::N(7)]).output("y");
    g.node("sig", "Sigmoid", &["x"], &["s"]);
    g.node("silu", "Mul", &["x", "s"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "sigmoid", "mul", "output"]);
    let y = run(&p, &[(vec![1, 7], ACT_XS.to_vec())]).remove(0);
    close(&y, ACT_XS.iter().map(|&x| x / (1.0 + (-x).exp())), "silu");
    // A constant operand is folded.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(2)]).output("y");
    g.init_f32("c", &[2], &[0.0, 1.0]);
    g.node("sig", "Sigmoid", &["c"], &["s"]);
    g.node("add", "Add", &["x", "s"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert!(!mnemonics(&p).contains(&"sigmoid"), "{:?}", mnemonics(&p));
}

#[test]
fn max_and_min_of_run_time_tensors_are_relus() {
    for (op, f) in [("Max", f32::max as fn(f32, f32) -> f32), ("Min", f32::min)] {
        let mut g = Graph::new(13);
        g.input("a", &[D::N(2), D::N(3)])
            .input("b", &[D::N(1), D::N(3)])
            .output("y");
        g.init_f32("c", &[], &[0.5]);
        g.node("ext", op, &["a", "b", "c"], &["y"]);
        let (p, _) = load(&g).lower(None).unwrap();
        assert_eq!(
            p.instrs()
                .iter()
                .filter(|i| i.op.mnemonic() == "relu")
                .count(),
            2,
            "{op}"
        );
        let a = vec![-1.0, 0.0, 2.0, 0.75, -3.0, 0.25];
        let b = vec![0.0, 1.0, -2.0];
        let want: Vec<f32> = a
            .iter()
            .enumerate()
            .map(|(i, &x)| f(f(x, b[i % 3]), 0.5))
            .collect();
        assert_eq!(run(&p, &[(vec![2, 3], a), (vec![1, 3], b)]), [want], "{op}");
    }
}

fn relu_then(op: &str, domain: &str) -> Graph {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("post");
    g.node("relu", "Relu", &["x"], &["logits"]);
    let n = g.node("tail", op, &["logits"], &["post"]);
    n.domain = Some(domain.into());
    if !domain.is_empty() {
        g.extra_opsets.push((domain.into(), 1));
    }
    g
}

#[test]
fn output_selects_the_subgraph_and_unsupported_trailing_ops_hint_at_it() {
    for (op, domain) in [("Sin", ""), ("ZipMap", "ai.onnx.ml")] {
        let m = load(&relu_then(op, domain));
        let e = lower_err(&m, None);
        assert!(
            e.contains("node 'tail'") && e.contains(op) && e.contains("--output logits"),
            "{e}"
        );
        assert!(
            e.contains("supported ops: Add, ArgMax") && e.contains("on constants only"),
            "{e}"
        );
        if !domain.is_empty() {
            assert!(e.contains("ai.onnx.ml"), "{e}");
        }
        let (p, _) = m.lower(Some(&["logits".to_string()])).unwrap();
        assert_eq!(mnemonics(&p), ["input", "relu", "output"]);
        assert_eq!(
            run(&p, &[(vec![1, 3], vec![-1.0, 0.5, 2.0])]),
            [vec![0.0, 0.5, 2.0]]
        );
    }
}

#[test]
fn unsupported_op_in_the_middle_gets_no_output_hint() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("y");
    g.node("sin_mid", "Sin", &["x"], &["s"]);
    g.node("relu", "Relu", &["s"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'sin_mid'") && e.contains("Sin") && !e.contains("--output"),
        "{e}"
    );
}

#[test]
fn unnamed_nodes_are_named_by_index() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("y");
    g.node("", "Relu", &["x"], &["r"]);
    g.node("", "Det", &["r"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(e.contains("node #1 (unnamed)") && e.contains("Det"), "{e}");
}

#[test]
fn unknown_output_is_an_error() {
    let m = load(&relu_then("Relu", ""));
    let e = lower_err(&m, Some(&["nope".to_string()]));
    assert!(e.contains("'nope'") && e.contains("post"), "{e}");
}

#[test]
fn dynamic_batch_is_set_to_one_other_unknown_dims_are_errors() {
    let mut g = Graph::new(13);
    g.input("x", &[D::P("N"), D::N(3)]).output("y");
    g.node("relu", "Relu", &["x"], &["y"]);
    let (p, notes) = load(&g).lower(None).unwrap();
    assert_eq!(p.ty(p.inputs()[0]).shape(), &[1, 3]);
    assert_eq!(
        notes,
        [Note::BatchSetToOne {
            input: "x".into(),
            dim: Some("N".into())
        }]
    );
    assert!(notes[0].to_string().contains("set to 1"));

    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::P("C")]).output("y");
    g.node("relu", "Relu", &["x"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(e.contains("'x'") && e.contains("dimension 1 (C)"), "{e}");
}

#[test]
fn double_client_inputs_are_accepted_with_a_note_other_types_rejected() {
    // DOUBLE (11): a float-stage input, with a note that the client's float64 file is
    // encoded from float64.
    let mut g = Graph::new(13);
    g.input_typed("x", 11, &[D::N(2)]).output("y");
    g.node("relu", "Relu", &["x"], &["y"]);
    let (p, notes) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "relu", "output"]);
    assert!(
        matches!(&notes[..], [Note::Float64Input { input }] if input == "x"),
        "{notes:?}"
    );
    assert!(notes[0].to_string().contains("float64"), "{}", notes[0]);
    // FLOAT16 (10) and INT64 (7) are not client input types.
    for (code, name) in [(10, "FLOAT16"), (7, "INT64")] {
        let mut g = Graph::new(13);
        g.input_typed("x", code, &[D::N(2)]).output("y");
        g.node("relu", "Relu", &["x"], &["y"]);
        let e = lower_err(&load(&g), None);
        assert!(
            e.contains("'x'") && e.contains(name) && e.contains("FLOAT, DOUBLE"),
            "{e}"
        );
    }
}

#[test]
fn trailing_softmax_is_dropped_with_a_note_but_not_in_the_middle() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("probs");
    g.node("relu", "Relu", &["x"], &["logits"]);
    g.node("sm", "Softmax", &["logits"], &["probs"]);
    let (p, notes) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "relu", "output"]);
    assert!(matches!(&notes[..], [Note::DroppedMonotone { outputs, .. }] if outputs == &["probs"]));
    assert!(
        notes[0]
            .to_string()
            .contains("node 'sm' (op Softmax) dropped")
    );

    // Inside a graph a Softmax is the IR's softmax; a LogSoftmax is refused there.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("y");
    g.node("softmax_mid", "Softmax", &["x"], &["s"]);
    g.node("relu", "Relu", &["s"], &["y"]);
    let (p, notes) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "softmax", "relu", "output"]);
    assert!(notes.is_empty(), "{notes:?}");
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("y");
    g.node("log_softmax_mid", "LogSoftmax", &["x"], &["s"]);
    g.node("relu", "Relu", &["s"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'log_softmax_mid'") && e.contains("only supported as the last op"),
        "{e}"
    );
}

/// The float softmax of `x` (`[outer, n]` row-major) along its rows.
fn softmax_rows(x: &[f32], n: usize) -> Vec<f32> {
    x.chunks(n)
        .flat_map(|row| {
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let total: f32 = row.iter().map(|&v| (v - m).exp()).sum();
            row.iter().map(move |&v| (v - m).exp() / total)
        })
        .collect()
}

/// `Softmax` inside a graph on a `[2, 3, 4]` input: opset 13 along `axis` (default −1;
/// axis 1 transposed into rows for the reference), opsets 1 and 11 over the input
/// coerced to 2-D at `axis` (default 1: rows of 12; a reshape around a softmax along
/// the last axis, none for the last axis itself); a constant input folds.
#[test]
fn softmax_inside_a_graph_on_any_axis_and_opset() {
    const ONE: [&str; 1] = ["softmax"];
    const RESHAPED: [&str; 3] = ["reshape", "softmax", "reshape"];
    let x: Vec<f32> = (0..24).map(|i| ((i * 7) % 11) as f32 / 4.0 - 1.0).collect();
    // Lines along axis 1 of [2, 3, 4], gathered into rows of 3.
    let axis1 = |x: &[f32]| -> Vec<f32> {
        (0..2)
            .flat_map(|a| (0..4).flat_map(move |c| (0..3).map(move |b| x[(a * 3 + b) * 4 + c])))
            .collect()
    };
    let scatter1 = |rows: &[f32]| -> Vec<f32> {
        let mut y = vec![0.0; 24];
        for a in 0..2 {
            for c in 0..4 {
                for b in 0..3 {
                    y[(a * 3 + b) * 4 + c] = rows[(a * 4 + c) * 3 + b];
                }
            }
        }
        y
    };
    let cases = [
        (13, None, &ONE[..], softmax_rows(&x, 4)),
        (13, Some(1), &ONE, scatter1(&softmax_rows(&axis1(&x), 3))),
        (11, None, &RESHAPED, softmax_rows(&x, 12)),
        (11, Some(0), &RESHAPED, softmax_rows(&x, 24)),
        (11, Some(-1), &ONE, softmax_rows(&x, 4)),
        (1, Some(2), &ONE, softmax_rows(&x, 4)),
    ];
    for (opset, axis, ops, want) in cases {
        let mut g = Graph::new(opset);
        g.input("x", &[D::N(2), D::N(3), D::N(4)]).output("y");
        let n = g.node("sm", "Softmax", &["x"], &["s"]);
        if let Some(a) = axis {
            attr_i(n, "axis", a);
        }
        g.node("relu", "Relu", &["s"], &["y"]);
        let (p, _) = load(&g).lower(None).unwrap();
        let mut expected = vec!["input"];
        expected.extend(ops.iter().copied());
        expected.extend(["relu", "output"]);
        assert_eq!(mnemonics(&p), expected, "opset {opset} axis {axis:?}");
        let y = run(&p, &[(vec![2, 3, 4], x.clone())]).remove(0);
        for (a, b) in y.iter().zip(&want) {
            assert!(
                (a - b).abs() < 1e-6,
                "opset {opset} axis {axis:?}: {y:?} vs {want:?}"
            );
        }
    }
    // A constant operand folds; an axis out of range is named.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(2)]).output("y");
    g.init_f32("k", &[1, 2], &[0.0, 0.0]);
    g.node("sm", "Softmax", &["k"], &["s"]);
    g.node("add", "Add", &["x", "s"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert!(!mnemonics(&p).contains(&"softmax"));
    assert_eq!(
        run(&p, &[(vec![1, 2], vec![1.0, 2.0])]).remove(0),
        [1.5, 2.5]
    );
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(2)]).output("y");
    attr_i(g.node("sm", "Softmax", &["x"], &["s"]), "axis", 2);
    g.node("relu", "Relu", &["s"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(e.contains("axis") && e.contains("out of range"), "{e}");
}

/// The skl2onnx classifier head: `Softmax → Identity → probabilities`, and
/// `ArgMax → ArrayFeatureExtractor (ai.onnx.ml) → label` reading `probabilities` too.
/// `--output probabilities` prunes the label branch before the Softmax is judged; a
/// Softmax followed only by Identity/Cast/Reshape to the output is still the last op.
#[test]
fn output_pruning_comes_before_the_trailing_softmax_check() {
    let mut g = Graph::new(13);
    g.extra_opsets.push(("ai.onnx.ml".into(), 1));
    g.input("x", &[D::N(1), D::N(3)])
        .output("label")
        .output("probabilities");
    g.init_i64("classes", &[3], &[10, 20, 30]);
    g.node("relu", "Relu", &["x"], &["logits"]);
    g.node("sm", "Softmax", &["logits"], &["sm_out"]);
    g.node("id", "Identity", &["sm_out"], &["probabilities"]);
    g.node("am", "ArgMax", &["probabilities"], &["idx"]);
    let n = g.node(
        "afe",
        "ArrayFeatureExtractor",
        &["classes", "idx"],
        &["label"],
    );
    n.domain = Some("ai.onnx.ml".into());
    let m = load(&g);
    assert!(lower_err(&m, None).contains("ArrayFeatureExtractor"));
    let (p, notes) = m.lower(Some(&["probabilities".to_string()])).unwrap();
    assert_eq!(mnemonics(&p), ["input", "relu", "identity", "output"]);
    assert!(
        matches!(&notes[..], [Note::DroppedMonotone { outputs, .. }] if outputs == &["probabilities"])
    );
    assert!(
        notes[0].to_string().contains("logits (pre-softmax)"),
        "{}",
        notes[0]
    );

    // Cast and Reshape after the Softmax keep it last; the requested tensor in the
    // middle of the chain and the end of the chain both carry the logits.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(4)]).output("r").output("c");
    g.init_i64("shape", &[2], &[2, 2]);
    g.node("sm", "Softmax", &["x"], &["s"]);
    attr_i(g.node("cast", "Cast", &["s"], &["c"]), "to", 1);
    g.node("reshape", "Reshape", &["c", "shape"], &["r"]);
    let (p, notes) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "reshape", "output", "output"]);
    let Note::DroppedMonotone { outputs, .. } = &notes[0] else {
        panic!("{notes:?}")
    };
    let mut outputs = outputs.clone();
    outputs.sort();
    assert_eq!(outputs, ["c", "r"]);

    // Anything else reading the chain makes the Softmax a middle op again: it runs.
    g.node("relu", "Relu", &["c"], &["y"]);
    g.output("y");
    let (p, notes) = load(&g).lower(None).unwrap();
    assert!(mnemonics(&p).contains(&"softmax"), "{:?}", mnemonics(&p));
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn identity_dropout_and_batchnorm_stay_ir_ops_for_the_passes() {
    let mut g = Graph::new(15);
    g.input("x", &[D::N(1), D::N(2), D::N(1), D::N(1)])
        .output("y");
    for (name, v) in [
        ("s", [1.0, 2.0]),
        ("b", [0.5, 0.0]),
        ("m", [0.0, 1.0]),
        ("v", [1.0, 4.0]),
    ] {
        g.init_f32(name, &[2], &v);
    }
    g.node("id", "Identity", &["x"], &["i"]);
    g.node("drop", "Dropout", &["i"], &["d"]);
    attr_f(
        g.node(
            "bn",
            "BatchNormalization",
            &["d", "s", "b", "m", "v"],
            &["y"],
        ),
        "epsilon",
        0.0,
    );
    let (p, _) = load(&g).lower(None).unwrap();
    let ops = mnemonics(&p);
    assert_eq!(ops.iter().filter(|&&o| o == "identity").count(), 2);
    assert!(ops.contains(&"batchnorm"));
    // y = s·(x − m)/√v + b.
    assert_eq!(
        run(&p, &[(vec![1, 2, 1, 1], vec![3.0, 5.0])]),
        [vec![3.5, 4.0]]
    );
}

#[test]
fn shape_subgraphs_fold_to_a_single_reshape() {
    let mut g = Graph::new(13);
    g.input("x", &[D::P("N"), D::N(2), D::N(3)]).output("y");
    g.init_i64("zero", &[], &[0])
        .init_i64("axes", &[1], &[0])
        .init_i64("minus1", &[1], &[-1]);
    g.node("shape", "Shape", &["x"], &["s"]);
    g.node("gather", "Gather", &["s", "zero"], &["n"]);
    g.node("unsq", "Unsqueeze", &["n", "axes"], &["n1"]);
    attr_i(
        g.node("cat", "Concat", &["n1", "minus1"], &["target"]),
        "axis",
        0,
    );
    g.node("reshape", "Reshape", &["x", "target"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "reshape", "output"]);
    assert_eq!(p.ty(p.outputs()[0]).shape(), &[1, 6]);
}

#[test]
fn computed_weights_fold() {
    // W = Unsqueeze(ConstantOfShape([3]) = 2.0); y = x · W (per channel).
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3), D::N(1)]).output("y");
    g.init_i64("shape", &[1], &[3]).init_i64("axes", &[1], &[1]);
    let c = g.node("cos", "ConstantOfShape", &["shape"], &["w"]);
    c.attribute.push(sci_frontend::pb::AttributeProto {
        name: Some("value".into()),
        r#type: Some(4),
        t: Some(sci_frontend::pb::TensorProto {
            dims: vec![1],
            data_type: Some(1),
            float_data: vec![2.0],
            ..Default::default()
        }),
        ..Default::default()
    });
    g.node("unsq", "Unsqueeze", &["w", "axes"], &["w2"]);
    g.node("mul", "Mul", &["x", "w2"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "const", "mul", "output"]);
    assert_eq!(
        run(&p, &[(vec![1, 3, 1], vec![1.0, -2.0, 0.5])]),
        [vec![2.0, -4.0, 1.0]]
    );
}

/// `x · ConstantOfShape(dims)` with the constant 1/1024, then `tail` ops (each
/// `op(prev) -> next`) up to output `y`.
fn constant_of_shape_matmul(dims: &[i64], tail: &[&str]) -> Graph {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(dims[0])]).output("y");
    g.init_i64("dims", &[2], dims);
    let c = g.node("cos", "ConstantOfShape", &["dims"], &["w"]);
    c.attribute.push(sci_frontend::pb::AttributeProto {
        name: Some("value".into()),
        r#type: Some(4),
        t: Some(sci_frontend::pb::TensorProto {
            dims: vec![1],
            data_type: Some(1),
            float_data: vec![1.0 / 1024.0],
            ..Default::default()
        }),
        ..Default::default()
    });
    let mut prev = "m".to_string();
    g.node("mm", "MatMul", &["x", "w"], &[&prev]);
    for (k, op) in tail.iter().enumerate() {
        let next = if k + 1 == tail.len() {
            "y".to_string()
        } else {
            format!("t{k}")
        };
        g.node(&format!("{op}{k}"), op, &[&prev], &[&next]);
        prev = next;
    }
    g
}

#[test]
fn computed_weights_fold_up_to_the_memory_budget() {
    // AlexNet's fully connected weight (9216×4096 = 37.7 M elements) folds: above the
    // old 2^24-element limit, within the 4 GiB budget.
    let (p, _) = load(&constant_of_shape_matmul(&[9216, 4096], &["Relu"]))
        .lower(None)
        .unwrap();
    assert_eq!(
        mnemonics(&p),
        ["input", "const", "matmul", "relu", "output"]
    );
    assert_eq!(p.ty(p.outputs()[0]).shape(), &[1, 4096]);
    // 2^20 × 2^20 elements would take 8 TiB: an error naming the shape and budget.
    let e = lower_err(
        &load(&constant_of_shape_matmul(&[1 << 20, 1 << 20], &["Relu"])),
        None,
    );
    assert!(
        e.contains("[1048576, 1048576]") && e.contains("4 GiB budget"),
        "{e}"
    );
    // An unsupported op is reported first, before anything is folded.
    let e = lower_err(
        &load(&constant_of_shape_matmul(
            &[1 << 20, 1 << 20],
            &["Relu", "LRN"],
        )),
        None,
    );
    assert!(e.contains("op LRN") && !e.contains("budget"), "{e}");
}

/// FLOAT16 and BFLOAT16 weights (raw little-endian data) are widened exactly.
#[test]
fn float16_and_bfloat16_weights_are_widened_exactly() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("y");
    let raw = |bits: &[u16]| {
        bits.iter()
            .flat_map(|b| b.to_le_bytes())
            .collect::<Vec<u8>>()
    };
    // float16 [1.5, -2.0, 2^-24]: 0x3e00, 0xc000, 0x0001 (the smallest subnormal).
    g.init(TensorProto {
        name: Some("h".into()),
        dims: vec![3],
        data_type: Some(10),
        raw_data: Some(raw(&[0x3e00, 0xc000, 0x0001])),
        ..Default::default()
    });
    // bfloat16 [0.5, 3.0, -1.0]: the high halves of the float32 bits.
    g.init(TensorProto {
        name: Some("b".into()),
        dims: vec![3],
        data_type: Some(16),
        raw_data: Some(raw(&[0x3f00, 0x4040, 0xbf80])),
        ..Default::default()
    });
    g.node("mul", "Mul", &["x", "h"], &["m"]);
    g.node("add", "Add", &["m", "b"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    let tiny = 2f32.powi(-24);
    assert_eq!(
        run(&p, &[(vec![1, 3], vec![2.0, 1.0, 4.0])]),
        [vec![3.5, 1.0, -1.0 + 4.0 * tiny]]
    );
}

#[test]
fn div_by_an_integer_is_div_public_else_a_reciprocal_product() {
    for (d, op) in [(4.0f32, "div_public"), (0.5, "mul")] {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(2)]).output("y");
        g.init_f32("d", &[], &[d]);
        g.node("div", "Div", &["x", "d"], &["y"]);
        let (p, _) = load(&g).lower(None).unwrap();
        assert!(mnemonics(&p).contains(&op), "{d}: {:?}", mnemonics(&p));
        assert_eq!(
            run(&p, &[(vec![2], vec![2.0, -6.0])]),
            [vec![2.0 / d, -6.0 / d]]
        );
    }
}

#[test]
fn products_of_two_run_time_tensors_are_secret_products() {
    for (op, mnem) in [("Mul", "mul"), ("MatMul", "matmul")] {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(2), D::N(2)])
            .input("z", &[D::N(2), D::N(2)])
            .output("y");
        g.node("prod", op, &["x", "z"], &["y"]);
        let (p, _) = load(&g).lower(None).unwrap();
        assert_eq!(mnemonics(&p), ["input", "input", mnem, "output"]);
        let y = run(
            &p,
            &[
                (vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]),
                (vec![2, 2], vec![0.5, -1.0, 2.0, 0.0]),
            ],
        );
        let want = if op == "Mul" {
            vec![0.5, -2.0, 6.0, 0.0]
        } else {
            vec![4.5, -1.0, 9.5, -3.0]
        };
        assert_eq!(y, [want], "{op}");
    }
    // A batch of products of two run-time tensors: one 2-D `matmul` per batch index
    // (independent, so one wave), the left operand's batch of 1 broadcast.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(2), D::N(2)])
        .input("z", &[D::N(3), D::N(2), D::N(2)])
        .output("y");
    g.node("bprod", "MatMul", &["x", "z"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    let m = mnemonics(&p);
    assert_eq!(m.iter().filter(|&&o| o == "matmul").count(), 3, "{m:?}");
    assert_eq!(m.iter().filter(|&&o| o == "concat").count(), 1, "{m:?}");
    let x = vec![1.0, 2.0, 3.0, 4.0];
    let z: Vec<f32> = (0..12).map(|i| i as f32 - 5.0).collect();
    let y = run(
        &p,
        &[(vec![1, 2, 2], x.clone()), (vec![3, 2, 2], z.clone())],
    );
    let want: Vec<f32> = (0..3)
        .flat_map(|b| {
            let z = &z[4 * b..4 * b + 4];
            [
                x[0] * z[0] + x[1] * z[2],
                x[0] * z[1] + x[1] * z[3],
                x[2] * z[0] + x[3] * z[2],
                x[2] * z[1] + x[3] * z[3],
            ]
        })
        .collect();
    assert_eq!(y, [want]);
}

/// An LSTM or GRU node over `x: [3, 1, 2]` with hidden size 2 and the given extra
/// inputs (after `x, W, R`), attributes set by `f`.
fn rnn_graph(op: &str, extra: &[&str], f: impl FnOnce(&mut sci_frontend::pb::NodeProto)) -> Graph {
    let gates = if op == "LSTM" { 4 } else { 3 };
    let mut g = Graph::new(14);
    g.input("x", &[D::N(3), D::N(1), D::N(2)]).output("y");
    let w: Vec<f32> = (0..gates * 2 * 2)
        .map(|i| (i as f32 * 0.37).sin())
        .collect();
    let r: Vec<f32> = (0..gates * 2 * 2)
        .map(|i| (i as f32 * 0.53).cos())
        .collect();
    g.init_f32("W", &[1, gates * 2, 2], &w)
        .init_f32("R", &[1, gates * 2, 2], &r)
        .init_f32("P", &[1, 6], &[0.0, 0.0, 0.0, 0.0, 0.5, 0.0])
        .init_i64("L", &[1], &[2]);
    let mut inputs = vec!["x", "W", "R"];
    inputs.extend(extra);
    let n = g.node("rnn0", op, &inputs, &["y"]);
    attr_i(n, "hidden_size", 2);
    f(n);
    g
}

#[test]
fn lstm_and_gru_unroll_into_products_and_one_sigmoid_per_step() {
    // LSTM over 3 steps from a zero state: one projection of the whole sequence, a
    // recurrent product from step 2 on, one sigmoid and one tanh per step.
    let (p, _) = load(&rnn_graph("LSTM", &[], |_| ())).lower(None).unwrap();
    let m = mnemonics(&p);
    let count = |op: &str| m.iter().filter(|&&o| o == op).count();
    assert_eq!(
        (
            count("matmul"),
            count("sigmoid"),
            count("tanh"),
            count("mul")
        ),
        (3, 3, 3, 8),
        "{m:?}"
    );
    // GRU, linear_before_reset 1: the same products, a sigmoid of z and r and a tanh.
    let (p, _) = load(&rnn_graph("GRU", &[], |n| {
        attr_i(n, "linear_before_reset", 1)
    }))
    .lower(None)
    .unwrap();
    let m = mnemonics(&p);
    let count = |op: &str| m.iter().filter(|&&o| o == op).count();
    assert_eq!(
        (count("matmul"), count("sigmoid"), count("tanh")),
        (3, 3, 3),
        "{m:?}"
    );
}

#[test]
fn lstm_and_gru_refuse_what_they_do_not_implement() {
    let cases: Vec<(&str, Graph, &str)> = vec![
        (
            "LSTM",
            rnn_graph("LSTM", &[], |n| attr_f(n, "clip", 3.0)),
            "'clip'",
        ),
        (
            "LSTM",
            rnn_graph("LSTM", &[], |n| attr_i(n, "input_forget", 1)),
            "input_forget",
        ),
        (
            "GRU",
            rnn_graph("GRU", &[], |n| {
                n.attribute.push(sci_frontend::pb::AttributeProto {
                    name: Some("activations".into()),
                    r#type: Some(sci_frontend::pb::attribute_proto::AttributeType::Strings as i32),
                    strings: vec![b"Relu".to_vec(), b"Tanh".to_vec()],
                    ..Default::default()
                });
            }),
            "'activations'",
        ),
        (
            "LSTM",
            rnn_graph("LSTM", &["", "", "", "", "P"], |_| ()),
            "peepholes",
        ),
        ("GRU", rnn_graph("GRU", &["", "L"], |_| ()), "sequence_lens"),
    ];
    for (op, g, part) in cases {
        let e = lower_err(&load(&g), None);
        assert!(
            e.contains("node 'rnn0'") && e.contains(op) && e.contains(part),
            "{part}: {e}"
        );
    }
}

#[test]
fn attribute_errors_name_node_attribute_and_choices() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(1), D::N(4), D::N(4)])
        .output("y");
    attr_ints(
        g.node("pool", "MaxPool", &["x"], &["y"]),
        "kernel_shape",
        &[2, 2],
    );
    attr_s(g.graph.node.last_mut().unwrap(), "auto_pad", "SAME_WEIRD");
    let e = lower_err(&load(&g), None);
    for part in [
        "node 'pool'",
        "MaxPool",
        "'auto_pad'",
        "SAME_WEIRD",
        "NOTSET, VALID, SAME_UPPER, SAME_LOWER",
    ] {
        assert!(e.contains(part), "{part} missing in: {e}");
    }

    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(1), D::N(4), D::N(4)])
        .output("y");
    g.init_f32("w", &[1, 1, 1, 1], &[1.0]);
    attr_i(g.node("conv", "Conv", &["x", "w"], &["y"]), "strides", 2);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'conv'") && e.contains("'strides'") && e.contains("expected type INTS"),
        "{e}"
    );

    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(1), D::N(4), D::N(4)])
        .output("y");
    g.init_f32("w", &[1, 1, 1, 1], &[1.0]);
    attr_i(g.node("conv", "Conv", &["x", "w"], &["y"]), "bogus", 2);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("'bogus'") && e.contains("unknown attribute") && e.contains("dilations"),
        "{e}"
    );
}

#[test]
fn conv1d_pads_auto_pad_groups_and_dilations() {
    // 1-D depthwise conv over [1, 2, 5], kernel 3, dilation 2, SAME_UPPER.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(2), D::N(5)]).output("y");
    g.init_f32("w", &[2, 1, 3], &[1.0, 1.0, 1.0, 0.0, 1.0, 0.0]);
    let n = g.node("conv", "Conv", &["x", "w"], &["y"]);
    attr_i(n, "group", 2);
    attr_ints(n, "dilations", &[2]);
    attr_s(n, "auto_pad", "SAME_UPPER");
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(p.ty(p.outputs()[0]).shape(), &[1, 2, 5]);
    let x: Vec<f32> = (1..=10).map(|v| v as f32).collect();
    // Channel 0: x[i-2] + x[i] + x[i+2]; channel 1: x[i].
    assert_eq!(
        run(&p, &[(vec![1, 2, 5], x)]),
        [vec![4.0, 6.0, 9.0, 6.0, 8.0, 6.0, 7.0, 8.0, 9.0, 10.0]]
    );
}

#[test]
fn external_data_is_read_beside_the_model_and_cannot_escape() {
    let dir = std::env::temp_dir().join(format!("sci-frontend-extmodel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let weights: Vec<u8> = [2.0f32, -1.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(dir.join("weights.bin"), [vec![0u8; 4], weights].concat()).unwrap();
    for (location, ok) in [
        ("weights.bin", true),
        ("../weights.bin", false),
        ("/etc/hostname", false),
    ] {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(2)]).output("y");
        g.init(sci_frontend::pb::TensorProto {
            name: Some("w".into()),
            dims: vec![2],
            data_type: Some(1),
            data_location: Some(1),
            external_data: [("location", location), ("offset", "4"), ("length", "8")]
                .iter()
                .map(|(k, v)| sci_frontend::pb::StringStringEntryProto {
                    key: Some(k.to_string()),
                    value: Some(v.to_string()),
                })
                .collect(),
            ..Default::default()
        });
        g.node("mul", "Mul", &["x", "w"], &["y"]);
        let path = dir.join("model.onnx");
        std::fs::write(&path, g.bytes()).unwrap();
        let result = Model::load(&path).unwrap().lower(None);
        match (result, ok) {
            (Ok((p, _)), true) => {
                assert_eq!(run(&p, &[(vec![2], vec![3.0, 3.0])]), [vec![6.0, -3.0]])
            }
            (Err(FrontendError::Tensor { tensor, msg }), false) => {
                assert!(tensor == "w" && msg.contains(location), "{msg}")
            }
            (r, _) => panic!("{location}: unexpected {:?}", r.map(|_| ())),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn graphs_with_cycles_or_dangling_inputs_are_errors() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(2)]).output("y");
    g.node("a", "Add", &["x", "y"], &["t"]);
    g.node("b", "Relu", &["t"], &["y"]);
    assert!(lower_err(&load(&g), None).contains("cycle"));

    let mut g = Graph::new(13);
    g.input("x", &[D::N(2)]).output("y");
    g.node("relu_dangling", "Relu", &["nowhere"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'relu_dangling'") && e.contains("'nowhere'"),
        "{e}"
    );
}

#[test]
fn versions_outside_the_supported_range_are_rejected() {
    let mut g = Graph::new(29);
    g.input("x", &[D::N(2)]).output("y");
    g.node("relu", "Relu", &["x"], &["y"]);
    let e = Model::from_bytes(&g.bytes(), None).unwrap_err().to_string();
    assert!(e.contains("opset 29") && e.contains("1 to 28"), "{e}");
    g.opset = 28;
    assert!(Model::from_bytes(&g.bytes(), None).is_ok());
    g.opset = 13;
    g.ir_version = 2;
    let e = Model::from_bytes(&g.bytes(), None).unwrap_err().to_string();
    assert!(e.contains("IR version 2"), "{e}");
}

/// `Range` over float16 (opset 27+) is computed in float (`stash_type` 1, the
/// default); another `stash_type` is rejected, naming the attribute.
#[test]
fn range_of_float16_needs_stash_type_float() {
    let f16 = |name: &str, bits: u16| TensorProto {
        name: Some(name.into()),
        data_type: Some(10),
        raw_data: Some(bits.to_le_bytes().to_vec()),
        ..Default::default()
    };
    for (stash, ok) in [(None, true), (Some(1), true), (Some(10), false)] {
        let mut g = Graph::new(27);
        g.output("y");
        // 0.5, 2.5, 0.5 in binary16.
        g.init(f16("s", 0x3800))
            .init(f16("l", 0x4100))
            .init(f16("d", 0x3800));
        let n = g.node("range16", "Range", &["s", "l", "d"], &["y"]);
        if let Some(v) = stash {
            attr_i(n, "stash_type", v);
        }
        if ok {
            assert_eq!(folded(&g), [0.5, 1.0, 1.5, 2.0]);
        } else {
            let e = lower_err(&load(&g), None);
            assert!(
                e.contains("node 'range16'") && e.contains("stash_type") && e.contains("10"),
                "{e}"
            );
        }
    }
}

/// Lowers a graph whose output folds to a constant and returns its elements.
fn folded(g: &Graph) -> Vec<f32> {
    let (p, _) = load(g).lower(None).unwrap();
    assert_eq!(
        mnemonics(&p),
        ["const", "output"],
        "the graph should fold completely"
    );
    run(&p, &[]).remove(0)
}

#[test]
fn slice_in_both_opset_forms() {
    let values: Vec<f32> = (0..10).map(|v| v as f32).collect();
    let mut g = Graph::new(13);
    g.output("y").init_f32("c", &[10], &values);
    g.init_i64("s", &[1], &[-3])
        .init_i64("e", &[1], &[i64::MAX]);
    g.node("slice", "Slice", &["c", "s", "e"], &["y"]);
    assert_eq!(folded(&g), [7.0, 8.0, 9.0]);

    let mut g = Graph::new(13);
    g.output("y").init_f32("c", &[10], &values);
    g.init_i64("s", &[1], &[1])
        .init_i64("e", &[1], &[8])
        .init_i64("a", &[1], &[0])
        .init_i64("st", &[1], &[2]);
    g.node("slice", "Slice", &["c", "s", "e", "a", "st"], &["y"]);
    assert_eq!(folded(&g), [1.0, 3.0, 5.0, 7.0]);

    // Opset < 10: starts/ends/axes are attributes.
    let mut g = Graph::new(9);
    g.output("y").init_f32("c", &[2, 5], &values);
    let n = g.node("slice", "Slice", &["c"], &["y"]);
    attr_ints(n, "starts", &[1, 3]);
    attr_ints(n, "ends", &[2, 100]);
    assert_eq!(folded(&g), [8.0, 9.0]);

    // A run-time tensor is sliced by an IR `gather`; run-time bounds are refused.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(4)])
        .output("y")
        .init_i64("s", &[1], &[1])
        .init_i64("e", &[1], &[2]);
    g.node("slice_x", "Slice", &["x", "s", "e"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "gather", "output"]);
    assert_eq!(run(&p, &[(vec![4], vec![5.0, 6.0, 7.0, 8.0])]), [vec![6.0]]);
    let mut g = Graph::new(13);
    g.input("x", &[D::N(4)])
        .input("s", &[D::N(1)])
        .output("y")
        .init_i64("e", &[1], &[2]);
    g.node("slice_x", "Slice", &["x", "s", "e"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'slice_x'") && e.contains("must be a constant"),
        "{e}"
    );
}

#[test]
fn range_cast_expand_where_and_comparisons_fold() {
    let mut g = Graph::new(13);
    g.output("y");
    g.init_i64("zero", &[], &[0])
        .init_i64("three", &[], &[3])
        .init_i64("one", &[], &[1]);
    g.init_i64("shape", &[2], &[2, 3])
        .init_i64("one_v", &[1], &[1]);
    g.node("range", "Range", &["zero", "three", "one"], &["r"]); // [0, 1, 2]
    g.node("eq", "Equal", &["r", "one_v"], &["is1"]); // [F, T, F]
    g.node("lt", "Less", &["r", "one_v"], &["lt1"]); // [T, F, F]
    g.node("not", "Not", &["lt1"], &["ge1"]); // [F, T, T]
    attr_i(g.node("castf", "Cast", &["r"], &["rf"]), "to", 1);
    g.node("neg", "Neg", &["rf"], &["nr"]); // [-0, -1, -2]
    g.node("where", "Where", &["is1", "nr", "rf"], &["w"]); // [0, -1, 2]
    g.node("where2", "Where", &["ge1", "w", "rf"], &["w2"]); // [0, -1, 2]
    g.node("expand", "Expand", &["w2", "shape"], &["y"]);
    assert_eq!(folded(&g), [0.0, -1.0, 2.0, 0.0, -1.0, 2.0]);
}

#[test]
fn unary_and_variadic_constant_ops_fold() {
    let mut g = Graph::new(13);
    g.output("y")
        .init_f32("a", &[4], &[-4.0, 2.25, -0.5, 9.0])
        .init_f32("b", &[4], &[1.0, 1.0, 1.0, 1.0]);
    g.node("abs", "Abs", &["a"], &["abs"]); // [4, 2.25, 0.5, 9]
    g.node("sqrt", "Sqrt", &["abs"], &["sq"]); // [2, 1.5, 0.70710677, 3]
    g.node("rec", "Reciprocal", &["sq"], &["rc"]); // [0.5, 0.6666667, 1.4142135, 0.33333334]
    g.node("floor", "Floor", &["rc"], &["fl"]); // [0, 0, 1, 0]
    g.node("ceil", "Ceil", &["rc"], &["ce"]); // [1, 1, 2, 1]
    g.node("max", "Max", &["fl", "b", "a"], &["mx"]); // [1, 2.25, 1, 9]
    g.node("min", "Min", &["ce", "mx"], &["mn"]); // [1, 1, 1, 1]
    g.node("sum", "Sum", &["mn", "mx", "fl"], &["y"]); // [2, 3.25, 3, 10]
    assert_eq!(folded(&g), [2.0, 3.25, 3.0, 10.0]);
}

#[test]
fn size_and_shape_of_run_time_tensors_are_constants() {
    let mut g = Graph::new(15);
    g.input("x", &[D::N(2), D::N(3), D::N(4)]).output("y");
    g.node("size", "Size", &["x"], &["n"]); // 24
    let s = g.node("shape", "Shape", &["x"], &["s"]); // Shape-15 with start = 1: [3, 4]
    attr_i(s, "start", 1);
    g.node("mul", "Mul", &["n", "s"], &["p"]); // [72, 96]
    attr_i(g.node("cast", "Cast", &["p"], &["y"]), "to", 1);
    let (p, _) = load(&g).lower(None).unwrap();
    // The output does not depend on x's values, but x stays the program's input
    // (the model's interface).
    assert_eq!(mnemonics(&p), ["input", "const", "output"]);
    assert_eq!(
        run(&p, &[(vec![2, 3, 4], vec![0.0; 24])]),
        [vec![72.0, 96.0]]
    );
}

#[test]
fn global_max_pool_is_a_whole_window_max_pool() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(2), D::N(2), D::N(2)])
        .output("y");
    g.node("gmp", "GlobalMaxPool", &["x"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "maxpool", "output"]);
    assert_eq!(
        run(
            &p,
            &[(
                vec![1, 2, 2, 2],
                vec![1.0, 5.0, -1.0, 2.0, -3.0, -2.0, -8.0, -4.0]
            )]
        ),
        [vec![5.0, -2.0]]
    );
}

#[test]
fn reduce_mean_over_spatial_axes_is_a_global_average_pool_over_others_sums_and_rdiv() {
    for (opset, keepdims, out) in [(13, 1, vec![1, 2, 1, 1]), (18, 0, vec![1, 2])] {
        let mut g = Graph::new(opset);
        g.input("x", &[D::N(1), D::N(2), D::N(2), D::N(1)])
            .output("y");
        let n = if opset < 18 {
            let n = g.node("mean", "ReduceMean", &["x"], &["y"]);
            attr_ints(n, "axes", &[-1, 2]);
            n
        } else {
            g.init_i64("axes", &[2], &[2, 3]);
            g.node("mean", "ReduceMean", &["x", "axes"], &["y"])
        };
        attr_i(n, "keepdims", keepdims);
        let (p, _) = load(&g).lower(None).unwrap();
        assert!(mnemonics(&p).contains(&"global_avgpool"));
        assert_eq!(p.ty(p.outputs()[0]).shape(), out.as_slice());
        assert_eq!(
            run(&p, &[(vec![1, 2, 2, 1], vec![1.0, 2.0, -4.0, 0.0])]),
            [vec![1.5, -2.0]]
        );
    }
    // Over the channels: two gathers, an add and a division by the public count.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(2), D::N(2), D::N(1)])
        .output("y");
    attr_ints(g.node("mean_c", "ReduceMean", &["x"], &["y"]), "axes", &[1]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(
        mnemonics(&p),
        ["input", "gather", "gather", "add", "div_public", "output"]
    );
    assert_eq!(p.ty(p.outputs()[0]).shape(), [1, 1, 2, 1]);
    assert_eq!(
        run(&p, &[(vec![1, 2, 2, 1], vec![1.0, 2.0, -4.0, 0.0])]),
        [vec![-1.5, 1.0]]
    );
}

#[test]
fn reduce_sum_is_a_halving_tree_of_adds_over_any_axes() {
    let x: Vec<f32> = (1..=6).map(|v| v as f32).collect();
    // (axes, keepdims, output shape, sums); axes as an input (opset 13).
    type Case = (&'static [i64], i64, Vec<usize>, Vec<f32>);
    let cases: [Case; 4] = [
        (&[1], 0, vec![2], vec![6.0, 15.0]),
        (&[-2], 1, vec![1, 3], vec![5.0, 7.0, 9.0]),
        (&[0, 1], 1, vec![1, 1], vec![21.0]),
        (&[], 1, vec![1, 1], vec![21.0]),
    ];
    for (axes, keepdims, shape, want) in cases {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(2), D::N(3)]).output("y");
        g.init_i64("axes", &[axes.len() as i64], axes);
        let n = g.node("sum", "ReduceSum", &["x", "axes"], &["y"]);
        attr_i(n, "keepdims", keepdims);
        let (p, _) = load(&g).lower(None).unwrap();
        assert!(
            !mnemonics(&p).contains(&"matmul"),
            "{axes:?}: {:?}",
            mnemonics(&p)
        );
        assert_eq!(p.ty(p.outputs()[0]).shape(), shape.as_slice(), "{axes:?}");
        assert_eq!(run(&p, &[(vec![2, 3], x.clone())]), [want], "{axes:?}");
    }
    // noop_with_empty_axes: the input itself; on constants it folds.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(2), D::N(3)]).output("y");
    g.init_i64("axes", &[0], &[]);
    attr_i(
        g.node("sum", "ReduceSum", &["x", "axes"], &["y"]),
        "noop_with_empty_axes",
        1,
    );
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "output"]);
    let mut g = Graph::new(11);
    g.output("y")
        .init_f32("c", &[5], &[1.0, 2.0, 3.0, 4.0, 5.5]);
    attr_ints(g.node("sum_c", "ReduceSum", &["c"], &["y"]), "axes", &[0]);
    assert_eq!(folded(&g), [15.5]);
    // An axis out of range names the node.
    let mut g = Graph::new(11);
    g.input("x", &[D::N(2), D::N(3)]).output("y");
    attr_ints(g.node("sum_bad", "ReduceSum", &["x"], &["y"]), "axes", &[2]);
    let e = lower_err(&load(&g), None);
    assert!(e.contains("node 'sum_bad'"), "{e}");
}

#[test]
fn huge_attribute_values_are_errors_not_overflows() {
    let huge = i64::MAX;
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(1), D::N(4), D::N(4)])
        .output("y");
    g.init_i64("pads", &[8], &[0, 0, huge, 0, 0, 0, huge, 0]);
    g.node("pad", "Pad", &["x", "pads"], &["y"]);
    assert!(lower_err(&load(&g), None).contains("node 'pad'"));

    for (attr, v) in [
        ("pads", vec![huge, 0, huge, 0]),
        ("strides", vec![huge, 1]),
        ("dilations", vec![huge, 1]),
    ] {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(1), D::N(1), D::N(4), D::N(4)])
            .output("y");
        g.init_f32("w", &[1, 1, 2, 2], &[1.0; 4]);
        attr_ints(g.node("conv", "Conv", &["x", "w"], &["y"]), attr, &v);
        let r = load(&g).lower(None);
        if attr == "strides" {
            // A stride beyond the input is valid: one output position.
            let (p, _) = r.unwrap();
            assert_eq!(p.ty(p.outputs()[0]).shape(), &[1, 1, 1, 3]);
        } else {
            assert!(r.is_err(), "{attr}");
        }
    }

    for (attr, v) in [
        ("pads", vec![huge, 0, huge, 0]),
        ("strides", vec![huge, 1]),
        ("kernel_shape", vec![huge, 1]),
    ] {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(1), D::N(1), D::N(4), D::N(4)])
            .output("y");
        let n = g.node("pool", "MaxPool", &["x"], &["y"]);
        if attr != "kernel_shape" {
            attr_ints(n, "kernel_shape", &[2, 2]);
        }
        attr_ints(n, attr, &v);
        let _ = load(&g).lower(None);
    }
}

/// `Gather` with constant indices, `Slice` and `Split` on a run-time tensor lower to
/// IR `gather`s (data movement); run-time indices are refused, naming the input.
#[test]
fn selections_on_activations_lower_to_gather() {
    let x: Vec<f32> = (0..12).map(|v| v as f32).collect();
    // x[:, 2] of a [2, 3, 2] tensor: gather, then a reshape dropping the axis.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(2), D::N(3), D::N(2)]).output("y");
    g.init_i64("i", &[], &[-1]);
    attr_i(g.node("pick", "Gather", &["x", "i"], &["y"]), "axis", 1);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "gather", "reshape", "output"]);
    assert_eq!(
        run(&p, &[(vec![2, 3, 2], x.clone())]),
        [vec![4.0, 5.0, 10.0, 11.0]]
    );
    // Slice with a negative step along axis 1, then Split of the last axis.
    let mut g = Graph::new(18);
    g.input("x", &[D::N(2), D::N(3), D::N(2)])
        .output("a")
        .output("b");
    g.init_i64("st", &[1], &[-1])
        .init_i64("en", &[1], &[-10])
        .init_i64("ax", &[1], &[1])
        .init_i64("sp", &[1], &[-2]);
    g.node("sl", "Slice", &["x", "st", "en", "ax", "sp"], &["s"]);
    attr_i(g.node("split", "Split", &["s"], &["a", "b"]), "axis", 2);
    let n = g.graph.node.last_mut().unwrap();
    attr_i(n, "num_outputs", 2);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(
        mnemonics(&p),
        ["input", "gather", "gather", "gather", "output", "output"]
    );
    // Rows 2 and 0 of each block, then columns 0 and 1.
    assert_eq!(
        run(&p, &[(vec![2, 3, 2], x)]),
        [vec![4.0, 0.0, 10.0, 6.0], vec![5.0, 1.0, 11.0, 7.0]]
    );
    // Run-time indices.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(3)]).input("i", &[D::N(1)]).output("y");
    g.node("dyn", "Gather", &["x", "i"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'dyn'") && e.contains("indices") && e.contains("constant"),
        "{e}"
    );
}

/// `reflect` pads must be smaller than the dimension (no repeated reflection), and
/// `wrap` needs opset 19: both refused with the node, axis or choices named.
#[test]
fn pad_modes_outside_their_range_are_refused() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(3)]).output("y");
    g.init_i64("p", &[4], &[0, 3, 0, 0]);
    attr_s(
        g.node("pad_r", "Pad", &["x", "p"], &["y"]),
        "mode",
        "reflect",
    );
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'pad_r'") && e.contains("axis 1") && e.contains("smaller"),
        "{e}"
    );
    let mut g = Graph::new(18);
    g.input("x", &[D::N(1), D::N(3)]).output("y");
    g.init_i64("p", &[4], &[0, 1, 0, 0]);
    attr_s(g.node("pad_w", "Pad", &["x", "p"], &["y"]), "mode", "wrap");
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("'wrap'") && e.contains("constant, reflect, edge"),
        "{e}"
    );
}

#[test]
fn expand_on_a_run_time_tensor_is_a_reshape_and_gathers() {
    // [3, 1] → [2, 3, 4]: a leading axis, then axes 0 and 2 repeat index 0.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(3), D::N(1)]).output("y");
    g.init_i64("shape", &[3], &[2, 1, 4]);
    g.node("expand", "Expand", &["x", "shape"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(
        mnemonics(&p),
        ["input", "reshape", "gather", "gather", "output"]
    );
    let y = run(&p, &[(vec![3, 1], vec![1.0, -2.0, 3.5])]);
    let row: Vec<f32> = [1.0, -2.0, 3.5].iter().flat_map(|&v| [v; 4]).collect();
    assert_eq!(y, [[row.clone(), row].concat()]);
    // A target of size 1 keeps the input's dimension (bidirectional broadcasting);
    // nothing to repeat: the input itself.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(2), D::N(3)]).output("y");
    g.init_i64("shape", &[2], &[1, 3]);
    g.node("expand", "Expand", &["x", "shape"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "output"]);
}

#[test]
fn tile_on_a_run_time_tensor_gathers_whole_copies() {
    let mut g = Graph::new(13);
    g.input("x", &[D::N(2), D::N(2)]).output("y");
    g.init_i64("reps", &[2], &[2, 3]);
    g.node("tile", "Tile", &["x", "reps"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(mnemonics(&p), ["input", "gather", "gather", "output"]);
    let r0 = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0];
    let r1 = [3.0, 4.0, 3.0, 4.0, 3.0, 4.0];
    assert_eq!(
        run(&p, &[(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0])]),
        [[r0, r1, r0, r1].concat()]
    );
    // On constants it folds.
    let mut g = Graph::new(13);
    g.output("y")
        .init_f32("c", &[2], &[5.0, -1.0])
        .init_i64("reps", &[1], &[2]);
    g.node("tile", "Tile", &["c", "reps"], &["y"]);
    assert_eq!(folded(&g), [5.0, -1.0, 5.0, -1.0]);
}

#[test]
fn expand_and_tile_reject_bad_shapes_and_repeats_naming_the_node() {
    let cases: [(&str, &[i64], &str); 4] = [
        ("Expand", &[2, 4], "broadcast"),
        ("Expand", &[-1, 3], "negative value -1 in shape of Expand"),
        (
            "Tile",
            &[2],
            "repeats has 1 entries but the input has rank 2",
        ),
        ("Tile", &[1, 0], "repeats[1] = 0 gives an empty tensor"),
    ];
    for (op, arg, want) in cases {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(2), D::N(3)]).output("y");
        g.init_i64("arg", &[arg.len() as i64], arg);
        g.node("bad", op, &["x", "arg"], &["y"]);
        let e = lower_err(&load(&g), None);
        assert!(e.contains("node 'bad'") && e.contains(want), "{op}: {e}");
    }
}

#[test]
fn gather_nd_with_constant_indices_is_one_gather_over_flattened_rows() {
    let x: Vec<f32> = (1..=6).map(|v| v as f32).collect(); // [[1, 2, 3], [4, 5, 6]]
    // (indices shape, indices, batch_dims, output shape, output)
    type Case = (Vec<usize>, Vec<i64>, i64, Vec<usize>, Vec<f32>);
    let cases: [Case; 4] = [
        (vec![2, 2], vec![1, 2, 0, -3], 0, vec![2], vec![6.0, 1.0]),
        (vec![1, 1], vec![1], 0, vec![1, 3], vec![4.0, 5.0, 6.0]),
        (vec![2, 1], vec![2, 0], 1, vec![2], vec![3.0, 4.0]),
        (vec![2, 2, 1], vec![1, 1, 0, 1], 0, vec![2, 2, 3], {
            let (a, b) = (&x[..3], &x[3..]);
            [b, b, a, b].concat()
        }),
    ];
    for (i_shape, ind, batch_dims, shape, want) in cases {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(2), D::N(3)]).output("y");
        let dims: Vec<i64> = i_shape.iter().map(|&d| d as i64).collect();
        g.init_i64("ind", &dims, &ind);
        let n = g.node("gnd", "GatherND", &["x", "ind"], &["y"]);
        attr_i(n, "batch_dims", batch_dims);
        let (p, _) = load(&g).lower(None).unwrap();
        assert!(mnemonics(&p).contains(&"gather"), "{ind:?}");
        assert_eq!(p.ty(p.outputs()[0]).shape(), shape.as_slice(), "{ind:?}");
        assert_eq!(run(&p, &[(vec![2, 3], x.clone())]), [want], "{ind:?}");
    }
    for (i_shape, ind, batch_dims, want) in [
        (
            vec![1, 2],
            vec![0, 3],
            0,
            "index 3 is out of range for dimension 3",
        ),
        (vec![1, 3], vec![0, 0, 0], 0, "index tuples of length 3"),
        (vec![2, 1], vec![0, 0], 2, "'batch_dims'"),
    ] {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(2), D::N(3)]).output("y");
        let dims: Vec<i64> = i_shape.iter().map(|&d: &usize| d as i64).collect();
        g.init_i64("ind", &dims, &ind);
        attr_i(
            g.node("gnd", "GatherND", &["x", "ind"], &["y"]),
            "batch_dims",
            batch_dims,
        );
        let e = lower_err(&load(&g), None);
        assert!(e.contains("node 'gnd'") && e.contains(want), "{e}");
    }
}

#[test]
fn nearest_resize_and_upsample_are_one_gather_per_resized_axis() {
    let x = vec![1.0, 2.0, 3.0, 4.0]; // [[1, 2], [3, 4]]
    let twice = vec![
        1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 3.0, 3.0, 4.0, 4.0,
    ];
    // Resize-13 by scales (half_pixel, round_prefer_floor) and Upsample-9.
    for op in ["Resize", "Upsample"] {
        let mut g = Graph::new(if op == "Resize" { 13 } else { 9 });
        g.input("x", &[D::N(1), D::N(1), D::N(2), D::N(2)])
            .output("y");
        g.init_f32("scales", &[4], &[1.0, 1.0, 2.0, 2.0]);
        let ins: &[&str] = if op == "Resize" {
            &["x", "", "scales"]
        } else {
            &["x", "scales"]
        };
        attr_s(g.node("up", op, ins, &["y"]), "mode", "nearest");
        let (p, _) = load(&g).lower(None).unwrap();
        assert_eq!(
            mnemonics(&p),
            ["input", "gather", "gather", "output"],
            "{op}"
        );
        assert_eq!(p.ty(p.outputs()[0]).shape(), [1, 1, 4, 4], "{op}");
        assert_eq!(
            run(&p, &[(vec![1, 1, 2, 2], x.clone())]),
            std::slice::from_ref(&twice),
            "{op}"
        );
    }
    // By sizes, asymmetric: scale 1.5, indices 0, round(0.67) = 1, round(1.33) = 1.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(1), D::N(2), D::N(2)])
        .output("y");
    g.init_i64("sizes", &[4], &[1, 1, 3, 3]);
    let n = g.node("up", "Resize", &["x", "", "", "sizes"], &["y"]);
    attr_s(n, "coordinate_transformation_mode", "asymmetric");
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(
        run(&p, &[(vec![1, 1, 2, 2], x)]),
        [vec![1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 3.0, 4.0, 4.0]]
    );
    // Other modes are errors naming the node and the attribute.
    for (attr, value) in [
        ("mode", "cubic"),
        ("coordinate_transformation_mode", "tf_crop_and_resize"),
        ("nearest_mode", "sideways"),
    ] {
        let mut g = Graph::new(13);
        g.input("x", &[D::N(1), D::N(1), D::N(2), D::N(2)])
            .output("y");
        g.init_f32("scales", &[4], &[1.0, 1.0, 2.0, 2.0]);
        attr_s(
            g.node("up", "Resize", &["x", "", "scales"], &["y"]),
            attr,
            value,
        );
        let e = lower_err(&load(&g), None);
        assert!(
            e.contains("node 'up'") && e.contains(attr) && e.contains(value),
            "{e}"
        );
    }
}

/// ConvTranspose by its definition (each input entry scatters `x · w` into the
/// output), for `[1, C, H, W]` inputs.
#[allow(clippy::too_many_arguments)]
fn conv_transpose_ref(
    x: &[f32],
    (c, h, w): (usize, usize, usize),
    wt: &[f32],
    (cout_g, kh, kw): (usize, usize, usize),
    g: usize,
    s: [usize; 2],
    d: [usize; 2],
    p: [usize; 4],
    q: [usize; 2],
    bias: &[f32],
) -> (Vec<usize>, Vec<f32>) {
    let ho = (h - 1) * s[0] + d[0] * (kh - 1) + q[0] + 1 - p[0] - p[2];
    let wo = (w - 1) * s[1] + d[1] * (kw - 1) + q[1] + 1 - p[1] - p[3];
    let cin_g = c / g;
    let mut y = vec![0f32; g * cout_g * ho * wo];
    for (o, chunk) in y.chunks_mut(ho * wo).enumerate() {
        chunk.iter_mut().for_each(|v| *v = bias[o]);
    }
    for ci in 0..c {
        let gi = ci / cin_g;
        for o in 0..cout_g {
            for (i, j, a, b) in (0..h).flat_map(|i| {
                (0..w).flat_map(move |j| {
                    (0..kh).flat_map(move |a| (0..kw).map(move |b| (i, j, a, b)))
                })
            }) {
                let oi = (i * s[0] + a * d[0]) as i64 - p[0] as i64;
                let oj = (j * s[1] + b * d[1]) as i64 - p[1] as i64;
                if oi < 0 || oj < 0 || oi >= ho as i64 || oj >= wo as i64 {
                    continue;
                }
                let oc = gi * cout_g + o;
                y[(oc * ho + oi as usize) * wo + oj as usize] +=
                    x[(ci * h + i) * w + j] * wt[((ci * cout_g + o) * kh + a) * kw + b];
            }
        }
    }
    (vec![1, g * cout_g, ho, wo], y)
}

#[test]
fn conv_transpose_is_a_convolution_over_the_zero_stuffed_input() {
    // (C, H, W, C_out/g, kH, kW, group, strides, dilations, pads, output_padding)
    type Case = (
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        [usize; 2],
        [usize; 2],
        [usize; 4],
        [usize; 2],
    );
    let cases: [Case; 5] = [
        (1, 2, 2, 1, 2, 2, 1, [2, 2], [1, 1], [0; 4], [0, 0]),
        (2, 3, 2, 2, 3, 3, 1, [2, 1], [1, 1], [1, 1, 1, 1], [1, 0]),
        (4, 2, 3, 1, 3, 2, 2, [3, 2], [2, 1], [0, 1, 2, 0], [2, 1]),
        (2, 3, 3, 3, 1, 1, 1, [1, 1], [1, 1], [0; 4], [0, 0]),
        (2, 2, 2, 1, 2, 2, 2, [2, 2], [1, 1], [2, 2, 2, 1], [1, 0]),
    ];
    for (c, h, w, cout_g, kh, kw, g, s, d, p, q) in cases {
        let x: Vec<f32> = (0..c * h * w)
            .map(|i| ((i * 7 % 11) as f32 - 5.0) / 4.0)
            .collect();
        let wt: Vec<f32> = (0..c * cout_g * kh * kw)
            .map(|i| ((i * 5 % 13) as f32 - 6.0) / 8.0)
            .collect();
        let bias: Vec<f32> = (0..g * cout_g).map(|i| i as f32 / 2.0 - 1.0).collect();
        let (shape, want) =
            conv_transpose_ref(&x, (c, h, w), &wt, (cout_g, kh, kw), g, s, d, p, q, &bias);
        let mut gr = Graph::new(13);
        gr.input(
            "x",
            &[D::N(1), D::N(c as i64), D::N(h as i64), D::N(w as i64)],
        )
        .output("y");
        gr.init_f32("W", &[c as i64, cout_g as i64, kh as i64, kw as i64], &wt)
            .init_f32("B", &[(g * cout_g) as i64], &bias);
        let n = gr.node("up", "ConvTranspose", &["x", "W", "B"], &["y"]);
        attr_i(n, "group", g as i64);
        attr_ints(n, "strides", &[s[0] as i64, s[1] as i64]);
        attr_ints(n, "dilations", &[d[0] as i64, d[1] as i64]);
        attr_ints(n, "pads", &p.map(|v| v as i64));
        attr_ints(n, "output_padding", &[q[0] as i64, q[1] as i64]);
        let (prog, _) = load(&gr).lower(None).unwrap();
        assert!(mnemonics(&prog).contains(&"conv2d"));
        assert_eq!(prog.ty(prog.outputs()[0]).shape(), shape.as_slice());
        let got = run(&prog, &[(vec![1, c, h, w], x)]).remove(0);
        for (a, b) in got.iter().zip(&want) {
            assert!(
                (a - b).abs() < 1e-4,
                "{c} {h} {w} {s:?} {p:?}: {got:?} vs {want:?}"
            );
        }
    }
    let mut gr = Graph::new(13);
    gr.input("x", &[D::N(1), D::N(1), D::N(2), D::N(2)])
        .output("y");
    gr.init_f32("W", &[1, 1, 2, 2], &[1.0; 4]);
    attr_s(
        gr.node("up", "ConvTranspose", &["x", "W"], &["y"]),
        "auto_pad",
        "SAME_UPPER",
    );
    let e = lower_err(&load(&gr), None);
    assert!(e.contains("node 'up'") && e.contains("auto_pad"), "{e}");
}

#[test]
fn linear_resize_is_products_by_public_weights_per_axis() {
    // half_pixel, scale 2: coordinates −0.25 (clamped to 0), 0.25, 0.75, 1.25 (to 1).
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(1), D::N(1), D::N(2)])
        .output("y");
    g.init_f32("scales", &[4], &[1.0, 1.0, 1.0, 2.0]);
    attr_s(
        g.node("up", "Resize", &["x", "", "scales"], &["y"]),
        "mode",
        "linear",
    );
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(
        mnemonics(&p),
        [
            "input", "gather", "const", "mul", "gather", "const", "mul", "add", "output"
        ]
    );
    assert_eq!(
        run(&p, &[(vec![1, 1, 1, 2], vec![4.0, 8.0])]),
        [vec![4.0, 5.0, 7.0, 8.0]]
    );
    // align_corners by sizes 2 → 3 on both axes: the midpoints average.
    let mut g = Graph::new(13);
    g.input("x", &[D::N(1), D::N(1), D::N(2), D::N(2)])
        .output("y");
    g.init_i64("sizes", &[4], &[1, 1, 3, 3]);
    let n = g.node("up", "Resize", &["x", "", "", "sizes"], &["y"]);
    attr_s(n, "mode", "linear");
    attr_s(n, "coordinate_transformation_mode", "align_corners");
    let (p, _) = load(&g).lower(None).unwrap();
    assert_eq!(
        run(&p, &[(vec![1, 1, 2, 2], vec![0.0, 2.0, 4.0, 6.0])]),
        [vec![0.0, 1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0, 6.0]]
    );
}

/// `LayerNormalization` over the last axis: ReduceMean's sum tree and `div_public`,
/// the centred square (a secret product), `rsqrt` of the variance plus ε, the
/// normalised product and the affine map; the float program reproduces the definition.
#[test]
fn layer_normalization_lowers_to_rsqrt_and_secret_products() {
    let mut g = Graph::new(17);
    g.input("x", &[D::N(2), D::N(3)]).output("y");
    g.init_f32("g", &[3], &[1.0, 2.0, -0.5])
        .init_f32("b", &[3], &[0.0, 1.0, 0.25]);
    attr_f(
        g.node("ln", "LayerNormalization", &["x", "g", "b"], &["y"]),
        "epsilon",
        1e-3,
    );
    let (p, _) = load(&g).lower(None).unwrap();
    let ops = mnemonics(&p);
    assert_eq!(ops.iter().filter(|&&m| m == "rsqrt").count(), 1, "{ops:?}");
    assert_eq!(
        ops.iter().filter(|&&m| m == "div_public").count(),
        2,
        "{ops:?}"
    );
    let x = [1.0f32, 2.0, 4.0, -1.0, -1.0, 5.0];
    let y = run(&p, &[(vec![2, 3], x.to_vec())]).remove(0);
    let want = x.chunks(3).flat_map(|r| {
        let mu = r.iter().sum::<f32>() / 3.0;
        let var = r.iter().map(|v| (v - mu) * (v - mu)).sum::<f32>() / 3.0;
        let (gs, bs) = ([1.0f32, 2.0, -0.5], [0.0f32, 1.0, 0.25]);
        (0..3)
            .map(|i| (r[i] - mu) / (var + 1e-3).sqrt() * gs[i] + bs[i])
            .collect::<Vec<_>>()
    });
    near(&y, want, "layernorm", 1e-5);
    // Only Y: the training outputs are refused.
    let mut g = Graph::new(17);
    g.input("x", &[D::N(2), D::N(3)]).output("y");
    g.init_f32("g", &[3], &[1.0, 2.0, -0.5]);
    g.node("ln", "LayerNormalization", &["x", "g"], &["y", "mean"]);
    let e = lower_err(&load(&g), None);
    assert!(e.contains("ln") && e.contains("only the output Y"), "{e}");
}

/// The legacy exporter's decomposition: `Pow(d, 2)` is a secret square, `Div(d,
/// Sqrt(v))` is `d·rsqrt(v)`; `Div` of two run-time tensors otherwise is an error;
/// `Pow` by an integer `k ≤ 16` is square-and-multiply (the tanh-GELU's `x³`: two products);
/// `Pow` by any other exponent is an error naming the node.
#[test]
fn pow_sqrt_and_div_of_activations() {
    let mut g = Graph::new(13);
    g.input("a", &[D::N(1), D::N(3)])
        .input("v", &[D::N(1), D::N(3)])
        .output("y");
    g.init_f32("two", &[], &[2.0]);
    g.node("sq", "Pow", &["a", "two"], &["s"]);
    g.node("sd", "Sqrt", &["v"], &["r"]);
    g.node("div", "Div", &["s", "r"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    let (a, v) = ([1.0f32, -2.0, 3.0], [4.0f32, 0.25, 9.0]);
    let y = run(&p, &[(vec![1, 3], a.to_vec()), (vec![1, 3], v.to_vec())]).remove(0);
    near(
        &y,
        (0..3).map(|i| a[i] * a[i] / v[i].sqrt()),
        "a² / √v",
        1e-5,
    );
    let ops = mnemonics(&p);
    assert_eq!(ops.iter().filter(|&&m| m == "rsqrt").count(), 1, "{ops:?}");
    // A bare Sqrt is b·rsqrt(b).
    let mut g = Graph::new(13);
    g.input("v", &[D::N(1), D::N(3)]).output("y");
    g.node("sd", "Sqrt", &["v"], &["y"]);
    let (p, _) = load(&g).lower(None).unwrap();
    let y = run(&p, &[(vec![1, 3], v.to_vec())]).remove(0);
    near(&y, v.iter().map(|x| x.sqrt()), "sqrt", 1e-5);
    // Div by another run-time tensor, Pow by 3: errors naming the node.
    let mut g = Graph::new(13);
    g.input("a", &[D::N(1), D::N(3)])
        .input("v", &[D::N(1), D::N(3)])
        .output("y");
    g.node("div", "Div", &["a", "v"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(e.contains("div") && e.contains("Sqrt"), "{e}");
    for (k, products) in [(1.0f32, 0usize), (3.0, 2), (5.0, 3), (16.0, 4)] {
        let mut g = Graph::new(13);
        g.input("a", &[D::N(1), D::N(3)]).output("y");
        g.init_f32("k", &[], &[k]);
        g.node("pow", "Pow", &["a", "k"], &["y"]);
        let (p, _) = load(&g).lower(None).unwrap();
        let a = [1.5f32, -0.5, 1.1];
        let y = run(&p, &[(vec![1, 3], a.to_vec())]).remove(0);
        near(&y, a.iter().map(|x| x.powf(k)), "a^k", 1e-4);
        let ops = mnemonics(&p);
        assert_eq!(
            ops.iter().filter(|&&m| m == "mul").count(),
            products,
            "k = {k}: {ops:?}"
        );
    }
    for k in [2.5f32, 0.0, -1.0, 17.0] {
        let mut g = Graph::new(13);
        g.input("a", &[D::N(1), D::N(3)]).output("y");
        g.init_f32("k", &[], &[k]);
        g.node("cube", "Pow", &["a", "k"], &["y"]);
        let e = lower_err(&load(&g), None);
        assert!(
            e.contains("cube") && e.contains("integer exponent in 1..=16"),
            "{e}"
        );
    }
}

/// `einsum` by definition, in f64: `terms` the operands' letters, `out` the output's,
/// `size` every letter's size.
fn einsum_reference(
    terms: [&str; 2],
    out: &str,
    size: &[(char, usize)],
    a: &[f32],
    b: &[f32],
) -> Vec<f32> {
    let dim = |c: char| size.iter().find(|(l, _)| *l == c).unwrap().1;
    let letters: Vec<char> = size.iter().map(|(l, _)| *l).collect();
    let flat = |term: &str, at: &[usize]| {
        term.chars().fold(0, |acc, c| {
            acc * dim(c) + at[letters.iter().position(|&l| l == c).unwrap()]
        })
    };
    let out_len: usize = out.chars().map(dim).product();
    let mut y = vec![0.0f64; out_len];
    let total: usize = letters.iter().map(|&c| dim(c)).product();
    let mut at = vec![0usize; letters.len()];
    for _ in 0..total {
        y[flat(out, &at)] += f64::from(a[flat(terms[0], &at)]) * f64::from(b[flat(terms[1], &at)]);
        for d in (0..at.len()).rev() {
            at[d] += 1;
            if at[d] < dim(letters[d]) {
                break;
            }
            at[d] = 0;
        }
    }
    y.iter().map(|&v| v as f32).collect()
}

/// An einsum test: equation, operand terms, output term, letter sizes, the number of
/// IR `matmul`s, whether the right operand is a constant.
type EinsumCase = (
    &'static str,
    [&'static str; 2],
    &'static str,
    &'static [(char, usize)],
    usize,
    bool,
);

#[test]
fn einsum_is_one_matrix_product_between_transposes() {
    let cases: [EinsumCase; 5] = [
        // MaxViT's attention scores and weighted values (batch B G H = 1 2 2).
        (
            "B G H I D, B G H J D -> B G H I J",
            ["BGHID", "BGHJD"],
            "BGHIJ",
            &[('B', 1), ('G', 2), ('H', 2), ('I', 3), ('J', 3), ('D', 2)],
            4,
            false,
        ),
        (
            "B G H I J, B G H J D -> B G H I D",
            ["BGHIJ", "BGHJD"],
            "BGHID",
            &[('B', 1), ('G', 2), ('H', 2), ('I', 3), ('J', 3), ('D', 2)],
            4,
            false,
        ),
        // Implicit output (letters occurring once, alphabetical): "ik".
        (
            "ij,jk",
            ["ij", "jk"],
            "ik",
            &[('i', 2), ('j', 3), ('k', 4)],
            1,
            false,
        ),
        // Free letters in a transposed output order, and an outer product.
        (
            "kj,ij->jik",
            ["kj", "ij"],
            "jik",
            &[('k', 2), ('j', 3), ('i', 2)],
            3,
            false,
        ),
        // By constant weights: one `matmul` by the server's weights.
        (
            "bj,jk->bk",
            ["bj", "jk"],
            "bk",
            &[('b', 2), ('j', 3), ('k', 2)],
            1,
            true,
        ),
    ];
    for (eq, terms, out, size, matmuls, weights) in cases {
        let dims = |t: &str| -> Vec<usize> {
            t.chars()
                .map(|c| size.iter().find(|(l, _)| *l == c).unwrap().1)
                .collect()
        };
        let (da, db) = (dims(terms[0]), dims(terms[1]));
        let a: Vec<f32> = (0..da.iter().product::<usize>())
            .map(|i| (i as f32 * 0.37).sin())
            .collect();
        let b: Vec<f32> = (0..db.iter().product::<usize>())
            .map(|i| (i as f32 * 0.71).cos())
            .collect();
        let mut g = Graph::new(12);
        let n = |d: &[usize]| d.iter().map(|&d| D::N(d as i64)).collect::<Vec<_>>();
        g.input("a", &n(&da)).output("y");
        if weights {
            let d: Vec<i64> = db.iter().map(|&d| d as i64).collect();
            g.init_f32("b", &d, &b);
        } else {
            g.input("b", &n(&db));
        }
        attr_s(g.node("es", "Einsum", &["a", "b"], &["y"]), "equation", eq);
        let (p, _) = load(&g).lower(None).unwrap();
        let m = mnemonics(&p);
        assert_eq!(
            m.iter().filter(|&&o| o == "matmul").count(),
            matmuls,
            "{eq}: {m:?}"
        );
        let mut inputs = vec![(da.clone(), a.clone())];
        if !weights {
            inputs.push((db.clone(), b.clone()));
        }
        let y = run(&p, &inputs);
        assert_eq!(p.outputs().len(), 1);
        let want = einsum_reference(terms, out, size, &a, &b);
        assert_eq!(y[0].len(), want.len(), "{eq}");
        for (k, (u, v)) in y[0].iter().zip(&want).enumerate() {
            assert!((u - v).abs() <= 1e-5, "{eq}: element {k}: {u} vs {v}");
        }
    }
}

#[test]
fn einsum_outside_one_matrix_product_is_rejected_naming_the_node() {
    for (eq, inputs, needle) in [
        ("...ij,...jk->...ik", 2, "ellipsis"),
        ("ii,ij->ij", 2, "repeats within one term"),
        ("ij,jk->i", 2, "sums letter 'k' over one operand only"),
        ("ij->i", 1, "only permutations"),
        ("ij,jk,kl->il", 3, "one or two are supported"),
        ("ij,jk->iz", 2, "output letter 'z' is in no operand"),
    ] {
        let mut g = Graph::new(12);
        let names = ["a", "b", "c"];
        for name in &names[..inputs] {
            g.input(name, &[D::N(2), D::N(2)]);
        }
        g.output("y");
        attr_s(
            g.node("es_bad", "Einsum", &names[..inputs], &["y"]),
            "equation",
            eq,
        );
        let e = lower_err(&load(&g), None);
        assert!(
            e.contains("node 'es_bad'") && e.contains("Einsum") && e.contains(needle),
            "{eq}: {e}"
        );
    }
    // Shared letters of different sizes (broadcasting) are named.
    let mut g = Graph::new(12);
    g.input("a", &[D::N(2), D::N(3)])
        .input("b", &[D::N(2), D::N(2)])
        .output("y");
    attr_s(
        g.node("es_size", "Einsum", &["a", "b"], &["y"]),
        "equation",
        "ij,jk->ik",
    );
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'es_size'") && e.contains("letter 'j' has size 3 and 2"),
        "{e}"
    );
}

/// `x + ScatterND(data, indices, updates)` with constant scatter operands; `reduction`
/// set unless `None`.
fn scatter_graph(
    opset: i64,
    indices: (&[i64], &[i64]),
    updates: &[f32],
    reduction: Option<&str>,
) -> Graph {
    let mut g = Graph::new(opset);
    g.input("x", &[D::N(3), D::N(2)]).output("y");
    g.init_f32("data", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    g.init_i64("idx", indices.0, indices.1);
    let k = indices.0.iter().take(indices.0.len() - 1).product::<i64>();
    let udims: Vec<i64> = if indices.0.last() == Some(&2) {
        vec![k]
    } else {
        vec![k, 2]
    };
    g.init_f32("upd", &udims, updates);
    let n = g.node("sc", "ScatterND", &["data", "idx", "upd"], &["s"]);
    if let Some(r) = reduction {
        attr_s(n, "reduction", r);
    }
    g.node("add", "Add", &["x", "s"], &["y"]);
    g
}

#[test]
fn scatter_nd_on_constants_folds() {
    let x = vec![0.0, 0.5, 1.0, 1.5, 2.0, 2.5];
    let fold = |g: &Graph| {
        let (p, _) = load(g).lower(None).unwrap();
        assert_eq!(mnemonics(&p), ["input", "const", "add", "output"]);
        let y = run(&p, &[(vec![3, 2], x.clone())]);
        y[0].iter()
            .zip(&x)
            .map(|(y, x)| y - x)
            .collect::<Vec<f32>>()
    };
    // Rows 2 and 0 (a negative index) replaced.
    assert_eq!(
        fold(&scatter_graph(
            13,
            (&[2, 1], &[2, -3]),
            &[9.0, 8.0, 7.0, 6.0],
            None
        )),
        [7.0, 6.0, 3.0, 4.0, 9.0, 8.0]
    );
    // Single elements (index tuples of length 2), accumulated with `add` (twice onto [1, 1]).
    assert_eq!(
        fold(&scatter_graph(
            16,
            (&[3, 2], &[1, 1, 0, 0, 1, 1]),
            &[10.0, 20.0, 30.0],
            Some("add")
        )),
        [21.0, 2.0, 3.0, 44.0, 5.0, 6.0]
    );
    // `max` and `min` from opset 18.
    assert_eq!(
        fold(&scatter_graph(
            18,
            (&[2, 1], &[0, 2]),
            &[0.0, 9.0, 0.0, 9.0],
            Some("max")
        )),
        [1.0, 9.0, 3.0, 4.0, 5.0, 9.0]
    );
    assert_eq!(
        fold(&scatter_graph(
            18,
            (&[1, 1], &[1]),
            &[0.0, 9.0],
            Some("min")
        )),
        [1.0, 2.0, 0.0, 4.0, 5.0, 6.0]
    );
    // A reduction newer than the opset, an index out of range and run-time data are
    // errors naming the node.
    let e = lower_err(
        &load(&scatter_graph(
            16,
            (&[1, 1], &[1]),
            &[0.0, 9.0],
            Some("max"),
        )),
        None,
    );
    assert!(
        e.contains("node 'sc'") && e.contains("'max' is not a reduction of ScatterND at opset 16"),
        "{e}"
    );
    let e = lower_err(
        &load(&scatter_graph(13, (&[1, 1], &[3]), &[0.0, 9.0], None)),
        None,
    );
    assert!(
        e.contains("node 'sc'") && e.contains("index 3 is out of range for axis 0 of size 3"),
        "{e}"
    );
    let mut g = Graph::new(13);
    g.input("x", &[D::N(3), D::N(2)]).output("y");
    g.init_i64("idx", &[1, 1], &[0]);
    g.init_f32("upd", &[1, 2], &[1.0, 1.0]);
    g.node("sc_rt", "ScatterND", &["x", "idx", "upd"], &["y"]);
    let e = lower_err(&load(&g), None);
    assert!(
        e.contains("node 'sc_rt'") && e.contains("ScatterND is only supported on constants"),
        "{e}"
    );
}
