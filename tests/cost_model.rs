//! The cost model is the truth, and the executor agrees with the interpreter: every
//! testdata model (the benchmark networks excepted, for time) is compiled at ℓ = 32,
//! s = 12 and run with both parties in this process over loopback TCP
//! (`sci_runtime::exec::run_pair`) on its first two testdata cases, in one session.
//! For each case the client's outputs must equal the reference interpreter's
//! (`sci-run --cleartext`) bit for bit. For the first, the bytes each party sent and the
//! rounds each waited for, per instruction and in total, must equal
//! `sci_ir::cost::predict_session` exactly, and so must the OT set-up's bytes (the
//! set-up step also holds the handshake, whose size is the hello's) and SCI_HE's key
//! set-up; for the second, the bytes and rounds per instruction (replayed from where
//! the first left each lane; on the silent engine it draws on the COTs the first left)
//! and no set-up. In both, the control byte that starts the inference
//! (`sci_runtime::exec::session`) is priced exactly, bytes and rounds.
//!
//! This is the same executor, plan bytes and TCP transport as two `sci-run` processes
//! (`sci-run --local` is `run_pair` too), so the sweep is in-process only to save the
//! process spawns; `tests/e2e.rs` checks the processes on a subset.
//!
//! SCI_OT: every model at 1 lane, the digits models at 3. On the silent OT engine
//! (`ot: silent`, production LPN sets as the runtime sizes them): the models with
//! products, comparisons, pooling, divisions or sigmoid/tanh ([`SILENT_KINDS`]) at 1
//! lane and the digits models at 1–3 ([`predicted_equals_measured_on_silent`]; every model in the ignored
//! [`predicted_equals_measured_on_silent_for_every_model`]); the same models under
//! SCI_HE on silent ([`predicted_equals_measured_under_he_on_silent`]). SCI_HE (`--backend he`):
//! every model at 1 lane (all compile for the field of ℓ = 32; 90 have HE products,
//! the others run the field protocols only), and the digits LeNet at 2 — except the
//! nine networks of [`HE_NETWORKS`] (mobilenet, shufflenet, googlenet, resnet exports,
//! tens of seconds each under HE), which the ignored test
//! `predicted_equals_measured_under_he_for_the_networks` checks the same way
//! (`cargo test --release -p sci --test cost_model -- --ignored`).

use sci_compiler::{Options, Quantization};
use sci_ir::cost::predict::Prediction;
use sci_ir::cost::{Cost, Lanes, predict_session};
use sci_ir::params::ferret::{FERRET, FERRET_SMALL, FerretParams};
use sci_ir::{Backend, OtKind};
use sci_ir::{Plan, Tensor};
use sci_runtime::exec::io::{self, FileArg};
use sci_runtime::exec::report::{self, PartyReport};
use sci_runtime::exec::{Hello, Status, run_pair};
use sci_runtime::net::Party;
use sci_runtime::net::tcp::TcpConfig;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The testdata models, benchmark networks excepted.
fn models() -> Vec<String> {
    let m = manifest();
    let models = m["models"].as_object().expect("models");
    models
        .keys()
        .filter(|k| !k.starts_with("bench/"))
        .cloned()
        .collect()
}

/// The manifest of the testdata models.
fn manifest() -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(testdata().join("manifest.json")).expect("manifest"),
    )
    .expect("manifest is JSON")
}

/// The entry of `model`: the manifest's, or for `zoo/…` the zoo index's
/// (`testdata/zoo/index.json`).
fn entry(model: &str) -> serde_json::Value {
    if model.starts_with("zoo/") {
        let zoo: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(testdata().join("zoo/index.json")).expect("zoo index"),
        )
        .expect("zoo index is JSON");
        let models = zoo["models"].as_array().expect("zoo models");
        models
            .iter()
            .find(|e| e["path"] == model)
            .unwrap_or_else(|| panic!("{model} in the zoo index"))
            .clone()
    } else {
        manifest()["models"][model].clone()
    }
}

/// The outputs to compile `model` up to: the manifest's `compile_output` (the
/// scikit-learn classifiers, whose graph outputs end in `ai.onnx.ml` ops), else the
/// graph's.
fn outputs(model: &str) -> Vec<String> {
    entry(model)["compile_output"]["name"]
        .as_str()
        .map(str::to_string)
        .into_iter()
        .collect()
}

