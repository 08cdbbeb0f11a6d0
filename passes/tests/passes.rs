//! Snapshot tests of every pass (the textual IR before and after, one rewrite each, in
//! the manner of Cranelift's filetests), each paired with an interpreter check that the
//! rewrite preserved the result: bit-identical for fixed-point passes, within float
//! tolerance for float folding.

mod common;

use common::{assert_close_outputs, assert_same_outputs, before_after};
use sci_ir::{Op, Program, Tensor, interp};
use sci_passes::{
    Pass, PassError, Pipeline, Quantize, dce, fold_affine, fold_batchnorm, fold_constants, nonneg,
    place_truncs, remove_identity, swap_relu_maxpool,
};

fn parse(src: &str) -> Program {
    Program::parse(src).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `pass` on `src`, snapshots before/after, and returns both programs.
fn snap(
    name: &str,
    pass: &str,
    f: fn(&Program) -> Result<Program, PassError>,
    src: &str,
) -> (Program, Program) {
    let before = parse(src);
    let after = f(&before).unwrap();
    insta::assert_snapshot!(name, before_after(pass, &before, &after));
    (before, after)
}

#[test]
fn remove_identity_forwards_operands() {
    let (a, b) = snap(
        "remove_identity",
        "remove_identity",
        remove_identity::run,
        r#"
%x: client f32[1,2] = input "x"
%i: client f32[1,2] = identity %x
%r: client f32[1,2] = reshape %i shape=[1,2]
%t: client f32[1,2] = transpose %r perm=[0,1]
%w: server f32[2,2] = const [1.0, 2.0, 3.0, 4.0]
%y: shared f32[1,2] = matmul %t, %w
%out: client f32[1,2] = output %y "y"
"#,
    );
    assert_eq!(b.instrs().len(), 4);
    assert_same_outputs(&a, &b, 4);
}

#[test]
fn fold_constants_transposed_weights() {
    let (a, b) = snap(
        "fold_constants",
        "fold_constants",
        fold_constants::run,
        r#"
%x: client f32[1,3] = input "x"
%wt: server f32[2,3] = const [1.0, -2.0, 0.5, 0.25, 3.0, -1.0]
%w: server f32[3,2] = transpose %wt perm=[1,0]
%w2: server f32[3,2] = reshape %w shape=[3,2]
%w3: server f32[3,2] = relu %w2
%y: shared f32[1,3] = matmul %x, %w3
%out: client f32[1,2] = output %y "y"
"#
        .replace("shared f32[1,3] = matmul", "shared f32[1,2] = matmul")
        .as_str(),
    );
    assert!(
        b.instrs()
            .iter()
            .all(|i| !matches!(i.op, Op::Transpose { .. } | Op::Relu { .. }))
    );
    assert_same_outputs(&a, &b, 4);
}

#[test]
fn fold_constants_fixed_point_scale_up() {
    let (a, b) = snap(
        "fold_constants_fixed",
        "fold_constants",
        fold_constants::run,
        r#"
%x: client i16.8[1,2] = input "x"
%c: server i16.4[2] = const [3, -5]
%c.up: server i16.8[2] = scale_up %c k=4
%y: shared i16.8[1,2] = add %x, %c.up
%out: client i16.8[1,2] = output %y "y"
"#,
    );
    assert_same_outputs(&a, &b, 8);
}

const CONV_BN: &str = r#"
%x: client f32[1,1,3,3] = input "x"
%w: server f32[2,1,2,2] = const [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 1.0, -0.5]
%b: server f32[2] = const [0.5, -0.25]
%c: shared f32[1,2,2,2] = conv2d %x, %w, %b strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%g: server f32[2] = const [1.5, 0.5]
%be: server f32[2] = const [0.1, -0.2]
%m: server f32[2] = const [0.3, 0.0]
%v: server f32[2] = const [4.0, 0.25]
%bn: shared f32[1,2,2,2] = batchnorm %c, %g, %be, %m, %v epsilon=0.00001
%out: client f32[1,2,2,2] = output %bn "y"
"#;

#[test]
fn fold_batchnorm_into_conv() {
    let (a, b) = snap(
        "fold_batchnorm_conv",
        "fold_batchnorm",
        fold_batchnorm::run,
        CONV_BN,
    );
    assert!(
        b.instrs()
            .iter()
            .all(|i| !matches!(i.op, Op::BatchNorm { .. }))
    );
    assert_eq!(
        b.instrs()
            .iter()
            .filter(|i| matches!(i.op, Op::Conv2d { .. }))
            .count(),
        1
    );
    assert_close_outputs(&a, &b, 8, 1e-5);
}

#[test]
fn fold_batchnorm_lowers_when_conv_has_other_uses() {
    let src = format!("{CONV_BN}%raw: client f32[1,2,2,2] = output %c \"raw\"\n");
    let (a, b) = snap(
        "fold_batchnorm_lowered",
        "fold_batchnorm",
        fold_batchnorm::run,
        &src,
    );
    assert!(b.instrs().iter().any(|i| matches!(i.op, Op::Mul { .. })));
    assert_close_outputs(&a, &b, 8, 1e-5);
}

#[test]
fn fold_batchnorm_into_matmul_columns() {
    let (a, b) = snap(
        "fold_batchnorm_matmul",
        "fold_batchnorm",
        fold_batchnorm::run,
        r#"
%x: client f32[1,3] = input "x"
%w: server f32[3,2] = const [1.0, -2.0, 0.5, 0.25, 3.0, -1.0]
%y: shared f32[1,2] = matmul %x, %w
%g: server f32[2] = const [2.0, -1.0]
%be: server f32[2] = const [0.5, 0.5]
%m: server f32[2] = const [1.0, -1.0]
%v: server f32[2] = const [1.0, 9.0]
%bn: shared f32[1,2] = batchnorm %y, %g, %be, %m, %v epsilon=0.0
%out: client f32[1,2] = output %bn "y"
"#,
    );
    assert_close_outputs(&a, &b, 8, 1e-5);
}

#[test]
fn fold_affine_matmul_scalar_and_columns() {
    let (a, b) = snap(
        "fold_affine_matmul",
        "fold_affine",
        fold_affine::run,
        r#"
%x: client f32[1,3] = input "x"
%w: server f32[3,2] = const [1.0, -2.0, 0.5, 0.25, 3.0, -1.0]
%y: shared f32[1,2] = matmul %x, %w
%alpha: server f32[] = const [0.5]
%ya: shared f32[1,2] = mul %y, %alpha
%c: server f32[2] = const [1.0, -1.0]
%z: shared f32[1,2] = add %c, %ya
%out: client f32[1,2] = output %z "z"
"#,
    );
    assert_eq!(b.instrs().len(), 5, "mul and add folded into the matmul");
    assert_close_outputs(&a, &b, 8, 1e-5);
}

#[test]
fn fold_affine_conv_constant_minus_output() {
    let (a, b) = snap(
        "fold_affine_conv_sub",
        "fold_affine",
        fold_affine::run,
        r#"
%x: client f32[1,1,3,3] = input "x"
%w: server f32[2,1,2,2] = const [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 1.0, -0.5]
%c: shared f32[1,2,2,2] = conv2d %x, %w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%k: server f32[2,1,1] = const [3.0, -1.0]
%d: shared f32[1,2,2,2] = sub %k, %c
%out: client f32[1,2,2,2] = output %d "y"
"#,
    );
    assert_close_outputs(&a, &b, 8, 1e-5);
}

#[test]
fn fold_affine_leaves_non_channel_constants() {
    // A constant varying along H is not a per-channel map: nothing to fold.
    let src = r#"
%x: client f32[1,1,3,3] = input "x"
%w: server f32[2,1,2,2] = const [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 1.0, -0.5]
%c: shared f32[1,2,2,2] = conv2d %x, %w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%k: server f32[2,1] = const [3.0, -1.0]
%d: shared f32[1,2,2,2] = mul %c, %k
%out: client f32[1,2,2,2] = output %d "y"
"#;
    let p = parse(src);
    assert_eq!(fold_affine::run(&p).unwrap(), p);
}

#[test]
fn swap_relu_maxpool_float() {
    let (a, b) = snap(
        "swap_relu_maxpool",
        "swap_relu_maxpool",
        swap_relu_maxpool::run,
        r#"
%x: client f32[1,1,4,4] = input "x"
%w: server f32[2,1,1,1] = const [1.0, -1.0]
%c: shared f32[1,2,4,4] = conv2d %x, %w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%p: shared f32[1,2,2,2] = maxpool %c kernel=[3,3] strides=[2,2] pads=[1,1,0,0]
%r: shared f32[1,2,2,2] = relu %p
%out: client f32[1,2,2,2] = output %r "y"
"#,
    );
    assert_same_outputs(&a, &b, 8);
}

#[test]
fn swap_relu_maxpool_fixed_point_keeps_shared_maxpool() {
    // The second MaxPool also feeds an output: it must stay; only the exclusive one
    // moves, past both MaxPools of the chain.
    let (a, b) = snap(
        "swap_relu_maxpool_fixed",
        "swap_relu_maxpool",
        swap_relu_maxpool::run,
        r#"
%x: client i16.4[1,1,4,4] = input "x"
%p1: client i16.4[1,1,3,3] = maxpool %x kernel=[2,2] strides=[1,1] pads=[0,0,0,0]
%q1: client i16.4[1,1,2,2] = maxpool %p1 kernel=[2,2] strides=[1,1] pads=[0,0,0,0]
%r1: client i16.4[1,1,2,2] = relu %q1
%p2: client i16.4[1,1,2,2] = maxpool %x kernel=[2,2] strides=[2,2] pads=[0,0,0,0]
%r2: client i16.4[1,1,2,2] = relu %p2
%o1: client i16.4[1,1,2,2] = output %r1 "r1"
%o2: client i16.4[1,1,2,2] = output %r2 "r2"
%o3: client i16.4[1,1,2,2] = output %p2 "p2"
"#,
    );
    assert_same_outputs(&a, &b, 8);
}

#[test]
fn dce_removes_dead_values_keeps_inputs() {
    let (a, b) = snap(
        "dce",
        "dce",
        dce::run,
        r#"
%x: client f32[1,2] = input "x"
%unused: client f32[1,2] = input "u"
%r: client f32[1,2] = relu %x
%dead: client f32[1,2] = add %r, %r
%k: server f32[2] = const [1.0, 2.0]
%dead2: shared f32[1,2] = mul %dead, %k
%out: client f32[1,2] = output %r "y"
"#,
    );
    assert_eq!(b.instrs().len(), 4);
    assert_same_outputs(&a, &b, 4);
}

const FLOAT_NET: &str = r#"
%x: client f32[1,1,3,3] = input "x"
%w: server f32[1,1,2,2] = const [0.5, -0.25, 1.0, 0.75]
%b: server f32[1] = const [0.125]
%c: shared f32[1,1,2,2] = conv2d %x, %w, %b strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%r: shared f32[1,1,2,2] = relu %c
%f: shared f32[1,4] = flatten %r axis=1
%k: server f32[4] = const [0.5, 2.0, -1.5, 0.3333]
%m: shared f32[1,4] = mul %f, %k
%off: server f32[4] = const [0.25, -0.5, 0.0, 1.0]
%a: shared f32[1,4] = add %m, %off
%p: shared f32[1,6] = pad %a pads=[0,1,0,1] value=0.5
%out: client f32[1,6] = output %p "y"
"#;

#[test]
fn quantize_small_net() {
    let q = Quantize { bits: 16, scale: 6 };
    let before = parse(FLOAT_NET);
    let after = q.run(&before).unwrap();
    insta::assert_snapshot!(
        "quantize",
        before_after("quantize ℓ=16 s=6", &before, &after)
    );
    // The fixed-point result decodes to the float one within the quantization error.
    for seed in 1..=8 {
        let xf = common::random_inputs(&before, seed);
        let yf = interp::run(&before, &xf).unwrap();
        let xq =
            sci_ir::fixed::encode_tensor(&xf[0], 6, sci_ir::Encoding::ring(16).unwrap()).unwrap();
        let yq = interp::run(&after, &[xq]).unwrap();
        let dec = sci_ir::fixed::decode_tensor(&yq[0], 6);
        for (a, b) in yf[0].as_f32().unwrap().iter().zip(dec.as_f32().unwrap()) {
            assert!((a - b).abs() < 0.15, "{a} vs {b}");
        }
    }
}

#[test]
fn quantize_reports_weights_that_do_not_fit() {
    let p = parse(&FLOAT_NET.replace("[0.5, 2.0, -1.5, 0.3333]", "[0.5, 200.0, -1.5, 0.3333]"));
    let e = Quantize { bits: 12, scale: 4 }.run(&p).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, PassError::DoesNotFit { .. }), "{msg}");
    assert!(msg.contains("%k") && msg.contains("200"), "{msg}");
    let e = Quantize { bits: 12, scale: 6 }.run(&p).unwrap_err();
    assert!(e.to_string().contains("2s < ℓ"), "{e}");
}

