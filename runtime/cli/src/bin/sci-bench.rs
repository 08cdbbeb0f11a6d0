//! `sci-bench`: micro-benchmarks of the OT engine (and, later, the protocols).
//!
//! Runs both parties in one process over loopback TCP (two threads per lane),
//! or one party per process with `--party 0|1 --addr HOST:PORT` (party 0
//! listens). Prints one JSON object (`--json`) or a line of text. Both
//! parties' lanes get the same fresh public LPN seed (the silent engine's
//! codes, [`Session::with_lpn_seed`]): drawn once in-process; agreed on lane
//! 0 by the two processes (16 bytes each way, left out of `bytes` and
//! `rounds`, [`agree_lpn_seed`]).
//!
//! JSON fields: `protocol`, `n`, `bits`, `threads`, `seconds` (wall, after
//! the TCP connections are open, including OT set-up), `bytes` (both
//! directions, including set-up), `bits_per_op` (`bytes·8/n`),
//! `formula_bits_per_op` (the per-instance cost without the set-up: on IKNP
//! the paper's formula, exactly as the cost model counts it; on silent, for
//! the OT primitives the bits of the derived OT on the wire — the receiver's
//! choice bit and the sender's answer — and for the protocols those plus the
//! Ferret COTs drawn at the main LPN set's amortised 0.447 bits each),
//! `ot` (the engine), `rounds` (the
//! larger of the two parties' counts), `ops_per_second`, `cpu_seconds`
//! (process CPU time over the timed part — both parties when in-process; a
//! figure that a loaded machine does not inflate like the wall time), `net`
//! (the emulated network, `--net lan|wan|BANDWIDTH,RTT`, or null: each party's
//! sending paced and delayed, [`sci_runtime::net::emulate`]) and `aes_ni`.
//!
//! Adding a benchmark: add a variant to [`Cmd`] and a case in [`workload`]
//! returning the closure each party runs on its [`Session`] (and the formula
//! for bits per op, if any); the harness does connections, timing and
//! counters. The protocol benchmarks (`mill`, `relu`, `trunc`, ...) live in
//! `src/bench/proto.rs` and add their parameters (`m`, `d`, ...) to the JSON.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use sci_ir::cost::NetProfile;
use sci_runtime::crypto::{Block, Prg, RkAes256, Tccr, aes_hardware_accelerated, random_block};
use sci_runtime::net::emulate::Link;
use sci_runtime::net::tcp::{self, TcpConfig};
use sci_runtime::net::{Channel, Party, Stats};
use sci_runtime::ot::ferret::{FERRET, FerretReceiver, FerretSender};
use sci_runtime::ot::transpose::{transpose128, transpose128_naive};
use sci_runtime::ot::{OtError, OtKind, Session};
use serde_json::json;

#[path = "../bench/he.rs"]
mod he;
#[path = "../bench/proto.rs"]
mod proto;

#[derive(Parser, Debug)]
#[command(about = "Benchmarks of the sci OT engine")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// Number of instances.
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    /// Message / ring bit width ℓ.
    #[arg(long, default_value_t = 32)]
    bits: u32,
    /// Threads (TCP connections) per party.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Run only this party (0 listens, 1 connects); default: both, in-process.
    #[arg(long)]
    party: Option<u8>,
    /// Address to listen on / connect to with `--party`.
    #[arg(long, default_value = "127.0.0.1:7000")]
    addr: String,
    /// I/O timeout in seconds.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Emulate a network on each party's sending: `lan` (377 MB/s, 0.3 ms round
    /// trip), `wan` (40 MB/s, 80 ms) or BANDWIDTH,RTT such as 40MB/s,80ms.
    #[arg(long, value_name = "PROFILE")]
    net: Option<NetProfile>,
    /// The OT engine: `silent` (Ferret, production parameters; the default, as
    /// sci-compile's) or `iknp` (IKNP and KK13: the paper's, for its figures); every
    /// OT of the benchmark runs on it.
    #[arg(long, default_value_t = OtKind::Silent)]
    ot: OtKind,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Chosen-message (2 1)-OT_ℓ.
    Ot(Common),
    /// Random (2 1)-OT of ℓ-bit strings, the receiver's choices given.
    Rot(Common),
    /// Correlated (2 1)-COT_ℓ (IKNP, or derived from the silent engine's
    /// random COTs), or with `--random` the silent engine's random COTs.
    Cot {
        #[command(flatten)]
        common: Common,
        /// Random COTs (the silent engine's output: the sender's `q`, the
        /// receiver's random `b` and `q ⊕ b·Δ`), no correction; `--bits` is
        /// ignored. Silent engine only.
        #[arg(long)]
        random: bool,
    },
    /// The 128×n bit-matrix transpose alone (local, no network); `--n` is
    /// the number of columns (OTs), rounded up to a multiple of 8.
    Transpose {
        #[command(flatten)]
        common: Common,
        /// Use the bit-by-bit reference instead of the SIMD kernel.
        #[arg(long)]
        naive: bool,
    },
    /// The OT hashes alone (local): TCCR, re-keyed AES-256 with the SIMD
    /// kernels and with the portable `aes` crate path; `--n` hashes each.
    Hash(Common),
    /// (N 1)-OT_ℓ (Kolesnikov–Kumaresan on IKNP; on silent, from ⌈log₂ N⌉ random
    /// OTs, Naor–Pinkas).
    Kkot {
        #[command(flatten)]
        common: Common,
        /// N, the number of messages.
        #[arg(long = "kkot-n", default_value_t = 16)]
        kkot_n: usize,
    },
    #[command(flatten)]
    Proto(proto::ProtoCmd),
    #[command(flatten)]
    He(he::HeCmd),
}

