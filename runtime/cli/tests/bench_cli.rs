//! The `sci-bench` binary: its default OT engine (silent, as `sci-compile`'s) and the
//! paper's per-instance formula beside the measured bits on each engine.

use std::process::Command;

/// `sci-bench ARGS --json`'s one JSON object.
fn bench(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_sci-bench"))
        .args(args)
        .arg("--json")
        .output()
        .expect("sci-bench runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn the_default_engine_is_silent_and_iknp_is_named() {
    // Chosen-message OT of 32-bit messages: the sender's 2ℓ bits and the receiver's λ
    // on IKNP, its one choice bit on silent (the set-up on top of both).
    let silent = bench(&["ot", "--n", "4096", "--bits", "32"]);
    assert_eq!(silent["ot"], "silent");
    assert_eq!(silent["formula_bits_per_op"], 65.0);
    assert!(silent["bits_per_op"].as_f64().unwrap() > 65.0, "{silent}");
    let iknp = bench(&["ot", "--n", "4096", "--bits", "32", "--ot", "iknp"]);
    assert_eq!(iknp["ot"], "iknp");
    assert_eq!(iknp["formula_bits_per_op"], 192.0);
    // Exactly the formula's bytes plus one lane's IKNP set-up (base OTs: 4128 bytes).
    assert_eq!(iknp["bytes"], 192 / 8 * 4096 + 4128, "{iknp}");
    // The (16 1)-OT of 2-bit messages on silent: ⌈log₂ 16⌉ choice bits up, 16·2 down.
    let kk = bench(&["kkot", "--n", "1024", "--bits", "2", "--kkot-n", "16"]);
    assert_eq!(kk["ot"], "silent");
    assert_eq!(kk["formula_bits_per_op"], 4.0 + 16.0 * 2.0);
    // A protocol: the cost model's transcript, IKNP's bits as they are, silent's
    // amortised (ReLU at ℓ = 32, the silent radix m = 2: about 327 bits).
    let relu = |ot| bench(&["relu", "--bits", "32", "--n", "1024", "--ot", ot]);
    let (s, i) = (relu("silent"), relu("iknp"));
    let ms = sci_ir::cost::select::relu(sci_ir::params::Modulus::Pow2(32), 2, 1024);
    let want = sci_ir::cost::ferret::amortized_bits(&ms) / 1024.0;
    assert_eq!(s["formula_bits_per_op"].as_f64().unwrap(), want);
    assert!((320.0..335.0).contains(&want), "{want}");
    let mi = sci_ir::cost::select::relu(sci_ir::params::Modulus::Pow2(32), 4, 1024);
    assert_eq!(i["formula_bits_per_op"], mi.bits() as f64 / 1024.0);
}

/// `sigmoid` and `tanh` at ℓ = 32, s = 12 cost what the cost model says.
/// `rsqrt` at ℓ = 32, s = 12 costs what the cost model says.
#[test]
fn rsqrt_costs_the_model() {
    let b = bench(&["rsqrt", "--n", "256", "--ot", "iknp"]);
    assert_eq!(b["protocol"], "rsqrt");
    let p = sci_ir::math::RsqrtParams::new(32, 12).unwrap();
    let t = sci_ir::cost::math::rsqrt(&p, 4, 256, true);
    assert_eq!(b["formula_bits_per_op"], t.bits() as f64 / 256.0, "{b}");
}

/// `erf`, `gelu` and `gelu-tanh` (`proto::spline`) at ℓ = 32, s = 12 cost what the cost
/// model says.
#[test]
fn splines_cost_the_model() {
    use sci_ir::spline::{SplineFn, SplineParams};
    for (name, func) in [
        ("erf", SplineFn::Erf),
        ("gelu", SplineFn::Gelu),
        ("gelu-tanh", SplineFn::GeluTanh),
    ] {
        let b = bench(&[name, "--n", "256", "--ot", "iknp"]);
        assert_eq!(b["protocol"], name);
        let p = SplineParams::new(func, 32, 12).unwrap();
        let t = sci_ir::cost::math::spline(&p, 4, 256, true);
        assert_eq!(b["formula_bits_per_op"], t.bits() as f64 / 256.0, "{b}");
    }
}

/// `softmax` of 32 lines of 16 at ℓ = 32, s = 12 costs what the cost model says, with
/// exact comparisons and with `--narrow`.
#[test]
fn softmax_costs_the_model() {
    let p = sci_ir::math::SoftmaxParams::new(32, 12, 16).unwrap();
    for (narrow, extra) in [(false, None), (true, Some("--narrow"))] {
        let mut args = vec!["softmax", "--n", "32", "--d", "16", "--ot", "iknp"];
        args.extend(extra);
        let b = bench(&args);
        assert_eq!(b["protocol"], "softmax");
        let t = sci_ir::cost::math::softmax(&p, 4, 32, !narrow, true);
        assert_eq!(b["formula_bits_per_op"], t.bits() as f64 / 32.0, "{b}");
    }
}

#[test]
fn sigmoid_and_tanh_cost_the_model() {
    for op in ["sigmoid", "tanh"] {
        let b = bench(&[op, "--n", "512", "--ot", "iknp"]);
        assert_eq!(b["protocol"], op);
        let p = sci_ir::math::SmoothParams::of_op(sci_ir::math::Smooth::Sigmoid, 32, 12).unwrap();
        let t = sci_ir::cost::math::smooth(&p, 4, 512, true);
        assert_eq!(b["formula_bits_per_op"], t.bits() as f64 / 512.0, "{b}");
    }
}

/// `exp` (8-bit digits) and `recip` at ℓ = 32, s = 12: the cost model's bits per element,
/// and on the wire exactly those plus the same OT set-up as `sigmoid`'s (whose transcript
/// the model pins elsewhere).
#[test]
fn exp_and_recip_cost_the_model() {
    let n = 512;
    let setup = |b: &serde_json::Value| {
        b["bytes"].as_f64().unwrap() - b["formula_bits_per_op"].as_f64().unwrap() * n as f64 / 8.0
    };
    let sig = bench(&["sigmoid", "--n", "512", "--ot", "iknp"]);
    let e = bench(&["exp", "--n", "512", "--ot", "iknp"]);
    assert_eq!(
        (e["protocol"].as_str(), e["digit"].as_u64()),
        (Some("exp"), Some(8))
    );
    let p = sci_ir::math::ExpParams::new(32, 12, 12, 8).unwrap();
    let t = sci_ir::cost::math::exp_neg(&p, 4, n, true);
    assert_eq!(e["formula_bits_per_op"], t.bits() as f64 / n as f64, "{e}");
    assert_eq!(setup(&e), setup(&sig), "{e} {sig}");
    let r = bench(&["recip", "--n", "512", "--ot", "iknp"]);
    assert_eq!(r["protocol"], "recip");
    let p = sci_ir::math::RecipParams::new(32, 12).unwrap();
    let t = sci_ir::cost::math::recip(&p, 4, n, true);
    assert_eq!(r["formula_bits_per_op"], t.bits() as f64 / n as f64, "{r}");
    assert_eq!(setup(&r), setup(&sig), "{r} {sig}");
}

#[test]
fn secret_products_cost_twice_a_product_with_known_weights() {
    // Elementwise at ℓ = 32 on IKNP: 2ℓλ + ℓ(ℓ+1) bits per element, both directions'
    // IKNP set-ups on top (each party is an OT sender once).
    let b = bench(&[
        "secmul", "--n", "4096", "--cols", "1", "--outs", "1", "--ot", "iknp",
    ]);
    assert_eq!(b["protocol"], "secmul");
    assert_eq!(b["formula_bits_per_op"], 9248.0);
    assert_eq!(b["bytes"], 9248 / 8 * 4096 + 2 * 4128, "{b}");
    assert_eq!(b["rounds"], 3, "{b}");
}
