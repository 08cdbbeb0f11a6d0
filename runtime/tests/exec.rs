//! The executor run by both parties (two threads, in-memory and TCP channels), compared
//! with the reference interpreter bit for bit; the report's sums against the channel
//! counters; failures of the peer.

mod common;

use common::*;
use sci_ir::{Builder, Encoding, Op, Owner, Plan, Tensor, Type};
use sci_runtime::exec::handshake::{Hello, Status};
use sci_runtime::exec::report::{Cost, PartyReport};
use sci_runtime::exec::{self, ExecError, link};
use sci_runtime::net::session::Acceptor;
use sci_runtime::net::tcp::TcpConfig;
use sci_runtime::net::{Party, mem};
use sci_runtime::ot::{OtKind, Session};
use sci_runtime::proto::engine::Engine;
use std::time::Duration;

#[test]
fn protocols_equal_the_interpreter() {
    for (bits, p) in [
        (16, protocol_program(16)),
        (37, protocol_program(37)),
        (32, linear_program()),
    ] {
        let plan = Plan::new(p.clone());
        for t in [1, 3] {
            let x = wide_inputs(&p, 11 + t as u64);
            let want = sci_ir::interp::run(&p, &x).unwrap();
            let (s0, s1) = mem_sessions(t);
            let (got, r0, r1) = run_sessions(&plan, s0, s1, x);
            let got = got.unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "ℓ = {bits}, threads {t}, output {i}");
            }
            for r in [r0.unwrap(), r1.unwrap()] {
                assert_eq!(r.summed_bytes(), (r.totals.bytes_sent, r.totals.bytes_recv));
            }
        }
    }
}

/// The client's outputs, the server's report and the client's report.
type Both = (
    Result<Vec<Tensor>, ExecError>,
    Result<PartyReport, ExecError>,
    Option<PartyReport>,
);

/// Runs both parties over the given channels.
fn run_sessions(plan: &Plan, mut s0: Engine, mut s1: Engine, x: Vec<Tensor>) -> Both {
    let client = plan.client_view();
    std::thread::scope(|sc| {
        let srv = sc.spawn(move || {
            exec::execute(plan.program(), &mut s0, None, Cost::default(), &mut |_| {})
                .map(|e| e.report)
        });
        let cl = exec::execute(
            client.program(),
            &mut s1,
            Some(x),
            Cost::default(),
            &mut |_| {},
        );
        let srv = srv.join().expect("server thread");
        match cl {
            Ok(e) => (Ok(e.outputs.expect("client outputs")), srv, Some(e.report)),
            Err(e) => (Err(e), srv, None),
        }
    })
}

fn mem_sessions(t: usize) -> (Engine, Engine) {
    let (a, b) = mem::pairs(t, Some(Duration::from_secs(20)));
    (
        Engine::new(seeded_session(Party::Server, a), 4),
        Engine::new(seeded_session(Party::Client, b), 4),
    )
}

/// A session of `party` whose randomness derives from the test process's seed
/// ([`sci_testkit::seed`]: printed on failure, replayable with `SCI_TEST_SEED`).
fn seeded_session(party: Party, chans: Vec<sci_runtime::net::Channel>) -> Session {
    let seed = sci_runtime::crypto::Block(sci_testkit::seed().into());
    let p = u64::from(party == Party::Client);
    let root = sci_runtime::crypto::Prg::derive(seed, "test-session", p).next_block();
    Session::with_seed(party, chans, root)
}

#[test]
fn local_ops_equal_the_interpreter() {
    let p = local_program();
    let plan = Plan::new(p.clone());
    for t in [1, 3] {
        for seed in [1, 2] {
            let x = inputs(&p, seed);
            let want = sci_ir::interp::run(&p, &x).unwrap();
            let (s0, s1) = mem_sessions(t);
            let (got, r0, r1) = run_sessions(&plan, s0, s1, x);
            assert_eq!(got.unwrap(), want, "threads {t}, seed {seed}");
            let (r0, r1) = (r0.unwrap(), r1.unwrap());
            // The server sends its share of every non-public output and receives nothing.
            let sent: u64 = p
                .outputs()
                .iter()
                .map(|&o| p.instr(o))
                .filter(|i| i.ty.owner() != Owner::Public)
                .map(|i| (i.ty.numel() as u64 * u64::from(BITS)).div_ceil(8))
                .sum();
            assert_eq!(r0.totals.bytes_sent, sent);
            assert_eq!(r0.totals.bytes_recv, 0);
            assert_eq!(r1.totals.bytes_recv, sent);
            for r in [&r0, &r1] {
                assert_eq!(r.summed_bytes(), (r.totals.bytes_sent, r.totals.bytes_recv));
                assert_eq!(r.instructions.len(), p.instrs().len());
            }
        }
    }
}