/// What each party runs, given its session; returns nothing (results are
/// checked by the test suite, not here).
type Work = Box<dyn Fn(&mut Session) -> Result<()> + Sync>;

/// The benchmark: protocol name, closure, formula for bits per op.
fn workload(cmd: &Cmd) -> Result<(String, &Common, Work, Option<f64>)> {
    Ok(match cmd {
        Cmd::Ot(c) => {
            let (n, bits) = (c.n, c.bits);
            let mut g = Prg::from_os()?;
            let msgs: Vec<[u128; 2]> = random_u128s(&mut g, 2 * n)
                .chunks_exact(2)
                .map(|p| [p[0], p[1]])
                .collect();
            let choices = g.bools(n);
            let w: Work = Box::new(move |s| {
                s.run(n, |c| {
                    let r = c.range.clone();
                    if c.sender {
                        c.lane.ot.send_ot(&mut c.lane.ch, &msgs[r], bits)
                    } else {
                        c.lane
                            .ot
                            .recv_ot::<u128>(&mut c.lane.ch, &choices[r], bits)
                            .map(drop)
                    }
                })?;
                Ok(())
            });
            let formula = per_ot(c.ot, 2.0 * bits as f64);
            ("ot".into(), c, w, Some(formula))
        }
        Cmd::Rot(c) => {
            let (n, bits) = (c.n, c.bits);
            let choices = Prg::from_os()?.bools(n);
            let w: Work = Box::new(move |s| {
                s.run(n, |c| {
                    let r = c.range.clone();
                    if c.sender {
                        c.lane
                            .ot
                            .send_rot::<u128>(&mut c.lane.ch, r.len(), bits)
                            .map(drop)
                    } else {
                        c.lane
                            .ot
                            .recv_rot::<u128>(&mut c.lane.ch, &choices[r], bits)
                            .map(drop)
                    }
                })?;
                Ok(())
            });
            ("rot".into(), c, w, Some(per_ot(c.ot, 0.0)))
        }
        Cmd::Cot { common: c, random } => {
            let (n, bits) = (c.n, c.bits);
            if !(1..=64).contains(&bits) {
                bail!("--bits must be in 1..=64 for cot");
            }
            let mut g = Prg::from_os()?;
            let x = g.ring_elems(n, bits);
            let choices = g.bools(n);
            let w: Work = match (c.ot, *random) {
                (OtKind::Iknp, true) => bail!("--random needs --ot silent"),
                (_, false) => Box::new(move |s| {
                    s.run(n, |c| {
                        let r = c.range.clone();
                        if c.sender {
                            c.lane.ot.send_cot(&mut c.lane.ch, &x[r], bits).map(drop)
                        } else {
                            c.lane
                                .ot
                                .recv_cot(&mut c.lane.ch, &choices[r], bits)
                                .map(drop)
                        }
                    })?;
                    Ok(())
                }),
                (OtKind::Silent, true) => Box::new(move |s| {
                    s.run(n, |c| {
                        let (r, lane) = (c.range.clone(), &mut *c.lane);
                        let prg = lane.prg.fork();
                        let seed = lane.ot.lpn_seed().ok_or(OtError::NoLpnSeed)?;
                        // Touch every COT (a checksum), as a consumer would.
                        let mut sum = Block::ZERO;
                        let mut fold = |_: &mut _, _, q: &[Block]| {
                            sum = q.iter().fold(sum, |a, b| a ^ *b);
                            Ok(())
                        };
                        if c.sender {
                            FerretSender::new(FERRET, seed, prg)?.take(
                                &mut lane.ch,
                                r.len(),
                                &mut fold,
                            )
                        } else {
                            FerretReceiver::new(FERRET, seed, prg)?.take(
                                &mut lane.ch,
                                r.len(),
                                &mut fold,
                            )
                        }
                    })?;
                    Ok(())
                }),
            };
            let (name, formula) = match (c.ot, *random) {
                (OtKind::Iknp, _) => ("cot", per_ot(c.ot, bits as f64)),
                (OtKind::Silent, false) => ("cot-silent", per_ot(c.ot, bits as f64)),
                (OtKind::Silent, true) => ("rcot-silent", 0.0),
            };
            (name.into(), c, w, Some(formula))
        }
        Cmd::Transpose { .. } | Cmd::Hash(_) => bail!("not a two-party benchmark"),
        Cmd::Proto(p) => proto::workload(p)?,
        Cmd::He(h) => he::workload(h)?,
        Cmd::Kkot { common: c, kkot_n } => {
            let (n, bits, nm) = (c.n, c.bits, *kkot_n);
            let mut g = Prg::from_os()?;
            let msgs = random_u128s(&mut g, n * nm);
            let choices: Vec<u8> = g
                .u64s(n)
                .iter()
                .map(|r| (r % nm.max(1) as u64) as u8)
                .collect();
            let w: Work = Box::new(move |s| {
                s.run(n, |c| {
                    let r = c.range.clone();
                    if c.sender {
                        let m = &msgs[r.start * nm..r.end * nm];
                        c.lane.ot.send_kkot(&mut c.lane.ch, nm, m, bits)
                    } else {
                        c.lane
                            .ot
                            .recv_kkot::<u128>(&mut c.lane.ch, nm, &choices[r], bits)
                            .map(drop)
                    }
                })?;
                Ok(())
            });
            (
                format!("kkot{nm}"),
                c,
                w,
                Some(
                    match c.ot {
                        OtKind::Iknp => 256.0,
                        OtKind::Silent => f64::from(nm.next_power_of_two().trailing_zeros()),
                    } + (nm as f64) * bits as f64,
                ),
            )
        }
    })
}