#[test]
fn quantize_rejects_fixed_point_programs() {
    let p = parse("%x: client i8.2[1] = input \"x\"\n%o: client i8.2[1] = output %x \"o\"\n");
    let e = Quantize { bits: 16, scale: 4 }.run(&p).unwrap_err();
    assert!(matches!(e, PassError::Stage { .. }), "{e}");
}

#[test]
fn place_truncs_after_relu() {
    let (a, b) = snap(
        "place_truncs_relu",
        "place_truncs",
        place_truncs::run,
        r#"
%x: client i16.4[1,1,3,3] = input "x"
%w: server i16.4[1,1,2,2] = const [8, -4, 16, 12]
%b: server i16.8[1] = const [32]
%c: shared i16.8[1,1,2,2] = conv2d %x, %w, %b strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%c.trunc: shared i16.4[1,1,2,2] = trunc %c s=4
%r: shared i16.4[1,1,2,2] = relu %c.trunc
%out: client i16.4[1,1,2,2] = output %r "y"
"#,
    );
    assert_same_outputs(&a, &b, 16);
}

#[test]
fn place_truncs_after_maxpool_and_relu() {
    let (a, b) = snap(
        "place_truncs_maxpool_relu",
        "place_truncs",
        place_truncs::run,
        r#"
%x: client i16.4[1,1,4,4] = input "x"
%w: server i16.4[1,1,1,1] = const [-24]
%c: shared i16.8[1,1,4,4] = conv2d %x, %w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%c.trunc: shared i16.4[1,1,4,4] = trunc %c s=4
%p: shared i16.4[1,1,2,2] = maxpool %c.trunc kernel=[2,2] strides=[2,2] pads=[0,0,0,0]
%r: shared i16.4[1,1,2,2] = relu %p
%f: shared i16.4[1,4] = flatten %r axis=1
%out: client i16.4[1,4] = output %f "y"
"#,
    );
    assert_same_outputs(&a, &b, 16);
}

