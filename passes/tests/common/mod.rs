//! Helpers shared by the pass tests: deterministic random inputs and output comparison.
#![allow(dead_code)]

use sci_ir::{Encoding, Program, Tensor, interp};

/// Deterministic pseudo-random numbers (the workspace's test generator).
pub use sci_testkit::Lcg;

/// Random inputs for every input of `p`: f32 in [-1, 1), or integers of magnitude at
/// most `2^(s+1)` for a fixed-point input at scale `s` (i.e. reals in [-2, 2]).
pub fn random_inputs(p: &Program, seed: u64) -> Vec<Tensor> {
    let mut rng = Lcg(seed);
    p.inputs()
        .iter()
        .map(|&i| {
            let ty = p.ty(i);
            let n = ty.numel();
            match ty.encoding() {
                Encoding::Real => {
                    Tensor::real(ty.shape().to_vec(), (0..n).map(|_| rng.f32()).collect()).unwrap()
                }
                enc => {
                    let m = 1i64 << (ty.scale() + 1);
                    let v: Vec<i64> = (0..n).map(|_| rng.int(m)).collect();
                    Tensor::signed(enc, ty.shape().to_vec(), &v).unwrap()
                }
            }
        })
        .collect()
}

/// Asserts that `a` and `b` compute bit-identical outputs on `trials` random inputs.
pub fn assert_same_outputs(a: &Program, b: &Program, trials: u64) {
    for seed in 0..trials {
        let inputs = random_inputs(a, seed + 1);
        let ya = interp::run(a, &inputs).unwrap();
        let yb = interp::run(b, &inputs).unwrap();
        assert_eq!(ya, yb, "outputs differ on inputs of seed {}", seed + 1);
    }
}

/// Asserts that the f32 outputs of `a` and `b` agree within `tol` (absolute plus
/// relative) on `trials` random inputs.
pub fn assert_close_outputs(a: &Program, b: &Program, trials: u64, tol: f32) {
    for seed in 0..trials {
        let inputs = random_inputs(a, seed + 1);
        let ya = interp::run(a, &inputs).unwrap();
        let yb = interp::run(b, &inputs).unwrap();
        assert_eq!(ya.len(), yb.len());
        for (ta, tb) in ya.iter().zip(&yb) {
            assert_eq!(ta.shape(), tb.shape());
            for (x, y) in ta.as_f32().unwrap().iter().zip(tb.as_f32().unwrap()) {
                assert!(
                    (x - y).abs() <= tol * (1.0 + x.abs()),
                    "{x} vs {y} (seed {})",
                    seed + 1
                );
            }
        }
    }
}

/// The text of a program before and after a pass, for snapshots.
pub fn before_after(pass: &str, before: &Program, after: &Program) -> String {
    format!(
        "{}\n# ---- after {pass} ----\n{}",
        before.to_text(),
        after.to_text()
    )
}