/// Bits per (2 1)-OT on engine `ot` whose sender sends `payload` bits, without the
/// set-up: the receiver's λ = 128 for IKNP (§2.2.2), its one choice bit for silent.
fn per_ot(ot: OtKind, payload: f64) -> f64 {
    payload
        + match ot {
            OtKind::Iknp => 128.0,
            OtKind::Silent => 1.0,
        }
}

/// The silent engine's figures beside the totals: the set-up's bytes (per
/// lane, from the cost model: the IKNP bootstrapping and the first
/// iteration), the iterations run, and the bits per op without the set-up.
fn silent_extra(
    c: &Common,
    random: bool,
    bytes: u64,
) -> serde_json::Map<String, serde_json::Value> {
    let setup = sci_ir::cost::ferret::setup(sci_ir::params::Role::P0, &FERRET).bits() / 8;
    let lanes = c.threads.min(c.n.max(1)) as u64;
    let after = bytes.saturating_sub(setup * lanes);
    let per_lane = c.n.div_ceil(c.threads.max(1));
    let mut m = serde_json::Map::new();
    m.insert("random".into(), json!(random));
    m.insert("setup_bytes_per_lane".into(), json!(setup));
    m.insert(
        "iterations_per_lane".into(),
        json!(FERRET.iterations(per_lane)),
    );
    m.insert(
        "bits_per_op_after_setup".into(),
        json!(after as f64 * 8.0 / c.n.max(1) as f64),
    );
    m
}

/// `n` random 128-bit values.
fn random_u128s(g: &mut Prg, n: usize) -> Vec<u128> {
    let mut b = vec![Block::ZERO; n];
    g.fill_blocks(&mut b);
    b.into_iter().map(|x| x.0).collect()
}

