//! Autotuning on the digits models of `testdata/` (validation split).

use sci_ir::Program;
use sci_ir::dataset::Dataset;
use sci_ir::interp::Magnitude;
use sci_passes::autotune::{AutotuneConfig, autotune, predict, samples};
use sci_passes::{Pipeline, Quantize};
use std::path::PathBuf;

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(rel)
}

fn float_program(model: &str, outputs: Option<&[String]>) -> Program {
    let (p, _) = sci_frontend::load(testdata(model))
        .unwrap()
        .lower(outputs)
        .unwrap();
    Pipeline::float_stage().run(&p).unwrap()
}

#[test]
fn digits_models_meet_the_tolerance_at_the_smallest_ring() {
    let val = Dataset::load(testdata("digits/val")).unwrap();
    let skl_out = ["out_activations_result".to_string()];
    let models: [(&str, Option<&[String]>); 4] = [
        ("digits/digits_lenet.onnx", None),
        ("digits/digits_resnet.onnx", None),
        ("digits/digits_mlp.onnx", None),
        ("digits/digits_skl_mlp.onnx", Some(&skl_out)),
    ];
    let cfg = AutotuneConfig::default();
    for (m, out) in models {
        let float = float_program(m, out);
        let t = autotune(&float, &val, &cfg).unwrap();
        println!("{m}\n{}", t.table());
        assert!(t.accuracy >= t.float_accuracy - cfg.tolerance, "{m}");
        assert_eq!(t.accuracy, t.verified_accuracy, "{m}");
        // The choice is the smallest admissible ℓ of the table.
        let min_bits = t
            .trials
            .iter()
            .filter(|r| r.admissible)
            .filter_map(|r| r.bits)
            .min();
        assert_eq!(min_bits, Some(t.bits), "{m}");
        // ℓ = 1 + bits(M) + margin, where M bounds every value seen.
        let chosen = t.trials.iter().find(|r| r.scale == t.scale).unwrap();
        let needed = chosen.needed_bits.unwrap();
        let m = chosen.max_magnitude.unwrap();
        assert_eq!(needed, 129 - m.leading_zeros(), "{m}");
        assert_eq!(t.bits, (needed + cfg.margin_bits).max(2 * t.scale + 1));
        let narrow = Pipeline::fixed_stage(Some(Quantize {
            bits: needed - 1,
            scale: t.scale,
        }))
        .run(&float)
        .unwrap();
        let wide = Pipeline::fixed_stage(Some(Quantize {
            bits: 64,
            scale: t.scale,
        }))
        .run(&float)
        .unwrap();
        let xs = samples(&float, &val).unwrap();
        let (_, rn) = predict(&narrow, &xs, true).unwrap();
        let (_, rw) = predict(&wide, &xs, true).unwrap();
        let rw = rw.unwrap();
        let raw_max = rw
            .iter()
            .map(|r| match r {
                Magnitude::Int(v) => u128::from(*v),
                Magnitude::Real(_) => 0,
            })
            .max()
            .unwrap();
        assert!(raw_max <= m);
        if raw_max == m {
            // M is a value itself: one bit less than needed overflows it, and the values
            // computed at that width differ from the 64-bit ones.
            assert_ne!(rn.unwrap(), rw, "{m}: ℓ = {} should overflow", needed - 1);
        }
    }
}

#[test]
fn impossible_tolerance_is_a_clear_error() {
    let val = Dataset::load(testdata("digits/val")).unwrap();
    let float = float_program("digits/digits_mlp.onnx", None);
    let cfg = AutotuneConfig {
        scales: vec![1],
        tolerance: 0.0,
        margin_bits: 1,
    };
    let e = autotune(&float, &val, &cfg).unwrap_err().to_string();
    assert!(e.contains("no scale reaches"), "{e}");
}
