//! The `sci-run` binary, run as real processes: cleartext, `--local` and two-process
//! runs give byte-identical outputs; every failure (mismatched or truncated plan, wrong
//! input, same role twice, a client plan at the server, a killed or silent peer, no
//! peer) ends both processes with a clear message and exit status 1, within the
//! timeout; the server hears only a category of the client's error. TLS runs equal
//! cleartext and wrong keys stop both sides; plain TCP beyond loopback is refused;
//! `--serve` runs sessions at once, a silent client holding up only its own, and
//! stops on SIGTERM.

#[path = "../../tests/common/mod.rs"]
mod common;

use common::*;
use sci_ir::npy::Array;
use sci_ir::{Plan, Program};
use sci_testkit::process::Listening;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sci-run");

/// Saves the plan and its client view; returns their paths.
fn save(dir: &Path, name: &str, p: &Program) -> (PathBuf, PathBuf) {
    let plan = Plan::new(p.clone());
    let (a, b) = (
        dir.join(format!("{name}.bin")),
        dir.join(format!("{name}_client.bin")),
    );
    plan.save(&a).unwrap();
    plan.client_view().save(&b).unwrap();
    (a, b)
}

/// Writes float inputs for `p` (decoded from [`wide_inputs`]-like integers at the
/// input's scale) and returns the `--input` arguments.
fn write_inputs(dir: &Path, p: &Program, seed: u64) -> Vec<String> {
    let xs = inputs(p, seed);
    p.inputs()
        .iter()
        .zip(xs)
        .map(|(&v, t)| {
            let name = p.name(v);
            let real = sci_ir::fixed::decode_tensor(&t, p.ty(v).scale());
            let path = dir.join(format!("{name}_{seed}.npy"));
            Array::from_f32(real.shape().to_vec(), real.as_f32().unwrap())
                .unwrap()
                .write(&path)
                .unwrap();
            format!("{name}={}", path.display())
        })
        .collect()
}

/// `--output NAME=FILE` arguments for every output of `p`, files under `dir/tag_*`.
fn outputs(dir: &Path, p: &Program, tag: &str) -> (Vec<String>, Vec<PathBuf>) {
    sci_runtime::exec::io::output_names(p)
        .into_iter()
        .map(|n| {
            let path = dir.join(format!("{tag}_{n}.npy"));
            (format!("{n}={}", path.display()), path)
        })
        .unzip()
}

fn args(flag: &str, vals: &[String]) -> Vec<String> {
    vals.iter()
        .flat_map(|v| [flag.to_string(), v.clone()])
        .collect()
}

fn run(a: &[String]) -> Output {
    Command::new(BIN).args(a).output().unwrap()
}