/// The model's `Cost` of a pair of measured costs (the server's and the client's of
/// one step), after checking that each party received what the other sent.
fn pair_cost(s: &report::Cost, c: &report::Cost) -> Cost {
    assert_eq!(s.bytes_sent, c.bytes_recv);
    assert_eq!(c.bytes_sent, s.bytes_recv);
    Cost {
        server_bytes: s.bytes_sent,
        client_bytes: c.bytes_sent,
        server_rounds: s.rounds,
        client_rounds: c.rounds,
    }
}

/// The measured cost of a party's report, as the model's `Cost` of the pair.
fn measured(server: &PartyReport, client: &PartyReport, i: usize) -> Cost {
    pair_cost(
        server.instructions[i].cost.as_ref().expect("timed"),
        client.instructions[i].cost.as_ref().expect("timed"),
    )
}

/// The measured cost of the control byte that started an inference.
fn control(server: &PartyReport, client: &PartyReport) -> Cost {
    pair_cost(&server.control, &client.control)
}

/// Compiles `model` for `backend`.
fn compile(model: &str, threads: u32, backend: Backend) -> sci_ir::Program {
    compile_on(model, threads, backend, OtKind::Iknp)
}

/// Compiles `model` for `backend` on the OT engine `ot` (at its default radix).
fn compile_on(model: &str, threads: u32, backend: Backend, ot: OtKind) -> sci_ir::Program {
    sci_compiler::compile(
        &Options {
            model: testdata().join(model),
            outputs: outputs(model),
            quantization: Quantization::Fixed {
                bits: Some(32),
                scale: Some(12),
            },
            mill_radix: None,
            ot: Some(ot),
            threads: Some(threads),
            backend,
            batch: 1,
        },
        false,
    )
    .unwrap_or_else(|e| panic!("compiling {model} ({backend}): {e}"))
    .program
}

/// Whether `program` has products with the server's weights (run by HE under SCI_HE).
fn has_products(program: &sci_ir::Program) -> bool {
    program.ids().any(|v| program.is_secure_product(v))
}

/// Whether `model` multiplies two secret tensors (`proto::secmul`, rings only; also
/// inside `sigmoid`/`tanh`, [`sci_ir::Program::needs_ring`]): SCI_HE refuses it at
/// compile time ([`he_refuses_secret_products`]), so the HE sweeps skip it.
fn has_secret_products(model: &str) -> bool {
    let program = compile(model, 1, Backend::Ot);
    program.ids().any(|v| program.needs_ring(v))
}

/// The models the HE sweeps run: every model but those with secret products.
fn he_models(models: Vec<String>) -> Vec<String> {
    models
        .into_iter()
        .filter(|m| !has_secret_products(m))
        .collect()
}

/// A model with a product of two activations compiles for the ring backends and is
/// refused for SCI_HE with a message naming the product and the backends that run it.
#[test]
fn he_refuses_secret_products() {
    let secret: Vec<String> = models()
        .into_iter()
        .filter(|m| has_secret_products(m))
        .collect();
    assert!(
        secret.len() >= 3,
        "testdata has secret products: {secret:?}"
    );
    for m in &secret {
        let e = sci_compiler::compile(
            &Options {
                model: testdata().join(m),
                outputs: outputs(m),
                quantization: Quantization::Fixed {
                    bits: Some(32),
                    scale: Some(12),
                },
                mill_radix: None,
                ot: None,
                threads: Some(1),
                backend: Backend::He,
                batch: 1,
            },
            false,
        )
        .err()
        .unwrap_or_else(|| panic!("{m} compiled for SCI_HE"));
        let mut e: &dyn std::error::Error = &e;
        while let Some(cause) = e.source() {
            e = cause;
        }
        let e = e.to_string();
        assert!(
            e.contains("over a ring i<ℓ> (SCI_OT or RLWE backends)"),
            "{m}: {e}"
        );
    }
}

/// Compiles `model` for `backend` with `threads` lanes, runs it, compares prediction
/// and measurement; returns the number of instructions that communicate.
fn check(model: &str, threads: u32, backend: Backend) -> usize {
    check_program(model, &compile(model, threads, backend), threads)
}

