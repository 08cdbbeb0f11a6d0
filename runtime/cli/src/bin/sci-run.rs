//! `sci-run`: runs a compiled plan, as one party over TCP, as both parties in one
//! process, or in the clear.
//!
//! ```text
//! sci-run --party 0 plan.bin   [--listen ADDR] [--threads T] [--ot E] [--serve [--max-sessions K]]
//! sci-run --party 1 client.bin [--connect ADDR] --input x.npy --output y.npy [--threads T] [--ot E]
//! sci-run --local plan.bin     --input x.npy --output y.npy [--threads T] [--ot E]
//! sci-run --cleartext plan.bin --input x.npy --output y.npy
//! ```
//!
//! The server listens and the client connects, on `127.0.0.1:7070` by default
//! ([`sci_runtime::exec::DEFAULT_PORT`]); either party may instead be told to listen
//! (`--listen`, port 0 for any free port: the bound address is printed) or connect
//! (`--connect`). With `--cert`, `--key` and `--peer-cert` (files written by
//! `sci-keygen`) every connection is TLS 1.3 and authenticates the peer by its pinned
//! certificate; plain TCP to or from an address other than loopback is refused unless
//! `--insecure-plaintext` is given. `--serve` runs up to `--max-sessions` clients at
//! once until SIGINT or SIGTERM (then it stops accepting and lets running sessions
//! finish). `--ot iknp|silent` runs the OTs on that engine instead of the plan's (both
//! parties must agree; the handshake checks it). `--input NAME=FILE.npy` names the input of a multi-input plan (likewise
//! `--output`); for a single-input plan `--input` may also be a batch (one `.npy` with
//! a leading batch dimension, or a directory of `.npy` files), run in one session.
//! `--report FILE.json` writes the costs (all modes), measured and, beside them, as the
//! cost model predicts them; with `--serve` one JSON line per finished session is
//! appended to it. `--net lan|wan|BANDWIDTH,RTT` emulates that network on the party's
//! sending (both parties' with `--local`; [`sci_runtime::net::emulate`]) and adds the
//! predicted network time to the report. Exit status: 0 on success, 1 on any error, with
//! the error on stderr.

