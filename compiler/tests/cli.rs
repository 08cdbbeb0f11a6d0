//! The `sci-compile` binary on good and bad inputs: files written and consistent, clear
//! error messages and a non-zero exit on every bad input, never a panic.

use sci_ir::Program;
use sci_ir::plan::Plan;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(rel)
}

fn sci_compile(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sci-compile"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs with `args`, expects failure (exit code 1, not a panic's 101) and returns stderr.
fn fails(args: &[&str]) -> String {
    let out = sci_compile(args);
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_ne!(out.status.code(), Some(101), "{args:?} panicked: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn compiles_lenet_with_autotuning_and_writes_everything() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, client, ir, report, dumps) = (
        dir.path().join("plan.bin"),
        dir.path().join("client.bin"),
        dir.path().join("final.ir"),
        dir.path().join("report.json"),
        dir.path().join("dumps"),
    );
    let model = testdata("digits/digits_lenet.onnx");
    let val = testdata("digits/val");
    let out = sci_compile(&[
        s(&model),
        "-o",
        s(&plan),
        "--client-plan",
        s(&client),
        "--validation",
        s(&val),
        "--emit-ir",
        s(&ir),
        "--report",
        s(&report),
        "--dump-ir",
        s(&dumps),
        "--mill-radix",
        "8",
        // The paper's engine, whose set-up and ReLU the assertions below price by formula
        // (the default, silent, is checked by `the_default_ot_engine_is_silent`).
        "--ot",
        "iknp",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}{stdout}", text(&out.stderr));
    assert!(stdout.contains("chosen: ℓ = "), "{stdout}");
    assert!(stdout.contains("ReLUs"), "{stdout}");

    // The plan holds the final program with the weights; the client plan the same
    // program without them (same hash).
    let server = Plan::load(&plan).unwrap();
    let client = Plan::load(&client).unwrap();
    assert!(!server.is_client_view());
    assert!(client.is_client_view());
    assert_eq!(server.hash(), client.hash());
    assert_eq!(server.program().params().mill_radix, 8);
    // --emit-ir is the same program as text.
    let emitted = Program::parse(&std::fs::read_to_string(&ir).unwrap()).unwrap();
    assert_eq!(&emitted, server.program());
    // One dump per pass (the fixed-point stage's, then fuse_relu_trunc) plus the input.
    assert_eq!(std::fs::read_dir(&dumps).unwrap().count(), 15);

    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["choice"], "autotuned");
    assert_eq!(r["bits"], r["autotune"]["bits"]);
    assert_eq!(r["plan_hash"], server.hash_hex());
    let layers = r["layers"].as_array().unwrap();
    let relu: u64 = layers
        .iter()
        .map(|l| l["calls"]["relu"].as_u64().unwrap())
        .sum();
    assert_eq!(r["totals"]["relu"].as_u64().unwrap(), relu);
    // LeNet on 8×8: ReLU before the 2×2 max pool (6·8·8: the pool then compares
    // non-negative values with the cheaper comparison) and after conv2 (16·4·4).
    assert_eq!(relu, 6 * 8 * 8 + 16 * 4 * 4);
    // The max pool's operand is non-negative: no sign DReLUs for exact comparisons.
    assert_eq!(
        r["totals"]["drelu"].as_u64().unwrap(),
        relu + 3 * 6 * 4 * 4 + 10 + 16 * 2 * 2
    );
    // Every truncation after a ReLU skips DReLU; only the logits' one is general.
    assert_eq!(
        r["totals"]["trunc_nonneg"].as_u64().unwrap(),
        6 * 4 * 4 + 16 * 4 * 4
    );
    assert_eq!(r["totals"]["trunc"].as_u64().unwrap(), 10);
    // 2×2 max pool: 3 comparisons per output; 2×2 average pool: divisions by 4.
    assert_eq!(r["totals"]["comparisons"].as_u64().unwrap(), 3 * 6 * 4 * 4);
    assert_eq!(r["totals"]["divisions"]["4"].as_u64().unwrap(), 16 * 2 * 2);
    // Predicted communication (exact, from the cost model; tests/cost_model.rs checks it
    // against runs): per party, the layers add up to the totals; the first ReLU layer
    // is the model's ReLU of its elements (one lane: the server plays P0).
    for key in [
        "server_bytes",
        "client_bytes",
        "server_rounds",
        "client_rounds",
    ] {
        let sum: u64 = layers
            .iter()
            .map(|l| l["cost"][key].as_u64().unwrap())
            .sum();
        assert_eq!(r["total_cost"][key].as_u64().unwrap(), sum, "{key}");
    }
    assert!(r["total_cost"]["server_bytes"].as_u64().unwrap() > 0);
    assert_eq!(r["setup_cost"]["server_bytes"].as_u64().unwrap(), 12352);
    let bits = r["bits"].as_u64().unwrap() as u32;
    let relu_layer = layers.iter().find(|l| l["op"] == "relu").unwrap();
    let n = relu_layer["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .product::<u64>();
    let t = sci_ir::cost::select::relu(sci_ir::params::Modulus::Pow2(bits), 8, n as usize);
    assert_eq!(
        relu_layer["cost"]["server_bytes"].as_u64().unwrap(),
        t.sent(sci_ir::params::Role::P0)
    );
}

/// Without `--ot`, an ONNX model compiles for the silent engine, with that engine's
/// millionaires' radix for its ℓ, and the report prices its set-up; an IR file keeps the
/// engine its text states (IKNP when it names none).
#[test]
fn the_defaults_are_rlwe_on_silent_ot() {
    use sci_ir::OtKind;
    use sci_ir::cost::{predict::setup_transcript, radix};
    use sci_ir::params::Modulus;
    let dir = tempfile::tempdir().unwrap();
    let (plan, ir, report) = (
        dir.path().join("plan.bin"),
        dir.path().join("final.ir"),
        dir.path().join("report.json"),
    );
    let model = testdata("digits/digits_lenet.onnx");
    let out = sci_compile(&[
        s(&model),
        "-o",
        s(&plan),
        "--bits",
        "32",
        "--scale",
        "12",
        "--emit-ir",
        s(&ir),
        "--report",
        s(&report),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let params = *Plan::load(&plan).unwrap().program().params();
    assert_eq!(params.ot, OtKind::Silent);
    // No --backend: the RLWE backend (the help says why).
    assert_eq!(params.backend, sci_ir::Backend::Rlwe);
    assert_eq!(
        params.mill_radix,
        radix::default_radix(OtKind::Silent, Modulus::Pow2(32))
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["params"]["ot"], "silent");
    assert_eq!(r["params"]["backend"], "rlwe");
    let setup = setup_transcript(OtKind::Silent);
    assert_eq!(
        r["setup_cost"]["server_bytes"].as_u64().unwrap(),
        setup.sent(sci_ir::params::Role::P0)
    );
    // The emitted IR states the engine, so compiling it again keeps it.
    assert!(std::fs::read_to_string(&ir).unwrap().contains("ot=silent"));
    let again = dir.path().join("again.bin");
    let out = sci_compile(&[s(&ir), "-o", s(&again)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(Plan::load(&again).unwrap(), Plan::load(&plan).unwrap());
    // An IR file that names no engine is IKNP's (its text's default), unless told.
    let iknp_ir = dir.path().join("iknp.ir");
    let text_iknp = std::fs::read_to_string(&ir)
        .unwrap()
        .replace(" ot=silent", "");
    std::fs::write(&iknp_ir, text_iknp).unwrap();
    let out = sci_compile(&[s(&iknp_ir), "-o", s(&again)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        Plan::load(&again).unwrap().program().params().ot,
        OtKind::Iknp
    );
}

#[test]
fn compiles_ir_text_float_and_quantized() {
    let dir = tempfile::tempdir().unwrap();
    let float_ir = dir.path().join("float.ir");
    std::fs::write(
        &float_ir,
        "%x: client f32[1,4] = input \"x\"\n\
         %w: server f32[4,2] = const [1.0, -1.0, 0.5, 0.25, -0.5, 2.0, 0.0, 1.0]\n\
         %y: shared f32[1,2] = matmul %x, %w\n\
         %r: shared f32[1,2] = relu %y\n\
         %o: client f32[1,2] = output %r \"y\"\n",
    )
    .unwrap();
    let (plan, ir) = (dir.path().join("p.bin"), dir.path().join("q.ir"));
    let out = sci_compile(&[
        s(&float_ir),
        "-o",
        s(&plan),
        "--bits",
        "20",
        "--scale",
        "6",
        "--emit-ir",
        s(&ir),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let q = std::fs::read_to_string(&ir).unwrap();
    // The ReLU and its non-negative truncation, fused.
    assert!(q.contains("i20.6") && q.contains("relu_trunc"), "{q}");
    // The quantized IR compiles again (the fixed-point passes only).
    let plan2 = dir.path().join("p2.bin");
    let out = sci_compile(&[s(&ir), "-o", s(&plan2)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(Plan::load(&plan).unwrap(), Plan::load(&plan2).unwrap());
    // ... but not with quantization flags.
    let e = fails(&[s(&ir), "-o", s(&plan2), "--bits", "16"]);
    assert!(e.contains("already quantized"), "{e}");
    // Defaults are reported as such, untuned, with the ways to tune them.
    let out = sci_compile(&[s(&float_ir), "-o", s(&plan)]);
    let summary = text(&out.stdout);
    assert!(
        summary.contains("defaults")
            && summary.contains("untuned")
            && summary.contains("--validation DIR")
            && summary.contains("--bits 37 --scale 14"),
        "{summary}"
    );
    // Given flags are not called untuned.
    let out = sci_compile(&[
        s(&float_ir),
        "-o",
        s(&plan),
        "--bits",
        "37",
        "--scale",
        "14",
    ]);
    assert!(
        !text(&out.stdout).contains("untuned"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn malformed_and_unsupported_onnx_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("p.bin");
    let errors: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(testdata("errors/errors.json")).unwrap())
            .unwrap();
    // The frontend deliberately accepts these (opset 5; INT8 weights cast to float,
    // decoded exactly; Pad's reflect mode, data movement; float64 inputs and weights;
    // Clip to any constant bounds): see frontend/tests/errors.rs.
    let accepted = [
        "unsupported_attr_clip_bounds.onnx",
        "unsupported_opset_5.onnx",
        "unsupported_dtype_int8_weights.onnx",
        "unsupported_attr_pad_reflect.onnx",
        "unsupported_dtype_float64.onnx",
    ];
    let mut n = 0;
    for (file, spec) in errors.as_object().unwrap() {
        if accepted.contains(&file.as_str()) {
            let out = sci_compile(&[s(&testdata(&format!("errors/{file}"))), "-o", s(&plan)]);
            assert!(out.status.success(), "{file}: {}", text(&out.stderr));
            std::fs::remove_file(&plan).unwrap();
            continue;
        }
        let e = fails(&[s(&testdata(&format!("errors/{file}"))), "-o", s(&plan)]);
        assert!(e.contains(file.as_str()), "{file}: {e}");
        assert!(!plan.exists(), "{file}: no plan is written on error");
        for key in ["node", "op_type"] {
            if let Some(v) = spec[key].as_str() {
                assert!(e.contains(v), "{file}: message lacks {key} {v:?}: {e}");
            }
        }
        n += 1;
    }
    assert_eq!(n, 12, "the errors group's models sci rejects");
}

#[test]
fn bad_files_and_flags_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("p.bin");
    let model = testdata("digits/digits_lenet.onnx");
    let missing = dir.path().join("missing.onnx");
    let e = fails(&[s(&missing), "-o", s(&plan)]);
    assert!(e.contains("missing.onnx"), "{e}");
    // Not ONNX, not IR.
    let junk = dir.path().join("junk.ir");
    std::fs::write(&junk, "this is not a program\n").unwrap();
    let e = fails(&[s(&junk), "-o", s(&plan)]);
    assert!(
        e.contains("not valid IR text") && e.contains("line 1"),
        "{e}"
    );
    // Scale that does not fit the ring.
    let e = fails(&[s(&model), "-o", s(&plan), "--bits", "16", "--scale", "8"]);
    assert!(e.contains("2s < ℓ"), "{e}");
    // Bits that do not hold the weights: 100 at scale 2 needs 10 bits.
    let big = dir.path().join("big.ir");
    std::fs::write(
        &big,
        "%x: client f32[1,1] = input \"x\"\n\
         %w: server f32[1,1] = const [100.0]\n\
         %y: shared f32[1,1] = matmul %x, %w\n\
         %o: client f32[1,1] = output %y \"y\"\n",
    )
    .unwrap();
    let e = fails(&[s(&big), "-o", s(&plan), "--bits", "8", "--scale", "2"]);
    assert!(e.contains("%w does not fit") && e.contains("100"), "{e}");
    // Conflicting and dangling flags (clap's errors).
    let val = testdata("digits/val");
    let e = fails(&[
        s(&model),
        "-o",
        s(&plan),
        "--bits",
        "32",
        "--validation",
        s(&val),
    ]);
    assert!(e.contains("--validation"), "{e}");
    let e = fails(&[s(&model), "-o", s(&plan), "--tolerance", "1"]);
    assert!(e.contains("--validation"), "{e}");
    let e = fails(&[
        s(&model),
        "-o",
        s(&plan),
        "--validation",
        s(&val),
        "--scales",
        "9-3",
    ]);
    assert!(e.contains("--scales"), "{e}");
    let e = fails(&[s(&model), "-o", s(&plan), "--mill-radix", "9"]);
    assert!(e.contains("radix"), "{e}");
    let e = fails(&[s(&model)]);
    assert!(e.contains("--plan"), "{e}");
    // A validation set that does not exist / does not fit the model.
    let e = fails(&[s(&model), "-o", s(&plan), "--validation", s(&missing)]);
    assert!(e.contains("validation set"), "{e}");
    let e = fails(&[
        s(&testdata("bench/minionn_cifar.onnx")),
        "-o",
        s(&plan),
        "--validation",
        s(&val),
    ]);
    assert!(e.contains("does not fit the program's input shape"), "{e}");
    // An unknown output name.
    let e = fails(&[s(&model), "-o", s(&plan), "--output", "nope"]);
    assert!(e.contains("nope"), "{e}");
    // An unwritable plan path.
    let e = fails(&[s(&model), "-o", s(&dir.path().join("no/such/dir/p.bin"))]);
    assert!(e.contains("writing the plan"), "{e}");
}

/// `--backend he`: autotuned over the validation set, the plan is over the HE field of
/// the chosen width (a width that has one, with a spare bit), every product with the
/// weights is marked HE, the report says so, and the fixed-point accuracy over the field
/// equals the ring's at the same (ℓ, s); widths without an HE field are clear errors.
#[test]
fn the_he_backend_compiles_over_its_field() {
    use sci_ir::backend::{HE_BITS, he_prime};
    let dir = tempfile::tempdir().unwrap();
    let (plan, report) = (dir.path().join("he.bin"), dir.path().join("he.json"));
    let model = testdata("digits/digits_lenet.onnx");
    let val = testdata("digits/val");
    let out = sci_compile(&[
        s(&model),
        "-o",
        s(&plan),
        "--validation",
        s(&val),
        "--backend",
        "he",
        "--report",
        s(&report),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    assert!(summary.contains("SCI_HE: field Z_n, n = "), "{summary}");
    assert!(
        summary.contains("multiplications (by HE: ") && summary.contains("HE key set-up 11.28 MiB"),
        "{summary}"
    );
    assert!(!summary.contains("not in this prediction"), "{summary}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let bits = r["bits"].as_u64().unwrap() as u32;
    assert!(HE_BITS.contains(&bits), "{bits}");
    assert_eq!(r["params"]["backend"], "he");
    assert_eq!(
        r["params"]["modulus"].as_u64(),
        Some(he_prime(bits).unwrap())
    );
    assert_eq!(r["passes"].as_array().unwrap().last().unwrap(), "he_field");
    let p: Program = Plan::load(&plan).unwrap().into_program();
    assert_eq!(p.params().backend, sci_ir::Backend::He);
    assert!(p.check_secure().is_ok());
    assert!(p.ids().any(|v| p.is_secure_product(v)));
    // The same model over the ring at the same (ℓ, s): the same predictions on the
    // validation set (the field program is exact where the values fit, which autotuning
    // checked with a spare bit).
    let scale = r["scale"].as_u64().unwrap().to_string();
    let ring = dir.path().join("ring.bin");
    let out = sci_compile(&[
        s(&model),
        "-o",
        s(&ring),
        "--bits",
        &bits.to_string(),
        "--scale",
        &scale,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let q = Plan::load(&ring).unwrap().into_program();
    let data = sci_ir::dataset::Dataset::load(&val).unwrap();
    let classes = |p: &Program| {
        let xs = sci_passes::autotune::samples(p, &data).unwrap();
        sci_passes::autotune::predict(p, &xs, false).unwrap().0
    };
    assert_eq!(classes(&p), classes(&q), "field vs ring predictions");
    // Bad widths and backends.
    let e = fails(&[s(&model), "-o", s(&plan), "--backend", "he", "--bits", "19"]);
    assert!(e.contains("no 19-bit field for the HE backend"), "{e}");
    let e = fails(&[s(&model), "-o", s(&plan), "--backend", "he", "--bits", "64"]);
    assert!(e.contains("no 64-bit field"), "{e}");
    let e = fails(&[s(&model), "-o", s(&plan), "--backend", "cheetah"]);
    assert!(e.contains("cheetah") && e.contains("ot, he"), "{e}");
}
