//! `sci-compile`: compiles an ONNX model (or IR text) into a plan for `sci-run`.
//!
//! ```text
//! sci-compile MODEL -o plan.bin [--client-plan client.bin]
//!             [--bits L --scale S | --validation DATA [--tolerance P]]
//!             [--output NAME]... [--mill-radix M] [--threads N] [--backend ot|he|rlwe|auto]
//!             [--batch N] [--net lan|wan|BANDWIDTH,RTT]
//!             [--emit-ir FILE] [--dump-ir DIR] [--report FILE.json]
//! ```
//!
//! Without `--validation`, `--bits` and `--scale` default to ℓ = 32 and s = 12 (reported
//! as defaults: nothing checks that the values fit). Without `--backend`, the plan is
//! RLWE's (SCI_RLWE: shares in Z_2^ℓ, linear layers by RLWE, the rest on silent OT). `--net PROFILE` adds the predicted
//! network time on that link to the report; `--backend auto --net PROFILE` compiles for
//! every backend (RLWE with a per-layer choice of OT) and keeps the one predicted
//! fastest there ([`sci_compiler::auto`]).

use anyhow::{Context, Result, bail};
use clap::Parser;
use sci_compiler::report::Report;
use sci_compiler::{Options, Quantization, auto, compile};
use sci_ir::cost::NetProfile;
use sci_ir::plan::Plan;
use sci_ir::{Backend, OtKind};
use sci_passes::autotune::AutotuneConfig;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

/// `--backend`: one of the three, or `auto` (chosen from `--net`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BackendArg {
    Fixed(Backend),
    Auto,
}

impl FromStr for BackendArg {
    type Err = String;

    fn from_str(s: &str) -> Result<BackendArg, String> {
        match s {
            "auto" => Ok(BackendArg::Auto),
            _ => Backend::from_str(s).map(BackendArg::Fixed).map_err(|e| {
                format!("{e}, or auto (with --net: the one predicted fastest on that network)")
            }),
        }
    }
}

/// Compile a neural network (ONNX, or sci IR text) into a two-party secure-inference plan.
#[derive(Parser, Debug)]
#[command(name = "sci-compile", version)]
struct Args {
    /// The model: an `.onnx` file, or an IR text file (float-stage or quantized).
    model: PathBuf,
    /// Where to write the server's plan (program and weights).
    #[arg(short = 'o', long = "plan", value_name = "PLAN")]
    plan: PathBuf,
    /// Also write the client's plan (the same program without the weights).
    #[arg(long, value_name = "FILE")]
    client_plan: Option<PathBuf>,
    /// Ring bit width ℓ (default 32 without --validation).
    #[arg(long, value_name = "L", conflicts_with = "validation")]
    bits: Option<u32>,
    /// Fixed-point scale s (default 12 without --validation).
    #[arg(long, value_name = "S", conflicts_with = "validation")]
    scale: Option<u32>,
    /// Autotune ℓ and s on this validation set: a directory with x.npy and y.npy, or an
    /// .npz with arrays x and y.
    #[arg(long, value_name = "DATA")]
    validation: Option<PathBuf>,
    /// Allowed top-1 accuracy drop below float, in percentage points.
    #[arg(long, value_name = "P", default_value_t = 0.5, requires = "validation")]
    tolerance: f64,
    /// Candidate scales for autotuning, `MIN-MAX`.
    #[arg(
        long,
        value_name = "MIN-MAX",
        default_value = "4-16",
        requires = "validation"
    )]
    scales: String,
    /// Extra bits of ℓ beyond what the validation set needs.
    #[arg(long, value_name = "B", default_value_t = 1, requires = "validation")]
    margin_bits: u32,
    /// Compile up to this ONNX tensor instead of the graph outputs (repeatable).
    #[arg(long = "output", value_name = "NAME")]
    outputs: Vec<String>,
    /// Radix m of the millionaires' protocol (1..=8; default: the OT engine's, 4 for
    /// iknp; for silent the cost model's cheapest ReLU at the plan's ℓ, 2 for ℓ = 32).
    #[arg(long, value_name = "M")]
    mill_radix: Option<u32>,
    /// The OT engine recorded in the plan (sci-run runs it unless told otherwise with
    /// its --ot): `iknp` (IKNP extension, the paper's) or `silent` (Ferret silent OT:
    /// about 1 bit per OT instead of 128, after a set-up of about 1.4 MB per direction
    /// and thread; more CPU). Default: silent (an IR file: its own).
    #[arg(long, value_name = "iknp|silent")]
    ot: Option<OtKind>,
    /// Number of runtime threads recorded in the plan (1..=256; default 1).
    #[arg(long, value_name = "N")]
    threads: Option<u32>,
    /// `ot` (SCI_OT: shares in Z_2^ℓ, OT-based linear layers), `he` (SCI_HE: shares in
    /// the ℓ-bit prime field n ≡ 1 mod 16384, HE-based linear layers; ℓ in 17..=44),
    /// `rlwe` (shares in Z_2^ℓ as for ot, linear layers by RLWE with Cheetah's
    /// coefficient encoding; a product RLWE cannot run stays OT), or `auto` with --net:
    /// all three compiled (without --ot, each on both OT engines), RLWE's products each
    /// moved to OT where that is predicted faster, the one predicted fastest on that
    /// network kept. The default is `rlwe`, assuming no particular profile: it is what
    /// `auto` keeps for every bundled CNN (LeNet, ResNet, MiniONN, SqueezeNet) on both
    /// `lan` and `wan` (SqueezeNet: 0.40 GiB against SCI_OT's 21.7); for a tiny MLP, OT
    /// is predicted faster. The per-layer moves to OT need a profile: `--backend auto
    /// --net …`.
    #[arg(long, value_name = "ot|he|rlwe|auto", default_value = "rlwe")]
    backend: BackendArg,
    /// Predict the network time on this link: `lan` (377 MB/s, 0.3 ms round trip),
    /// `wan` (40 MB/s, 80 ms) or BANDWIDTH,RTT such as 40MB/s,80ms.
    #[arg(long, value_name = "PROFILE")]
    net: Option<NetProfile>,
    /// Compile for N inputs per inference: the leading (batch) dimension of the model's
    /// inputs is N throughout, so each protocol round serves all N (`sci-run --input`
    /// then takes a stacked .npy or a directory, N items per inference).
    #[arg(long, value_name = "N", default_value_t = 1)]
    batch: usize,
    /// Write the final IR as text.
    #[arg(long, value_name = "FILE")]
    emit_ir: Option<PathBuf>,
    /// Write the IR after every pass into this directory (NN-pass.ir).
    #[arg(long, value_name = "DIR")]
    dump_ir: Option<PathBuf>,
    /// Write the JSON report (per-layer shapes, ℓ, s, predicted protocol calls, bytes per party and rounds, autotuning).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

