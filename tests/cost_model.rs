//! The cost model is the truth: every testdata model (the benchmark networks excepted,
//! for time) is compiled at ℓ = 32, s = 12 and run with both parties in this process
//! over loopback TCP (`sci_runtime::exec::run_pair`), and the bytes each party sent and
//! the rounds each waited for, per instruction and in total, must equal
//! `sci_ir::cost::predict_program` exactly; so must the OT set-up's bytes (the set-up
//! step also holds the handshake, whose size is the hello's).
//!
//! Costs do not depend on the data, so the inputs are zeros.

use sci_compiler::{Options, Quantization};
use sci_ir::cost::{Cost, Lanes, predict_program};
use sci_ir::{Plan, Tensor};
use sci_runtime::exec::report::PartyReport;
use sci_runtime::exec::{Hello, Status, run_pair};
use sci_runtime::net::Party;
use sci_runtime::net::tcp::TcpConfig;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The testdata models, benchmark networks excepted, each with the outputs to compile
/// up to: the manifest's `compile_output` (the scikit-learn classifiers, whose graph
/// outputs end in `ai.onnx.ml` ops), else the graph's.
fn models() -> Vec<(String, Vec<String>)> {
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(testdata().join("manifest.json")).expect("manifest"),
    )
    .expect("manifest is JSON");
    let models = m["models"].as_object().expect("models");
    models
        .iter()
        .filter(|(k, _)| !k.starts_with("bench/"))
        .map(|(k, e)| {
            let out = e["compile_output"]["name"].as_str().map(str::to_string);
            (k.clone(), out.into_iter().collect())
        })
        .collect()
}

/// The measured cost of a party's report, as the model's `Cost` of the pair.
fn measured(server: &PartyReport, client: &PartyReport, i: usize) -> Cost {
    let (s, c) = (
        server.instructions[i].cost.as_ref().expect("timed"),
        client.instructions[i].cost.as_ref().expect("timed"),
    );
    assert_eq!(s.bytes_sent, c.bytes_recv);
    assert_eq!(c.bytes_sent, s.bytes_recv);
    Cost {
        server_bytes: s.bytes_sent,
        client_bytes: c.bytes_sent,
        server_rounds: s.rounds,
        client_rounds: c.rounds,
    }
}

/// Compiles `model` with `threads` lanes, runs it, compares prediction and measurement.
fn check(model: &str, outputs: &[String], threads: u32) -> usize {
    let compiled = sci_compiler::compile(
        &Options {
            model: testdata().join(model),
            outputs: outputs.to_vec(),
            quantization: Quantization::Fixed {
                bits: Some(32),
                scale: Some(12),
            },
            mill_radix: None,
            threads: Some(threads),
            backend: sci_ir::Backend::Ot,
            batch: 1,
        },
        false,
    )
    .unwrap_or_else(|e| panic!("compiling {model}: {e}"));
    let program = compiled.program;
    let enc = program.encoding().expect("quantized");
    let inputs: Vec<Tensor> = program
        .inputs()
        .iter()
        .map(|&v| Tensor::zeros(enc, program.ty(v).shape().to_vec()).expect("input type"))
        .collect();
    let plan = Plan::new(program.clone());
    let run = run_pair(
        &plan,
        vec![inputs],
        threads,
        &TcpConfig::default(),
        &mut |_| {},
    )
    .unwrap_or_else(|e| panic!("running {model}: {e}"));
    let (server, client) = (&run.server[0], &run.client[0]);
    let want = predict_program(&program, Lanes::of(&program));
    let mut protocol_steps = 0;
    for (i, instr) in program.instrs().iter().enumerate() {
        let got = measured(server, client, i);
        assert_eq!(
            got,
            want.instrs[i],
            "{model}, {threads} lanes: instruction {i} %{} ({}): measured vs predicted",
            instr.name,
            instr.op.mnemonic()
        );
        protocol_steps += usize::from(!got.is_local());
    }
    // Totals after the set-up: bytes summed, rounds of the slowest lane over the run.
    let after_setup = |r: &PartyReport| {
        (
            r.totals.bytes_sent - r.setup.bytes_sent,
            r.totals.rounds - r.setup.rounds,
        )
    };
    let ((sb, sr), (cb, cr)) = (after_setup(server), after_setup(client));
    let got_total = Cost {
        server_bytes: sb,
        client_bytes: cb,
        server_rounds: sr,
        client_rounds: cr,
    };
    assert_eq!(got_total, want.total, "{model}, {threads} lanes: totals");
    // The set-up: the OT set-up of every lane plus the two hellos on lane 0.
    let hello = Hello::new(Party::Server, threads, plan.hash(), Status::Ready)
        .to_bytes()
        .len() as u64;
    assert_eq!(
        (server.setup.bytes_sent, client.setup.bytes_sent),
        (
            want.setup.server_bytes + hello,
            want.setup.client_bytes + hello
        ),
        "{model}: set-up"
    );
    protocol_steps
}

#[test]
fn predicted_equals_measured_for_every_testdata_model() {
    let models = models();
    assert!(models.len() > 100, "testdata has its models");
    let mut steps = 0;
    for (m, outputs) in &models {
        steps += check(m, outputs, 1);
    }
    // Several lanes: roles alternate across chunks, rounds are the slowest lane's.
    for (m, outputs) in models.iter().filter(|(m, _)| m.starts_with("digits/")) {
        steps += check(m, outputs, 3);
    }
    assert!(
        steps > 500,
        "the models exercise the protocols ({steps} steps)"
    );
}
