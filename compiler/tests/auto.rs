//! `--backend auto`: the backend predicted faster on the network is kept, on cases where
//! the choice is clear either way; `--net` adds the network time to the report.

use sci_compiler::auto::choose;
use sci_compiler::{Options, Quantization};
use sci_ir::Backend;
use sci_ir::cost::NetProfile;
use std::path::PathBuf;
use std::process::Command;

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(rel)
}

fn options(model: &str) -> Options {
    Options {
        model: testdata(model),
        outputs: Vec::new(),
        quantization: Quantization::Fixed {
            bits: Some(32),
            scale: Some(12),
        },
        mill_radix: None,
        ot: None,
        threads: None,
        backend: Backend::Ot,
        batch: 1,
    }
}

#[test]
fn a_network_of_relus_stays_on_ot() {
    // No linear layer: HE has nothing to save, and its ReLUs compare field elements,
    // which costs more than the ring's. OT on either network.
    for net in [NetProfile::LAN, NetProfile::WAN] {
        let (c, choice) = choose(&options("ops/relu_o14.onnx"), &net, false).expect("compiles");
        assert_eq!(c.program.params().backend, Backend::Ot);
        assert_eq!(choice.chosen, "ot");
        let he = choice.he.as_ref().expect("compiles for HE");
        assert!(he.seconds > choice.ot.seconds, "{}", choice.summary());
    }
}

#[test]
fn minionn_over_a_wan_goes_to_rlwe() {
    // MiniONN's OT-based linear layers move 4.2 GiB: over 100 s at 40 MB/s. Its HE
    // layers and the HE key set-up are tens of MB; RLWE's products fewer still, and its
    // non-linear layers run the ring's protocols, cheaper than the field's: RLWE, every
    // product on it.
    let (c, choice) = choose(
        &options("bench/minionn_cifar.onnx"),
        &NetProfile::WAN,
        false,
    )
    .expect("compiles");
    assert_eq!(c.program.params().backend, Backend::Rlwe);
    assert_eq!(choice.chosen, "rlwe");
    assert!(choice.ot.seconds > 100.0, "{}", choice.summary());
    let (he, rlwe) = (choice.he.as_ref().unwrap(), choice.rlwe.as_ref().unwrap());
    assert!(rlwe.seconds < he.seconds && he.seconds < choice.ot.seconds);
    assert_eq!((choice.rlwe_products, choice.rlwe_on_ot), (8, 0));
    let summary = choice.summary();
    assert!(
        summary.contains("SCI_OT") && summary.contains("SCI_HE") && summary.contains("SCI_RLWE"),
        "{summary}"
    );
}

#[test]
fn the_backend_is_chosen_per_layer() {
    // The digits LeNet's classifier head (a small matmul) costs less as OTs than as
    // RLWE ciphertexts: the plan runs the convolutions by RLWE and the head by OT,
    // records the choice per instruction, and is predicted faster than RLWE throughout.
    let (c, choice) = choose(
        &options("digits/digits_lenet.onnx"),
        &NetProfile::LAN,
        false,
    )
    .expect("compiles");
    assert_eq!(choice.chosen, "rlwe", "{}", choice.summary());
    assert_eq!((choice.rlwe_products, choice.rlwe_on_ot), (2, 1));
    let p = &c.program;
    let on = |b| p.ids().filter(|&v| p.product_backend(v) == Some(b)).count();
    assert_eq!((on(Backend::Rlwe), on(Backend::Ot)), (2, 1));
    let all_rlwe = sci_compiler::compile(
        &Options {
            backend: Backend::Rlwe,
            ot: Some(p.params().ot),
            ..options("digits/digits_lenet.onnx")
        },
        false,
    )
    .expect("compiles");
    let (throughout, _) = sci_compiler::auto::estimate(&all_rlwe.program, &NetProfile::LAN);
    assert!(
        choice.rlwe.as_ref().unwrap().seconds < throughout.seconds,
        "{}",
        choice.summary()
    );
    // The plan file keeps the per-instruction choice.
    let plan = sci_ir::Plan::new(p.clone());
    let back = sci_ir::Plan::from_bytes(&plan.to_bytes()).expect("decodes");
    assert_eq!(back.program(), p);
}