use anyhow::{Context, Result, anyhow, bail};
use clap::{ArgGroup, Parser};
use indicatif::{ProgressBar, ProgressStyle};
use sci_ir::cost::{Lanes, NetProfile, predict_session, predict_time};
use sci_ir::{Plan, Program, Tensor};
use sci_runtime::exec::handshake::{AbortReason, Hello, Status};
use sci_runtime::exec::io::{self, FileArg};
use sci_runtime::exec::memory::MemoryNeed;
use sci_runtime::exec::report::{Cost, OutputRecord, PartyReport, RunReport, cost_line};
use sci_runtime::exec::serve::ServeOptions;
use sci_runtime::exec::{self, ClientSession, DEFAULT_PORT, ExecError, Progress, link};
use sci_runtime::net::Party;
use sci_runtime::net::emulate::Link;
use sci_runtime::net::session::Acceptor;
use sci_runtime::net::tcp::{self, TcpConfig};
use sci_runtime::net::tls::Tls;
use sci_runtime::ot::OtKind;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Party 0: keep serving clients (each session with its own threads, OT state and
    /// fresh randomness) until SIGINT/SIGTERM.
    #[arg(long, requires = "party")]
    serve: bool,
    /// With --serve: most sessions run at once (a client beyond is told "server busy").
    #[arg(long, value_name = "K", default_value_t = 4, requires = "serve",
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    max_sessions: u32,
    /// This party's TLS private key (PEM, from sci-keygen); with --cert and --peer-cert.
    #[arg(long, value_name = "FILE", requires_all = ["cert", "peer_cert"])]
    key: Option<PathBuf>,
    /// This party's TLS certificate (PEM, from sci-keygen).
    #[arg(long, value_name = "FILE", requires_all = ["key", "peer_cert"])]
    cert: Option<PathBuf>,
    /// The peer's certificate (PEM): the only one accepted (pinned, no CA).
    #[arg(long, value_name = "FILE", requires_all = ["key", "cert"])]
    peer_cert: Option<PathBuf>,
    /// Allow plain TCP (no TLS) with an address other than loopback.
    #[arg(long, conflicts_with = "peer_cert")]
    insecure_plaintext: bool,
    /// Input: FILE.npy (float32, the plan's input shape) or NAME=FILE.npy, once per input.
    #[arg(long, value_name = "[NAME=]FILE")]
    input: Vec<String>,
    /// Output: FILE.npy (decoded float32) or NAME=FILE.npy, once per output.
    #[arg(long, value_name = "[NAME=]FILE")]
    output: Vec<String>,
    /// Threads, one TCP connection each (default: the plan's); both parties must agree.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Option<u32>,
    /// The OT engine of this run (default: the plan's, from sci-compile --ot): `iknp`
    /// or `silent` (Ferret). Both parties must agree; the handshake checks it.
    #[arg(long, value_name = "iknp|silent", conflicts_with = "cleartext")]
    ot: Option<OtKind>,
    /// Write the costs per instruction and in total as JSON.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Longest wait for data from the peer, in seconds: it bounds how long a silent or
    /// dead peer goes unnoticed, and must exceed the longest stretch the peer computes
    /// without sending (a large SCI_HE layer takes minutes on a loaded machine).
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    timeout: f64,
    /// How long to retry a refused connection (and to wait for a peer to connect), in
    /// seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    connect_timeout: f64,
    /// The listening party's deadline for a connection's set-up (TLS handshake, lane
    /// preamble and, on a new session's first connection, the hello), in seconds from
    /// its acceptance: one absolute deadline, however slowly the peer sends.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    setup_timeout: f64,
    /// Longest life of a session's connections, in seconds (0: no limit).
    #[arg(long, value_name = "SECS", default_value_t = 3600.0)]
    session_timeout: f64,
    /// Most memory the run may need, in GiB (an estimate of its tensors and OT engines,
    /// times the sessions at once with --serve): a plan that needs more is refused when
    /// it loads.
    #[arg(long, value_name = "GIB", default_value_t = 8.0)]
    memory_limit: f64,
    /// Emulate a network on this party's sending (both parties' with --local): `lan`
    /// (377 MB/s, 0.3 ms round trip), `wan` (40 MB/s, 80 ms) or BANDWIDTH,RTT such as
    /// 40MB/s,80ms. Plain TCP only. The report then has the predicted network time.
    #[arg(long, value_name = "PROFILE", conflicts_with_all = ["cleartext", "peer_cert"])]
    net: Option<NetProfile>,
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
    let tls = match (&cli.key, &cli.cert, &cli.peer_cert) {
        (Some(k), Some(c), Some(p)) => {
            let t = Tls::from_files(k, c, p).context("setting up TLS")?;
            eprintln!(
                "sci-run: TLS 1.3, this party {}, pinned peer {}",
                t.fingerprint(),
                t.peer_fingerprint()
            );
            Some(Arc::new(t))
        }
        _ => None,
    };
    let cfg = TcpConfig {
        timeout: Some(secs(cli.timeout, "timeout")?),
        connect_timeout: secs(cli.connect_timeout, "connect-timeout")?,
        setup_timeout: secs(cli.setup_timeout, "setup-timeout")?,
        session_timeout: Some(secs(cli.session_timeout, "session-timeout")?)
            .filter(|d| !d.is_zero()),
        tls,
        link: cli.net.map(Link::new),
        ..TcpConfig::default()
    };
    if cfg.setup_timeout.is_zero() {
        bail!("--setup-timeout 0: set-up needs some time (default 5 s)");
    }
    if let Some(p) = &cli.net {
        eprintln!("sci-run: emulating a network of {p} on this process's sending");
    }
    let inputs: Vec<FileArg> = cli.input.iter().map(|s| FileArg::parse(s)).collect();
    let outputs: Vec<FileArg> = cli.output.iter().map(|s| FileArg::parse(s)).collect();
    if cli.party == Some(0) && !(inputs.is_empty() && outputs.is_empty()) {
        bail!("the server (--party 0) takes no --input or --output: the client holds them");
    }
    let (mode, ran) = match cli.party {
        Some(0) => ("server", server(cli, &cfg)?),
        Some(_) => ("client", client(cli, &cfg, &inputs, &outputs)?),
        None if cli.local => ("local", local(cli, &cfg, &inputs, &outputs)?),
        None => ("cleartext", cleartext(cli, &inputs, &outputs)?),
    };
    write_report(cli, mode, ran, start)
}

