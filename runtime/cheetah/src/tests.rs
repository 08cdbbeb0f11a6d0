//! Both parties of the RLWE products in two threads over an in-memory
//! channel: outputs reconstructed mod `2^ℓ` and compared with the reference
//! interpreter, bytes each way compared with the layout's formulas, and
//! hostile messages refused.

use std::time::Duration;

use sci_ir::rlwe::{self, HEADER_BYTES, ParamSet};
use sci_ir::{Conv2d, ConvGeom, Op, Owner};
use sci_testkit::run2;

use super::keys::SecretKey;
use super::{CheetahError, Keys, Layer, run, wire};
use sci_net::crypto::{Block, Prg};
use sci_net::{Channel, mem};
use sci_ot::Modulus;
use sci_ot::testing::{open, reference, share};

/// The parties' keys, channels and generators.
struct Pair {
    server: (Keys, Channel, Prg),
    client: (Keys, Channel, Prg),
}

fn pair(seed: u64) -> Pair {
    let (a, b) = mem::pair(Some(Duration::from_secs(600)));
    let root = u128::from(sci_testkit::seed()) << 64 | u128::from(seed);
    Pair {
        server: (Keys::server(), a, Prg::derive(Block(root), "server", 0)),
        client: (Keys::client(), b, Prg::derive(Block(root), "client", 0)),
    }
}

/// Runs `server`/`client` (the same product, the server's with weights) on
/// shares of `x`; checks the bytes each way against the layout's formulas
/// (the public key with the first product of its set) and returns the opened
/// output.
fn run_product(p: &mut Pair, server: &Layer, client: &Layer, x: &[u64], g: &mut Prg) -> Vec<u64> {
    let l = &server.layout;
    let (x0, x1) = share(g, x, Modulus::Pow2(l.ell));
    let Pair {
        server: s,
        client: c,
    } = p;
    let key = if c.0.has(l.set) { 0 } else { l.set.key_bytes() };
    let before = s.1.stats();
    let (y0, y1) = run2(
        || run(&mut s.0, &mut s.1, &mut s.2, server, &x0).expect("server"),
        || run(&mut c.0, &mut c.1, &mut c.2, client, &x1).expect("client"),
    );
    let st = s.1.stats() - before;
    assert_eq!(
        (st.bytes_recv, st.bytes_sent),
        (l.bytes_up() + key, l.bytes_down()),
        "{:?}",
        l.conv.geom
    );
    open(&y0, &y1, Modulus::Pow2(l.ell))
}

/// Random elements of `Z_{2^ℓ}` with the edges 0, ±1, ±2^(ℓ−1) first.
fn elems(g: &mut Prg, n: usize, ell: u32) -> Vec<u64> {
    let md = Modulus::Pow2(ell);
    let mut v = md.random(g, n);
    let half = 1u64 << (ell - 1);
    for (d, e) in v
        .iter_mut()
        .zip([0, 1, md.reduce_i128(-1), half, half - 1, half + 1])
    {
        *d = e;
    }
    v
}

/// A convolution case: input, c_out, kernel, strides, pads, dilations, groups.
type Case = (
    [usize; 4],
    usize,
    [usize; 2],
    [usize; 2],
    [usize; 4],
    [usize; 2],
    usize,
);

fn check_convs(ell: u32, cases: &[Case], seed: u64) {
    let mut p = pair(seed);
    let mut g = Prg::new(Block(u128::from(seed)));
    for &(input, c_out, kernel, strides, pads, dilations, groups) in cases {
        let conv = Conv2d {
            strides,
            pads,
            dilations,
            groups,
        };
        let geom = ConvGeom {
            input,
            c_out,
            kernel,
            conv,
        };
        let wshape = [c_out, input[1] / groups, kernel[0], kernel[1]];
        let x = elems(&mut g, input.iter().product(), ell);
        let w = elems(&mut g, wshape.iter().product(), ell);
        let server = Layer::conv("conv", &geom, ell, Some(&w)).expect("server layer");
        let client = Layer::conv("conv", &geom, ell, None).expect("client layer");
        let y = run_product(&mut p, &server, &client, &x, &mut g);
        let want = reference(
            Modulus::Pow2(ell),
            &[(&x, &input, Owner::Client), (&w, &wshape, Owner::Server)],
            |v| Op::Conv2d {
                x: v[0],
                w: v[1],
                bias: None,
                conv,
            },
        );
        assert!(y == want.0, "ℓ = {ell}: {geom:?}");
    }
}