fn spawn(a: &[String]) -> Child {
    Command::new(BIN)
        .args(a)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a child (at most `limit`), returning its status and stderr.
fn finish(mut c: Child, limit: Duration) -> (bool, String) {
    let start = Instant::now();
    loop {
        if let Some(st) = c.try_wait().unwrap() {
            let mut err = String::new();
            c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            return (st.success(), err);
        }
        if start.elapsed() > limit {
            let _ = c.kill();
            panic!("process still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn s(x: &str) -> String {
    x.to_string()
}

fn p(x: &Path) -> String {
    x.display().to_string()
}

/// Spawns `sci-run` with `a` and `--listen 127.0.0.1:0`, and reads the address it bound.
fn listen(a: &[String]) -> Listening {
    let mut cmd = Command::new(BIN);
    cmd.args(a).args(["--listen", "127.0.0.1:0"]);
    Listening::spawn(cmd)
}

/// Runs a listening process (`listener` plus `--listen 127.0.0.1:0`) and then a
/// connecting one (`connector` plus `--connect` to the address the first bound);
/// returns (listener ok, its stderr, connector ok, its stderr).
fn pair(listener: Vec<String>, connector: Vec<String>) -> (bool, String, bool, String) {
    let srv = listen(&listener);
    let mut connector = connector;
    connector.extend([s("--connect"), srv.addr.clone()]);
    let (ok1, e1) = finish(spawn(&connector), Duration::from_secs(60));
    let (ok0, e0) = srv.wait(Duration::from_secs(60));
    (ok0, e0, ok1, e1)
}

const FAST: [&str; 4] = ["--timeout", "10", "--connect-timeout", "10"];

fn fast() -> Vec<String> {
    FAST.iter().map(|x| s(x)).collect()
}

#[test]
fn cleartext_local_and_two_processes_agree() {
    let dir = tempfile::tempdir().unwrap();
    for (name, prog, threads) in [
        ("local", local_program(), "1"),
        ("proto", protocol_program(16), "2"),
    ] {
        let (plan, client) = save(dir.path(), name, &prog);
        let ins = args("--input", &write_inputs(dir.path(), &prog, 5));
        let mut files = Vec::new();
        for mode in ["cleartext", "local", "two"] {
            let (outs, paths) = outputs(dir.path(), &prog, &format!("{name}_{mode}"));
            let report = dir.path().join(format!("{name}_{mode}.json"));
            let mut common = ins.clone();
            common.extend(args("--output", &outs));
            common.extend([s("--report"), p(&report), s("--threads"), s(threads)]);
            if mode == "two" {
                let mut srv = vec![s("--party"), s("0"), p(&plan)];
                srv.extend([s("--threads"), s(threads)]);
                srv.extend(fast());
                let mut cl = vec![s("--party"), s("1"), p(&client)];
                cl.extend(common);
                cl.extend(fast());
                let (ok0, e0, ok1, e1) = pair(srv, cl);
                assert!(ok0 && ok1, "server: {e0}\nclient: {e1}");
            } else {
                let mut a = vec![format!("--{mode}"), p(&plan)];
                a.extend(common);
                let o = run(&a);
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                assert!(String::from_utf8_lossy(&o.stdout).contains("predicted class"));
            }
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
            assert_eq!(json["mode"], if mode == "two" { "client" } else { mode });
            for party in json["parties"].as_array().unwrap() {
                let instrs = party["instructions"].as_array().unwrap();
                assert_eq!(instrs.len(), prog.instrs().len());
                if mode != "cleartext" {
                    // The set-up, the control byte that started the inference and
                    // the instructions add up to the totals.
                    let sum = |k: &str| {
                        party["setup"][k].as_u64().unwrap()
                            + party["control"][k].as_u64().unwrap()
                            + instrs.iter().map(|i| i[k].as_u64().unwrap()).sum::<u64>()
                    };
                    assert_eq!(
                        sum("bytes_sent"),
                        party["totals"]["bytes_sent"].as_u64().unwrap()
                    );
                    assert_eq!(
                        sum("bytes_recv"),
                        party["totals"]["bytes_recv"].as_u64().unwrap()
                    );
                    // Beside each measured instruction, the cost model's prediction:
                    // the same bytes (no --net: no predicted time).
                    for i in instrs {
                        let pr = &i["predicted"];
                        assert_eq!(pr["bytes_sent"], i["bytes_sent"], "{name} {mode}: {i}");
                        assert_eq!(pr["bytes_recv"], i["bytes_recv"], "{name} {mode}: {i}");
                        assert!(pr["seconds"].is_null());
                    }
                } else {
                    assert!(instrs.iter().all(|i| i["predicted"].is_null()));
                }
            }
            files.push(
                paths
                    .iter()
                    .map(|f| std::fs::read(f).unwrap())
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(files[0], files[1], "{name}: cleartext vs local");
        assert_eq!(files[0], files[2], "{name}: cleartext vs two processes");
    }
}

#[test]
fn net_emulates_a_link_and_the_report_predicts_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let prog = protocol_program(16);
    let (plan, _) = save(dir.path(), "net", &prog);
    let report = dir.path().join("net.json");
    let mut a = vec![s("--local"), p(&plan), s("--net"), s("100MB/s,20ms")];
    a.extend(args("--input", &write_inputs(dir.path(), &prog, 3)));
    a.extend([s("--report"), p(&report), s("--threads"), s("2")]);
    let t = Instant::now();
    let o = run(&a);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("predicted network time on 100 MB/s, 20 ms RTT"),
        "{err}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["net"], "100 MB/s, 20 ms RTT");
    for party in json["parties"].as_array().unwrap() {
        let predicted = party["predicted"]["seconds"].as_f64().unwrap();
        // Every protocol instruction waits at least a round trip; the run takes at
        // least the predicted network time.
        assert!(predicted > 0.02, "{predicted}");
        let measured = party["totals"]["seconds"].as_f64().unwrap();
        assert!(
            measured >= 0.9 * predicted,
            "{measured} s for {predicted} s"
        );
        assert!(t.elapsed().as_secs_f64() >= 0.9 * predicted);
        for i in party["instructions"].as_array().unwrap() {
            let secs = i["predicted"]["seconds"].as_f64().unwrap();
            let bytes = i["bytes_sent"].as_u64().unwrap() + i["bytes_recv"].as_u64().unwrap();
            assert_eq!(secs > 0.0, bytes > 0, "{i}");
        }
    }
    // The emulator runs over plain TCP only; the interpreter has no network.
    for extra in [
        vec![
            s("--local"),
            s("--peer-cert"),
            s("x"),
            s("--key"),
            s("k"),
            s("--cert"),
            s("c"),
        ],
        vec![s("--cleartext")],
    ] {
        let mut a = vec![p(&plan), s("--net"), s("lan")];
        a.extend(extra);
        let o = run(&a);
        assert!(!o.status.success());
        assert!(String::from_utf8_lossy(&o.stderr).contains("--net"));
    }
    let o = run(&[s("--local"), p(&plan), s("--net"), s("40MB/s")]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("BANDWIDTH,RTT"));
}

/// A server and a client on a fresh port, each with extra arguments; both must fail
/// with messages containing the given texts. Returns the server's stderr.
fn both_fail(
    server: (&Path, Vec<String>),
    client: (&Path, Vec<String>),
    server_says: &str,
    client_says: &str,
) -> String {
    let mut srv = vec![s("--party"), s("0"), p(server.0)];
    srv.extend(server.1);
    srv.extend(fast());
    let mut cl = vec![s("--party"), s("1"), p(client.0)];
    cl.extend(client.1);
    cl.extend(fast());
    let (ok0, e0, ok1, e1) = pair(srv, cl);
    assert!(
        !ok0 && !ok1,
        "both must fail ({server_says})\nserver: {e0}\nclient: {e1}"
    );
    assert!(e0.contains(server_says), "server: {e0}");
    assert!(e1.contains(client_says), "client: {e1}");
    assert!(!e0.contains("panicked") && !e1.contains("panicked"));
    e0
}

#[test]
fn setup_errors_stop_both_parties() {
    let dir = tempfile::tempdir().unwrap();
    let prog = protocol_program(16);
    let (plan, client) = save(dir.path(), "a", &prog);
    let (_, other) = save(dir.path(), "b", &protocol_program(17));
    let ins = args("--input", &write_inputs(dir.path(), &prog, 1));
    // A client plan compiled from another model.
    both_fail(
        (&plan, vec![]),
        (&other, ins.clone()),
        "plan mismatch",
        "plan mismatch",
    );
    // Different thread counts.
    let t = |n: &str| vec![s("--threads"), s(n)];
    let mut cl = ins.clone();
    cl.extend(t("3"));
    both_fail(
        (&plan, t("2")),
        (&client, cl),
        "thread count mismatch",
        "thread count mismatch",
    );
    // A truncated client plan: the client says why, the server hears it.
    let bytes = std::fs::read(&client).unwrap();
    let cut = dir.path().join("cut.bin");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    both_fail(
        (&plan, vec![]),
        (&cut, ins.clone()),
        "the peer stopped: plan rejected",
        "truncated plan file",
    );
    // The client's plan given to the server (a plan with weights).
    let lp = local_program();
    let (_, lclient) = save(dir.path(), "l", &lp);
    let lins = args("--input", &write_inputs(dir.path(), &lp, 1));
    both_fail(
        (&lclient, vec![]),
        (&lclient, lins),
        "no weights",
        "the peer stopped: plan rejected",
    );
    // An input of the wrong shape, and of the wrong dtype.
    let bad = dir.path().join("bad.npy");
    Array::from_f32(vec![3, 6, 5], &vec![0.0; 90])
        .unwrap()
        .write(&bad)
        .unwrap();
    let bad_in = vec![s("--input"), p(&bad)];
    let server_err = both_fail(
        (&plan, vec![]),
        (&client, bad_in),
        "the peer stopped: input rejected",
        "shape [3,6,5] where the plan expects [2,3,6,5]",
    );
    // Nothing of the client's error reaches the server: neither the shape nor the file.
    assert!(
        !server_err.contains("[3,6,5]") && !server_err.contains("bad.npy"),
        "{server_err}"
    );
    let ints = dir.path().join("ints.npy");
    Array::from_i64(vec![2, 3, 6, 5], vec![0; 180])
        .unwrap()
        .write(&ints)
        .unwrap();
    let int_in = vec![s("--input"), p(&ints)];
    let server_err = both_fail(
        (&plan, vec![]),
        (&client, int_in),
        "the peer stopped: input rejected",
        "float32",
    );
    assert!(!server_err.contains("float32"), "{server_err}");
}

#[test]
fn same_role_twice_stops_both() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, client) = save(dir.path(), "a", &protocol_program(16));
    for (party, file) in [("0", &plan), ("1", &client)] {
        let mut a = vec![s("--party"), s(party), p(file)];
        a.extend(fast());
        let mut b = vec![s("--party"), s(party), p(file)];
        b.extend(fast());
        if party == "1" {
            let ins = write_inputs(dir.path(), &protocol_program(16), 1);
            a.extend(args("--input", &ins));
            b.extend(args("--input", &ins));
        }
        let (ok0, e0, ok1, e1) = pair(a, b);
        assert!(!ok0 && !ok1);
        for e in [e0, e1] {
            assert!(e.contains("both parties are the"), "{e}");
        }
    }
}

/// A plan that runs long enough to be interrupted: ReLUs of 2^20 elements.
fn long_program() -> Program {
    use sci_ir::{Builder, Encoding, Op, Owner, Type};
    let mut b = Builder::new();
    let ty = Type::new(Encoding::ring(32).unwrap(), 8, vec![1 << 20], Owner::Client).unwrap();
    let mut v = b.input("x", ty).unwrap();
    for i in 0..12 {
        v = b.push(&format!("r{i}"), Op::Relu { x: v }).unwrap();
    }
    b.output("y", v).unwrap();
    b.finish().unwrap()
}

#[test]
fn a_killed_or_silent_peer_stops_the_other_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let prog = long_program();
    let (plan, client) = save(dir.path(), "long", &prog);
    let x = dir.path().join("x.npy");
    Array::from_f32(vec![1 << 20], &vec![0.5; 1 << 20])
        .unwrap()
        .write(&x)
        .unwrap();
    for victim in ["server", "client", "silent server"] {
        let mut srv = listen(&[s("--party"), s("0"), p(&plan), s("--timeout"), s("3")]);
        let cl = [
            s("--party"),
            s("1"),
            p(&client),
            s("--connect"),
            srv.addr.clone(),
            s("--input"),
            p(&x),
            s("--timeout"),
            s("3"),
        ];
        let mut cl = spawn(&cl);
        std::thread::sleep(Duration::from_millis(1500));
        let t0;
        let (ok, err) = if victim == "client" {
            cl.kill().unwrap();
            let _ = cl.wait();
            t0 = Instant::now();
            srv.wait(Duration::from_secs(30))
        } else {
            if victim == "silent server" {
                // Stop it: the client's reads time out.
                Command::new("kill")
                    .args(["-STOP", &srv.child.id().to_string()])
                    .status()
                    .unwrap();
            } else {
                srv.child.kill().unwrap();
            }
            t0 = Instant::now();
            let r = finish(cl, Duration::from_secs(30));
            let _ = srv.child.kill();
            let _ = srv.child.wait();
            r
        };
        assert!(!ok, "{victim}: the survivor must fail");
        // A killed peer is noticed at once. A stopped one is noticed by the read timeout,
        // or, if the survivor is writing, by the write timeout, which the kernel resets
        // whenever the stopped peer's receive buffer still takes a little data: allow a
        // few timeouts.
        let limit = if victim == "silent server" { 30 } else { 10 };
        assert!(
            t0.elapsed() < Duration::from_secs(limit),
            "{victim}: {:?}",
            t0.elapsed()
        );
        let want = if victim == "silent server" {
            "timed out"
        } else {
            "disconnected"
        };
        assert!(
            err.contains(want) && err.contains("relu"),
            "{victim}: {err}"
        );
    }
}

/// The first `n` JSON lines of a `--serve` report, waiting up to 20 s for them.
fn wait_lines(report: &Path, n: usize) -> Vec<serde_json::Value> {
    let t0 = Instant::now();
    loop {
        let text = std::fs::read_to_string(report).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "report: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_answers_clients_one_after_another() {
    let dir = tempfile::tempdir().unwrap();
    let prog = protocol_program(16);
    let (plan, client) = save(dir.path(), "a", &prog);
    let report = dir.path().join("serve.json");
    let mut srv = listen(&[
        s("--party"),
        s("0"),
        p(&plan),
        s("--serve"),
        s("--report"),
        p(&report),
    ]);
    let addr = srv.addr.clone();
    let mut outs = Vec::new();
    for k in 0..3 {
        let (o, paths) = outputs(dir.path(), &prog, &format!("serve{k}"));
        let mut a = vec![
            s("--party"),
            s("1"),
            p(&client),
            s("--connect"),
            addr.clone(),
        ];
        a.extend(args("--input", &write_inputs(dir.path(), &prog, 9)));
        a.extend(args("--output", &o));
        a.extend(fast());
        let r = run(&a);
        assert!(
            r.status.success(),
            "client {k}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        outs.push(
            paths
                .iter()
                .map(|f| std::fs::read(f).unwrap())
                .collect::<Vec<_>>(),
        );
    }
    assert!(
        srv.child.try_wait().unwrap().is_none(),
        "the server keeps serving"
    );
    // One report line per finished session (written after the client is done).
    let lines = wait_lines(&report, 3);
    for l in &lines {
        assert_eq!(l["outcome"], "ok", "{l}");
        assert_eq!(l["session"].as_str().unwrap().len(), 32, "{l}");
        assert!(l["totals"]["bytes_sent"].as_u64().unwrap() > 0, "{l}");
    }
    srv.child.kill().unwrap();
    let _ = srv.child.wait();
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0], outs[2]);
}

#[test]
fn a_peer_that_never_answers_is_a_read_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let prog = protocol_program(16);
    let (_, client) = save(dir.path(), "a", &prog);
    // Accepts the connection and never sends a byte.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let hold = std::thread::spawn(move || l.accept().map(|(c, _)| c));
    let mut a = vec![s("--party"), s("1"), p(&client), s("--connect"), addr];
    a.extend(args("--input", &write_inputs(dir.path(), &prog, 1)));
    a.extend([s("--timeout"), s("2")]);
    let t0 = Instant::now();
    let o = run(&a);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("handshake") && err.contains("timed out"),
        "{err}"
    );
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    drop(hold.join());
}