#[test]
fn place_truncs_through_residual_add() {
    // %r0 has two uses (the conv and the residual add): its scale stays; the add's other
    // operand is scaled up instead.
    let (a, b) = snap(
        "place_truncs_residual",
        "place_truncs",
        place_truncs::run,
        r#"
%x: client i16.4[1,1,2,2] = input "x"
%r0: client i16.4[1,1,2,2] = relu %x
%w: server i16.4[1,1,1,1] = const [24]
%c: shared i16.8[1,1,2,2] = conv2d %r0, %w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%c.trunc: shared i16.4[1,1,2,2] = trunc %c s=4
%s: shared i16.4[1,1,2,2] = add %r0, %c.trunc
%r: shared i16.4[1,1,2,2] = relu %s
%out: client i16.4[1,1,2,2] = output %r "y"
"#,
    );
    assert!(
        b.instrs()
            .iter()
            .any(|i| matches!(i.op, Op::ScaleUp { .. }))
    );
    assert_same_outputs(&a, &b, 16);
}

#[test]
fn place_truncs_stops_at_other_uses_and_subtrahends() {
    // %t1 is the subtrahend of a sub (⌊x/2^s⌋ is not ⌈x/2^s⌉): it stays. %t2 has two uses:
    // it stays too. Nothing changes.
    let src = r#"
%x: client i16.4[1,4] = input "x"
%w: server i16.4[4,4] = const [16, 0, 0, 0, 0, 16, 0, 0, 0, 0, -8, 0, 0, 0, 0, 24]
%y1: shared i16.8[1,4] = matmul %x, %w
%t1: shared i16.4[1,4] = trunc %y1 s=4
%d: shared i16.4[1,4] = sub %x, %t1
%r1: shared i16.4[1,4] = relu %d
%y2: shared i16.8[1,4] = matmul %x, %w
%t2: shared i16.4[1,4] = trunc %y2 s=4
%r2: shared i16.4[1,4] = relu %t2
%o1: client i16.4[1,4] = output %r1 "r1"
%o2: client i16.4[1,4] = output %r2 "r2"
%o3: client i16.4[1,4] = output %t2 "t2"
"#;
    let p = parse(src);
    assert_eq!(place_truncs::run(&p).unwrap(), p);
}