#[test]
fn runs_over_tcp_with_handshake_and_ot_setup() {
    let p = local_program();
    let plan = Plan::new(p.clone());
    let x = inputs(&p, 7);
    let want = sci_ir::interp::run(&p, &x).unwrap();
    let cfg = TcpConfig {
        timeout: Some(Duration::from_secs(20)),
        connect_timeout: Duration::from_secs(10),
        ..TcpConfig::default()
    };
    let acceptor = Acceptor::bind("127.0.0.1:0", &cfg).unwrap();
    let addr = acceptor.local_addr().to_string();
    let client = plan.client_view();
    assert_eq!(client.hash(), plan.hash());
    let (c0, c1) = std::thread::scope(|sc| {
        let h = sc.spawn(|| {
            let hello = Hello::new(Party::Server, 2, OtKind::Iknp, plan.hash(), Status::Ready);
            link::accept(&acceptor, Party::Server, (plan.program(), &hello), &cfg).unwrap()
        });
        let hello = Hello::new(Party::Client, 2, OtKind::Iknp, client.hash(), Status::Ready);
        let c1 = link::connect(&addr, Party::Client, (client.program(), &hello), &cfg).unwrap();
        (h.join().unwrap(), c1)
    });
    assert!(c0.setup.bytes_sent > 0 && c0.setup.bytes_sent == c1.setup.bytes_recv);
    let (e0, e1) = (c0.engine(&p).0, c1.engine(&p).0);
    let (got, r0, r1) = run_sessions(&plan, e0, e1, x);
    assert_eq!(got.unwrap(), want);
    let (r0, r1) = (r0.unwrap(), r1.unwrap());
    assert_eq!(r0.totals.bytes_sent, r1.totals.bytes_recv);
    assert_eq!(r0.totals.bytes_recv, r1.totals.bytes_sent);
}

#[test]
fn plan_checks() {
    let p = local_program();
    assert!(matches!(
        exec::check_plan(&p.client_view(), Party::Server),
        Err(ExecError::NoWeights)
    ));
    assert!(exec::check_plan(&p.client_view(), Party::Client).is_ok());
    let mut b = Builder::new();
    let x = b
        .input("x", Type::real(vec![2], Owner::Client).unwrap())
        .unwrap();
    b.output("y", x).unwrap();
    let e = exec::check_plan(&b.finish().unwrap(), Party::Client).unwrap_err();
    assert!(e.to_string().contains("quantized"), "{e}");
    // A lying `trunc nonneg` (its operand is an input, not provably non-negative) is
    // refused by both parties; the honest one (of a relu) is accepted.
    let mut b = Builder::new();
    let ty = Type::new(Encoding::ring(32).unwrap(), 8, vec![4], Owner::Client).unwrap();
    let x = b.input("x", ty).unwrap();
    let r = b.push("r", Op::Relu { x }).unwrap();
    for (name, v) in [("honest", r), ("lying", x)] {
        let op = Op::Trunc {
            x: v,
            s: 3,
            nonneg: true,
        };
        let t = b.push(name, op).unwrap();
        b.output(&format!("out_{name}"), t).unwrap();
    }
    let lying = b.finish().unwrap();
    for party in [Party::Server, Party::Client] {
        let e = exec::check_plan(&lying, party).unwrap_err();
        assert!(
            matches!(&e, ExecError::UnprovenNonneg { name, operand } if name == "lying" && operand == "x"),
            "{e}"
        );
    }
    let honest = common::protocol_program(32);
    assert!(exec::check_plan(&honest, Party::Server).is_ok());
    // A client with the wrong number of inputs.
    let (_s0, mut s1) = mem_sessions(1);
    let e = exec::execute(&p, &mut s1, Some(vec![]), Cost::default(), &mut |_| {}).unwrap_err();
    assert!(matches!(e, ExecError::Inputs(_)), "{e}");
    // An input of the wrong shape.
    let mut x = inputs(&p, 1);
    x[0] = x[0].clone().reshaped(vec![2, 3, 3]).unwrap();
    let e = exec::execute(&p, &mut s1, Some(x), Cost::default(), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("input %x"), "{e}");
}

