//! `sci-run`: runs a compiled plan, as one party over TCP, as both parties in one
//! process, or in the clear.
//!
//! ```text
//! sci-run --party 0 plan.bin   [--listen ADDR] [--threads T] [--serve]
//! sci-run --party 1 client.bin [--connect ADDR] --input x.npy --output y.npy [--threads T]
//! sci-run --local plan.bin     --input x.npy --output y.npy [--threads T]
//! sci-run --cleartext plan.bin --input x.npy --output y.npy
//! ```
//!
//! The server listens and the client connects, on `127.0.0.1:7070` by default
//! ([`sci_runtime::exec::DEFAULT_PORT`]); either party may instead be told to listen
//! (`--listen`) or connect (`--connect`). `--input NAME=FILE.npy` names the input of a
//! multi-input plan (likewise `--output`). `--report FILE.json` writes the costs (all
//! modes). Exit status: 0 on success, 1 on any error, with the error on stderr.

use anyhow::{Context, Result, anyhow, bail};
use clap::{ArgGroup, Parser};
use indicatif::{ProgressBar, ProgressStyle};
use sci_ir::{Plan, Program, Tensor};
use sci_runtime::exec::handshake::{Hello, Status};
use sci_runtime::exec::io::{self, FileArg};
use sci_runtime::exec::report::{Cost, PartyReport, RunReport};
use sci_runtime::exec::{self, DEFAULT_PORT, ExecError, Execution, Progress, link};
use sci_runtime::net::Party;
use sci_runtime::net::tcp::{self, TcpConfig};
use std::io::IsTerminal;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(
    name = "sci-run",
    version,
    about = "Two-party secure inference: run a plan compiled by sci-compile",
    group(ArgGroup::new("mode").required(true).args(["party", "local", "cleartext"]))
)]
struct Cli {
    /// The plan: plan.bin (with weights) for the server, client.bin for the client.
    plan: PathBuf,
    /// Run as one party: 0 = the server (holds the weights), 1 = the client (holds the input).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=1))]
    party: Option<u8>,
    /// Run both parties in this process, on threads over loopback TCP.
    #[arg(long)]
    local: bool,
    /// Run the reference interpreter on the plan (no cryptography): the output the
    /// secure run must reproduce bit for bit.
    #[arg(long)]
    cleartext: bool,
    /// Listen on ADDR for the peer (default for party 0: 127.0.0.1:7070).
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with = "connect",
        requires = "party"
    )]
    listen: Option<String>,
    /// Connect to the peer at ADDR (default for party 1: 127.0.0.1:7070).
    #[arg(long, value_name = "ADDR", requires = "party")]
    connect: Option<String>,
    /// Party 0: keep serving clients one after another (each with fresh randomness).
    #[arg(long, requires = "party")]
    serve: bool,
    /// Input: FILE.npy (float32, the plan's input shape) or NAME=FILE.npy, once per input.
    #[arg(long, value_name = "[NAME=]FILE")]
    input: Vec<String>,
    /// Output: FILE.npy (decoded float32) or NAME=FILE.npy, once per output.
    #[arg(long, value_name = "[NAME=]FILE")]
    output: Vec<String>,
    /// Threads, one TCP connection each (default: the plan's); both parties must agree.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Option<u32>,
    /// Write the costs per instruction and in total as JSON.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Longest wait for data from the peer, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    timeout: f64,
    /// How long to retry a refused connection (and to wait for a peer to connect), in
    /// seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    connect_timeout: f64,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        eprintln!("sci-run: error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: &Cli) -> Result<()> {
    let start = Instant::now();
    let secs = |s: f64, what: &str| {
        Duration::try_from_secs_f64(s).map_err(|_| anyhow!("--{what} {s}: not a valid duration"))
    };
    let cfg = TcpConfig {
        timeout: Some(secs(cli.timeout, "timeout")?),
        connect_timeout: secs(cli.connect_timeout, "connect-timeout")?,
        ..TcpConfig::default()
    };
    let inputs: Vec<FileArg> = cli.input.iter().map(|s| FileArg::parse(s)).collect();
    let outputs: Vec<FileArg> = cli.output.iter().map(|s| FileArg::parse(s)).collect();
    if cli.party == Some(0) && !(inputs.is_empty() && outputs.is_empty()) {
        bail!("the server (--party 0) takes no --input or --output: the client holds them");
    }
    let (mode, (hash, parties)) = match cli.party {
        Some(0) => ("server", server(cli, &cfg)?),
        Some(_) => ("client", client(cli, &cfg, &inputs, &outputs)?),
        None if cli.local => ("local", local(cli, &cfg, &inputs, &outputs)?),
        None => ("cleartext", cleartext(cli, &inputs, &outputs)?),
    };
    write_report(cli, mode, hash, parties, start)
}

