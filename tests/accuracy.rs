//! Secure inference on the digits test split: the LeNet compiled as `sci-demo` compiles
//! it (ℓ and s autotuned on the validation split) is run by both parties (two threads
//! over loopback TCP, one connection for all images) on every image of the test split;
//! every output must equal the reference interpreter's bit for bit, so the secure top-1
//! accuracy equals the fixed-point accuracy exactly. Both are printed with the float
//! accuracy (`cargo test --release -p sci --test accuracy -- --nocapture`), under SCI_OT
//! and under SCI_HE (`--backend he`: the field of the shares autotuned to ℓ = 17, the
//! convolutions and the matrix product by HE, one key set-up for all 360 images).

use sci_compiler::{Options, Quantization};
use sci_ir::npy::Array;
use sci_ir::{Plan, Tensor, fixed};
use sci_runtime::exec::{io, run_pair};
use sci_runtime::net::tcp::TcpConfig;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn digits() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/digits")
}

#[test]
fn secure_accuracy_equals_fixed_point_accuracy_on_the_test_split() {
    test_split(sci_ir::Backend::Ot);
}

#[test]
fn he_secure_accuracy_equals_fixed_point_accuracy_on_the_test_split() {
    test_split(sci_ir::Backend::He);
}

/// The test split under `backend` (module docs).
fn test_split(backend: sci_ir::Backend) {
    let dir = digits();
    let compiled = sci_compiler::compile(
        &Options {
            model: dir.join("digits_lenet.onnx"),
            outputs: Vec::new(),
            quantization: Quantization::Autotune {
                data: dir.join("val"),
                config: Default::default(),
            },
            mill_radix: None,
            ot: None,
            threads: None,
            backend,
            batch: 1,
        },
        false,
    )
    .unwrap();
    let plan = Plan::new(compiled.program);
    let program = plan.program();
    let input = program.inputs()[0];
    let ty = program.ty(input).clone();
    let x = Array::read(dir.join("test/x.npy")).unwrap();
    let labels = Array::read(dir.join("test/y.npy"))
        .unwrap()
        .to_i64()
        .unwrap();
    let per: usize = ty.numel();
    let xs = x.to_f32();
    assert_eq!(xs.len(), per * labels.len());
    let inputs: Vec<Vec<Tensor>> = xs
        .chunks(per)
        .map(|img| {
            let t = Tensor::real(ty.shape().to_vec(), img.to_vec()).unwrap();
            vec![fixed::encode_tensor(&t, ty.scale(), ty.encoding()).unwrap()]
        })
        .collect();
    let t0 = Instant::now();
    let clear: Vec<Vec<Tensor>> = inputs
        .iter()
        .map(|i| sci_ir::interp::run(program, i).unwrap())
        .collect();
    let t_clear = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let run = run_pair(&plan, inputs, 1, &TcpConfig::default(), &mut |_| {}).unwrap();
    let t_secure = t1.elapsed().as_secs_f64();
    assert_eq!(run.outputs.len(), labels.len());
    let mut correct = (0, 0);
    for (k, ((sec, clr), &y)) in run.outputs.iter().zip(&clear).zip(&labels).enumerate() {
        assert_eq!(
            sec, clr,
            "image {k}: secure output differs from the interpreter"
        );
        correct.0 += usize::from(io::predicted_classes(&sec[0]) == [y]);
        correct.1 += usize::from(io::predicted_classes(&clr[0]) == [y]);
    }
    let n = labels.len();
    let bytes: u64 = run
        .client
        .iter()
        .map(|r| r.totals.bytes_sent + r.totals.bytes_recv)
        .sum();
    println!(
        "digits LeNet, {backend}, ℓ = {}, s = {}: secure top-1 {}/{n} = {:.2}%, fixed-point interpreter {}/{n} = {:.2}%, float (onnxruntime) 98.06%",
        compiled.bits,
        compiled.scale,
        correct.0,
        100.0 * correct.0 as f64 / n as f64,
        correct.1,
        100.0 * correct.1 as f64 / n as f64,
    );
    println!(
        "{n} secure inferences in {t_secure:.2} s ({:.1} ms each, {:.1} KiB each); interpreter {t_clear:.3} s",
        1e3 * t_secure / n as f64,
        bytes as f64 / 1024.0 / n as f64
    );
    assert_eq!(correct.0, correct.1);
}