/// CPU time (user + system) of this process so far, from `/proc/self/stat`
/// (Linux; clock ticks of 10 ms). `None` elsewhere.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// One party's run: returns wall seconds and counters.
/// Runs `work` on `session` once both parties reach `start`; returns the
/// seconds it took and the session's counters, less `uncounted`: what lane 0
/// carried before the benchmark ([`agree_lpn_seed`]).
fn party_run(
    session: &mut Session,
    work: &Work,
    start: &Barrier,
    uncounted: Stats,
) -> Result<(f64, Stats)> {
    start.wait();
    let t = Instant::now();
    work(session).context("running the benchmark")?;
    let seconds = t.elapsed().as_secs_f64();
    let mut st = Stats::default();
    for (i, lane) in session.lanes_mut().iter().enumerate() {
        let mut c = lane.ch.stats();
        if i == 0 {
            c = c - uncounted;
        }
        st.bytes_sent += c.bytes_sent;
        st.bytes_recv += c.bytes_recv;
        st.rounds = st.rounds.max(c.rounds);
    }
    Ok((seconds, st))
}

/// The public LPN seed of a two-process run (which has no handshake, so no
/// session id): each party sends 16 fresh random bytes on lane 0 and
/// receives the peer's; the seed is their XOR (fresh if either party's
/// bytes are). Returns it and lane 0's counters of the exchange (16 bytes
/// each way and one round; it ends with a receive, so the lane counts later
/// rounds as a fresh one would), which the report leaves out, so its bytes
/// and rounds stay the cost model's.
fn agree_lpn_seed(lane0: &mut Channel) -> Result<(Block, Stats)> {
    let ours = random_block()?;
    let before = lane0.stats();
    lane0
        .send(&ours.to_bytes())
        .context("sending the LPN seed")?;
    let mut theirs = [0u8; 16];
    lane0.recv(&mut theirs).context("receiving the LPN seed")?;
    Ok((ours ^ Block::from_bytes(theirs), lane0.stats() - before))
}