#[test]
fn a_vanished_peer_is_an_error_naming_the_instruction() {
    let p = local_program();
    let (s0, mut s1) = mem_sessions(1);
    drop(s0);
    let x = inputs(&p, 3);
    let e = exec::execute(
        &p.client_view(),
        &mut s1,
        Some(x),
        Cost::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.peer_gone(), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("%out_r = output") && msg.contains("the peer disconnected"),
        "{msg}"
    );
}

/// MaxPool and ArgMax over a provably non-negative operand (after a ReLU) use the
/// paper's narrow comparison, every other one the exact comparison: both equal the
/// interpreter on the edges of the signed range (ties, 0, ±1, the extremes), and the
/// narrow ones communicate what `proto::maxpool::cost_bits` says for their mode — less
/// than the exact ones on the same geometry.
#[test]
fn maxpool_and_argmax_compare_narrowly_on_nonneg_operands() {
    use sci_ir::Pool2d;
    use sci_runtime::proto::maxpool::{Compare, Windows, cost_bits};
    let shape = [2usize, 3, 6, 5];
    let pool = Pool2d {
        kernel: [3, 3],
        strides: [2, 2],
        pads: [1, 1, 1, 1],
        ceil_mode: true,
    };
    for bits in [4u32, 8, 32, 64] {
        let enc = sci_ir::Encoding::ring(bits).unwrap();
        let mut b = Builder::new();
        let x = b
            .input(
                "x",
                Type::new(enc, 0, shape.to_vec(), Owner::Client).unwrap(),
            )
            .unwrap();
        let r = b.push("r", Op::Relu { x }).unwrap();
        let ops = [
            ("mp_narrow", Op::MaxPool { x: r, pool }),
            ("mp_exact", Op::MaxPool { x, pool }),
            (
                "am_narrow",
                Op::ArgMax {
                    x: r,
                    axis: 1,
                    keepdims: false,
                },
            ),
            (
                "am_exact",
                Op::ArgMax {
                    x,
                    axis: 1,
                    keepdims: false,
                },
            ),
        ];
        for (name, op) in ops {
            let v = b.push(name, op).unwrap();
            b.output(&format!("out_{name}"), v).unwrap();
        }
        let p = b.finish().unwrap();
        let plan = Plan::new(p.clone());
        let x = wide_inputs(&p, u64::from(bits));
        let want = sci_ir::interp::run(&p, &x).unwrap();
        let (s0, s1) = mem_sessions(1);
        let (got, r0, r1) = run_sessions(&plan, s0, s1, x);
        assert_eq!(got.unwrap(), want, "ℓ = {bits}");
        let (r0, r1) = (r0.unwrap(), r1.unwrap());
        let bytes = |name: &str| {
            [&r0, &r1]
                .iter()
                .map(|r| {
                    let i = r.instructions.iter().find(|i| i.name == name).unwrap();
                    i.cost.as_ref().unwrap().bytes_sent
                })
                .sum::<u64>()
        };
        let n: usize = shape.iter().product();
        let pw = Windows::pool2d(shape, &pool).unwrap();
        let aw = Windows::axis(&shape, 1).unwrap();
        for (name, w, cmp, index) in [
            ("mp_narrow", &pw, Compare::Narrow, false),
            ("mp_exact", &pw, Compare::Exact, false),
            ("am_narrow", &aw, Compare::Narrow, true),
            ("am_exact", &aw, Compare::Exact, true),
        ] {
            // The narrow MaxPool runs separably (the columns pass, then the rows pass):
            // `cost::pool::maxpool2d` prices it; the others as the windows at once.
            let want = if name == "mp_narrow" {
                let md = sci_ir::params::Modulus::Pow2(bits);
                assert!(sci_ir::params::pool::separable(&pool, [6, 5], false).is_some());
                sci_ir::cost::pool::maxpool2d(md, 4, shape, &pool, false).bits()
            } else {
                cost_bits(bits, 4, n, w, cmp, index)
            };
            assert_eq!(bytes(name), want.div_ceil(8), "{name}, ℓ = {bits}");
        }
        assert!(bytes("mp_narrow") < bytes("mp_exact"), "ℓ = {bits}");
        assert!(bytes("am_narrow") < bytes("am_exact"), "ℓ = {bits}");
    }
}

