//! End to end on the silent OT engine (Ferret) with real processes: testdata models
//! compiled with `ot: silent` (the plan records the engine and its radix) and run by
//! two `sci-run` processes over loopback must give the `--cleartext` output byte for
//! byte, at one lane and at several; `sci-run --ot` overrides the plan's engine for
//! both parties, and parties that disagree stop with an error naming both engines.
//!
//! The models cover every protocol family: the digits LeNet (products, ReLU,
//! truncation, MaxPool), the digits ResNet (additions of shares, global average
//! pooling: division), average pooling, and ArgMax. Each silent session bootstraps
//! Ferret on every lane (about 1.4 MB per direction), so the list stays short.
//!
//! `sci-run` is built as `tests/e2e.rs` builds it (`sci_testkit::process::sci_run`): with this test's cargo
//! and profile, its path taken from cargo's JSON messages.

use sci_compiler::{Options, Quantization};
use sci_ir::{Backend, OtKind, Plan};
use sci_testkit::process::{Listening, sci_run};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Compiles `model` at ℓ = 32, s = 12 on `ot` with `threads` lanes into `dir`; returns
/// the plan and the client plan.
fn compile(dir: &Path, model: &str, ot: OtKind, threads: u32) -> (PathBuf, PathBuf) {
    let c = sci_compiler::compile(
        &Options {
            model: testdata().join(model),
            outputs: Vec::new(),
            quantization: Quantization::Fixed {
                bits: Some(32),
                scale: Some(12),
            },
            mill_radix: None,
            ot: Some(ot),
            threads: Some(threads),
            backend: Backend::Ot,
            batch: 1,
        },
        false,
    )
    .unwrap_or_else(|e| panic!("compiling {model}: {e}"));
    assert_eq!(c.program.params().ot, ot);
    assert_eq!(
        c.program.params().mill_radix,
        sci_ir::cost::radix::default_radix(ot, sci_ir::cost::predict::modulus(&c.program))
    );
    let plan = Plan::new(c.program);
    let stem = format!("{}_{ot}_t{threads}", model.replace(['/', '.'], "_"));
    let (a, b) = (
        dir.join(format!("{stem}.bin")),
        dir.join(format!("{stem}_client.bin")),
    );
    plan.save(&a).unwrap();
    plan.client_view().save(&b).unwrap();
    (a, b)
}

/// The first case's input file of a single-input testdata model.
fn case_input(model: &str) -> PathBuf {
    testdata()
        .join(model.replace(".onnx", ".cases"))
        .join("0/input_0.npy")
}