/// The input sets of `model`'s first [`CASES`] testdata cases (`.cases/k/input_i.npy`,
/// named after the manifest's inputs), encoded for `program` as `sci-run` encodes them.
fn case_inputs(model: &str, program: &sci_ir::Program) -> Vec<Vec<Tensor>> {
    let m = &entry(model);
    let names: Vec<&str> = m["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .map(|i| i["name"].as_str().expect("input name"))
        .collect();
    let cases = m["cases"].as_u64().expect("cases") as usize;
    assert!(cases >= 1, "{model} has testdata cases");
    let dir = testdata().join(model.replace(".onnx", ".cases"));
    (0..cases.min(CASES))
        .map(|k| {
            let files: Vec<FileArg> = names
                .iter()
                .enumerate()
                .map(|(i, n)| FileArg {
                    name: Some(n.to_string()),
                    path: dir.join(format!("{k}/input_{i}.npy")),
                })
                .collect();
            io::load_inputs(program, &files)
                .unwrap_or_else(|e| panic!("{model} case {k}: loading the inputs: {e}"))
        })
        .collect()
}

/// Testdata cases run per model (one session, one inference each).
const CASES: usize = 2;

/// [`check`] of a compiled `program`: runs the model's testdata cases
/// ([`case_inputs`]) in one session and checks, for each, that the client's outputs
/// equal the reference interpreter's (`sci-run --cleartext`) bit for bit and that the
/// measured costs equal the predicted ones.
fn check_program(model: &str, program: &sci_ir::Program, threads: u32) -> usize {
    let inputs = case_inputs(model, program);
    let want_outputs: Vec<Vec<Tensor>> = inputs
        .iter()
        .map(|x| {
            sci_ir::interp::run(program, x)
                .unwrap_or_else(|e| panic!("{model}: the interpreter: {e}"))
        })
        .collect();
    let plan = Plan::new(program.clone());
    let run = run_pair(&plan, inputs, threads, &TcpConfig::default(), &mut |_| {})
        .unwrap_or_else(|e| panic!("running {model}: {e}"));
    let backend = program.params().backend;
    for (k, (got, want)) in run.outputs.iter().zip(&want_outputs).enumerate() {
        assert!(
            got == want,
            "{model}, {threads} lanes, {backend}: case {k}: outputs differ from the interpreter's"
        );
    }
    assert_eq!(run.outputs.len(), want_outputs.len(), "{model}: outputs");
    let session = predict_session(program, Lanes::of(program), run.server.len() as u64);
    let want = &session[0];
    let mut protocol_steps = 0;
    let (server, client) = (&run.server[0], &run.client[0]);
    for (i, instr) in program.instrs().iter().enumerate() {
        let got = measured(server, client, i);
        assert_eq!(
            got,
            want.instrs[i],
            "{model}, {threads} lanes, {backend}: instruction {i} %{} ({}): measured vs predicted",
            instr.name,
            instr.op.mnemonic()
        );
        protocol_steps += usize::from(!got.is_local());
    }
    check_totals(model, threads, &plan, want, server, client);
    // The later inferences of the session: their bytes and rounds per instruction (on
    // the silent engine from the COTs the earlier ones left; rounds from where the
    // previous inference left each lane), their control byte, and no set-up.
    for (k, (server, client)) in run.server.iter().zip(&run.client).enumerate().skip(1) {
        for (i, instr) in program.instrs().iter().enumerate() {
            let (got, want) = (measured(server, client, i), session[k].instrs[i]);
            assert_eq!(
                got,
                want,
                "{model}, {threads} lanes, {backend}, case {k}: instruction {i} %{} ({}): measured vs predicted",
                instr.name,
                instr.op.mnemonic()
            );
        }
        assert_eq!(
            control(server, client),
            session[k].control,
            "{model}, {threads} lanes, case {k}: control byte"
        );
        let totals = Cost {
            server_bytes: server.totals.bytes_sent,
            client_bytes: client.totals.bytes_sent,
            server_rounds: server.totals.rounds,
            client_rounds: client.totals.rounds,
        };
        assert_eq!(
            totals,
            session[k].total + session[k].control,
            "{model}, {threads} lanes, case {k}: totals"
        );
        assert!(
            server.setup.bytes_sent == 0 && server.he_keys.is_none() && client.he_keys.is_none(),
            "{model}, case {k}: a set-up after the first inference"
        );
    }
    protocol_steps
}

/// The totals of a session's first inference against the prediction `want`, and its
/// set-ups (the OT set-up, SCI_HE's keys).
fn check_totals(
    model: &str,
    threads: u32,
    plan: &Plan,
    want: &Prediction,
    server: &PartyReport,
    client: &PartyReport,
) {
    // SCI_HE's key set-up: the report's, when the plan has HE products.
    let keys = |r: &PartyReport| r.he_keys.as_ref().map(|k| (k.bytes_sent, k.rounds));
    let (sk, ck) = (keys(server), keys(client));
    let want_keys = (!want.he_keys.is_local()).then_some((
        (want.he_keys.server_bytes, want.he_keys.server_rounds),
        (want.he_keys.client_bytes, want.he_keys.client_rounds),
    ));
    assert_eq!(
        sk.zip(ck),
        want_keys,
        "{model}, {threads} lanes: HE key set-up"
    );
    // Totals after the set-ups: bytes summed, rounds of the slowest lane over the run.
    let after_setup = |r: &PartyReport| {
        let (kb, kr) = keys(r).unwrap_or((0, 0));
        (
            r.totals.bytes_sent - r.setup.bytes_sent - kb,
            r.totals.rounds - r.setup.rounds - kr,
        )
    };
    let ((sb, sr), (cb, cr)) = (after_setup(server), after_setup(client));
    let got_total = Cost {
        server_bytes: sb,
        client_bytes: cb,
        server_rounds: sr,
        client_rounds: cr,
    };
    assert_eq!(
        control(server, client),
        want.control,
        "{model}, {threads} lanes: control byte"
    );
    assert_eq!(
        got_total,
        want.total + want.control,
        "{model}, {threads} lanes: totals"
    );
    // The set-up: the OT set-up of every lane plus the two hellos on lane 0.
    let hello = Hello::new(
        Party::Server,
        threads,
        plan.program().params().ot,
        plan.hash(),
        Status::Ready,
    )
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
}

#[test]
fn predicted_equals_measured_for_every_testdata_model() {
    let models = models();
    assert!(models.len() > 100, "testdata has its models");
    let mut steps = 0;
    for m in &models {
        steps += check(m, 1, Backend::Ot);
    }
    // Several lanes: roles alternate across chunks, rounds are the slowest lane's.
    for m in models.iter().filter(|m| m.starts_with("digits/")) {
        steps += check(m, 3, Backend::Ot);
    }
    assert!(
        steps > 500,
        "the models exercise the protocols ({steps} steps)"
    );
}

/// The networks of `exporters/` and `keras/` whose SCI_HE run takes tens of seconds
/// each (many HE layers of many channels): checked by the ignored test
/// [`predicted_equals_measured_under_he_for_the_networks`], out of the default run for
/// time (all nine together take about five CPU minutes).
const HE_NETWORKS: [&str; 9] = [
    "exporters/mobilenet_v2_w0_25_legacy_o17.onnx",
    "exporters/mobilenet_v2_w0_25_dynamo.onnx",
    "exporters/shufflenet_v2_x0_5_dynamo.onnx",
    "exporters/shufflenet_v2_x0_5_legacy_o17.onnx",
    "exporters/googlenet_small_legacy_o17.onnx",
    "exporters/googlenet_small_dynamo.onnx",
    "exporters/resnet_small_dynamo.onnx",
    "exporters/resnet_small_legacy_o17.onnx",
    "keras/keras_mobilenet_a0_25.onnx",
];

/// Compiles each of `models` for SCI_HE at 1 lane and checks it ([`check_program`]);
/// returns the protocol steps and how many of the models have HE products.
fn check_under_he<'a>(models: impl IntoIterator<Item = &'a str>) -> (usize, usize) {
    let (mut steps, mut with_products) = (0, 0);
    for m in models {
        let program = compile(m, 1, Backend::He);
        with_products += usize::from(has_products(&program));
        steps += check_program(m, &program, 1);
    }
    (steps, with_products)
}