/// Two independent branches (a fire module's shape, with signed operands and a division):
/// the schedule runs their products by the server's weights, ReLUs, truncations and
/// divisions as one call each
/// (`sci_ir::schedule::waves`). The result is the interpreter's, bit for bit; a wave's
/// cost is on its first member and the others record none; each instruction's bytes and
/// rounds are the cost model's.
#[test]
fn independent_branches_run_as_one_call() {
    const BODY: &str = "
%x: client i32.12[1,4] = input \"x\"
%w1: server i32.12[4,3] = const [1,-2,3,4,5,-6,7,8,9,10,-11,12]
%w2: server i32.12[4,5] = const [1,2,-3,4,5,6,7,-8,9,10,11,12,13,-14,15,16,17,18,-19,20]
%a: shared i32.24[1,3] = matmul %x, %w1
%b: shared i32.24[1,5] = matmul %x, %w2
%ra: shared i32.24[1,3] = relu %a
%rb: shared i32.24[1,5] = relu %b
%ta: shared i32.12[1,3] = trunc %a s=12
%tb: shared i32.12[1,5] = trunc %b s=12
%da: shared i32.24[1,3] = div_public %ra d=3
%db: shared i32.24[1,5] = div_public %rb d=3
%c: shared i32.12[1,8] = concat %ta, %tb axis=1
%d: shared i32.24[1,8] = concat %da, %db axis=1
%y: client i32.12[1,8] = output %c \"y\"
%z: client i32.24[1,8] = output %d \"z\"
";
    let program = |t: usize| {
        sci_ir::Program::parse(&format!("params mill_radix=4 threads={t}\n{BODY}")).unwrap()
    };
    let p = program(1);
    let nn = sci_ir::analysis::nonneg::nonneg(&p);
    let waves = sci_ir::schedule::waves(&p, &nn);
    let batched: Vec<Vec<&str>> = waves
        .iter()
        .filter(|w| w.is_batched())
        .map(|w| w.members.iter().map(|&v| p.name(v)).collect())
        .collect();
    assert_eq!(
        batched,
        vec![
            vec!["a", "b"],
            vec!["ra", "rb"],
            vec!["ta", "tb"],
            vec!["da", "db"]
        ]
    );
    for t in [1, 2] {
        let p = program(t);
        let x = wide_inputs(&p, 5 + t as u64);
        let want = sci_ir::interp::run(&p, &x).unwrap();
        let run = exec::run_pair(
            &Plan::new(p.clone()),
            vec![x],
            t as u32,
            &TcpConfig::default(),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(run.outputs[0], want, "threads {t}");
        let pred = sci_ir::cost::predict_program(&p, sci_ir::cost::Lanes::of(&p));
        let (r0, r1) = (&run.server[0], &run.client[0]);
        for (i, (s, c)) in r0.instructions.iter().zip(&r1.instructions).enumerate() {
            let (s, c) = (s.cost.as_ref().unwrap(), c.cost.as_ref().unwrap());
            let got = sci_ir::cost::Cost {
                server_bytes: s.bytes_sent,
                client_bytes: c.bytes_sent,
                server_rounds: s.rounds,
                client_rounds: c.rounds,
            };
            assert_eq!(got, pred.instrs[i], "threads {t}, %{}", p.instrs()[i].name);
        }
        for name in ["b", "rb", "tb", "db"] {
            let i = p.instrs().iter().position(|x| x.name == name).unwrap();
            assert!(
                pred.instrs[i].is_local(),
                "{name} is recorded on its wave's first"
            );
        }
        for name in ["a", "ra", "ta", "da"] {
            let i = p.instrs().iter().position(|x| x.name == name).unwrap();
            assert!(pred.instrs[i].rounds() > 0, "{name} carries its wave");
        }
    }
}

#[test]
fn secret_products_equal_the_interpreter_and_the_prediction() {
    // Client × client (broadcast), shared × shared elementwise and as a matrix product
    // with a shared bias: the secret products of one level run as one call; in an RLWE
    // plan the matrix products (by weights and of two secret operands) run by RLWE and
    // the elementwise ones by OT.
    const BODY: &str = "
%x: client i32.12[2,3] = input \"x\"
%v: client i32.12[1,3] = input \"v\"
%w: server i32.12[3,4] = const [1,-2,3,4,5,-6,7,8,9,10,-11,12]
%a: shared i32.24[2,4] = matmul %x, %w
%ta: shared i32.12[2,4] = trunc %a s=12
%sq: client i32.24[2,3] = mul %x, %x
%xv: client i32.24[2,3] = mul %x, %v
%tt: shared i32.12[4,2] = transpose %ta perm=[1,0]
%vv: client i32.24[1,3] = mul %v, %v
%b3: client i32.24[3] = reshape %vv shape=[3]
%b: client i32.24[2] = gather %b3 axis=0 indices=[0,2]
%q: shared i32.24[2,4] = mul %ta, %ta
%m: shared i32.24[2,2] = matmul %ta, %tt, %b
%y1: client i32.24[2,3] = output %sq \"sq\"
%y2: client i32.24[2,3] = output %xv \"xv\"
%y3: client i32.24[2,4] = output %q \"q\"
%y4: client i32.24[2,2] = output %m \"m\"
";
    use sci_ir::Backend;
    use sci_ir::schedule::Step;
    let program = |t: usize, b: Backend| {
        sci_ir::Program::parse(&format!(
            "params mill_radix=4 threads={t}{}\n{BODY}",
            if b == Backend::Rlwe {
                " linear=rlwe"
            } else {
                ""
            }
        ))
        .unwrap()
    };
    let secret = |backend| Step::SecretProduct { backend };
    let m = |b: Backend| {
        let p = program(1, b);
        let v = p.ids().find(|&v| p.name(v) == "m").unwrap();
        (
            p.secret_product_backend(v),
            sci_ir::rlwe::layouts(&p, v).map(|l| l.unwrap().len()),
        )
    };
    assert_eq!(m(Backend::Ot), (Some(Backend::Ot), None));
    assert_eq!(m(Backend::Rlwe), (Some(Backend::Rlwe), Some(2)));
    for (b, want) in [
        (
            Backend::Ot,
            vec![
                (secret(Backend::Ot), vec!["sq", "xv", "vv"]),
                (secret(Backend::Ot), vec!["q", "m"]),
            ],
        ),
        (
            Backend::Rlwe,
            vec![(secret(Backend::Ot), vec!["sq", "xv", "vv"])],
        ),
    ] {
        let p = program(1, b);
        let nn = sci_ir::analysis::nonneg::nonneg(&p);
        let batched: Vec<(Step, Vec<&str>)> = sci_ir::schedule::waves(&p, &nn)
            .iter()
            .filter(|w| w.is_batched())
            .map(|w| (w.step, w.members.iter().map(|&v| p.name(v)).collect()))
            .collect();
        assert_eq!(batched, want, "{b}");
    }
    for (t, b) in [1, 2, 3]
        .into_iter()
        .flat_map(|t| [(t, Backend::Ot), (t, Backend::Rlwe)])
    {
        let p = program(t, b);
        let x = wide_inputs(&p, 7 + t as u64);
        let want = sci_ir::interp::run(&p, &x).unwrap();
        let run = exec::run_pair(
            &Plan::new(p.clone()),
            vec![x],
            t as u32,
            &TcpConfig::default(),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(run.outputs[0], want, "threads {t}, {b}");
        let pred = sci_ir::cost::predict_program(&p, sci_ir::cost::Lanes::of(&p));
        let (r0, r1) = (&run.server[0], &run.client[0]);
        for (i, (s, c)) in r0.instructions.iter().zip(&r1.instructions).enumerate() {
            let (s, c) = (s.cost.as_ref().unwrap(), c.cost.as_ref().unwrap());
            let got = sci_ir::cost::Cost {
                server_bytes: s.bytes_sent,
                client_bytes: c.bytes_sent,
                server_rounds: s.rounds,
                client_rounds: c.rounds,
            };
            assert_eq!(
                got,
                pred.instrs[i],
                "threads {t}, {b}, %{}",
                p.instrs()[i].name
            );
        }
    }
}

#[test]
fn smooth_activations_equal_the_interpreter_and_the_prediction() {
    // Sigmoid and tanh of a linear layer's output and of the client's input, SiLU (x ·
    // sigmoid(x), a secret product), and two independent sigmoids of one level batched
    // into one call; rsqrt of a square and of the client's input (negative ones read as
    // the smallest positive value); softmax along either axis (exact comparisons, and
    // the narrow ones of a non-negative operand).
    const BODY: &str = "
%x: client i32.12[2,3] = input \"x\"
%w: server i32.12[3,4] = const [1,-2,3,4,5,-6,7,8,9,10,-11,12]
%a: shared i32.24[2,4] = matmul %x, %w
%ta: shared i32.12[2,4] = trunc %a s=12
%s: shared i32.12[2,4] = sigmoid %ta
%sx: client i32.12[2,3] = sigmoid %x
%tb: shared i32.12[2,4] = mul_public %ta k=-2
%s2: shared i32.12[2,4] = sigmoid %tb
%h: shared i32.12[2,4] = tanh %ta
%silu: shared i32.24[2,4] = mul %ta, %s
%y1: client i32.12[2,4] = output %s \"s\"
%y2: client i32.12[2,3] = output %sx \"sx\"
%y3: client i32.12[2,4] = output %h \"h\"
%y4: client i32.24[2,4] = output %silu \"silu\"
%y5: client i32.12[2,4] = output %s2 \"s2\"
%sq: shared i32.24[2,4] = mul %ta, %ta
%v: shared i32.12[2,4] = trunc %sq s=12
%r: shared i32.12[2,4] = rsqrt %v
%rx: client i32.12[2,3] = rsqrt %x
%y6: client i32.12[2,4] = output %r \"r\"
%y7: client i32.12[2,3] = output %rx \"rx\"
%sm: shared i32.12[2,4] = softmax %ta axis=1
%smx: client i32.12[2,3] = softmax %x axis=0
%smr: shared i32.12[2,4] = softmax %r axis=0
%y8: client i32.12[2,4] = output %sm \"sm\"
%y9: client i32.12[2,3] = output %smx \"smx\"
%y10: client i32.12[2,4] = output %smr \"smr\"
";
    let program = |t: usize| {
        sci_ir::Program::parse(&format!("params mill_radix=4 threads={t}\n{BODY}")).unwrap()
    };
    let p = program(1);
    let nn = sci_ir::analysis::nonneg::nonneg(&p);
    let batched: Vec<(sci_ir::schedule::Step, Vec<&str>)> = sci_ir::schedule::waves(&p, &nn)
        .iter()
        .filter(|w| w.is_batched())
        .map(|w| (w.step, w.members.iter().map(|&v| p.name(v)).collect()))
        .collect();
    let sigmoid = sci_ir::schedule::Step::Smooth {
        kind: sci_ir::math::Smooth::Sigmoid,
        s: 12,
    };
    assert_eq!(batched, vec![(sigmoid, vec!["s", "s2"])]);
    for t in [1, 2] {
        let p = program(t);
        // Inputs in ±6 (the functions' interesting range) with 0 and the extremes.
        let ty = p.ty(p.inputs()[0]);
        let mut v = values(ty.numel(), 11 + t as u64, 6 << 12);
        v[..3].copy_from_slice(&[0, i32::MIN.into(), i32::MAX.into()]);
        let x = vec![Tensor::signed(ty.encoding(), ty.shape().to_vec(), &v).unwrap()];
        let want = sci_ir::interp::run(&p, &x).unwrap();
        let run = exec::run_pair(
            &Plan::new(p.clone()),
            vec![x],
            t as u32,
            &TcpConfig::default(),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(run.outputs[0], want, "threads {t}");
        let pred = sci_ir::cost::predict_program(&p, sci_ir::cost::Lanes::of(&p));
        let (r0, r1) = (&run.server[0], &run.client[0]);
        for (i, (s, c)) in r0.instructions.iter().zip(&r1.instructions).enumerate() {
            let (s, c) = (s.cost.as_ref().unwrap(), c.cost.as_ref().unwrap());
            let got = sci_ir::cost::Cost {
                server_bytes: s.bytes_sent,
                client_bytes: c.bytes_sent,
                server_rounds: s.rounds,
                client_rounds: c.rounds,
            };
            assert_eq!(got, pred.instrs[i], "threads {t}, %{}", p.instrs()[i].name);
        }
    }
}