#[test]
fn mark_nonneg_after_relu() {
    let (a, b) = snap(
        "mark_nonneg",
        "mark_nonneg",
        nonneg::run,
        r#"
%x: client i16.4[1,4] = input "x"
%r: client i16.4[1,4] = relu %x
%p: client i16.4[1,4] = reshape %r shape=[1,4]
%t1: client i16.2[1,4] = trunc %p s=2
%t2: client i16.2[1,4] = trunc %x s=2
%k: server i16.2[4] = const [1, 2, 3, 4]
%s: shared i16.2[1,4] = add %t1, %k
%t3: shared i16.1[1,4] = trunc %s s=1
%o1: client i16.2[1,4] = output %t1 "t1"
%o2: client i16.2[1,4] = output %t2 "t2"
%o3: client i16.1[1,4] = output %t3 "t3"
"#,
    );
    let flags: Vec<bool> = b
        .instrs()
        .iter()
        .filter_map(|i| match i.op {
            Op::Trunc { nonneg, .. } => Some(nonneg),
            _ => None,
        })
        .collect();
    // t1 after a ReLU; t2 of the raw input; t3 adds a server constant, which is not
    // inspected (the flag is public).
    assert_eq!(flags, vec![true, false, false]);
    assert_same_outputs(&a, &b, 16);
}