#[test]
fn no_server_is_an_error_after_the_connect_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let prog = protocol_program(16);
    let (_, client) = save(dir.path(), "a", &prog);
    let mut a = vec![
        s("--party"),
        s("1"),
        p(&client),
        // Port 0 is never listening: the connection is refused at once, every time.
        s("--connect"),
        s("127.0.0.1:0"),
    ];
    a.extend(args("--input", &write_inputs(dir.path(), &prog, 1)));
    a.extend([s("--connect-timeout"), s("1")]);
    let t0 = Instant::now();
    let o = run(&a);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("is the server running?"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(10));
}

/// A key and certificate written by `sci-keygen` into `dir`.
fn keygen(dir: &Path, name: &str) -> (String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_sci-keygen"))
        .args(["--out", &p(dir), "--name", name])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("fingerprint"));
    let f = |ext: &str| p(&dir.join(format!("{name}.{ext}")));
    (f("key"), f("crt"))
}

fn tls_args(me: &(String, String), peer: &(String, String)) -> Vec<String> {
    vec![
        s("--key"),
        me.0.clone(),
        s("--cert"),
        me.1.clone(),
        s("--peer-cert"),
        peer.1.clone(),
    ]
}

#[test]
fn tls_two_processes_equal_cleartext_and_wrong_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, m) = (
        keygen(dir.path(), "a"),
        keygen(dir.path(), "b"),
        keygen(dir.path(), "m"),
    );
    let prog = protocol_program(16);
    let (plan, client) = save(dir.path(), "p", &prog);
    let ins = args("--input", &write_inputs(dir.path(), &prog, 3));
    let (clear_o, clear_f) = outputs(dir.path(), &prog, "clear");
    let mut c = vec![s("--cleartext"), p(&plan)];
    c.extend(ins.clone());
    c.extend(args("--output", &clear_o));
    let o = run(&c);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // (server pins, client is, client pins, succeeds)
    for (srv_peer, cl_me, cl_peer, good) in
        [(&b, &b, &a, true), (&m, &b, &a, false), (&b, &b, &m, false)]
    {
        let mut sa = vec![s("--party"), s("0"), p(&plan)];
        sa.extend(tls_args(&a, srv_peer));
        sa.extend(fast());
        let srv = listen(&sa);
        let addr = srv.addr.clone();
        let (tls_o, tls_f) = outputs(dir.path(), &prog, "tls");
        let mut ca = vec![s("--party"), s("1"), p(&client), s("--connect"), addr];
        ca.extend(tls_args(cl_me, cl_peer));
        ca.extend(ins.clone());
        ca.extend(args("--output", &tls_o));
        ca.extend(fast());
        let (ok1, e1) = finish(spawn(&ca), Duration::from_secs(60));
        let (ok0, e0) = srv.wait(Duration::from_secs(60));
        if good {
            assert!(ok0 && ok1, "server: {e0}\nclient: {e1}");
            assert!(e0.contains("TLS 1.3"), "{e0}");
            for (x, y) in clear_f.iter().zip(&tls_f) {
                assert_eq!(std::fs::read(x).unwrap(), std::fs::read(y).unwrap());
            }
        } else {
            assert!(!ok0 && !ok1, "server: {e0}\nclient: {e1}");
            for e in [&e0, &e1] {
                assert!(e.contains("TLS") && e.contains("certificate"), "{e}");
                assert!(!e.contains("panicked"), "{e}");
            }
        }
    }
}