/// What a run gives the report: the plan's hash and outputs, and the parties' reports.
struct Ran {
    plan_hash: String,
    outputs: Vec<OutputRecord>,
    parties: Vec<PartyReport>,
}

impl Ran {
    /// The run of `plan`, with the cost model's prediction added to each party's report.
    fn new(cli: &Cli, plan: &Plan, mut parties: Vec<PartyReport>) -> Ran {
        add_predictions(cli, plan, &mut parties);
        Ran {
            plan_hash: plan.hash_hex(),
            outputs: OutputRecord::of(plan.program()),
            parties,
        }
    }
}

/// Adds the cost model's prediction to each party's report (and prints the predicted
/// network time beside the measured time with `--net`). A party's reports are its
/// session's inferences in order, predicted by [`predict_session`] (on the silent engine
/// a later inference draws on the COTs the earlier ones left).
fn add_predictions(cli: &Cli, plan: &Plan, parties: &mut [PartyReport]) {
    for party in [Party::Server, Party::Client] {
        let name = match party {
            Party::Server => "server",
            Party::Client => "client",
        };
        let mine: Vec<&mut PartyReport> = parties.iter_mut().filter(|r| r.party == name).collect();
        let Some(first) = mine.first() else {
            continue;
        };
        let Some(ot) = first.ot.and_then(|o| o.parse::<OtKind>().ok()) else {
            continue;
        };
        let lanes = Lanes {
            threads: first.threads,
            duplex: cli.peer_cert.is_none(),
            ot,
        };
        let preds = predict_session(plan.program(), lanes, mine.len() as u64);
        for (r, pred) in mine.into_iter().zip(&preds) {
            let timing = cli.net.map(|p| predict_time(pred, r.threads, &p));
            r.add_prediction(party, pred, timing.as_ref());
            if let (Some(t), Some(p)) = (&timing, &cli.net) {
                eprintln!(
                    "{}: predicted network time on {p}: {:.3} s (set-up {:.3} s); measured {:.3} s in all",
                    r.party, t.total, t.setup, r.totals.seconds
                );
            }
        }
    }
}

/// Writes `--report FILE.json`, if asked for.
fn write_report(cli: &Cli, mode: &'static str, ran: Ran, start: Instant) -> Result<()> {
    // With --serve, each session has appended its own line instead.
    let Some(path) = cli.report.as_ref().filter(|_| !cli.serve) else {
        return Ok(());
    };
    let r = RunReport {
        mode,
        plan_hash: ran.plan_hash,
        net: cli.net.map(|p| p.to_string()),
        wall_seconds: start.elapsed().as_secs_f64(),
        parties: ran.parties,
        outputs: ran.outputs,
    };
    let json = serde_json::to_string_pretty(&r).context("encoding the report")?;
    // Written aside and renamed, so a reader never sees half a report.
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    std::fs::write(&tmp, json + "\n")
        .and_then(|()| std::fs::rename(&tmp, path))
        .with_context(|| format!("writing the report {}", path.display()))
}

/// The run's OT engine: `--ot`, else the plan's.
fn ot(cli: &Cli, plan: &Plan) -> OtKind {
    cli.ot.unwrap_or(plan.program().params().ot)
}

