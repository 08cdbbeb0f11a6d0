//! `sci-demo`: the whole of sci in one command. Compiles the bundled digits LeNet
//! (`testdata/digits/digits_lenet.onnx`), autotuning the bit width and scale on the
//! bundled validation split, runs the server and the client in this process over
//! loopback TCP on a bundled test image, and prints the prediction, the true label, the
//! wall time and the communication of every layer.
//!
//! The model, the validation split and the test images are compiled into the binary
//! (about 110 KiB) and unpacked into a temporary directory for the run, so the demo
//! works from any directory, also when installed with `cargo install`.
//!
//! ```text
//! cargo run --release --bin sci-demo [-- --digit D] [--bits L --scale S] [--threads T]
//! ```

use anyhow::{Context, Result, anyhow};
use clap::Parser;
use sci_compiler::{Options, Quantization};
use sci_ir::Plan;
use sci_runtime::exec::{self, io};
use sci_runtime::net::tcp::TcpConfig;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(about = "Secure inference of the bundled digits LeNet on a bundled test image")]
struct Cli {
    /// Which bundled test image: testdata/digits/samples/digit_D.npy (0-9).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=9))]
    digit: u8,
    /// Ring bit width ℓ (with --scale; default: autotuned on the validation split).
    #[arg(long, requires = "scale")]
    bits: Option<u32>,
    /// Scale s (with --bits).
    #[arg(long, requires = "bits")]
    scale: Option<u32>,
    /// Threads (TCP connections) per party.
    #[arg(long, default_value_t = 1)]
    threads: u32,
    /// The OT engine: `silent` (Ferret; sci-compile's default) or `iknp` (the paper's
    /// IKNP extension: 128 bits per OT instead of about 1, but a set-up of 24 KiB
    /// instead of 1.4 MB each way, which on this small model is most of the bytes).
    #[arg(long, value_name = "iknp|silent")]
    ot: Option<sci_ir::OtKind>,
}

/// The bundled files, by path under `testdata/digits/`.
macro_rules! bundled {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/digits/", $path)))),*]
    };
}

const BUNDLED: &[(&str, &[u8])] = bundled!(
    "digits_lenet.onnx",
    "val/x.npy",
    "val/y.npy",
    "samples/labels.json",
    "samples/digit_0.npy",
    "samples/digit_1.npy",
    "samples/digit_2.npy",
    "samples/digit_3.npy",
    "samples/digit_4.npy",
    "samples/digit_5.npy",
    "samples/digit_6.npy",
    "samples/digit_7.npy",
    "samples/digit_8.npy",
    "samples/digit_9.npy",
);

/// A temporary directory holding the bundled files, removed when dropped.
struct Unpacked(PathBuf);

impl Unpacked {
    fn new() -> Result<Unpacked> {
        let dir = std::env::temp_dir().join(format!("sci-demo-{}", std::process::id()));
        let u = Unpacked(dir);
        for (path, bytes) in BUNDLED {
            let p = u.0.join(path);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&p, bytes).with_context(|| format!("writing {}", p.display()))?;
        }
        Ok(u)
    }
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() {
    if let Err(e) = run(&Cli::parse()) {
        eprintln!("sci-demo: error: {e:#}");
        std::process::exit(1);
    }
}

/// `path` shown relative to the unpacked directory, as under `testdata/digits/`.
fn shown(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    format!("testdata/digits/{}", rel.display())
}

fn run(cli: &Cli) -> Result<()> {
    let unpacked = Unpacked::new()?;
    let dir = unpacked.0.clone();
    let model = dir.join("digits_lenet.onnx");
    let quantization = match (cli.bits, cli.scale) {
        (Some(bits), Some(scale)) => Quantization::Fixed {
            bits: Some(bits),
            scale: Some(scale),
        },
        _ => Quantization::Autotune {
            data: dir.join("val"),
            config: Default::default(),
        },
    };
    let t0 = Instant::now();
    let compiled = sci_compiler::compile(
        &Options {
            model: model.clone(),
            outputs: Vec::new(),
            quantization,
            mill_radix: None,
            ot: cli.ot,
            threads: Some(cli.threads),
            backend: sci_ir::Backend::Ot,
            batch: 1,
        },
        false,
    )
    .with_context(|| format!("compiling {}", shown(&dir, &model)))?;
    println!(
        "compiled {} in {:.2} s: ring Z_2^{}, scale {}, {} OT{}",
        shown(&dir, &model),
        t0.elapsed().as_secs_f64(),
        compiled.bits,
        compiled.scale,
        compiled.program.params().ot,
        if compiled.tuning.is_some() {
            " (autotuned on testdata/digits/val)"
        } else {
            ""
        }
    );
    let plan = Plan::new(compiled.program);
    let image = dir.join(format!("samples/digit_{}.npy", cli.digit));
    let labels: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("samples/labels.json")).context("reading labels.json")?,
    )
    .context("parsing labels.json")?;
    let label = labels[format!("digit_{}.npy", cli.digit)]["label"]
        .as_i64()
        .ok_or_else(|| anyhow!("labels.json has no label for digit_{}.npy", cli.digit))?;
    let inputs = io::load_inputs(
        plan.program(),
        &[io::FileArg::parse(&image.to_string_lossy())],
    )?;
    let t1 = Instant::now();
    let mut run = exec::run_pair(
        &plan,
        vec![inputs],
        cli.threads,
        &TcpConfig::default(),
        &mut |_| {},
    )?;
    let wall = t1.elapsed().as_secs_f64();
    let (Some(outs), Some(server)) = (run.outputs.pop(), run.server.pop()) else {
        return Err(anyhow!("internal error: no result"));
    };
    let logits = outs
        .first()
        .ok_or_else(|| anyhow!("the model has no output"))?;
    let predicted = io::predicted_classes(logits);
    println!("input: {} (true label {label})", shown(&dir, &image));
    println!(
        "secure prediction: {} ({})",
        predicted.first().copied().unwrap_or(-1),
        if predicted.first() == Some(&label) {
            "correct"
        } else {
            "wrong"
        }
    );
    println!("wall time (both parties, connection and OT set-up included): {wall:.3} s");
    println!("\ncommunication per layer, seen from the server (party 0):");
    print!("{}", server.table());
    Ok(())
}