fn parse_scales(s: &str) -> Result<Vec<u32>> {
    let (a, b) = s
        .split_once('-')
        .with_context(|| format!("--scales {s:?}: expected MIN-MAX, e.g. 4-16"))?;
    let a: u32 = a
        .trim()
        .parse()
        .with_context(|| format!("--scales {s:?}: bad MIN"))?;
    let b: u32 = b
        .trim()
        .parse()
        .with_context(|| format!("--scales {s:?}: bad MAX"))?;
    if a == 0 || a > b || b > 31 {
        bail!("--scales {s:?}: need 1 ≤ MIN ≤ MAX ≤ 31");
    }
    Ok((a..=b).collect())
}

fn write(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing the {what} to {}", path.display()))
}

fn run(args: Args) -> Result<()> {
    let quantization = match &args.validation {
        Some(data) => Quantization::Autotune {
            data: data.clone(),
            config: AutotuneConfig {
                scales: parse_scales(&args.scales)?,
                tolerance: args.tolerance,
                margin_bits: args.margin_bits,
            },
        },
        None => Quantization::Fixed {
            bits: args.bits,
            scale: args.scale,
        },
    };
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        bail!("--tolerance must be a non-negative number of percentage points");
    }
    let opts = Options {
        model: args.model.clone(),
        outputs: args.outputs.clone(),
        quantization,
        mill_radix: args.mill_radix,
        ot: args.ot,
        threads: args.threads,
        backend: match args.backend {
            BackendArg::Fixed(b) => b,
            BackendArg::Auto => Backend::Ot,
        },
        batch: args.batch,
    };
    let keep_dumps = args.dump_ir.is_some();
    let ctx = || format!("compiling {}", args.model.display());
    let (compiled, choice) = match (args.backend, &args.net) {
        (BackendArg::Fixed(_), _) => (compile(&opts, keep_dumps).with_context(ctx)?, None),
        (BackendArg::Auto, Some(net)) => {
            let (c, choice) = auto::choose(&opts, net, keep_dumps).with_context(ctx)?;
            (c, Some(choice))
        }
        (BackendArg::Auto, None) => bail!(
            "--backend auto chooses the backend from the network: give --net lan, wan or BANDWIDTH,RTT (e.g. 40MB/s,80ms)"
        ),
    };
    if let Some(dir) = &args.dump_ir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        write(
            &dir.join("00-input.ir"),
            compiled.input.to_text().as_bytes(),
            "input IR",
        )?;
        for (k, (name, p)) in compiled.dumps.iter().enumerate() {
            let file = dir.join(format!("{:02}-{name}.ir", k + 1));
            write(&file, p.to_text().as_bytes(), "IR dump")?;
        }
    }
    let plan = Plan::new(compiled.program.clone());
    write(&args.plan, &plan.to_bytes(), "plan")?;
    if let Some(c) = &args.client_plan {
        write(c, &plan.client_view().to_bytes(), "client plan")?;
    }
    if let Some(f) = &args.emit_ir {
        write(f, compiled.program.to_text().as_bytes(), "final IR")?;
    }
    let mut report = Report::new(&args.model, &compiled, args.net.as_ref());
    report.backend_choice = choice;
    if let Some(f) = &args.report {
        write(f, report.to_json().as_bytes(), "report")?;
    }
    print!("{}", report.summary());
    println!("plan: {} (hash {})", args.plan.display(), report.plan_hash);
    if let Some(c) = &args.client_plan {
        println!("client plan: {}", c.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