/// Checks that `sessions` sessions of `plan` at once, on this run's threads and OT
/// engine, fit `--memory-limit` ([`exec::memory`]).
fn check_memory(cli: &Cli, plan: &Plan, sessions: u32) -> Result<()> {
    let gib = cli.memory_limit;
    if !(gib.is_finite() && gib > 0.0) {
        bail!("--memory-limit {gib}: expected a positive number of GiB");
    }
    let limit = (gib * (1u64 << 30) as f64) as u64;
    let threads = cli.threads.unwrap_or(plan.program().params().threads);
    MemoryNeed::of(plan.program(), threads, ot(cli, plan), sessions)
        .check(limit)
        .with_context(|| format!("plan {}", cli.plan.display()))
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

/// Refuses plain TCP with an address that is not loopback, unless allowed.
fn check_plaintext(cli: &Cli, cfg: &TcpConfig, addr: &str) -> Result<()> {
    if cfg.tls.is_some() || cli.insecure_plaintext {
        return Ok(());
    }
    if tcp::is_loopback(addr)? {
        return Ok(());
    }
    bail!(
        "refusing plain TCP with {addr}, which is not a loopback address: give --key, --cert \
         and --peer-cert (TLS, keys from sci-keygen), or --insecure-plaintext"
    )
}

/// A session with the peer to run `program`, listening or connecting as the CLI says.
fn open(
    cli: &Cli,
    acceptor: Option<&Acceptor>,
    party: Party,
    (program, hello): (&Program, &Hello),
    cfg: &TcpConfig,
) -> Result<link::Connected, ExecError> {
    match acceptor {
        Some(a) => link::accept(a, party, (program, hello), cfg),
        None => link::connect(&endpoint(cli, party).0, party, (program, hello), cfg),
    }
}

/// An acceptor if this party listens (printing the address it bound), after checking
/// the address is allowed.
fn bind(cli: &Cli, party: Party, cfg: &TcpConfig) -> Result<Option<Acceptor>> {
    let (addr, listen) = endpoint(cli, party);
    check_plaintext(cli, cfg, &addr)?;
    if !listen {
        return Ok(None);
    }
    let a = Acceptor::bind(addr.as_str(), cfg).with_context(|| format!("listening on {addr}"))?;
    eprintln!("sci-run: listening on {}", a.local_addr());
    Ok(Some(a))
}

/// Tells the peer that this party cannot run (best effort), then returns the error.
/// The peer hears only the category `reason`; the details of `err` (which can name
/// files, shapes or input values) are printed here only.
fn abort(
    cli: &Cli,
    acceptor: Option<&Acceptor>,
    party: Party,
    cfg: &TcpConfig,
    reason: AbortReason,
    err: anyhow::Error,
) -> anyhow::Error {
    eprintln!(
        "sci-run: error: {err:#}\nsci-run: telling the peer \"{reason}\" (waiting up to {} s for it)",
        cfg.connect_timeout.as_secs_f64()
    );
    let hello = Hello::new(
        party,
        cli.threads.unwrap_or(1),
        cli.ot.unwrap_or_default(),
        [0; 32],
        Status::Abort(reason),
    );
    // The handshake stops on the abort before the (empty) program is looked at.
    if let Ok(empty) = sci_ir::Builder::new().finish() {
        let _ = open(cli, acceptor, party, (&empty, &hello), cfg);
    }
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

fn mib(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}

/// Party 0: one session, or with `--serve` sessions until SIGINT/SIGTERM.
fn server(cli: &Cli, cfg: &TcpConfig) -> Result<Ran> {
    let party = Party::Server;
    let acceptor = bind(cli, party, cfg)?;
    let loaded = load_plan(&cli.plan).and_then(|p| {
        exec::check_plan(p.program(), party)
            .with_context(|| format!("plan {}", cli.plan.display()))?;
        check_memory(cli, &p, if cli.serve { cli.max_sessions } else { 1 })?;
        Ok(p)
    });
    let plan = match loaded {
        Ok(p) => p,
        Err(e) => {
            let reason = AbortReason::PlanRejected;
            return Err(abort(cli, acceptor.as_ref(), party, cfg, reason, e));
        }
    };
    let threads = cli.threads.unwrap_or(plan.program().params().threads);
    let hello = Hello::new(party, threads, ot(cli, &plan), plan.hash(), Status::Ready);
    match (&acceptor, cli.serve) {
        (Some(a), true) => {
            serve(cli, cfg, a, &plan, &hello)?;
            Ok(Ran::new(cli, &plan, Vec::new()))
        }
        _ => {
            let conn = open(cli, acceptor.as_ref(), party, (plan.program(), &hello), cfg)?;
            let bar = Bar::new(plan.program().instrs().len());
            let reports =
                exec::serve_session(plan.program(), conn.engine(plan.program()), &mut |p| {
                    bar.show(p)
                })?;
            bar.finish();
            print_costs("server", &reports);
            Ok(Ran::new(cli, &plan, reports))
        }
    }
}

/// `--serve`: accepts sessions until SIGINT/SIGTERM ([`exec::serve::serve`]). Each
/// finished session appends one JSON line to `--report`.
fn serve(
    cli: &Cli,
    cfg: &TcpConfig,
    acceptor: &Acceptor,
    plan: &Plan,
    hello: &Hello,
) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("installing signal handlers")?;
    }
    let report = std::sync::Mutex::new(());
    let on_session = |line: &serde_json::Value| {
        if let Some(path) = &cli.report {
            let _guard = report.lock();
            if let Err(e) = append_line(path, line) {
                eprintln!("sci-run: {e:#}");
            }
        }
    };
    let opts = ServeOptions {
        max_sessions: cli.max_sessions as usize,
        stop: &mut || stop.load(Ordering::Relaxed),
        on_session: &on_session,
        name: "sci-run",
    };
    exec::serve::serve(acceptor, plan, hello, cfg, opts).context("accepting connections")?;
    Ok(())
}