#[test]
fn without_ot_the_engine_is_chosen_too() {
    use sci_ir::OtKind;
    // The digits LeNet moves about 1 MiB: the silent engine's set-up (1.4 MB each way)
    // and extra rounds cost more than its cheaper OTs save, so IKNP wins on the WAN...
    let (c, choice) = choose(
        &options("digits/digits_lenet.onnx"),
        &NetProfile::WAN,
        false,
    )
    .expect("compiles");
    assert_eq!(choice.candidates.len(), 5, "{}", choice.summary());
    assert_eq!((choice.chosen, choice.engine), ("rlwe", "iknp"));
    assert_eq!(c.program.params().ot, OtKind::Iknp);
    // ... with the IKNP radix, not the silent one the program was compiled with.
    let modulus = sci_ir::cost::predict::modulus(&c.program);
    assert_eq!(
        c.program.params().mill_radix,
        sci_ir::cost::radix::default_radix(OtKind::Iknp, modulus)
    );
    let best = choice
        .candidates
        .iter()
        .map(|e| e.seconds)
        .fold(f64::INFINITY, f64::min);
    assert_eq!(
        choice.rlwe.as_ref().unwrap().seconds,
        best,
        "{}",
        choice.summary()
    );
    // ... while MiniONN under SCI_HE, whose bytes are mostly its non-linear layers',
    // goes to the silent engine.
    let (c, choice) = choose(
        &options("bench/minionn_cifar.onnx"),
        &NetProfile::WAN,
        false,
    )
    .expect("compiles");
    assert_eq!((choice.chosen, choice.engine), ("rlwe", "silent"));
    assert_eq!(c.program.params().ot, OtKind::Silent);
    assert_eq!(choice.he.as_ref().unwrap().engine, "silent");
    assert!(choice.summary().contains("SCI_HE on iknp"));
    // A given engine is kept: two candidates.
    let opts = sci_compiler::Options {
        ot: Some(OtKind::Iknp),
        ..options("bench/minionn_cifar.onnx")
    };
    let (c, choice) = choose(&opts, &NetProfile::WAN, false).expect("compiles");
    assert_eq!(choice.candidates.len(), 3);
    assert_eq!((choice.chosen, choice.engine), ("rlwe", "iknp"));
    assert_eq!(c.program.params().ot, OtKind::Iknp);
}