#[test]
fn predicted_equals_measured_under_he() {
    let models = models();
    let models = he_models(models);
    let (mut steps, with_products) = check_under_he(
        models
            .iter()
            .map(String::as_str)
            .filter(|m| !HE_NETWORKS.contains(m)),
    );
    assert!(
        with_products > 80,
        "the models exercise the HE products ({with_products} models)"
    );
    steps += check("digits/digits_lenet.onnx", 2, Backend::He);
    assert!(
        steps > 500,
        "the models exercise the protocols ({steps} steps)"
    );
}

#[test]
#[ignore = "about five CPU minutes: run with --ignored"]
fn predicted_equals_measured_under_he_for_the_networks() {
    let models = models();
    for m in HE_NETWORKS {
        assert!(models.iter().any(|x| x == m), "{m} is a testdata model");
    }
    let (steps, with_products) = check_under_he(HE_NETWORKS);
    assert_eq!(with_products, HE_NETWORKS.len(), "each has HE products");
    assert!(steps > 100, "{steps} steps");
}

/// RLWE products (`--backend rlwe`, Cheetah's coefficient encoding over `Z_{2^ℓ}`):
/// every testdata model with products at 1 lane on IKNP; the digits models also at 2
/// and 3 lanes, on the silent engine, and in a per-layer mix (every other product on
/// OT, 2 lanes). Outputs equal the interpreter's; every wave's bytes (the client's
/// ciphertexts led by the keys of sets not yet sent, the server's replies) and rounds
/// equal the prediction. A product RLWE cannot run stays on OT
/// (`sci_compiler::with_rlwe`); the sweep asserts most products run by RLWE.
#[test]
fn predicted_equals_measured_under_rlwe() {
    let (mut steps, mut rlwe_products, mut products) = (0, 0, 0);
    for m in &models() {
        let program = compile(m, 1, Backend::Rlwe);
        if !has_products(&program) && secret_rlwe(&program).is_empty() {
            continue; // the same plan as under OT, checked there
        }
        for v in program.ids() {
            products += usize::from(program.is_secure_product(v));
            rlwe_products += usize::from(program.product_backend(v) == Some(Backend::Rlwe));
        }
        steps += check_program(m, &program, 1);
    }
    for m in models().iter().filter(|m| m.starts_with("digits/")) {
        for threads in [2, 3] {
            steps += check(m, threads, Backend::Rlwe);
        }
        let silent = compile_on(m, 1, Backend::Rlwe, OtKind::Silent);
        steps += check_program(m, &silent, 1);
        // A per-layer mix: every other product back on OT.
        let mut mixed = compile_on(m, 2, Backend::Rlwe, OtKind::Silent);
        let rlwe: Vec<_> = mixed
            .ids()
            .filter(|&v| mixed.product_backend(v) == Some(Backend::Rlwe))
            .collect();
        assert!(rlwe.len() >= 2, "{m}: products to mix");
        for &v in rlwe.iter().step_by(2) {
            mixed.set_product_backend(v, Backend::Ot).unwrap();
        }
        steps += check_program(m, &mixed, 2);
    }
    assert!(
        rlwe_products * 10 >= products * 9 && products > 100,
        "{rlwe_products} of {products} products run by RLWE"
    );
    assert!(steps > 500, "{steps} steps");
}