/// Appends one JSON line to `path`.
fn append_line(path: &Path, line: &serde_json::Value) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening the report {}", path.display()))?;
    writeln!(f, "{line}").with_context(|| format!("writing the report {}", path.display()))
}

/// Party 1.
fn client(cli: &Cli, cfg: &TcpConfig, files: &[FileArg], out_files: &[FileArg]) -> Result<Ran> {
    let party = Party::Client;
    let acceptor = bind(cli, party, cfg)?;
    let prepared = load_plan(&cli.plan)
        .and_then(|p| {
            exec::check_plan(p.program(), party)
                .with_context(|| format!("plan {}", cli.plan.display()))?;
            check_memory(cli, &p, 1)?;
            Ok(p)
        })
        .map_err(|e| (AbortReason::PlanRejected, e))
        .and_then(|p| match io::load_batch(p.program(), files) {
            Ok(b) => match u32::try_from(b.inputs.len()) {
                Ok(n) => Ok((p, b, n)),
                Err(_) => Err((AbortReason::InputRejected, anyhow!("more than 2^32 inputs"))),
            },
            Err(e) => Err((AbortReason::InputRejected, e.into())),
        });
    let (plan, mut batch, n) = match prepared {
        Ok(p) => p,
        Err((reason, e)) => return Err(abort(cli, acceptor.as_ref(), party, cfg, reason, e)),
    };
    let threads = cli.threads.unwrap_or(plan.program().params().threads);
    let hello = Hello {
        inferences: n,
        ..Hello::new(party, threads, ot(cli, &plan), plan.hash(), Status::Ready)
    };
    let conn =
        open(cli, acceptor.as_ref(), party, (plan.program(), &hello), cfg).map_err(
            |e| match e {
                ExecError::Connect(_) => anyhow::Error::new(e).context(format!(
                    "is the server running? (sci-run --party 0 plan.bin, at {})",
                    endpoint(cli, party).0
                )),
                e => e.into(),
            },
        )?;
    let mut session = ClientSession::new(conn.engine(plan.program()));
    let exs = std::mem::take(&mut batch.inputs)
        .into_iter()
        .map(|x| {
            let bar = Bar::new(plan.program().instrs().len());
            let r = session.infer(plan.program(), x, &mut |p| bar.show(p));
            bar.finish();
            r
        })
        .collect::<Result<Vec<_>, _>>()?;
    session.end()?;
    let mut outs = Vec::with_capacity(exs.len());
    let mut reports = Vec::with_capacity(exs.len());
    for e in exs {
        outs.push(
            e.outputs
                .ok_or_else(|| anyhow!("internal error: the client has no outputs"))?,
        );
        reports.push(e.report);
    }
    finish_batch(plan.program(), out_files, &batch, &outs)?;
    print_costs("client", &reports);
    Ok(Ran::new(cli, &plan, reports))
}