fn sci_compile(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sci-compile"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn the_binary_prints_both_predictions_and_the_network_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("p.bin");
    let report = dir.path().join("r.json");
    let model = testdata("digits/digits_lenet.onnx");
    let (plan, report, model) = (
        plan.to_str().unwrap(),
        report.to_str().unwrap(),
        model.to_str().unwrap(),
    );
    let out = sci_compile(&[
        model,
        "-o",
        plan,
        "--backend",
        "auto",
        "--net",
        "wan",
        "--report",
        report,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("backend auto on 40 MB/s, 80 ms RTT"),
        "{stdout}"
    );
    assert!(stdout.contains("chose SCI_"), "{stdout}");
    assert!(stdout.contains("predicted network time on"), "{stdout}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    assert!(r["net"]["total_seconds"].as_f64().unwrap() > 0.0);
    assert!(r["backend_choice"]["ot"]["seconds"].as_f64().unwrap() > 0.0);
    let layer_secs: f64 = r["layers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["seconds"].as_f64())
        .sum();
    let (total, setup) = (
        r["net"]["total_seconds"].as_f64().unwrap(),
        r["net"]["setup_seconds"].as_f64().unwrap(),
    );
    assert!((layer_secs + setup - total).abs() < 1e-6 * total.max(1.0));

    // Without --net, auto cannot choose; a bad profile is named.
    for (args, want) in [
        (vec![model, "-o", plan, "--backend", "auto"], "give --net"),
        (
            vec![model, "-o", plan, "--net", "fast"],
            "expected lan, wan",
        ),
        (vec![model, "-o", plan, "--backend", "xx"], "or auto"),
    ] {
        let out = sci_compile(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_ne!(out.status.code(), Some(101), "{args:?} panicked: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn secret_matmuls_are_chosen_per_layer_too() {
    // The zoo ViT's attention products (2 heads × 2 layers × Q·Kᵀ and softmax·V, 17×8
    // by 8×17 and 17×17 by 17×8): on the LAN the OT-based products move fewer bytes
    // than two RLWE cross terms, so auto keeps them on OT; on the WAN RLWE's one round
    // trip (OT's secmul waits twice) wins, so they stay on RLWE. Either way, moving
    // any one of them to the other backend is predicted slower.
    let model = "zoo/vit_tiny_legacy_o17.onnx";
    for (net, on_rlwe) in [(NetProfile::LAN, 0), (NetProfile::WAN, 8)] {
        let (c, choice) = choose(&options(model), &net, false).expect("compiles");
        assert_eq!(choice.chosen, "rlwe", "{}", choice.summary());
        let p = &c.program;
        let secret: Vec<_> = p
            .ids()
            .filter(|&v| {
                p.is_secret_product(v) && matches!(p.instr(v).op, sci_ir::Op::MatMul { .. })
            })
            .collect();
        assert_eq!(secret.len(), 8);
        let rlwe = |p: &sci_ir::Program, v| p.secret_product_backend(v) == Some(Backend::Rlwe);
        assert_eq!(
            secret.iter().filter(|&&v| rlwe(p, v)).count(),
            on_rlwe,
            "{net}"
        );
        let (best, _) = sci_compiler::auto::estimate(p, &net);
        for &v in &secret {
            let mut other = p.clone();
            let flip = if rlwe(p, v) {
                Backend::Ot
            } else {
                Backend::Rlwe
            };
            other.set_product_backend(v, flip).unwrap();
            let (e, _) = sci_compiler::auto::estimate(&other, &net);
            assert!(e.seconds >= best.seconds, "{net}: %{}", p.name(v));
        }
    }
}

#[test]
fn rlwe_leaves_what_it_cannot_flood_on_ot() {
    // At ℓ = 56 no RLWE parameter set takes the width (`sci_ir::rlwe::MAX_BITS` = 48):
    // `--backend rlwe` keeps every product, the secret matmuls too, on OT; at ℓ = 32
    // the ViT's 8 secret matmuls run by RLWE and its elementwise secret products by OT;
    // its 19 products by weights by RLWE (the two GELUs' products by 1/√2 and ½ are
    // gone into their splines, `fuse_gelu`).
    let model = "zoo/vit_tiny_legacy_o17.onnx";
    let counts = |bits| {
        let c = sci_compiler::compile(
            &Options {
                backend: Backend::Rlwe,
                quantization: Quantization::Fixed {
                    bits: Some(bits),
                    scale: Some(12),
                },
                ..options(model)
            },
            false,
        )
        .expect("compiles");
        let p = c.program;
        let on = |b, matmul: bool| {
            p.ids()
                .filter(|&v| {
                    p.secret_product_backend(v) == Some(b)
                        && matches!(p.instr(v).op, sci_ir::Op::MatMul { .. }) == matmul
                })
                .count()
        };
        let weights = p
            .ids()
            .filter(|&v| p.product_backend(v) == Some(Backend::Rlwe))
            .count();
        let muls = on(Backend::Ot, false);
        assert!(muls > 0 && on(Backend::Rlwe, false) == 0, "{bits}");
        (weights, on(Backend::Rlwe, true), on(Backend::Ot, true))
    };
    assert_eq!(counts(56), (0, 0, 8));
    assert_eq!(counts(32), (19, 8, 0));
}
