//! The RLWE steps of the protocol engine ([`super::engine::Engine::rlwe_keys`],
//! [`super::engine::Engine::rlwe_products`]) with both parties on one lane each:
//! every kind of product a plan has, outputs equal to the interpreter's, bytes and
//! rounds equal to the cost model's.

use std::time::Duration;

use sci_ir::rlwe;
use sci_ir::{Conv2d, ConvGeom, Op, Owner};
use sci_testkit::run2;

use super::Modulus;
use super::engine::Engine;
use super::testutil::{open, reference, share, values_with_edges};
use crate::cheetah::Layer;
use crate::crypto::{Block, Prg};
use crate::net::{Channel, Party, mem};
use crate::ot::Session;

/// Runs `f` on an engine for each party over one lane of the given channels.
fn engines<R: Send>(
    a: Channel,
    b: Channel,
    f: impl Fn(&mut Engine<&mut Session>, Party) -> R + Sync,
) -> (R, R) {
    let party = |ch: Channel, p: Party, seed: u128| {
        let root = u128::from(sci_testkit::seed()) << 64 | seed;
        let mut s = Session::with_seed(p, vec![ch], Block(root));
        let mut e = Engine::new(&mut s, 4);
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

/// `n` elements of `Z_{2^ℓ}`: random, ending with the signed range's edges
/// ([`values_with_edges`]' last `n`).
fn elems(g: &mut Prg, n: usize, ell: u32) -> Vec<u64> {
    let mut v = values_with_edges(g, n, Modulus::Pow2(ell));
    v.split_off(v.len() - n)
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
            let server = party == Party::Server;
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
            let stats = |e: &mut Engine<&mut Session>| e.session_mut().lanes_mut()[0].ch.stats();
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