/// The matrix products of two secret operands of `program` that run by RLWE.
fn secret_rlwe(program: &sci_ir::Program) -> Vec<sci_ir::ValueId> {
    program
        .ids()
        .filter(|&v| program.secret_product_backend(v) == Some(Backend::Rlwe))
        .collect()
}

/// Secret × secret matrix products by RLWE (attention's `Q·Kᵀ` and `softmax·V`, the
/// batched and broadcast `MatMul`s of two activations): the zoo's ViT and text encoder
/// and the `ops/` models with such products, under `--backend rlwe` at 1 and 2 lanes
/// (IKNP), on the silent engine, and with every other secret product back on OT.
/// Outputs equal the interpreter's bit for bit; every wave's bytes and rounds (the
/// cross terms' ciphertexts, [`sci_ir::rlwe::secret_matmul`]) equal the prediction.
#[test]
fn predicted_equals_measured_for_secret_products_under_rlwe() {
    let zoo = [
        "zoo/vit_tiny_legacy_o17.onnx",
        "zoo/vit_tiny_dynamo.onnx",
        "zoo/text_encoder_tiny_legacy_o17.onnx",
        "zoo/text_encoder_tiny_dynamo.onnx",
    ];
    let attention: Vec<String> = zoo
        .into_iter()
        .map(str::to_string)
        .chain(
            models()
                .into_iter()
                .filter(|m| m.starts_with("ops/matmul_act_act") || m.starts_with("ops/attention")),
        )
        .collect();
    assert!(attention.len() >= 7, "{attention:?}");
    let (mut steps, mut secret) = (0, 0);
    for m in &attention {
        let program = compile(m, 1, Backend::Rlwe);
        let rlwe = secret_rlwe(&program);
        assert!(!rlwe.is_empty(), "{m}: secret matmuls on RLWE");
        secret += rlwe.len();
        steps += check_program(m, &program, 1);
        steps += check(m, 2, Backend::Rlwe);
        if m.starts_with("ops/") {
            steps += check_program(m, &compile_on(m, 2, Backend::Rlwe, OtKind::Silent), 2);
        }
        let mut mixed = program.clone();
        for &v in rlwe.iter().step_by(2) {
            mixed.set_product_backend(v, Backend::Ot).unwrap();
        }
        steps += check_program(m, &mixed, 1);
    }
    assert!(secret >= 20, "{secret} secret matmuls by RLWE");
    assert!(steps > 100, "{steps} steps");
}

