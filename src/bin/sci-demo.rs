//! `sci-demo`: the whole of sci in one command. Compiles the bundled digits LeNet
//! (`testdata/digits/digits_lenet.onnx`), autotuning the bit width and scale on the
//! bundled validation split, runs the server and the client in this process over
//! loopback TCP on a bundled test image, and prints the prediction, the true label, the
//! wall time and the communication of every layer.
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
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/digits")
}

fn main() {
    if let Err(e) = run(&Cli::parse()) {
        eprintln!("sci-demo: error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: &Cli) -> Result<()> {
    let dir = testdata();
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
            threads: Some(cli.threads),
        },
        false,
    )
    .with_context(|| format!("compiling {}", model.display()))?;
    println!(
        "compiled {} in {:.2} s: ring Z_2^{}, scale {}{}",
        model.display(),
        t0.elapsed().as_secs_f64(),
        compiled.bits,
        compiled.scale,
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
    println!("input: {} (true label {label})", image.display());
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