fn run(args: &[String]) -> Output {
    Command::new(sci_run()).args(args).output().unwrap()
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn s(x: impl AsRef<std::ffi::OsStr>) -> String {
    x.as_ref().to_string_lossy().into_owned()
}

/// A server on `plan` listening on a free port, with `extra` arguments.
fn server(plan: &Path, extra: &[&str]) -> Listening {
    let mut cmd = Command::new(sci_run());
    cmd.args(["--party", "0"])
        .arg(plan)
        .args(extra)
        .args(["--listen", "127.0.0.1:0"]);
    Listening::spawn(cmd)
}

/// Runs `plan` by two processes on `input` (client `extra` arguments added to both
/// parties) and returns the client's output file's bytes and its JSON report.
fn two_processes(
    dir: &Path,
    (plan, client): (&Path, &Path),
    input: &Path,
    extra: &[&str],
) -> (Vec<u8>, serde_json::Value) {
    let (out, report) = (dir.join("two.npy"), dir.join("two.json"));
    let srv = server(plan, extra);
    let mut a = vec![
        s("--party"),
        s("1"),
        s(client),
        s("--connect"),
        srv.addr.clone(),
    ];
    a.extend([s("--input"), s(input), s("--output"), s(&out)]);
    a.extend([s("--report"), s(&report)]);
    a.extend(extra.iter().map(s));
    ok(&run(&a), "client");
    let (done, err) = srv.wait(Duration::from_secs(300));
    assert!(done, "server: {err}");
    let json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (std::fs::read(&out).unwrap(), json)
}

/// The `--cleartext` output of `plan` on `input`.
fn cleartext(dir: &Path, plan: &Path, input: &Path) -> Vec<u8> {
    let out = dir.join("clear.npy");
    ok(
        &run(&[
            s("--cleartext"),
            s(plan),
            s("--input"),
            s(input),
            s("--output"),
            s(&out),
        ]),
        "cleartext",
    );
    std::fs::read(out).unwrap()
}

#[test]
fn silent_plans_run_by_two_processes_equal_cleartext() {
    for (model, threads) in [
        ("digits/digits_lenet.onnx", 1),
        ("digits/digits_lenet.onnx", 3),
        ("digits/digits_resnet.onnx", 1),
        ("ops/avgpool_k2s2_o7.onnx", 1),
        ("ops/argmax_nchw_axis1_o13.onnx", 2),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (plan, client) = compile(dir.path(), model, OtKind::Silent, threads);
        let input = case_input(model);
        let clear = cleartext(dir.path(), &plan, &input);
        let (two, report) = two_processes(dir.path(), (&plan, &client), &input, &[]);
        assert_eq!(
            two, clear,
            "{model}, {threads} lanes: silent run vs cleartext"
        );
        assert_eq!(report["parties"][0]["ot"], "silent", "{model}: report");
        assert_eq!(report["parties"][0]["threads"], threads, "{model}: report");
        predicted_beside_measured(&report["parties"][0], model);
    }
}

/// A party's `--report` shows the cost model's prediction beside every instruction's
/// measured bytes and rounds, equal to them, and beside the totals.
fn predicted_beside_measured(party: &serde_json::Value, model: &str) {
    let instrs = party["instructions"].as_array().expect("instructions");
    let mut communicating = 0;
    for i in instrs {
        let p = &i["predicted"];
        for k in ["bytes_sent", "bytes_recv", "rounds"] {
            assert_eq!(p[k], i[k], "{model}: {} ({}): {k}", i["name"], i["op"]);
        }
        communicating += usize::from(i["bytes_sent"].as_u64() > Some(0));
    }
    assert!(communicating > 0, "{model}: instructions communicate");
    assert!(party["predicted"].is_object(), "{model}: predicted totals");
}

#[test]
fn ot_flag_overrides_the_plan_and_must_agree() {
    let model = "digits/digits_lenet.onnx";
    let dir = tempfile::tempdir().unwrap();
    let (plan, client) = compile(dir.path(), model, OtKind::Silent, 1);
    let input = case_input(model);
    let clear = cleartext(dir.path(), &plan, &input);
    // Both parties on IKNP, whatever the plan says.
    let (two, report) = two_processes(dir.path(), (&plan, &client), &input, &["--ot", "iknp"]);
    assert_eq!(two, clear, "--ot iknp on a silent plan vs cleartext");
    assert_eq!(report["parties"][0]["ot"], "iknp");
    // The server on IKNP, the client on the plan's engine: both stop, naming both.
    let srv = server(&plan, &["--ot", "iknp"]);
    let c = run(&[
        s("--party"),
        s("1"),
        s(&client),
        s("--connect"),
        srv.addr.clone(),
        s("--input"),
        s(&input),
    ]);
    let (done, server_err) = srv.wait(Duration::from_secs(60));
    let client_err = String::from_utf8_lossy(&c.stderr);
    assert!(!c.status.success() && !done, "a mismatch must fail both");
    assert!(
        client_err.contains("OT engine mismatch: this party runs silent, the peer iknp"),
        "{client_err}"
    );
    assert!(
        server_err.contains("OT engine mismatch: this party runs iknp, the peer silent"),
        "{server_err}"
    );
}
