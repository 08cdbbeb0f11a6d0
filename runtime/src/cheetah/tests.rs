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
use crate::crypto::{Block, Prg};
use crate::net::{Channel, mem};
use crate::proto::Modulus;
use crate::proto::testutil::{open, reference, share};

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

#[test]
fn hostile_keys_and_ciphertexts_are_refused() {
    let geom = ConvGeom {
        input: [1, 2, 5, 5],
        c_out: 2,
        kernel: [3, 3],
        conv: Conv2d::default(),
    };
    let w = vec![1u64; 2 * 2 * 9];
    let layer = Layer::conv("conv7", &geom, 16, Some(&w)).expect("layer");
    let (key, cts) = honest_messages(&layer);
    let h = HEADER_BYTES as usize;
    let seed = sci_ir::rlwe::SEED_BYTES as usize;
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
    let geom = ConvGeom {
        input: [1, 2, 5, 5],
        c_out: 2,
        kernel: [3, 3],
        conv: Conv2d::default(),
    };
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

/// Runs `f` on an engine for each party over one lane of the given channels.
fn engines<R: Send>(
    a: Channel,
    b: Channel,
    f: impl Fn(&mut crate::proto::engine::Engine<&mut crate::ot::Session>, crate::net::Party) -> R
    + Sync,
) -> (R, R) {
    use crate::net::Party;
    let party = |ch: Channel, p: Party, seed: u128| {
        let root = u128::from(sci_testkit::seed()) << 64 | seed;
        let mut s = crate::ot::Session::with_seed(p, vec![ch], Block(root));
        let mut e = crate::proto::engine::Engine::new(&mut s, 4);
        f(&mut e, p)
    };
    run2(|| party(a, Party::Server, 1), || party(b, Party::Client, 2))
}

/// The products of every kind a plan has ([`rlwe::Product`]), with their weights'
/// and operands' shapes and the op the interpreter checks them against.
fn plan_products() -> Vec<(rlwe::Product, Vec<usize>, Vec<usize>, bool)> {
    use rlwe::Product as P;
    let conv = ConvGeom {
        input: [1, 3, 9, 8],
        c_out: 4,
        kernel: [3, 3],
        conv: Conv2d {
            strides: [2, 1],
            pads: [1, 0, 0, 1],
            ..Conv2d::default()
        },
    };
    vec![
        (P::Conv(conv), vec![1, 3, 9, 8], vec![4, 3, 3, 3], false),
        (
            P::Right {
                rows: 2,
                inner: 37,
                outs: 5,
            },
            vec![2, 37],
            vec![37, 5],
            false,
        ),
        (
            P::Left {
                outs: 5,
                inner: 37,
                cols: 2,
            },
            vec![37, 2],
            vec![5, 37],
            true,
        ),
        (
            P::Scale {
                pre: 2,
                c: 3,
                post: 10,
            },
            vec![2, 3, 10],
            vec![3, 1],
            false,
        ),
    ]
}

/// Every kind of product a plan runs ([`Layer::product`]), as one wave and one by
/// one after the key set-up, on engines: outputs equal the interpreter's, and bytes
/// and rounds each way equal the cost model's ([`sci_ir::cost::rlwe`]).
#[test]
fn engine_products_cost_what_the_model_prices() {
    use sci_ir::cost::Transcript;
    use sci_ir::cost::rlwe as price;
    use sci_ir::params::Role;
    for (ell, seed) in [(16u32, 11u64), (37, 12)] {
        let mut g = Prg::new(Block(u128::from(seed)));
        let products = plan_products();
        let data: Vec<(Vec<u64>, Vec<u64>)> = products
            .iter()
            .map(|(_, xs, ws, _)| {
                (
                    elems(&mut g, xs.iter().product(), ell),
                    elems(&mut g, ws.iter().product(), ell),
                )
            })
            .collect();
        let shares: Vec<(Vec<u64>, Vec<u64>)> = data
            .iter()
            .map(|(x, _)| share(&mut g, x, Modulus::Pow2(ell)))
            .collect();
        let layouts: Vec<_> = products.iter().map(|p| p.0.layout(ell).unwrap()).collect();
        let sets = sci_ir::rlwe::sets(&layouts);
        let (a, b) = mem::pair(Some(Duration::from_secs(600)));
        let ((ys0, st0), (ys1, st1)) = engines(a, b, |e, party| {
            let server = party == crate::net::Party::Server;
            let layers: Vec<Layer> = products
                .iter()
                .zip(&data)
                .map(|((p, ..), (_, w))| {
                    Layer::product("fc", p, ell, server.then_some(&w[..])).expect("layer")
                })
                .collect();
            let xs: Vec<&[u64]> = shares
                .iter()
                .map(|(x0, x1)| if server { &x0[..] } else { &x1[..] })
                .collect();
            let stats = |e: &mut crate::proto::engine::Engine<&mut crate::ot::Session>| {
                e.session_mut().lanes_mut()[0].ch.stats()
            };
            let mut st = vec![stats(e)];
            assert!(e.rlwe_keys(&sets).expect("keys"));
            assert!(!e.rlwe_keys(&sets).expect("keys again"), "once per session");
            st.push(stats(e));
            let wave: Vec<(&Layer, &[u64])> = layers.iter().zip(xs.iter().copied()).collect();
            let ys = e.rlwe_products(&wave).expect("wave");
            st.push(stats(e));
            for w in &wave {
                e.rlwe_products(&[*w]).expect("one product");
                st.push(stats(e));
            }
            (ys, st)
        });
        for (k, (p, xs, ws, left)) in products.iter().enumerate() {
            let y = open(&ys0[k], &ys1[k], Modulus::Pow2(ell));
            let (x, w) = (&data[k].0, &data[k].1);
            let xo = (&x[..], &xs[..], Owner::Client);
            let wo = (&w[..], &ws[..], Owner::Server);
            let operands = if *left { [wo, xo] } else { [xo, wo] };
            let want = reference(Modulus::Pow2(ell), &operands, |v| match p {
                rlwe::Product::Conv(g) => Op::Conv2d {
                    x: v[0],
                    w: v[1],
                    bias: None,
                    conv: g.conv,
                },
                rlwe::Product::Scale { .. } => Op::Mul { a: v[0], b: v[1] },
                _ => Op::MatMul {
                    a: v[0],
                    b: v[1],
                    bias: None,
                },
            });
            assert!(y == want.0, "ℓ = {ell}: {p:?}");
        }
        // Transcripts: the keys, the wave, then each product alone.
        let mut steps = vec![price::key_setup(&sets), price::wave(&layouts)];
        steps.extend(layouts.iter().map(price::layer));
        for (i, t) in steps.iter().enumerate() {
            let (s, c) = (st0[i + 1] - st0[i], st1[i + 1] - st1[i]);
            assert_eq!(
                (s.bytes_sent, c.bytes_sent),
                (t.sent(Role::P0), t.sent(Role::P1)),
                "ℓ = {ell}, step {i}"
            );
        }
        // Rounds over the whole run (keys and wave in one flight of the client),
        // from fresh channels (nobody has sent yet).
        let all = steps.into_iter().fold(Transcript::new(), Transcript::then);
        let (s, c) = (st0[st0.len() - 1] - st0[0], st1[st1.len() - 1] - st1[0]);
        let fresh = &mut sci_ir::cost::Waiting { sent: [false; 2] };
        assert_eq!([s.rounds, c.rounds], all.replay(fresh), "ℓ = {ell}");
        assert_eq!(c.rounds, 1 + layouts.len() as u64, "ℓ = {ell}");
    }
}

/// Over TCP, two threads: the server's engine refuses a hostile public key and a
/// hostile ciphertext with a clear error naming the step, and an honest client's
/// product goes through.
#[test]
fn hostile_keys_and_ciphertexts_over_tcp_are_refused() {
    let cfg = crate::net::tcp::TcpConfig {
        timeout: Some(Duration::from_secs(60)),
        ..Default::default()
    };
    let geom = ConvGeom {
        input: [1, 2, 5, 5],
        c_out: 2,
        kernel: [3, 3],
        conv: Conv2d::default(),
    };
    let w = vec![1u64; 2 * 2 * 9];
    let layer = Layer::conv("conv9", &geom, 16, Some(&w)).expect("layer");
    let (key, cts) = honest_messages(&layer);
    let h = HEADER_BYTES as usize;
    let seed = sci_ir::rlwe::SEED_BYTES as usize;
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
        let (a, mut b) = crate::net::tcp::loopback_pair(&cfg).expect("loopback");
        let client = std::thread::spawn(move || {
            b.send(&bytes).expect("send");
            b.flush().expect("flush");
            // Wait until the server hangs up.
            let _ = b.recv_vec(1);
        });
        let mut s = crate::ot::Session::with_seed(crate::net::Party::Server, vec![a], Block(5));
        let mut e = crate::proto::engine::Engine::new(&mut s, 4);
        let x = vec![0u64; layer.in_len()];
        let sets = [layer.layout.set];
        let r = e
            .rlwe_keys(&sets)
            .and_then(|_| e.rlwe_products(&[(&layer, &x)]));
        drop(e);
        drop(s);
        client.join().expect("client thread");
        match r {
            Err(crate::proto::ProtoError::Rlwe(CheetahError::Malformed { layer, what: got })) => {
                assert_eq!(layer, step);
                assert!(got.contains(what), "{got:?} lacks {what:?}");
            }
            r => panic!("{step}: {r:?}"),
        }
    }
    // An honest client over TCP.
    let (a, b) = crate::net::tcp::loopback_pair(&cfg).expect("loopback");
    let client = Layer::conv("conv9", &geom, 16, None).expect("layer");
    let x = vec![3u64; layer.in_len()];
    let (y0, y1) = engines(a, b, |e, party| {
        let (l, x) = match party {
            crate::net::Party::Server => (&layer, vec![0u64; x.len()]),
            crate::net::Party::Client => (&client, x.clone()),
        };
        e.rlwe_products(&[(l, &x)]).expect("product").remove(0)
    });
    let y = open(&y0, &y1, Modulus::Pow2(16));
    assert!(y.iter().all(|&v| v == 3 * 18), "{y:?}");
}