/// Times the transpose of a random 128×n bit matrix (best of 5 runs).
fn bench_transpose(c: &Common, naive: bool) -> Result<()> {
    let cb = c.n.div_ceil(8);
    let mut input = vec![0u8; 128 * cb];
    Prg::from_os()?.fill_bytes(&mut input);
    let mut out = vec![Block::ZERO; 8 * cb];
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        if naive {
            transpose128_naive(&input, &mut out);
        } else {
            transpose128(&input, &mut out);
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    let name = if naive {
        "transpose-naive"
    } else {
        "transpose"
    };
    if c.json {
        println!(
            "{}",
            json!({"protocol": name, "n": 8 * cb, "bits": 128, "threads": 1, "seconds": best, "bytes": 0, "bits_per_op": 0.0, "rounds": 0})
        );
    } else {
        println!(
            "{name}: 128x{} bits in {:.2} ms (best of 5)",
            8 * cb,
            best * 1e3
        );
    }
    Ok(())
}

/// Times the hashes (best of 3 runs), in nanoseconds per hash.
fn bench_hash(c: &Common) -> Result<()> {
    let n = c.n;
    let mut g = Prg::from_os()?;
    let (mut k1, mut k2) = (vec![Block::ZERO; n], vec![Block::ZERO; n]);
    g.fill_blocks(&mut k1);
    g.fill_blocks(&mut k2);
    let pts: Vec<Block> = (0..n).map(|k| Block(k as u128)).collect();
    let mut out = vec![Block::ZERO; n];
    let best = |f: &mut dyn FnMut()| {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
            * 1e9
            / n.max(1) as f64
    };
    let tccr = Tccr::new();
    let t_tccr = best(&mut || tccr.hash_in_place(0, &mut out));
    let t_rk = best(&mut || RkAes256::hash(&k1, &k2, &pts, &mut out));
    let t_rk_portable = best(&mut || RkAes256::hash_portable(&k1, &k2, &pts, &mut out));
    let v = json!({
        "protocol": "hash", "n": n, "threads": 1,
        "tccr_ns": t_tccr, "rk_aes256_ns": t_rk, "rk_aes256_portable_ns": t_rk_portable,
        "aes_ni": aes_hardware_accelerated(),
    });
    println!("{v}");
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if let Cmd::Transpose { common, naive } = &cli.cmd {
        return bench_transpose(common, *naive);
    }
    if let Cmd::Hash(common) = &cli.cmd {
        return bench_hash(common);
    }
    let (protocol, c, work, formula) = workload(&cli.cmd)?;
    if c.threads == 0 {
        bail!("--threads must be at least 1");
    }
    let cfg = TcpConfig {
        timeout: Some(Duration::from_secs(c.timeout)),
        link: c.net.map(Link::new),
        ..TcpConfig::default()
    };
    let cpu0 = process_cpu_seconds();
    let (seconds, bytes, rounds) = match c.party {
        None => {
            let (c0, c1) =
                tcp::loopback_pairs(c.threads, &cfg).context("opening loopback connections")?;
            // One process: the seed needs no exchange.
            let seed = random_block()?;
            let mut s0 = Session::new(Party::Server, c0)?
                .with_ot(c.ot)
                .with_lpn_seed(seed)?;
            let mut s1 = Session::new(Party::Client, c1)?
                .with_ot(c.ot)
                .with_lpn_seed(seed)?;
            let start = Barrier::new(2);
            let none = Stats::default();
            let (r0, r1) = std::thread::scope(|sc| {
                let h = sc.spawn(|| party_run(&mut s1, &work, &start, none));
                let r0 = party_run(&mut s0, &work, &start, none);
                (r0, h.join())
            });
            let (t0, st0) = r0.context("party 0")?;
            let (t1, st1) = match r1 {
                Ok(r) => r.context("party 1")?,
                Err(_) => bail!("party 1 panicked"),
            };
            (
                t0.max(t1),
                st0.bytes_sent + st1.bytes_sent,
                st0.rounds.max(st1.rounds),
            )
        }
        Some(p) => {
            let (party, mut chans) = match p {
                0 => {
                    let l =
                        tcp::listen(&c.addr).with_context(|| format!("listening on {}", c.addr))?;
                    (
                        Party::Server,
                        tcp::accept_many(&l, c.threads, &cfg).context("accepting")?,
                    )
                }
                1 => (
                    Party::Client,
                    tcp::connect_many(&c.addr, c.threads, &cfg)
                        .with_context(|| format!("connecting to {}", c.addr))?,
                ),
                _ => bail!("--party must be 0 or 1"),
            };
            let (seed, uncounted) = match chans.first_mut() {
                Some(lane0) => agree_lpn_seed(lane0)?,
                None => bail!("--threads must be at least 1"),
            };
            let mut s = Session::new(party, chans)?
                .with_ot(c.ot)
                .with_lpn_seed(seed)?;
            let (t, st) = party_run(&mut s, &work, &Barrier::new(1), uncounted)?;
            (t, st.bytes(), st.rounds)
        }
    };
    let cpu_seconds = process_cpu_seconds()
        .zip(cpu0)
        .map(|(b, a)| ((b - a) * 100.0).round() / 100.0);
    let bits_per_op = if c.n == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / c.n as f64
    };
    let extra = match &cli.cmd {
        Cmd::Proto(p) => p.extra(),
        Cmd::He(h) => h.extra(),
        Cmd::Cot { random, .. } if c.ot == OtKind::Silent => silent_extra(c, *random, bytes),
        _ => serde_json::Map::new(),
    };
    if c.json {
        let mut v = json!({
            "protocol": protocol,
            "n": c.n,
            "bits": c.bits,
            "threads": c.threads,
            "seconds": seconds,
            "bytes": bytes,
            "bits_per_op": bits_per_op,
            "formula_bits_per_op": formula,
            "ot": c.ot.to_string(),
            "rounds": rounds,
            "cpu_seconds": cpu_seconds,
            "net": c.net.map(|p| p.to_string()),
            "ops_per_second": c.n as f64 / seconds,
            "aes_ni": aes_hardware_accelerated(),
        });
        if let Some(o) = v.as_object_mut() {
            o.extend(extra);
        }
        println!("{v}");
    } else {
        let net = c.net.map(|p| format!(" on {p}")).unwrap_or_default();
        println!(
            "{protocol}: n={} bits={} threads={} ot={}{net} {:.3} s, {:.0} ops/s, {} bytes, {:.2} bits/op (formula {:?}), {} rounds",
            c.n,
            c.bits,
            c.threads,
            c.ot,
            seconds,
            c.n as f64 / seconds,
            bytes,
            bits_per_op,
            formula,
            rounds
        );
    }
    Ok(())
}
