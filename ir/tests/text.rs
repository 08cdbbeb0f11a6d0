//! Text format: snapshots of the printer, exact round trips (print → parse → print, and
//! parse ∘ print = identity on programs) on representative and random programs, and
//! parse errors with positions.

mod common;

use proptest::prelude::*;
use sci_ir::{Encoding, Program, interp};

fn round_trip(p: &Program) {
    let text = p.to_text();
    let q = Program::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(q.to_text(), text, "print → parse → print differs");
    assert_eq!(&q, p, "parse ∘ print changed the program");
}

#[test]
fn lenet_snapshot_ring() {
    let p = common::lenet(Encoding::ring(37).unwrap(), 12);
    insta::assert_snapshot!("lenet_ring37_s12", p.to_text());
    round_trip(&p);
}

#[test]
fn lenet_snapshot_real_and_client_view() {
    let p = common::lenet(Encoding::Real, 0);
    insta::assert_snapshot!("lenet_f32", p.to_text());
    round_trip(&p);
    let cv = common::lenet(Encoding::field(65537).unwrap(), 4).client_view();
    insta::assert_snapshot!("lenet_z65537_s4_client_view", cv.to_text());
    round_trip(&cv);
}

/// An output holding the input of a dropped Softmax carries the bare word `logits`.
#[test]
fn logits_outputs_round_trip() {
    let text = "params mill_radix=4 threads=1\n\
                %x: client f32[1,3] = input \"x\"\n\
                %p: client f32[1,3] = output %x \"probabilities\" logits\n";
    let p = Program::parse(text).unwrap();
    assert_eq!(p.output_names(), [("probabilities", true)]);
    assert_eq!(p.to_text(), text);
    round_trip(&p);
}

#[test]
fn squeezenet_round_trips() {
    for enc in [Encoding::ring(64).unwrap(), Encoding::Real] {
        round_trip(&common::squeezenet(enc, 12, 33));
    }
}

/// One instruction of every op, with every optional flag, in one readable program.
const EVERY_OP: &str = r#"# every op of the IR, fixed point
params mill_radix=3 threads=2
%x: client i16.4[1,2,4,6] = input "image:0"
%w: server i16.4[2,1,3,3] = const [1, -1, 2, 0, 0, 0, -2, 1, 3,
    4, 5, 6, -7, 8, 9, 10, 11, -12]