/// Both parties on threads over loopback TCP.
fn local(cli: &Cli, cfg: &TcpConfig, files: &[FileArg], out_files: &[FileArg]) -> Result<Ran> {
    let plan = load_plan(&cli.plan)?;
    // Both parties run in this process.
    check_memory(cli, &plan, 2)?;
    let mut batch = io::load_batch(plan.program(), files)?;
    let threads = cli.threads.unwrap_or(plan.program().params().threads);
    let bar = Bar::new(plan.program().instrs().len());
    let inputs = std::mem::take(&mut batch.inputs);
    let run = exec::run_pair_on(&plan, inputs, (threads, ot(cli, &plan)), cfg, &mut |p| {
        bar.show(p)
    })?;
    bar.finish();
    finish_batch(plan.program(), out_files, &batch, &run.outputs)?;
    print_costs("server", &run.server);
    print_costs("client", &run.client);
    Ok(Ran::new(cli, &plan, [run.server, run.client].concat()))
}

/// The reference interpreter on the plan.
fn cleartext(cli: &Cli, files: &[FileArg], out_files: &[FileArg]) -> Result<Ran> {
    let plan = load_plan(&cli.plan)?;
    let program = plan.program();
    let batch = io::load_batch(program, files)?;
    let t0 = Instant::now();
    let outs = batch
        .inputs
        .iter()
        .map(|x| sci_ir::interp::run(program, x))
        .collect::<Result<Vec<_>, _>>()
        .context("running the reference interpreter")?;
    let seconds = t0.elapsed().as_secs_f64();
    finish_batch(program, out_files, &batch, &outs)?;
    let report = PartyReport {
        party: "cleartext",
        threads: 1,
        ot: None,
        setup: Cost::default(),
        control: Cost::default(),
        he_keys: None,
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
                predicted: None,
            })
            .collect(),
        totals: Cost {
            seconds,
            ..Cost::default()
        },
        predicted: None,
    };
    Ok(Ran::new(cli, &plan, vec![report]))
}

/// Writes a batch's outputs as its inputs were given and prints the predicted classes
/// (not those of padding items).
fn finish_batch(
    program: &Program,
    files: &[FileArg],
    batch: &io::Batch,
    outs: &[Vec<Tensor>],
) -> Result<()> {
    if !files.is_empty() {
        io::write_batch(program, files, batch, outs)?;
    }
    let last = outs.len().saturating_sub(1);
    outs.iter()
        .enumerate()
        .try_for_each(|(k, o)| print_classes(program, o, if k == last { batch.padding } else { 0 }))
}

/// Prints the predicted classes of one inference's outputs, without the last
/// `padding` (those of padding items).
fn print_classes(program: &Program, outs: &[Tensor], padding: usize) -> Result<()> {
    for (out, t) in OutputRecord::of(program).iter().zip(outs) {
        let name = out.label();
        let mut classes = io::predicted_classes(t);
        classes.truncate(classes.len().saturating_sub(padding));
        match classes.as_slice() {
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

/// A one-line summary of a party's costs on stderr (a session's inferences added up).
fn print_costs(who: &str, reports: &[PartyReport]) {
    eprintln!("{}", cost_line(who, reports));
}
