//! The seeds of the fuzz target `plan` (`fuzz/corpus/plan`): plan files without their
//! trailing SHA-256 checksum, which the fuzz entry (`sci_ir::fuzz_entry::plan`) appends
//! to every input so that mutants reach the decoder instead of failing the checksum.
//! `plan_seeds_are_current` checks that every seed opens as a plan of this build's
//! format (a seed of an older format stops at the version check and fuzzes nothing);
//! the ignored `write_plan_seed_corpus` records them again from the testdata models
//! (`cargo test --release -p sci-compiler --test plan_corpus -- --ignored`), to be run
//! whenever the plan format changes.

use sci_compiler::{Options, Quantization};
use sci_ir::{Backend, OtKind, Plan};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> PathBuf {
    root().join("fuzz/corpus/plan")
}

/// A seed: file name, the model it is compiled from (path from the repository root),
/// inputs per inference, backend, whether it is the client's view, and the OT engine.
struct Seed {
    name: String,
    model: &'static str,
    batch: usize,
    backend: Backend,
    client: bool,
    ot: OtKind,
}

/// testdata models whose plans (server file, and for those marked, the client's view
/// as well) are seeds: one per operator family the compiler lowers, both backends.
const MODELS: &[(&str, bool)] = &[
    ("ops/add_const_scalar_o7", true),
    ("ops/argmax_axis1_keepdims_o11", false),
    ("ops/avgpool_k2s2_o7", false),
    ("ops/batchnorm_2d_o15", true),
    ("ops/cast_float_to_float_o9", false),
    ("ops/clip_min_only_o13", false),
    ("ops/computed_weights_o13", true),
    ("ops/concat_o21", false),
    ("ops/dropout_o21", true),
    ("ops/flatten_o21", false),
    ("ops/gemm_nobias_o13", false),
    ("ops/globalavgpool_o7", true),
    ("ops/identity_o7", false),
    ("ops/logsoftmax_o13", false),
    ("ops/matmul_const_act_o13", true),
    ("ops/oldstyle_ir3_o7", false),
    ("ops/pad_attr_o2", false),
    ("ops/relu_2d_o13", true),
    ("ops/reshape_neg1_o5", false),
    ("ops/shape_subgraph_reshape_o9", false),
    ("ops/softmax_o11", true),
    ("ops/squeeze_input_noaxes_o13", false),
    ("ops/sum_one_input_o8", false),
    ("ops/transpose_2d_o13", true),
    ("ops/unsqueeze_attr_o7", false),
    ("onnx-node/test_averagepool_2d_default", true),
    ("onnx-node/test_basic_conv_with_padding", false),
    ("onnx-node/test_constant_pad", false),
    ("onnx-node/test_conv_with_strides_padding", true),
    ("onnx-node/test_div_example", false),
    ("onnx-node/test_globalaveragepool", false),
    ("onnx-node/test_maxpool_2d_default", true),
    ("onnx-node/test_mul_example", false),
    ("onnx-node/test_sub_example", false),
];

fn seeds() -> Vec<Seed> {
    let mut out = Vec::new();
    let mut push = |name: String, model, batch, backend, client: bool| {
        if client {
            out.push(Seed {
                name: format!("{name}-client"),
                model,
                batch,
                backend,
                client,
                ot: OtKind::Iknp,
            });
        }
        out.push(Seed {
            name,
            model,
            batch,
            backend,
            client: false,
            ot: OtKind::Iknp,
        });
    };
    for &(path, client) in MODELS {
        let name = path.rsplit('/').next().unwrap().to_string();
        push(name, path, 1, Backend::Ot, client);
    }
    let lenet = "digits/digits_lenet";
    push("digits_lenet".into(), lenet, 1, Backend::Ot, false);
    push(
        "digits_mlp_b16".into(),
        "digits/digits_mlp",
        16,
        Backend::Ot,
        true,
    );
    push("digits_lenet_he".into(), lenet, 1, Backend::He, true);
    push(
        "conv_strides_he".into(),
        "onnx-node/test_conv_with_strides_padding",
        1,
        Backend::He,
        false,
    );
    // The silent engine (and its radix) in the plan, server file and client view.
    for client in [false, true] {
        out.push(Seed {
            name: format!("digits_lenet_silent{}", if client { "-client" } else { "" }),
            model: lenet,
            batch: 1,
            backend: Backend::Ot,
            client,
            ot: OtKind::Silent,
        });
    }
    out
}

/// The plan file of `seed`, compiled at the defaults.
fn plan_file(seed: &Seed) -> Vec<u8> {
    let compiled = sci_compiler::compile(
        &Options {
            model: root().join("testdata").join(format!("{}.onnx", seed.model)),
            outputs: Vec::new(),
            quantization: Quantization::Fixed {
                bits: None,
                scale: None,
            },
            mill_radix: None,
            ot: Some(seed.ot),
            threads: None,
            backend: seed.backend,
            batch: seed.batch,
        },
        false,
    )
    .unwrap_or_else(|e| panic!("{} (batch {}): {e:?}", seed.model, seed.batch));
    let plan = Plan::new(compiled.program);
    if seed.client {
        plan.client_view().to_bytes()
    } else {
        plan.to_bytes()
    }
}

/// The golden plan of `ir/tests/golden`, also a seed.
const GOLDEN: (&str, &str) = ("golden-lenet_ring37", "ir/tests/golden/lenet_ring37.plan");

#[test]
fn plan_seeds_are_current() {
    let mut n = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&Sha256::digest(&bytes));
        if let Err(e) = Plan::from_bytes(&bytes) {
            panic!(
                "fuzz seed {} no longer opens ({e}): run \
                 `cargo test --release -p sci-compiler --test plan_corpus -- --ignored`",
                path.display()
            );
        }
        n += 1;
    }
    assert!(n > seeds().len(), "{n} seeds in {}", corpus().display());
}

#[test]
#[ignore = "writes fuzz/corpus/plan; run by hand when the plan format changes"]
fn write_plan_seed_corpus() {
    let dir = corpus();
    for entry in std::fs::read_dir(&dir).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let strip = |bytes: Vec<u8>| bytes[..bytes.len() - 32].to_vec();
    for seed in seeds() {
        std::fs::write(dir.join(&seed.name), strip(plan_file(&seed))).unwrap();
    }
    let golden = std::fs::read(root().join(GOLDEN.1)).unwrap();
    std::fs::write(dir.join(GOLDEN.0), strip(golden)).unwrap();
}