%b: public i16.8[2] = const [-3, 3]
%secret: server i16.4[2] = const withheld
%conv: shared i16.8[1,2,2,3] = conv2d %x, %w, %b strides=[2,1] pads=[1,0,0,1] dilations=[1,2] groups=2
%t: shared i16.4[1,2,2,3] = trunc %conv s=4
%tn: shared i16.2[1,2,2,3] = trunc %t s=2 nonneg
%sg: shared i16.4[1,2,2,3] = sigmoid %t
%th: shared i16.4[1,2,2,3] = tanh %t
%rq: shared i16.4[1,2,2,3] = rsqrt %t
%spl: shared i16.4[1,2,2,3] = spline %t func=1
%sm: shared i16.4[1,2,2,3] = softmax %t axis=3
%su: shared i16.4[1,2,2,3] = scale_up %tn k=2
%add: shared i16.4[1,2,2,3] = add %su, %t
%sub: shared i16.4[1,2,2,3] = sub %add, %t
%mul: shared i16.8[1,2,2,3] = mul %sub, %t
%mp: shared i16.8[1,2,2,3] = mul_public %mul k=-3
%dp: shared i16.8[1,2,2,3] = div_public %mp d=7
%r: shared i16.8[1,2,2,3] = relu %dp
%max: shared i16.8[1,2,1,2] = maxpool %r kernel=[2,2] strides=[2,2] pads=[0,0,0,1] ceil_mode
%avg: shared i16.8[1,2,2,3] = avgpool %r kernel=[2,2] strides=[1,1] pads=[1,1,0,0] count_include_pad
%avg2: shared i16.8[1,2,1,1] = avgpool %r kernel=[2,3] strides=[2,2] pads=[0,0,0,0]
%gap: shared i16.8[1,2,1,1] = global_avgpool %avg
%am: shared i16.0[1,1,1,2] = argmax %max axis=1 keepdims
%am2: shared i16.0[1,2,1] = argmax %max axis=3
%rs: shared i16.8[2,1] = reshape %gap shape=[2,1]
%fl: shared i16.8[1,2] = flatten %gap axis=1
%tr: shared i16.8[2,1] = transpose %fl perm=[1,0]
%ga: shared i16.8[2,1] = gather %tr axis=0 indices=[1,0]
%cat: shared i16.8[2,3] = concat %ga, %rs, %tr axis=1
%pad: shared i16.8[3,5] = pad %cat pads=[0,1,1,1] value=-32768
%mm: shared i16.12[3,2] = matmul %pad, %"weights/fc:0" , %fcb
%"weights/fc:0": server i16.4[5,2] = const [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
"#;

#[test]
fn every_op_round_trips_and_runs() {
    // %mm uses a value defined after it: that is an error (topological order).
    let e = Program::parse(EVERY_OP).unwrap_err();
    assert_eq!((e.line, e.col), (35, 40), "{e}");
    assert_eq!(e.message, "unknown value %weights/fc:0");
    // In order, with the bias defined, it parses, prints canonically and round-trips.
    let fixed = EVERY_OP.replace(
        "%mm: shared i16.12[3,2] = matmul %pad, %\"weights/fc:0\" , %fcb\n%\"weights/fc:0\": server i16.4[5,2] = const [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n",
        "%\"weights/fc:0\": server i16.4[5,2] = const [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n%fcb: public i16.12[2] = const [0, -1]\n%mm: shared i16.12[3,2] = matmul %pad, %\"weights/fc:0\", %fcb\n%out: client i16.12[3,2] = output %mm \"logits\"\n%out2: client i16.0[1,1,1,2] = output %am \"class\"\n",
    );
    let p = Program::parse(&fixed).unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!("every_op", p.to_text());
    round_trip(&p);
    assert_eq!(p.params().mill_radix, 3);
    // The withheld constant makes the program a client view: the interpreter refuses.
    let x = common::input_for(&p, 3);
    assert!(matches!(
        interp::run(&p, &[x]),
        Err(interp::InterpError::Withheld { .. })
    ));
}

#[test]
fn float_only_ops_round_trip() {
    let src = r#"params mill_radix=4 threads=1
%x: client f32[1,2,1,1] = input "x"
%g: server f32[2] = const [1.0, -0.5]
%b: server f32[2] = const [0.0, 1e-7]
%m: public f32[2] = const [-0.0, inf]
%v: public f32[2] = const [1, 2.5e3]
%bn: shared f32[1,2,1,1] = batchnorm %x, %g, %b, %m, %v epsilon=1e-5
%id: shared f32[1,2,1,1] = identity %bn
%p: shared f32[1,2,1,3] = pad %id pads=[0,0,0,1,0,0,0,1] value=-1.5
%o: client f32[1,2,1,3] = output %p "y"
"#;
    let p = Program::parse(src).unwrap_or_else(|e| panic!("{e}"));
    round_trip(&p);
    // Integer literals are accepted for f32 data and printed canonically.
    assert!(p.to_text().contains("const [1.0, 2500.0]"));
    assert!(p.to_text().contains("const [-0.0, inf]"));
}

#[test]
fn parse_errors_have_positions_and_expectations() {
    let check = |src: &str, line: usize, col: usize, needle: &str| {
        let e = Program::parse(src).unwrap_err();
        assert_eq!((e.line, e.col), (line, col), "{e}");
        assert!(e.message.contains(needle), "{e} should mention {needle:?}");
    };
    check(
        "%x: client i8.0[2] = inptu \"x\"",
        1,
        22,
        "unknown op `inptu` (the ops: input, const, conv2d",
    );
    check("%x: client i8.0[2] = 5 \"x\"", 1, 22, "expected one of");
    check(
        "%x: client i8.0[2] = 5 \"x\"",
        1,
        22,
        "a word (an op or an attribute)",
    );
    check("%x: client i8.0[2] = input 5", 1, 28, "a string");
    check(
        "%x: client i8.9[2] = input \"x\"",
        1,
        5,
        "scale 9 does not fit",
    );
    check(
        "%x: client i65.0[2] = input \"x\"",
        1,
        5,
        "ring bit width 65",
    );
    check("%x: client z65535.0[2] = input \"x\"", 1, 5, "not prime");
    check(
        "\n\n  %x: client i8.0[2] = input",
        3,
        29,
        "unexpected end of input",
    );
    check(
        "%x: client i8.0[2] = input \"x\"\n%y: client i8.0[2] = relu %z",
        2,
        27,
        "unknown value %z",
    );
    check(
        "%x: client i8.2[2] = input \"x\"\n%y: client i8.1[2] = relu %x",
        2,
        1,
        "its op produces client i8.2[2]",
    );
    check(
        "%x: client i8.2[2] = input \"x\"\n%x: client i8.2[2] = relu %x",
        2,
        1,
        "already defined",
    );
    check(
        "%c: public i8.0[2] = const [1, 128]",
        1,
        32,
        "outside the signed range",
    );
    check(
        "%c: public i8.0[2] = const [1, 2, 3]",
        1,
        29,
        "needs 2 elements",
    );
    check(
        "%c: public i8.0[1] = const [1.5]",
        1,
        29,
        "expected an integer",
    );
    check(
        "%c: public i8.0[1] = const withheld",
        1,
        1,
        "cannot be withheld",
    );
    check("%x: client i8.0[1] = input \"x\" $", 1, 32, "invalid token");
    // What the op table's reader says of a malformed op.
    let x = "%x: client i8.4[1,1,4,4] = input \"x\"\n";
    check(
        &format!("{x}%y: client i8.4[1,1,4,4] = relu %x, %x"),
        2,
        28,
        "`relu` takes 1 operands, 2 written",
    );
    check(
        &format!("{x}%y: shared i8.4[1,1,4,4] = add %x"),
        2,
        28,
        "`add` takes more operands than the 1 written",
    );
    check(
        &format!("{x}%y: client i8.2[1,1,4,4] = trunc %x"),
        2,
        28,
        "`trunc` needs `s=…`",
    );
    check(
        &format!("{x}%y: client i8.2[1,1,4,4] = trunc %x s=2 s=2"),
        2,
        41,
        "`trunc` has no attribute `s` (or it is repeated)",
    );
    check(
        &format!("{x}%y: client i8.2[1,1,4,4] = trunc %x s=2 k=1"),
        2,
        41,
        "has no attribute `k`",
    );
    check(
        &format!("{x}%y: client i8.2[1,1,4,4] = trunc %x s=-2"),
        2,
        39,
        "non-negative integer",
    );
    check(
        &format!("{x}%y: client i8.2[1,1,4,4] = trunc %x s=[2]"),
        2,
        39,
        "takes a number, not a list",
    );
    check(
        &format!("{x}%y: client i8.2[1,1,4,4] = trunc %x s=2 nonneg=1"),
        2,
        41,
        "`nonneg` is a flag",
    );
    check(
        &format!("{x}%y: client i8.2[1,1,4,4] = trunc %x nonneg"),
        2,
        28,
        "`trunc` needs `s=…`",
    );
    check(
        &format!(
            "{x}%y: client i8.4[1,1,2,2] = maxpool %x kernel=[2,2] strides=[2] pads=[0,0,0,0]"
        ),
        2,
        60,
        "`strides` takes 2 entries, found 1",
    );
    check(
        &format!("{x}%y: client i8.4[1,1,4,4] = output %x"),
        2,
        28,
        "`output` needs a string",
    );
    check(
        &format!("{x}%y: client i8.4[1,1,4,4] = relu %x \"z\""),
        2,
        36,
        "`relu` takes no (further) string",
    );
    check(
        &format!("{x}%y: client i8.4[16] = reshape %x shape=4"),
        2,
        40,
        "takes a list",
    );
    check("params mill_radix=9 threads=1", 1, 1, "radix");
    check(
        "%x: client i8.0[99999999999999999999999] = input \"x\"",
        1,
        17,
        "out of range",
    );
    check(
        "%x: client i8.0[1] = input \"\\q\"",
        1,
        28,
        "invalid escape",
    );
    check(
        "%x: client i8.4[1,1,2,2] = input \"x\"\n%y: client i8.0[1,1,1,1] = batchnorm %x, %x, %x, %x, %x epsilon=0.0",
        2,
        1,
        "BatchNorm folding",
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_programs_round_trip(seed in any::<u64>()) {
        let p = common::random_program(seed, 40);
        let text = p.to_text();
        let q = Program::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(q.to_text(), text);
        prop_assert_eq!(q, p);
    }

    #[test]
    fn parser_never_panics_on_garbage(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = Program::parse(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn parser_never_panics_on_mutations(seed in any::<u64>(), pos in any::<usize>(), byte in any::<u8>()) {
        let mut text = common::random_program(seed, 15).to_text().into_bytes();
        if !text.is_empty() {
            let i = pos % text.len();
            text[i] = byte;
        }
        let _ = Program::parse(&String::from_utf8_lossy(&text));
    }
}

/// The random generator behind the round-trip properties reaches every op and every
/// encoding family, so those properties cover the whole format.
#[test]
fn random_programs_cover_every_op() {
    let mut seen = std::collections::BTreeSet::new();
    let mut encodings = std::collections::BTreeSet::new();
    let mut total = 0;
    for seed in 0..600 {
        let p = common::random_program(seed, 40);
        total += p.instrs().len();
        for i in p.instrs() {
            seen.insert(i.op.mnemonic());
            encodings.insert(match i.ty.encoding() {
                Encoding::Real => "f32",
                Encoding::Ring { .. } => "ring",
                Encoding::Field { .. } => "field",
            });
        }
    }
    assert_eq!(seen.len(), 30, "ops reached: {seen:?}");
    assert_eq!(encodings.len(), 3);
    assert!(total > 600 * 8, "average program length {}", total / 600);
}

/// The example in ir/README.md parses, round-trips and type-checks as documented.
#[test]
fn readme_example_parses() {
    let readme = include_str!("../README.md");
    let start = readme
        .find("# comments run to the end of the line")
        .unwrap();
    let end = start + readme[start..].find("```").unwrap();
    let p = Program::parse(&readme[start..end]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.instrs().len(), 8);
    assert!(p.has_withheld_consts());
    let q = Program::parse(&p.to_text()).unwrap();
    assert_eq!(q, p);
    assert_eq!(p.check_secure(), Ok(()));
}

/// The OT engine in the `params` line: `ot=silent` parses and prints back, IKNP (the
/// default) is not printed, and an unknown engine is an error.
#[test]
fn params_ot_engine() {
    let body = "%x: client i16.4[2] = input \"x\"\n%y: client i16.4[2] = output %x \"y\"\n";
    let p = Program::parse(&format!("params mill_radix=2 threads=1 ot=silent\n{body}")).unwrap();
    assert_eq!(p.params().ot, sci_ir::OtKind::Silent);
    assert!(
        p.to_text()
            .starts_with("params mill_radix=2 threads=1 ot=silent\n")
    );
    round_trip(&p);
    let q = Program::parse(&format!("params mill_radix=4 threads=1 ot=iknp\n{body}")).unwrap();
    assert_eq!(q.params().ot, sci_ir::OtKind::Iknp);
    assert!(q.to_text().starts_with("params mill_radix=4 threads=1\n"));
    assert!(Program::parse(&format!("params mill_radix=4 threads=1 ot=kkrt\n{body}")).is_err());
}
