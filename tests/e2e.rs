//! End to end with real processes: compile testdata models (the `sci-compiler` library),
//! then run the `sci-run` binary `--cleartext`, `--local`, and as two processes (server
//! and client) over loopback; the three output files must be byte-identical.
//!
//! **Where `sci-run` comes from.** Cargo gives a test the path of a binary only for the
//! binaries of its own package (`CARGO_BIN_EXE_*`), and `sci-run` belongs to
//! `sci-runtime`. So `sci_testkit::process::sci_run` builds it with the same cargo, profile and target
//! directory it was itself built with (`cargo build -p sci-cli --bin sci-run`, a
//! no-op when up to date, as under `cargo test --workspace`) and takes the executable's
//! path from cargo's JSON messages. That guarantees the test never runs a stale binary
//! and does not depend on the target directory layout. The failure cases of `sci-run`
//! (killed or silent peer, mismatched or truncated plan, wrong input, same role twice,
//! client plan at the server) are tested on hand-built plans in
//! `runtime/cli/tests/cli.rs`, where `CARGO_BIN_EXE_sci-run` is available.

use sci_compiler::{Options, Quantization};
use sci_ir::{Backend, Plan};
use sci_testkit::process::{Listening, sci_run};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The entry of a testdata model: from `manifest.json`, or for `zoo/` models (most of
/// which do not compile yet, so they are not in the manifest) from `zoo/index.json`.
fn entry(model: &str) -> serde_json::Value {
    static M: OnceLock<(serde_json::Value, serde_json::Value)> = OnceLock::new();
    let (manifest, zoo) = M.get_or_init(|| {
        let read = |f: &str| {
            serde_json::from_str(&std::fs::read_to_string(testdata().join(f)).unwrap()).unwrap()
        };
        (read("manifest.json"), read("zoo/index.json"))
    });
    if model.starts_with("zoo/") {
        let models = zoo["models"].as_array().unwrap();
        models.iter().find(|e| e["path"] == model).unwrap().clone()
    } else {
        manifest["models"][model].clone()
    }
}

/// Compiles `model` at ℓ = 32, s = 12 (up to `output` if given) into `dir` for SCI_OT;
/// returns the plan and the client plan.
fn compile(dir: &Path, model: &str, output: Option<&str>, threads: u32) -> (PathBuf, PathBuf) {
    compile_with(dir, model, output, threads, Backend::Ot, 1)
}

/// [`compile`] for `backend` and `batch` inputs per inference (`sci-compile
/// --batch`), files named after both.
fn compile_with(
    dir: &Path,
    model: &str,
    output: Option<&str>,
    threads: u32,
    backend: Backend,
    batch: usize,
) -> (PathBuf, PathBuf) {
    let c = sci_compiler::compile(
        &Options {
            model: testdata().join(model),
            outputs: output.map(|o| vec![o.to_string()]).unwrap_or_default(),
            quantization: Quantization::Fixed {
                bits: Some(32),
                scale: Some(12),
            },
            mill_radix: None,
            ot: None,
            threads: Some(threads),
            backend,
            batch,
        },
        false,
    )
    .unwrap_or_else(|e| panic!("compiling {model}: {e}"));
    let plan = Plan::new(c.program);
    let stem = format!("{}_{backend}_b{batch}", model.replace(['/', '.'], "_"));
    let (a, b) = (
        dir.join(format!("{stem}.bin")),
        dir.join(format!("{stem}_client.bin")),
    );
    plan.save(&a).unwrap();
    plan.client_view().save(&b).unwrap();
    (a, b)
}

fn run(args: &[String]) -> Output {
    Command::new(sci_run()).args(args).output().unwrap()
}

/// Spawns `sci-run` with `args` and `--listen 127.0.0.1:0`, and reads the address it
/// bound.
fn listen(args: &[String]) -> Listening {
    let mut cmd = Command::new(sci_run());
    cmd.args(args).args(["--listen", "127.0.0.1:0"]);
    Listening::spawn(cmd)
}

/// Waits for a listening server; it must succeed.
fn wait_ok(srv: Listening, what: &str) {
    let (ok, err) = srv.wait(Duration::from_secs(120));
    assert!(ok, "{what}: {err}");
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs one model (SCI_OT) on its first `cases` testdata cases in the three modes and
/// compares the outputs byte for byte.
fn check_model(model: &str, output: Option<&str>, cases: usize, threads: u32) {
    check_model_for(Backend::Ot, model, output, cases, threads);
}

/// [`check_model`] for `backend`.
fn check_model_for(
    backend: Backend,
    model: &str,
    output: Option<&str>,
    cases: usize,
    threads: u32,
) {
    let dir = tempfile::tempdir().unwrap();
    let (plan, client) = compile_with(dir.path(), model, output, threads, backend, 1);
    let m = entry(model);
    let names: Vec<String> = m["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    let case_dir = testdata().join(model.replace(".onnx", ".cases"));
    for k in 0..cases.min(m["cases"].as_u64().unwrap() as usize) {
        let mut ins = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let f = case_dir.join(format!("{k}/input_{i}.npy"));
            ins.extend(["--input".to_string(), format!("{n}={}", f.display())]);
        }
        let out = |mode: &str| dir.path().join(format!("{k}_{mode}.npy"));
        let mut base = ins.clone();
        base.extend(["--threads".to_string(), threads.to_string()]);
        for mode in ["cleartext", "local"] {
            let mut a = vec![format!("--{mode}"), plan.display().to_string()];
            a.extend(base.clone());
            a.extend(["--output".to_string(), out(mode).display().to_string()]);
            ok(&run(&a), &format!("{model} case {k} --{mode}"));
        }
        let t = threads.to_string();
        let srv = listen(&[
            "--party".into(),
            "0".into(),
            plan.display().to_string(),
            "--threads".into(),
            t,
        ]);
        let mut a = vec!["--party".into(), "1".into(), client.display().to_string()];
        a.extend(["--connect".into(), srv.addr.clone()]);
        a.extend(base);
        a.extend(["--output".to_string(), out("two").display().to_string()]);
        let c = run(&a);
        ok(&c, &format!("{model} case {k} client"));
        wait_ok(srv, &format!("{model} case {k} server"));
        let read = |mode: &str| std::fs::read(out(mode)).unwrap();
        let clear = read("cleartext");
        assert_eq!(
            clear,
            read("local"),
            "{model} case {k}: --local differs from --cleartext"
        );
        assert_eq!(
            clear,
            read("two"),
            "{model} case {k}: two processes differ from --cleartext"
        );
    }
}

#[test]
fn digits_models() {
    check_model("digits/digits_lenet.onnx", None, 3, 1);
    check_model("digits/digits_resnet.onnx", None, 2, 2);
    check_model("digits/digits_mlp.onnx", None, 2, 1);
    check_model(
        "digits/digits_skl_mlp.onnx",
        Some("out_activations_result"),
        2,
        1,
    );
}

/// A dropped trailing Softmax (skl2onnx's `Softmax → Identity → probabilities`, compiled
/// with `--output probabilities`) is named where users look: `sci-run` prints the output
/// as logits, and `--report` marks it; the secure run equals the cleartext one.
#[test]
fn logits_outputs_are_named_as_logits() {
    let model = "exporters/skl_mlp_classifier.onnx";
    check_model(model, Some("probabilities"), 1, 1);
    let dir = tempfile::tempdir().unwrap();
    let (plan, _) = compile(dir.path(), model, Some("probabilities"), 1);
    let input = testdata().join("exporters/skl_mlp_classifier.cases/0/input_0.npy");
    for mode in ["--cleartext", "--local"] {
        let report = dir.path().join("r.json");
        let o = run(&[
            mode.to_string(),
            plan.display().to_string(),
            "--input".into(),
            input.display().to_string(),
            "--report".into(),
            report.display().to_string(),
        ]);
        ok(&o, mode);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("probabilities (logits, pre-softmax): predicted class"),
            "{mode}: {stdout}"
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(
            r["outputs"],
            serde_json::json!([{"name": "probabilities", "logits": true}]),
            "{mode}"
        );
    }
}

/// The zoo's U-Net (`testdata/zoo/`, both exporters): ConvTranspose, bilinear and
/// nearest Resize, ReduceMean over channels, skip Concats; per-pixel logits.
#[test]
fn unet_models() {
    check_model("zoo/unet_tiny_legacy_o17.onnx", None, 1, 1);
    check_model("zoo/unet_tiny_dynamo.onnx", None, 1, 2);
}

/// The zoo's piecewise-linear models (`testdata/zoo/`, both exporters): MobileNetV3
/// (HardSwish, HardSigmoid gates of squeeze-excitation multiplying activations: secret
/// × secret products) and the LeakyReLU ResNet.
#[test]
fn piecewise_linear_zoo_models() {
    check_model("zoo/mobilenet_v3_small_tiny_legacy_o17.onnx", None, 1, 1);
    check_model("zoo/mobilenet_v3_small_tiny_dynamo.onnx", None, 1, 2);
    check_model("zoo/resnet_leaky_tiny_legacy_o17.onnx", None, 1, 2);
    check_model("zoo/resnet_leaky_tiny_dynamo.onnx", None, 1, 1);
}

/// Recurrent layers and attention's products: batches of secret × secret matrix
/// products (one wave), LSTM and GRU unrolled over the sequence (products by the
/// server's weights, one sigmoid over the stacked gates, secret × secret gate
/// products), the single-op models and the zoo's LSTM and GRU classifiers.
#[test]
fn recurrent_models() {
    check_model("ops/matmul_act_act_batched_o13.onnx", None, 1, 2);
    check_model("ops/matmul_act_act_bcast_left_o13.onnx", None, 1, 1);
    check_model("ops/lstm_reverse_o7.onnx", None, 1, 2);
    check_model("ops/gru_reverse_lbr1_o7.onnx", None, 1, 1);
    check_model("zoo/lstm_classifier_legacy_o17.onnx", None, 1, 1);
    check_model("zoo/lstm_classifier_dynamo.onnx", None, 1, 2);
    check_model("zoo/gru_classifier_legacy_o17.onnx", None, 1, 2);
    check_model("zoo/gru_classifier_dynamo.onnx", None, 1, 1);
}

/// Sigmoid and tanh (SIRNN-style protocols, bit-equal to the interpreter): the single-op
/// models, SiLU (`x · sigmoid(x)`), GELU (opset 20's op, and the exporters' `Erf`
/// form), and the zoo's EfficientNet-B0 (SiLU,
/// squeeze-excitation) and RegNetY (sigmoid gates).
#[test]
fn smooth_activation_models() {
    check_model("ops/sigmoid_o13.onnx", None, 2, 1);
    check_model("ops/tanh_o13.onnx", None, 1, 2);
    check_model("ops/silu_o14.onnx", None, 1, 1);
    check_model("ops/gelu_o20.onnx", None, 1, 2);
    check_model("ops/gelu_erf_o17.onnx", None, 1, 1);
    check_model("zoo/efficientnet_b0_tiny_legacy_o17.onnx", None, 1, 2);
    check_model("zoo/regnet_y_tiny_dynamo.onnx", None, 1, 1);
}

/// Layer normalisation (`rsqrt`: range reduction and Newton's iteration, secret
/// products, bit-equal to the interpreter): the opset-17 op over the last axis and over
/// the trailing axes from 1, and the legacy exporter's decomposition (`Pow`, `Sqrt`,
/// `Div`).
#[test]
fn layer_normalization_models() {
    check_model("ops/layernorm_o17.onnx", None, 2, 1);
    check_model("ops/layernorm_axis1_o17.onnx", None, 1, 2);
    check_model("ops/layernorm_decomposed_pow_o13.onnx", None, 1, 1);
}

/// The zoo's ConvNeXt (both exporters): LayerNormalization (rsqrt) and GELU (`Gelu`
/// of opset 20; `Erf` in the legacy export), bit for bit with the interpreter.
#[test]
fn normalised_transformer_era_zoo_models() {
    check_model("zoo/convnext_tiny_tiny_legacy_o17.onnx", None, 1, 2);
    check_model("zoo/convnext_tiny_tiny_dynamo.onnx", None, 1, 1);
}

/// Softmax inside a graph (`proto::softmax`: the lines' maxima, exp, the sums'
/// reciprocal, a secret product): the per-axis form, the form coerced to 2-D before
/// opset 13, and single-head attention (`softmax(q·kᵀ/√d)·v`).
#[test]
fn softmax_models() {
    check_model("ops/softmax_axis1_o13.onnx", None, 1, 2);
    check_model("ops/softmax_flatten_o11.onnx", None, 1, 1);
    check_model("ops/attention_o17.onnx", None, 2, 1);
}

/// The zoo's vision transformer and transformer text encoder (both exporters):
/// attention's softmax, batched secret products, LayerNormalization and GELU, bit for
/// bit with the interpreter; one ViT and one text encoder on RLWE (the default
/// backend: products by the weights and attention's secret × secret matmuls by RLWE),
/// the others on SCI_OT.
#[test]
fn attention_zoo_models() {
    check_model("zoo/vit_tiny_legacy_o17.onnx", None, 1, 2);
    check_model_for(Backend::Rlwe, "zoo/vit_tiny_dynamo.onnx", None, 1, 1);
    check_model("zoo/text_encoder_tiny_legacy_o17.onnx", None, 1, 1);
    check_model("zoo/text_encoder_tiny_dynamo.onnx", None, 1, 2);
    check_model_for(
        Backend::Rlwe,
        "zoo/text_encoder_tiny_legacy_o17.onnx",
        None,
        1,
        2,
    );
}

#[test]
fn single_op_models() {
    for m in [
        "ops/maxpool_k2s2_pads1_ceil_o12.onnx",
        "ops/maxpool_k3s2_same_upper_o11.onnx",
        "ops/avgpool_k2s2_pads1_ceil_cip0_o19.onnx",
        "ops/avgpool_k3s2_pads1_cip1_o11.onnx",
        "ops/globalavgpool_o7.onnx",
        "ops/argmax_ties_first_o12.onnx",
        "ops/concat_three_inputs_axis1_o4.onnx",
        "ops/concat_act_const_axis1_o11.onnx",
        "ops/pad_input_value_asym_o11.onnx",
        "ops/conv_groups2_o13.onnx",
        "ops/conv_strides2_pads1_o13.onnx",
        "ops/gemm_alpha_beta_transB_o11.onnx",
        "ops/matmul_const_act_o13.onnx",
        "ops/mul_const_per_channel_o13.onnx",
        "ops/sub_const_first_o13.onnx",
        "ops/sum_three_inputs_o13.onnx",
        "ops/transpose_o21.onnx",
        "ops/div_const_scalar_o13.onnx",
        "ops/gather_act_indices_2d_o28.onnx",
        "ops/slice_act_steps_o13.onnx",
    ] {
        check_model(m, None, 2, 2);
    }
}

/// SCI_HE (`--backend he`): every kind of linear layer with the server's weights runs
/// by HE — convolutions with groups, depthwise, strides, dilations, asymmetric pads and a
/// batch of 2; `X·W` and `W·X` products; elementwise products — and the rest by the
/// protocols over the field; `--local` and two processes equal `--cleartext` byte for
/// byte, with 1 and 2 threads.
///
/// This is the process-level check on a representative subset; every testdata model is
/// checked under SCI_HE in process by `tests/cost_model.rs` (outputs bit for bit
/// against the interpreter, costs against the prediction), which runs the same
/// executor on the same plan bytes over the same loopback TCP as these two processes
/// (`run_pair`, which `sci-run --local` is), without the process spawns.
#[test]
fn he_backend_models() {
    check_model_for(Backend::He, "digits/digits_lenet.onnx", None, 2, 1);
    check_model_for(Backend::He, "digits/digits_resnet.onnx", None, 1, 2);
    check_model_for(Backend::He, "digits/digits_mlp.onnx", None, 1, 1);
    check_model_for(
        Backend::He,
        "digits/digits_skl_mlp.onnx",
        Some("out_activations_result"),
        1,
        2,
    );
    for m in [
        "ops/conv_groups2_o13.onnx",
        "ops/conv_depthwise_mult2_s2_o11.onnx",
        "ops/conv_dilations2_pads2_o13.onnx",
        "ops/conv_asym_pads_strides21_o13.onnx",
        "ops/conv_batch2_o13.onnx",
        "ops/gemm_transA_o13.onnx",
        "ops/matmul_const_act_o13.onnx",
        "ops/matmul_act_const_3d_o13.onnx",
        "ops/mul_const_per_channel_o13.onnx",
        "ops/avgpool_k3s2_pads1_cip0_o11.onnx",
        "ops/maxpool_k3s2_pads1_o11.onnx",
        "ops/argmax_nchw_axis1_o13.onnx",
    ] {
        check_model_for(Backend::He, m, None, 1, 1);
    }
}

/// Runs a server and a client process over loopback with the client's extra arguments;
/// both must succeed.
fn two_processes(plan: &Path, client: &Path, client_args: &[String]) {
    let srv = listen(&["--party".into(), "0".into(), plan.display().to_string()]);
    let mut a = vec![
        "--party".into(),
        "1".into(),
        client.display().to_string(),
        "--connect".into(),
        srv.addr.clone(),
    ];
    a.extend_from_slice(client_args);
    let c = run(&a);
    ok(&c, "batch client");
    wait_ok(srv, "batch server");
}

#[test]
fn a_batch_of_the_digits_test_split_in_one_session_equals_each_image_alone() {
    use sci_ir::npy::Array;
    use sci_runtime::exec::io::{self, FileArg};
    let dir = tempfile::tempdir().unwrap();
    let (plan, client) = compile(dir.path(), "digits/digits_lenet.onnx", None, 1);
    let program = Plan::load(&plan).unwrap().program().clone();
    let x = testdata().join("digits/test/x.npy");
    let images = Array::read(&x).unwrap();
    assert_eq!(images.shape, [360, 1, 8, 8]);
    // Each image alone, as its own file, through the reference interpreter.
    let each = dir.path().join("each");
    std::fs::create_dir(&each).unwrap();
    let want: Vec<Vec<f32>> = images
        .to_f32()
        .chunks(64)
        .enumerate()
        .map(|(k, img)| {
            let f = each.join(format!("img_{k:03}.npy"));
            Array::from_f32(vec![1, 1, 8, 8], img)
                .unwrap()
                .write(&f)
                .unwrap();
            let arg = FileArg {
                name: None,
                path: f,
            };
            let xs = io::load_inputs(&program, &[arg]).unwrap();
            let ys = sci_ir::interp::run(&program, &xs).unwrap();
            io::decode_outputs(&program, &ys)[0].to_f32()
        })
        .collect();
    // The whole split as one .npy in one session: one .npy of 360 rows.
    let y = dir.path().join("y.npy");
    let files = |i: &Path, o: &Path| {
        [
            "--input".to_string(),
            i.display().to_string(),
            "--output".to_string(),
            o.display().to_string(),
        ]
    };
    two_processes(&plan, &client, &files(&x, &y));
    let got = Array::read(&y).unwrap();
    assert_eq!(got.shape, [360, 10]);
    for (k, (row, w)) in got.to_f32().chunks(10).zip(&want).enumerate() {
        assert_eq!(row, &w[..], "image {k}");
    }
    // The directory of single images in one session: a directory of outputs.
    let out = dir.path().join("out");
    two_processes(&plan, &client, &files(&each, &out));
    for (k, w) in want.iter().enumerate() {
        let o = Array::read(out.join(format!("img_{k:03}.npy"))).unwrap();
        assert_eq!(o.shape, [1, 10]);
        assert_eq!(&o.to_f32(), w, "image {k} (directory)");
    }
}

/// The rounds of each inference of a `--report` file, per party.
fn rounds(report: &Path) -> Vec<u64> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    json["parties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["totals"]["rounds"].as_u64().unwrap())
        .collect()
}

#[test]
fn the_digits_mlp_compiled_for_16_inputs_gives_each_image_its_batch_1_output() {
    use sci_ir::npy::Array;
    // digits_mlp: its exporter fixed the batch dimension to 1, which `--batch` takes as
    // the batch (digits_lenet cannot be batched: its export bakes the batch of 1 into a
    // Reshape's constant shape, which the frontend reports).
    let model = "digits/digits_mlp.onnx";
    let dir = tempfile::tempdir().unwrap();
    let (plan1, client1) = compile_with(dir.path(), model, None, 1, Backend::Ot, 1);
    let (plan16, client16) = compile_with(dir.path(), model, None, 1, Backend::Ot, 16);
    let program16 = Plan::load(&plan16).unwrap().program().clone();
    assert_eq!(program16.ty(program16.inputs()[0]).shape(), [16, 1, 8, 8]);
    // 40 test images = 2 full batches of 16 and one of 8 (padded with 8 items of zeros).
    let all = Array::read(testdata().join("digits/test/x.npy")).unwrap();
    let x = dir.path().join("x40.npy");
    Array::from_f32(vec![40, 1, 8, 8], &all.to_f32()[..40 * 64])
        .unwrap()
        .write(&x)
        .unwrap();
    let args = |i: &Path, o: &Path, r: &Path| {
        [i, o, r]
            .iter()
            .zip(["--input", "--output", "--report"])
            .flat_map(|(p, f)| [f.to_string(), p.display().to_string()])
            .collect::<Vec<_>>()
    };
    let (y1, r1) = (dir.path().join("y1.npy"), dir.path().join("r1.json"));
    let (y16, r16) = (dir.path().join("y16.npy"), dir.path().join("r16.json"));
    two_processes(&plan1, &client1, &args(&x, &y1, &r1));
    two_processes(&plan16, &client16, &args(&x, &y16, &r16));
    let (a, b) = (Array::read(&y1).unwrap(), Array::read(&y16).unwrap());
    assert_eq!(a.shape, [40, 10]);
    assert_eq!(b.shape, [40, 10]);
    assert_eq!(a.to_f32(), b.to_f32(), "batch 16 differs from batch 1");
    // Each inference of 16 images takes the rounds of one inference of one image.
    let (r1, r16) = (rounds(&r1), rounds(&r16));
    assert_eq!((r1.len(), r16.len()), (40, 3), "one report per inference");
    assert_eq!(r16, r1[..3], "rounds per inference");
    // A directory of single images: 16 files per inference, one output file each.
    let each = dir.path().join("each");
    std::fs::create_dir(&each).unwrap();
    for (k, img) in all.to_f32()[..20 * 64].chunks(64).enumerate() {
        Array::from_f32(vec![1, 1, 8, 8], img)
            .unwrap()
            .write(each.join(format!("img_{k:02}.npy")))
            .unwrap();
    }
    let out = dir.path().join("out");
    let r = dir.path().join("rd.json");
    two_processes(&plan16, &client16, &args(&each, &out, &r));
    for (k, want) in a.to_f32().chunks(10).take(20).enumerate() {
        let o = Array::read(out.join(format!("img_{k:02}.npy"))).unwrap();
        assert_eq!(o.shape, [1, 10]);
        assert_eq!(o.to_f32(), want, "image {k} (directory)");
    }
}