#[test]
fn plain_tcp_beyond_loopback_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, _) = save(dir.path(), "a", &protocol_program(16));
    let o = run(&[
        s("--party"),
        s("0"),
        p(&plan),
        s("--listen"),
        s("0.0.0.0:0"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("refusing plain TCP") && err.contains("--insecure-plaintext"),
        "{err}"
    );
    assert!(!err.contains("listening on"), "{err}");
}

#[test]
fn serve_runs_sessions_at_once_and_a_silent_client_costs_only_its_own() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let prog = protocol_program(16);
    let (plan, client) = save(dir.path(), "a", &prog);
    let report = dir.path().join("serve.jsonl");
    let mut srv = listen(&[
        s("--party"),
        s("0"),
        p(&plan),
        s("--serve"),
        s("--max-sessions"),
        s("3"),
        s("--threads"),
        s("2"),
        s("--report"),
        p(&report),
        s("--timeout"),
        s("60"),
    ]);
    let addr = srv.addr.clone();
    // A client that opens its session and then says nothing.
    let mut silent = std::net::TcpStream::connect(&addr).unwrap();
    let mut pre = b"SCI-LANE".to_vec();
    pre.extend([0u8; 20]);
    silent.write_all(&pre).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    let clients: Vec<_> = (0..2)
        .map(|k| {
            let (o, paths) = outputs(dir.path(), &prog, &format!("c{k}"));
            let mut a = vec![
                s("--party"),
                s("1"),
                p(&client),
                s("--connect"),
                addr.clone(),
            ];
            a.extend([s("--threads"), s("2")]);
            a.extend(args("--input", &write_inputs(dir.path(), &prog, 4)));
            a.extend(args("--output", &o));
            a.extend(fast());
            (spawn(&a), paths)
        })
        .collect();
    let mut outs = Vec::new();
    for (c, paths) in clients {
        let (ok, e) = finish(c, Duration::from_secs(60));
        assert!(ok, "{e}");
        outs.push(
            paths
                .iter()
                .map(|f| std::fs::read(f).unwrap())
                .collect::<Vec<_>>(),
        );
    }
    // Both finished while the silent session still waits (its timeout is 60 s).
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert_eq!(outs[0], outs[1]);
    let lines = wait_lines(&report, 2);
    assert!(lines.iter().all(|l| l["outcome"] == "ok"), "{lines:?}");
    assert!(
        srv.child.try_wait().unwrap().is_none(),
        "the server keeps serving"
    );
    // SIGTERM: no new sessions (a new client hears "busy"); the silent one ends when
    // its client goes away.
    let k = Command::new("kill")
        .args(["-TERM", &srv.child.id().to_string()])
        .status()
        .unwrap();
    assert!(k.success());
    std::thread::sleep(Duration::from_millis(300));
    let mut late = vec![
        s("--party"),
        s("1"),
        p(&client),
        s("--connect"),
        addr.clone(),
    ];
    late.extend([s("--threads"), s("2")]);
    late.extend(args("--input", &write_inputs(dir.path(), &prog, 4)));
    late.extend(fast());
    let (ok, e) = finish(spawn(&late), Duration::from_secs(30));
    assert!(!ok && e.contains("the peer stopped: server busy"), "{e}");
    drop(silent);
    let (ok, e) = srv.wait(Duration::from_secs(30));
    assert!(ok, "{e}");
    assert!(e.contains("stopping"), "{e}");
    let lines = wait_lines(&report, 3);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[2]["outcome"].as_str().unwrap().starts_with("error"),
        "{lines:?}"
    );
}