/// Writes `--report FILE.json`, if asked for.
fn write_report(
    cli: &Cli,
    mode: &'static str,
    plan_hash: String,
    parties: Vec<PartyReport>,
    start: Instant,
) -> Result<()> {
    let Some(path) = &cli.report else {
        return Ok(());
    };
    let r = RunReport {
        mode,
        plan_hash,
        wall_seconds: start.elapsed().as_secs_f64(),
        parties,
    };
    let json = serde_json::to_string_pretty(&r).context("encoding the report")?;
    // Written aside and renamed, so a reader never sees half a report (with --serve it
    // is rewritten after every client).
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    std::fs::write(&tmp, json + "\n")
        .and_then(|()| std::fs::rename(&tmp, path))
        .with_context(|| format!("writing the report {}", path.display()))
}

fn load_plan(path: &Path) -> Result<Plan> {
    Plan::load(path).with_context(|| format!("loading the plan {}", path.display()))
}

/// The address to listen on or connect to, and whether to listen.
fn endpoint(cli: &Cli, party: Party) -> (String, bool) {
    let default = format!("127.0.0.1:{DEFAULT_PORT}");
    match (&cli.listen, &cli.connect) {
        (Some(a), _) => (a.clone(), true),
        (None, Some(a)) => (a.clone(), false),
        (None, None) => (default, party == Party::Server),
    }
}

/// A session with the peer, listening or connecting as the CLI says.
fn open(
    cli: &Cli,
    listener: Option<&TcpListener>,
    party: Party,
    hello: &Hello,
    cfg: &TcpConfig,
) -> Result<link::Connected, ExecError> {
    match listener {
        Some(l) => link::accept(l, party, hello, cfg),
        None => link::connect(&endpoint(cli, party).0, party, hello, cfg),
    }
}

/// A listener if this party listens.
fn bind(cli: &Cli, party: Party) -> Result<Option<TcpListener>> {
    let (addr, listen) = endpoint(cli, party);
    if !listen {
        return Ok(None);
    }
    tcp::listen(addr.as_str())
        .map(Some)
        .with_context(|| format!("listening on {addr}"))
}

/// The plan's hash and hello, or an abort hello carrying `err` (sent so that the peer
/// stops with the reason instead of waiting).
fn hello_for(party: Party, threads: u32, hash: [u8; 32], err: Option<&anyhow::Error>) -> Hello {
    let status = match err {
        None => Status::Ready,
        Some(e) => Status::Abort(format!("{e:#}")),
    };
    Hello::new(party, threads, hash, status)
}

/// Tells the peer why this party cannot run (best effort), then returns the error.
fn abort(
    cli: &Cli,
    listener: Option<&TcpListener>,
    party: Party,
    cfg: &TcpConfig,
    err: anyhow::Error,
) -> anyhow::Error {
    eprintln!(
        "sci-run: error: {err:#}\nsci-run: telling the peer (waiting up to {} s for it)",
        cfg.connect_timeout.as_secs_f64()
    );
    let hello = hello_for(party, cli.threads.unwrap_or(1), [0; 32], Some(&err));
    let _ = open(cli, listener, party, &hello, cfg);
    err
}