/// A sum of non-negative values can wrap to a negative ring element, so `add` (and the
/// other ops that can overflow) never propagate the claim: the flag must hold for every
/// input, not only for those autotuning saw.
#[test]
fn mark_nonneg_is_sound_under_wrapping() {
    let p = Program::parse(
        r#"
%x: client i8.2[1,2] = input "x"
%r: client i8.2[1,2] = relu %x
%s: client i8.2[1,2] = add %r, %r
%u: client i8.3[1,2] = scale_up %r k=1
%t1: client i8.1[1,2] = trunc %s s=1
%t2: client i8.2[1,2] = trunc %u s=1
%o1: client i8.1[1,2] = output %t1 "t1"
%o2: client i8.2[1,2] = output %t2 "t2"
"#,
    )
    .unwrap();
    let b = nonneg::run(&p).unwrap();
    let flags: Vec<bool> = b
        .instrs()
        .iter()
        .filter_map(|i| match i.op {
            Op::Trunc { nonneg, .. } => Some(nonneg),
            _ => None,
        })
        .collect();
    assert_eq!(flags, vec![false, false]);
    // 100 + 100 wraps to -56 in i8: the marked program must still run and agree.
    let x = Tensor::signed(p.encoding().unwrap(), vec![1, 2], &[100, 127]).unwrap();
    assert_eq!(
        interp::run(&p, std::slice::from_ref(&x)).unwrap(),
        interp::run(&b, &[x]).unwrap()
    );
}

const FLOAT_LENET: &str = r#"
%x: client f32[1,1,4,4] = input "x"
%w1: server f32[2,1,3,3] = const [0.5, -0.25, 1.0, 0.75, -0.5, 0.25, 0.125, -1.0, 0.5, -0.75, 0.5, 0.25, 1.0, -0.5, 0.25, 0.5, 0.75, -0.25]
%c1: shared f32[1,2,4,4] = conv2d %x, %w1 strides=[1,1] pads=[1,1,1,1] dilations=[1,1] groups=1
%g: server f32[2] = const [1.5, 0.5]
%be: server f32[2] = const [0.1, -0.2]
%m: server f32[2] = const [0.3, 0.0]
%v: server f32[2] = const [4.0, 0.25]
%bn: shared f32[1,2,4,4] = batchnorm %c1, %g, %be, %m, %v epsilon=0.00001
%id: shared f32[1,2,4,4] = identity %bn
%r1: shared f32[1,2,4,4] = relu %id
%p1: shared f32[1,2,2,2] = maxpool %r1 kernel=[2,2] strides=[2,2] pads=[0,0,0,0]
%f: shared f32[1,8] = flatten %p1 axis=1
%wt: server f32[3,8] = const [0.5, -0.25, 1.0, 0.75, -0.5, 0.25, 0.125, -1.0, 0.5, -0.75, 0.5, 0.25, 1.0, -0.5, 0.25, 0.5, 0.75, -0.25, 0.5, 0.5, -0.5, 1.0, 0.25, -0.125]
%w2: server f32[8,3] = transpose %wt perm=[1,0]
%b2: server f32[3] = const [0.1, 0.2, -0.3]
%y: shared f32[1,3] = matmul %f, %w2, %b2
%out: client f32[1,3] = output %y "logits"
"#;

#[test]
fn standard_pipeline_on_a_small_cnn() {
    let p = parse(FLOAT_LENET);
    let pipeline = Pipeline::standard(Some(Quantize { bits: 24, scale: 8 }));
    let mut seen = Vec::new();
    let out = pipeline
        .run_observed(&p, &mut |name, _| seen.push(name.to_string()))
        .unwrap();
    assert_eq!(seen, pipeline.names());
    insta::assert_snapshot!(
        "pipeline_small_cnn",
        before_after("the standard pipeline ℓ=24 s=8", &p, &out)
    );
    out.check_secure().unwrap();
    // The peephole and nonneg marking are exact: the same program without them (only
    // quantized) computes bit-identical outputs.
    let float = Pipeline::float_stage().run(&p).unwrap();
    let plain = Quantize { bits: 24, scale: 8 }.run(&float).unwrap();
    assert_same_outputs(&plain, &out, 16);
}