/// Small shapes: strides 1/2, pads, dilation 2, groups, depthwise, batch 2.
const SMALL: [Case; 9] = [
    ([1, 3, 8, 8], 4, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ([1, 4, 9, 8], 6, [3, 2], [2, 2], [1, 0, 2, 1], [1, 1], 2),
    ([1, 3, 13, 14], 5, [3, 3], [2, 2], [2, 1, 1, 2], [2, 2], 1),
    ([1, 2, 11, 12], 3, [3, 3], [1, 1], [1, 2, 0, 1], [2, 2], 1),
    ([1, 8, 9, 9], 8, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 8),
    ([1, 6, 7, 7], 6, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 6),
    ([2, 3, 9, 8], 4, [3, 3], [2, 1], [1, 0, 0, 1], [1, 2], 1),
    ([1, 5, 9, 10], 3, [1, 1], [2, 2], [0; 4], [1, 1], 1),
    ([2, 4, 5, 5], 4, [1, 1], [1, 1], [0; 4], [1, 1], 4),
];

#[test]
fn convolutions_equal_the_interpreter_16() {
    check_convs(16, &SMALL, 1);
}

#[test]
fn convolutions_equal_the_interpreter_32() {
    check_convs(32, &SMALL, 2);
}

#[test]
fn convolutions_equal_the_interpreter_37() {
    check_convs(37, &SMALL, 3);
}

#[test]
fn partitioned_convolutions_equal_the_interpreter() {
    // Partitioned in C (300 channels × 49 > N) and in H·W (a 3×90×90 image).
    let cases: [Case; 2] = [
        ([1, 300, 7, 7], 7, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
        ([1, 3, 90, 90], 4, [3, 3], [2, 2], [0; 4], [1, 1], 1),
    ];
    check_convs(37, &cases, 4);
    check_convs(16, &cases[1..], 5);
}

#[test]
fn squeezenet_conv10_equals_the_interpreter() {
    check_convs(
        37,
        &[([1, 512, 13, 13], 1000, [1, 1], [1, 1], [0; 4], [1, 1], 1)],
        6,
    );
}

#[test]
fn matrix_products_equal_the_interpreter() {
    for (ell, seed) in [(16u32, 7u64), (32, 8), (37, 9)] {
        let mut p = pair(seed);
        let mut g = Prg::new(Block(u128::from(seed)));
        for (rows, inner, outs) in [
            (1usize, 1024usize, 10usize),
            (2, 37, 5),
            (1, 5000, 3),
            (3, 64, 300),
        ] {
            let x = elems(&mut g, rows * inner, ell);
            let w = elems(&mut g, inner * outs, ell);
            // X·W (X [rows, inner]), then W·X (W [outs, inner], X [inner, rows]).
            for left in [false, true] {
                let layer = |w| match left {
                    false => Layer::matmul("fc", (rows, inner, outs), ell, w),
                    true => Layer::matmul_left("fc", (outs, inner, rows), ell, w),
                };
                let server = layer(Some(&w)).expect("layer");
                let client = layer(None).expect("layer");
                let y = run_product(&mut p, &server, &client, &x, &mut g);
                let xs = (&x[..], &[inner, rows][..], Owner::Client);
                let ws = (&w[..], &[outs, inner][..], Owner::Server);
                let operands = match left {
                    false => [
                        (&x[..], &[rows, inner][..], Owner::Client),
                        (&w, &[inner, outs], Owner::Server),
                    ],
                    true => [ws, xs],
                };
                let want = reference(Modulus::Pow2(ell), &operands, |v| Op::MatMul {
                    a: v[0],
                    b: v[1],
                    bias: None,
                });
                assert!(
                    y == want.0,
                    "ℓ = {ell}, W on the left: {left}, {rows}×{inner}×{outs}"
                );
            }
        }
    }
}

/// Products of two secret matrices ([`super::secret`]), several in one exchange:
/// random operands with the edges 0, ±1, ±2^(ℓ−1) first, shared, both parties run,
/// the opened result equal to the interpreter's `matmul` of two shared operands;
/// bytes each way the cross terms' layouts summed (the key with the first set),
/// one round trip.
#[test]
fn secret_matrix_products_equal_the_interpreter() {
    use super::SecretMatMul;
    use super::secret::products;
    use sci_ir::params::Role;
    for (ell, seed) in [(16u32, 11u64), (32, 12), (37, 13)] {
        let md = Modulus::Pow2(ell);
        let mut p = pair(seed);
        let mut g = Prg::new(Block(u128::from(seed)));
        // Attention-like (Q·Kᵀ of one head, softmax·V), a vector, and a wide one.
        let dims = [(9usize, 8usize, 9usize), (9, 9, 8), (1, 64, 7), (4, 300, 3)];
        for round in 0..2 {
            let ops: Vec<(Vec<u64>, Vec<u64>)> = dims
                .iter()
                .map(|&(n, k, m)| (elems(&mut g, n * k, ell), elems(&mut g, k * m, ell)))
                .collect();
            let shares: Vec<_> = ops
                .iter()
                .map(|(a, b)| (share(&mut g, a, md), share(&mut g, b, md)))
                .collect();
            let mine = |party: usize| -> Vec<SecretMatMul<'_>> {
                dims.iter()
                    .zip(&shares)
                    .map(|(&dims, (a, b))| SecretMatMul {
                        name: "qk",
                        dims,
                        a: if party == 0 { &a.0 } else { &a.1 },
                        b: if party == 0 { &b.0 } else { &b.1 },
                    })
                    .collect()
            };
            let layouts: Vec<rlwe::Layout> = dims
                .iter()
                .flat_map(|&(n, k, m)| rlwe::secret_matmul(n, k, m))
                .map(|t| t.layout(ell).expect("layout"))
                .collect();
            let sets = rlwe::sets(&layouts);
            let key: u64 = if round == 0 {
                sets.iter().map(|s| s.key_bytes()).sum()
            } else {
                0
            };
            let Pair {
                server: s,
                client: c,
            } = &mut p;
            let before = (s.1.stats(), c.1.stats());
            let (ps0, ps1) = (mine(0), mine(1));
            let (y0, y1) = run2(
                || {
                    products(true, ell, &ps0, |calls| {
                        super::run_all(&mut s.0, &mut s.1, &mut s.2, calls)
                    })
                    .expect("server")
                },
                || {
                    products(false, ell, &ps1, |calls| {
                        super::run_all(&mut c.0, &mut c.1, &mut c.2, calls)
                    })
                    .expect("client")
                },
            );
            let (st, ct) = (s.1.stats() - before.0, c.1.stats() - before.1);
            // The cost model's price of the wave: its cross terms, the keys ahead.
            let t = sci_ir::cost::rlwe::wave(&layouts);
            let (up, down) = (t.sent(Role::P1), t.sent(Role::P0));
            assert_eq!(up, layouts.iter().map(|l| l.bytes_up()).sum::<u64>());
            assert_eq!(
                (st.bytes_recv, st.bytes_sent),
                (up + key, down),
                "ℓ = {ell}"
            );
            let keyed: &[&ParamSet] = if round == 0 { &sets } else { &[] };
            assert_eq!(key, sci_ir::cost::rlwe::key_setup_bytes(keyed));
            // The server's first receive follows nothing it sent: no round.
            assert_eq!(
                (st.rounds, ct.rounds),
                (u64::from(round > 0), 1),
                "ℓ = {ell}"
            );
            for (((&(n, k, m), (a, b)), y0), y1) in dims.iter().zip(&ops).zip(&y0).zip(&y1) {
                let want = reference(
                    md,
                    &[(a, &[n, k], Owner::Client), (b, &[k, m], Owner::Client)],
                    |v| Op::MatMul {
                        a: v[0],
                        b: v[1],
                        bias: None,
                    },
                );
                assert!(open(y0, y1, md) == want.0, "ℓ = {ell}: {n}×{k}×{m}");
            }
        }
    }
}

/// The server of a secret matrix product refuses a hostile client as any RLWE
/// product's (the same [`wire`] checks, the instruction named): here a ciphertext
/// message announcing one object too many after a valid key.
#[test]
fn secret_products_refuse_hostile_ciphertexts() {
    use super::SecretMatMul;
    use super::secret::products;
    let (n, k, m) = (3, 4, 2);
    let (a, b) = (vec![5u64; n * k], vec![7u64; k * m]);
    let p = SecretMatMul {
        name: "attn.qk",
        dims: (n, k, m),
        a: &a,
        b: &b,
    };
    let [(left, _), _] = p.cross_terms(true, 16).expect("layers");
    let (key, mut cts) = honest_messages(&left);
    cts[2] += 1;
    let mut bytes = key;
    bytes.extend(cts);
    let (mut ch, mut peer) = mem::pair(Some(Duration::from_secs(60)));
    let (r, _) = run2(
        || {
            products(true, 16, &[p], |calls| {
                super::run_all(&mut Keys::server(), &mut ch, &mut Prg::new(Block(1)), calls)
            })
        },
        move || {
            peer.send(&bytes).expect("send");
            peer.flush().expect("flush");
        },
    );
    match r {
        Err(CheetahError::Malformed { layer, what }) => {
            assert_eq!(layer, "attn.qk");
            assert!(what.contains("objects"), "{what}");
        }
        r => panic!("{r:?}"),
    }
}

/// A product of two secret matrices with shares of the wrong length or unreduced
/// is an error naming the operand, before anything is sent.
#[test]
fn secret_products_check_their_shares() {
    use super::SecretMatMul;
    let a = vec![1u64; 6];
    let p = SecretMatMul {
        name: "qk",
        dims: (2, 3, 2),
        a: &a,
        b: &a[..5],
    };
    let e = p.cross_terms(true, 16).expect_err("refused");
    assert!(e.to_string().contains("right operand"), "{e}");
    let big = vec![1u64 << 16; 6];
    let p = SecretMatMul { b: &big, ..p };
    let e = p.cross_terms(false, 16).expect_err("refused");
    assert!(e.to_string().contains("reduced mod 2^16"), "{e}");
}

/// Runs the server of `layer` against a client that sends `bytes` and hangs
/// up; returns the server's error.
fn server_error(layer: &Layer, bytes: Vec<u8>) -> CheetahError {
    let (mut a, mut b) = mem::pair(Some(Duration::from_secs(60)));
    let x = vec![0u64; layer.in_len()];
    let (r, _) = run2(
        || {
            run(
                &mut Keys::server(),
                &mut a,
                &mut Prg::new(Block(1)),
                layer,
                &x,
            )
        },
        move || {
            b.send(&bytes).expect("send");
            b.flush().expect("flush");
            // Dropping `b` hangs up; what was sent stays readable.
        },
    );
    match r {
        Err(e) => e,
        Ok(_) => panic!("the server accepted a hostile message"),
    }
}

/// A valid public key message and a valid ciphertext message for `layer`,
/// as the client would send them.
fn honest_messages(layer: &Layer) -> (Vec<u8>, Vec<u8>) {
    let set: &'static ParamSet = layer.layout.set;
    let (sk, pk) = SecretKey::generate(set, &mut Prg::new(Block(3)));
    let capture = |f: &dyn Fn(&mut Channel)| {
        let (mut a, mut b) = mem::pair(Some(Duration::from_secs(60)));
        f(&mut a);
        a.flush().expect("flush");
        let n = a.stats().bytes_sent as usize;
        b.recv_vec(n).expect("captured bytes")
    };
    let key = capture(&|ch| pk.send(ch).expect("key"));
    let scale = super::params::Scale::new(super::params::ring(set), layer.layout.ell);
    let cts = capture(&|ch| {
        wire::send_header(ch, set, layer.layout.in_cts()).expect("header");
        for k in 0..layer.layout.in_cts() {
            let (seed, c0) = sk.encrypt(
                &vec![0; set.degree],
                &scale,
                &mut Prg::new(Block(k as u128)),
            );
            wire::send_poly(ch, set, seed, &c0).expect("ct");
        }
    });
    (key, cts)
}

/// The hostile-message tests' layer: a 2-channel 5×5 convolution by all-one 3×3
/// weights at ℓ = 16, the server's, named `name`.
fn small_conv(name: &str) -> (ConvGeom, Layer) {
    let geom = ConvGeom {
        input: [1, 2, 5, 5],
        c_out: 2,
        kernel: [3, 3],
        conv: Conv2d::default(),
    };
    let w = vec![1u64; 2 * 2 * 9];
    let layer = Layer::conv(name, &geom, 16, Some(&w)).expect("layer");
    (geom, layer)
}

#[test]
fn hostile_keys_and_ciphertexts_are_refused() {
    let (_, layer) = small_conv("conv7");
    let (key, cts) = honest_messages(&layer);
    let (h, seed) = (HEADER_BYTES as usize, sci_ir::rlwe::SEED_BYTES as usize);
    let expect = |bytes: Vec<u8>, what: &str| match server_error(&layer, bytes) {
        CheetahError::Malformed { layer, what: got } => {
            assert_eq!(layer, "conv7");
            assert!(got.contains(what), "{got:?} lacks {what:?}");
        }
        e => panic!("{e:?}"),
    };
    // A key of another parameter set, at another level, with an unreduced residue.
    let mut bad = key.clone();
    bad[0] = 1;
    expect(bad, "parameter set");
    let mut bad = key.clone();
    bad[1] = 3;
    expect(bad, "level");
    let mut bad = key.clone();
    for b in &mut bad[h + seed..h + seed + 8] {
        *b = 0xff;
    }
    expect(bad, "not reduced");
    // Ciphertexts: wrong count (length), wrong level, unreduced residue.
    let mut bad = key.clone();
    let mut c = cts.clone();
    c[2] += 1;
    bad.extend(c);
    expect(bad, "objects");
    let mut bad = key.clone();
    let mut c = cts.clone();
    c[1] = 1;
    bad.extend(c);
    expect(bad, "level");
    let mut bad = key.clone();
    let mut c = cts.clone();
    for b in &mut c[h + seed..h + seed + 8] {
        *b = 0xff;
    }
    bad.extend(c);
    expect(bad, "not reduced");
    // A truncated message is a channel error, not a panic.
    let mut short = key.clone();
    short.extend(&cts[..cts.len() / 2]);
    let (mut a, mut b) = mem::pair(Some(Duration::from_secs(5)));
    let x = vec![0u64; layer.in_len()];
    let (r, _) = run2(
        || {
            run(
                &mut Keys::server(),
                &mut a,
                &mut Prg::new(Block(1)),
                &layer,
                &x,
            )
        },
        move || {
            b.send(&short).expect("send");
            b.flush().expect("flush");
            drop(b);
        },
    );
    assert!(matches!(r, Err(CheetahError::Net(_))), "{r:?}");
}

#[test]
fn hostile_replies_are_refused() {
    let (geom, _) = small_conv("conv8");
    let layer = Layer::conv("conv8", &geom, 16, None).expect("layer");
    let (mut a, mut b) = mem::pair(Some(Duration::from_secs(60)));
    let x = vec![0u64; layer.in_len()];
    let set = layer.layout.set;
    let n_up = set.key_bytes() + layer.layout.bytes_up();
    let out_cts = layer.layout.out_cts();
    let (r, _) = run2(
        || {
            run(
                &mut Keys::client(),
                &mut a,
                &mut Prg::new(Block(1)),
                &layer,
                &x,
            )
        },
        move || {
            b.recv_vec(n_up as usize).expect("the client's messages");
            // A reply announcing one ciphertext too many.
            wire::send_header(&mut b, set, out_cts + 1).expect("header");
            b.flush().expect("flush");
        },
    );
    match r {
        Err(CheetahError::Malformed { layer, what }) => {
            assert_eq!(layer, "conv8");
            assert!(what.contains("objects"), "{what}");
        }
        r => panic!("{r:?}"),
    }
}

/// Over TCP, two threads: the server refuses a hostile public key and a hostile
/// ciphertext with a clear error naming the step (the key set-up as the protocol
/// engine names it), and an honest client's product goes through.
#[test]
fn hostile_keys_and_ciphertexts_over_tcp_are_refused() {
    let cfg = sci_net::tcp::TcpConfig {
        timeout: Some(Duration::from_secs(60)),
        ..Default::default()
    };
    let (geom, layer) = small_conv("conv9");
    let (key, cts) = honest_messages(&layer);
    let (h, seed) = (HEADER_BYTES as usize, sci_ir::rlwe::SEED_BYTES as usize);
    let mut bad_key = key.clone();
    bad_key[0] = 2;
    let mut bad_ct = key.clone();
    let mut c = cts.clone();
    c[h + seed..h + seed + 8].fill(0xff);
    bad_ct.extend(c);
    let cases = [
        (bad_key, "the key set-up", "parameter set 2, expected 0"),
        (bad_ct, "conv9", "not reduced"),
    ];
    for (bytes, step, what) in cases {
        let (a, mut b) = sci_net::tcp::loopback_pair(&cfg).expect("loopback");
        let client = std::thread::spawn(move || {
            b.send(&bytes).expect("send");
            b.flush().expect("flush");
            // Wait until the server hangs up.
            let _ = b.recv_vec(1);
        });
        let mut keys = Keys::server();
        let mut prg = Prg::new(Block(5));
        let mut a = a;
        let x = vec![0u64; layer.in_len()];
        let sets = [layer.layout.set];
        let r = keys
            .setup(&mut a, &mut prg, &sets, "the key set-up")
            .and_then(|_| run(&mut keys, &mut a, &mut prg, &layer, &x));
        drop(a);
        client.join().expect("client thread");
        match r {
            Err(CheetahError::Malformed { layer, what: got }) => {
                assert_eq!(layer, step);
                assert!(got.contains(what), "{got:?} lacks {what:?}");
            }
            r => panic!("{step}: {r:?}"),
        }
    }
    // An honest client over TCP.
    let (a, b) = sci_net::tcp::loopback_pair(&cfg).expect("loopback");
    let client = Layer::conv("conv9", &geom, 16, None).expect("layer");
    let x = vec![3u64; layer.in_len()];
    let (mut p, mut q) = (a, b);
    let (y0, y1) = run2(
        || {
            let x0 = vec![0u64; x.len()];
            run(
                &mut Keys::server(),
                &mut p,
                &mut Prg::new(Block(1)),
                &layer,
                &x0,
            )
            .expect("server")
        },
        || {
            run(
                &mut Keys::client(),
                &mut q,
                &mut Prg::new(Block(2)),
                &client,
                &x,
            )
            .expect("client")
        },
    );
    let y = open(&y0, &y1, Modulus::Pow2(16));
    assert!(y.iter().all(|&v| v == 3 * 18), "{y:?}");
}