/// A progress bar on stderr (instruction i of n, bytes so far), shown only when stderr
/// is a terminal.
struct Bar(Option<ProgressBar>);

impl Bar {
    fn new(total: usize) -> Bar {
        if !std::io::stderr().is_terminal() {
            return Bar(None);
        }
        let pb = ProgressBar::new(total as u64);
        pb.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Bar(Some(pb))
    }

    fn show(&self, p: Progress<'_>) {
        if let Some(pb) = &self.0 {
            pb.set_position(p.done as u64);
            pb.set_message(format!(
                "{} {}  sent {:.1} MiB, received {:.1} MiB",
                p.op,
                p.name,
                mib(p.stats.bytes_sent),
                mib(p.stats.bytes_recv)
            ));
        }
    }

    fn finish(self) {
        if let Some(pb) = self.0 {
            pb.finish_and_clear();
        }
    }
}

/// Executes with a progress bar.
fn execute(
    program: &Program,
    conn: link::Connected,
    inputs: Option<Vec<Tensor>>,
) -> Result<Execution, ExecError> {
    let (mut engine, setup) = conn.engine(program);
    let bar = Bar::new(program.instrs().len());
    let r = exec::execute(program, &mut engine, inputs, setup, &mut |p| bar.show(p));
    bar.finish();
    r
}

fn mib(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}

/// Party 0 (with `--serve`, until killed).
fn server(cli: &Cli, cfg: &TcpConfig) -> Result<(String, Vec<PartyReport>)> {
    let party = Party::Server;
    let listener = bind(cli, party)?;
    let loaded = load_plan(&cli.plan).and_then(|p| {
        exec::check_plan(p.program(), party)
            .with_context(|| format!("plan {}", cli.plan.display()))?;
        Ok(p)
    });
    let plan = match loaded {
        Ok(p) => p,
        Err(e) => return Err(abort(cli, listener.as_ref(), party, cfg, e)),
    };
    let threads = cli.threads.unwrap_or(plan.program().params().threads);
    let hello = hello_for(party, threads, plan.hash(), None);
    loop {
        let session = Instant::now();
        let conn = match open(cli, listener.as_ref(), party, &hello, cfg) {
            Err(ExecError::NoPeer(_)) if cli.serve => continue,
            r => r,
        };
        match (
            conn.and_then(|c| execute(plan.program(), c, None)),
            cli.serve,
        ) {
            (Ok(ex), false) => {
                print_costs("server", &ex.report);
                return Ok((plan.hash_hex(), vec![ex.report]));
            }
            (Ok(ex), true) => {
                // Each client's report replaces the previous one.
                print_costs("server", &ex.report);
                write_report(cli, "server", plan.hash_hex(), vec![ex.report], session)?;
            }
            (Err(e), false) => return Err(e.into()),
            (Err(e), true) => eprintln!("sci-run: client session failed: {e}"),
        }
    }
}

/// Party 1.
fn client(
    cli: &Cli,
    cfg: &TcpConfig,
    files: &[FileArg],
    out_files: &[FileArg],
) -> Result<(String, Vec<PartyReport>)> {
    let party = Party::Client;
    let listener = bind(cli, party)?;
    let prepared = load_plan(&cli.plan).and_then(|p| {
        exec::check_plan(p.program(), party)
            .with_context(|| format!("plan {}", cli.plan.display()))?;
        let x = io::load_inputs(p.program(), files)?;
        Ok((p, x))
    });
    let (plan, inputs) = match prepared {
        Ok(p) => p,
        Err(e) => return Err(abort(cli, listener.as_ref(), party, cfg, e)),
    };
    let threads = cli.threads.unwrap_or(plan.program().params().threads);
    let hello = hello_for(party, threads, plan.hash(), None);
    let conn = open(cli, listener.as_ref(), party, &hello, cfg).map_err(|e| match e {
        ExecError::Connect(_) => anyhow::Error::new(e).context(format!(
            "is the server running? (sci-run --party 0 plan.bin, at {})",
            endpoint(cli, party).0
        )),
        e => e.into(),
    })?;
    let ex = execute(plan.program(), conn, Some(inputs))?;
    let outs = ex
        .outputs
        .ok_or_else(|| anyhow!("internal error: the client has no outputs"))?;
    finish_outputs(plan.program(), out_files, &outs)?;
    print_costs("client", &ex.report);
    Ok((plan.hash_hex(), vec![ex.report]))
}