/// The same on the silent engine (plans compiled with `ot: silent`, its default
/// radix): every instruction's bytes each way and rounds, the totals, the Ferret
/// set-up and the later inference's bytes equal the prediction, which prices every OT
/// call from the COTs each lane and direction has left (`sci_ir::cost::ferret::Sources`)
/// with the LPN set the runtime sizes from the plan (`ferret::params_for`: production
/// sets only, the small one and the main one). The models of [`SILENT_KINDS`] at 1
/// lane (several run Ferret iterations mid-program, on either set: asserted) and the
/// digits models at 2 and 3 lanes; every testdata model, the networks too, in
/// [`predicted_equals_measured_on_silent_for_every_model`].
#[test]
fn predicted_equals_measured_on_silent() {
    let (steps, sets) = check_silent(&silent_models(), Backend::Ot);
    assert!(
        steps > 200,
        "the models exercise the protocols ({steps} steps)"
    );
    assert!(
        sets.contains(&FERRET_SMALL) && sets.contains(&FERRET),
        "iterations on both LPN sets"
    );
}

/// The same under SCI_HE on the silent engine (the pair `--backend auto` picks for the
/// benchmark networks): the field protocols' OTs and the HE products, the models of
/// [`SILENT_KINDS`] at 1 lane and the digits models at 1–3.
#[test]
fn predicted_equals_measured_under_he_on_silent() {
    let (steps, sets) = check_silent(&he_models(silent_models()), Backend::He);
    assert!(
        steps > 200,
        "the models exercise the protocols ({steps} steps)"
    );
    assert!(!sets.is_empty(), "some lane runs a Ferret iteration");
}

/// The models of [`SILENT_KINDS`], the networks of [`HE_NETWORKS`] excepted.
fn silent_models() -> Vec<String> {
    models()
        .into_iter()
        .filter(|m| !HE_NETWORKS.contains(&m.as_str()))
        .filter(|m| SILENT_KINDS.iter().any(|k| m.contains(k)))
        .collect()
}

#[test]
#[ignore = "about two CPU minutes: run with --ignored"]
fn predicted_equals_measured_on_silent_for_every_model() {
    let (steps, sets) = check_silent(&models(), Backend::Ot);
    assert!(steps > 1000, "{steps} steps");
    assert!(sets.contains(&FERRET), "iterations of the main set");
}

/// Name parts of the models [`predicted_equals_measured_on_silent`] runs: the digits
/// models and every model with products, comparisons, pooling or divisions.
const SILENT_KINDS: [&str; 17] = [
    "digits/",
    "argmax",
    "pool",
    "relu",
    "conv",
    "gemm",
    "matmul",
    "div",
    "clip",
    "mul",
    "skl",
    "sigmoid",
    "tanh",
    "silu",
    "layernorm",
    "softmax",
    "attention",
];

/// Checks `models` under `backend` on the silent engine ([`check_program`]) at 1 lane,
/// the digits models also at 2 and 3; returns the steps that communicate and the LPN
/// sets of the lanes that ran a Ferret iteration after the set-up (as predicted, and
/// the predictions are checked).
fn check_silent(models: &[String], backend: Backend) -> (usize, Vec<FerretParams>) {
    let (mut steps, mut sets) = (0, Vec::new());
    for m in models {
        let lanes: &[u32] = if m.starts_with("digits/") {
            &[1, 2, 3]
        } else {
            &[1]
        };
        for &threads in lanes {
            let program = compile_on(m, threads, backend, OtKind::Silent);
            steps += check_program(m, &program, threads);
            let session = predict_session(&program, Lanes::of(&program), CASES as u64);
            let last = session.last().expect("an inference");
            sets.extend(
                last.ferret
                    .iter()
                    .filter(|s| s.dirs.iter().any(|d| d.iterations > 0))
                    .map(|s| s.params),
            );
        }
    }
    (steps, sets)
}