/// A tiny plan declaring a 2^32-element input (32 GiB of shares) is refused when it
/// loads, with the estimate and the flag to raise the limit, and exit status 1; a
/// small plan under a tiny `--memory-limit` too; a bad limit is a usage error.
#[test]
fn a_plan_beyond_the_memory_limit_is_refused_when_it_loads() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = sci_ir::Builder::new();
    let x = b
        .input("x", ty(4, &[1 << 16, 1 << 16], sci_ir::Owner::Client))
        .unwrap();
    let r = b.push("r", sci_ir::Op::Relu { x }).unwrap();
    b.output("y", r).unwrap();
    let (huge, huge_client) = save(dir.path(), "huge", &b.finish().unwrap());
    assert!(std::fs::metadata(&huge).unwrap().len() < 4096);
    let (small, _) = save(dir.path(), "small", &protocol_program(16));
    let x = p(&dir.path().join("x.npy"));
    let y = p(&dir.path().join("y.npy"));
    let start = Instant::now();
    for (plan, extra) in [
        (p(&huge), vec![]),
        (p(&huge_client), vec![]),
        (p(&small), vec![s("--memory-limit"), s("0.001")]),
    ] {
        let mut a = vec![s("--local"), plan, s("--input"), x.clone()];
        a.extend([s("--output"), y.clone()]);
        a.extend(extra);
        let out = run(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("more than the memory limit"), "{err}");
        assert!(err.contains("--memory-limit"), "{err}");
    }
    let out = run(&[s("--local"), p(&small), s("--memory-limit"), s("0")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--memory-limit 0: expected a positive"),
        "{err}"
    );
    assert!(start.elapsed() < Duration::from_secs(20));
}