/// Both parties on threads over loopback TCP.
fn local(
    cli: &Cli,
    cfg: &TcpConfig,
    files: &[FileArg],
    out_files: &[FileArg],
) -> Result<(String, Vec<PartyReport>)> {
    let plan = load_plan(&cli.plan)?;
    let inputs = io::load_inputs(plan.program(), files)?;
    let threads = cli.threads.unwrap_or(plan.program().params().threads);
    let bar = Bar::new(plan.program().instrs().len());
    let mut run = exec::run_pair(&plan, vec![inputs], threads, cfg, &mut |p| bar.show(p))?;
    bar.finish();
    let (Some(outs), Some(s), Some(c)) = (run.outputs.pop(), run.server.pop(), run.client.pop())
    else {
        bail!("internal error: no result from the local run");
    };
    finish_outputs(plan.program(), out_files, &outs)?;
    print_costs("server", &s);
    print_costs("client", &c);
    Ok((plan.hash_hex(), vec![s, c]))
}

/// The reference interpreter on the plan.
fn cleartext(
    cli: &Cli,
    files: &[FileArg],
    out_files: &[FileArg],
) -> Result<(String, Vec<PartyReport>)> {
    let plan = load_plan(&cli.plan)?;
    let program = plan.program();
    let inputs = io::load_inputs(program, files)?;
    let t0 = Instant::now();
    let outs =
        sci_ir::interp::run(program, &inputs).context("running the reference interpreter")?;
    let seconds = t0.elapsed().as_secs_f64();
    finish_outputs(program, out_files, &outs)?;
    let report = PartyReport {
        party: "cleartext",
        threads: 1,
        setup: Cost::default(),
        instructions: program
            .instrs()
            .iter()
            .enumerate()
            .map(|(index, i)| sci_runtime::exec::report::InstrRecord {
                index,
                name: i.name.clone(),
                op: i.op.mnemonic(),
                shape: i.ty.shape().to_vec(),
                cost: None,
            })
            .collect(),
        totals: Cost {
            seconds,
            ..Cost::default()
        },
    };
    Ok((plan.hash_hex(), vec![report]))
}

/// Writes the outputs and prints the predicted classes.
fn finish_outputs(program: &Program, files: &[FileArg], outs: &[Tensor]) -> Result<()> {
    let arrays = io::decode_outputs(program, outs);
    if !files.is_empty() {
        io::write_outputs(program, files, &arrays)?;
    }
    for (name, t) in io::output_names(program).iter().zip(outs) {
        match io::predicted_classes(t).as_slice() {
            [c] => println!("{name}: predicted class {c}"),
            cs => println!("{name}: predicted classes {cs:?}"),
        }
    }
    if outs.len() != program.outputs().len() {
        bail!(
            "internal error: {} outputs for {}",
            outs.len(),
            program.outputs().len()
        );
    }
    Ok(())
}

/// A one-line summary of a party's costs on stderr.
fn print_costs(who: &str, r: &PartyReport) {
    eprintln!(
        "{who}: {:.3} s (set-up {:.3} s), sent {:.3} MiB, received {:.3} MiB, {} rounds",
        r.totals.seconds,
        r.setup.seconds,
        mib(r.totals.bytes_sent),
        mib(r.totals.bytes_recv),
        r.totals.rounds
    );
}
