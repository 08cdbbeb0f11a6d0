//! SCI_HE against the cost model (`sci_ir::cost::he`): the ciphertext counts of every
//! packing (`he::conv`, `he::fc`, `he::mul`) equal the model's closed forms on many
//! shapes (no encryption needed), and the bytes each party sends in the key set-up and
//! in real layers (two fields: replies at level 4 and at level 3) equal the model's
//! exactly. The whole-plan check is the workspace's `tests/cost_model.rs`.

use std::time::Duration;

use sci_ir::ConvGeom;
use sci_ir::backend::he_prime;
use sci_ir::cost::he::{self, Counts};
use sci_ir::params::Role;
use sci_runtime::he::conv::Conv;
use sci_runtime::he::fc::MatMul;
use sci_runtime::he::mul::Mul;
use sci_runtime::he::{Keys, Packing, layer};
use sci_runtime::net::{Channel, Party, mem};

/// The runtime packing's counts, `None` if it refuses the shape.
fn counts<P: Packing>(p: Result<P, sci_runtime::he::HeError>) -> Option<Counts> {
    p.ok().map(|p| Counts {
        up: p.in_cts(),
        down: p.out_cts(),
    })
}

/// A convolution geometry.
fn geom(
    input: [usize; 4],
    c_out: usize,
    kernel: [usize; 2],
    strides: [usize; 2],
    pads: [usize; 4],
    dilations: [usize; 2],
    groups: usize,
) -> ConvGeom {
    ConvGeom {
        input,
        c_out,
        kernel,
        conv: sci_ir::Conv2d {
            strides,
            pads,
            dilations,
            groups,
        },
    }
}

#[test]
fn ciphertext_counts_equal_the_packings() {
    let mut convs = Vec::new();
    for hw in [1usize, 5, 7, 16, 32, 55, 64, 113, 224, 300] {
        for (k, s, p, d) in [
            (1usize, 1usize, 0usize, 1usize),
            (3, 1, 1, 1),
            (3, 2, 0, 1),
            (3, 1, 2, 2),
            (5, 2, 2, 1),
            (7, 2, 3, 1),
            // Polyphase with dilation: phases without a kernel element at some steps.
            (3, 2, 1, 3),
            (2, 3, 0, 1),
        ] {
            for (c, co, g) in [
                (3usize, 64usize, 1usize),
                (64, 16, 1),
                (96, 96, 96),
                (17, 33, 1),
            ] {
                convs.push(geom(
                    [1 + hw % 2, c, hw, hw + 3],
                    co,
                    [k, k.max(2) - 1],
                    [s, s],
                    [p, p, p + 1, p],
                    [d, d],
                    g,
                ));
            }
        }
    }
    // Rows wider than a ciphertext row, kernels taller than the input.
    convs.push(geom([1, 3, 4, 5000], 2, [1, 1], [1, 1], [0; 4], [1, 1], 1));
    convs.push(geom([1, 3, 2, 8], 2, [3, 3], [1, 1], [0; 4], [1, 1], 1));
    let mut refused = 0;
    for g in &convs {
        let got = counts(Conv::new(g, None));
        assert_eq!(got, he::conv(g), "{g:?}");
        refused += usize::from(got.is_none());
    }
    assert!(refused >= 2 && refused < convs.len() / 2, "{refused}");
    for rows in [1usize, 2, 5] {
        for cols in [1usize, 3, 64, 100, 1024, 4096, 4097, 5000, 9216] {
            for outs in [1usize, 2, 10, 100, 300, 1000, 4096, 5000] {
                let got = counts(MatMul::new((rows, cols, outs), None));
                assert_eq!(got, he::matmul(rows, cols, outs), "{rows}×{cols}×{outs}");
            }
        }
    }
    for n in [0usize, 1, 8191, 8192, 8193, 100_000] {
        assert_eq!(counts(Mul::new(n, None)), he::mul(n), "{n}");
    }
}

/// A layer's server packing (with weights), client packing and expected counts.
type Case<'w> = (Box<dyn Packing + 'w>, Box<dyn Packing + 'w>, Counts);

/// Keys of both parties over a fresh in-memory pair, with the bytes each sent.
fn setup(t: u64) -> ((Keys, Channel), (Keys, Channel)) {
    let (mut a, mut b) = mem::pair(Some(Duration::from_secs(300)));
    let c = std::thread::spawn(move || {
        let k = Keys::setup(&mut b, Party::Client, t).expect("client keys");
        (k, b)
    });
    let srv = Keys::setup(&mut a, Party::Server, t).expect("server keys");
    ((srv, a), c.join().expect("client thread"))
}

/// Bytes the server and the client send in one layer (zero shares, zero weights:
/// sizes do not depend on values).
fn layer_bytes(
    keys: &mut ((Keys, Channel), (Keys, Channel)),
    server: &dyn Packing,
    client: &dyn Packing,
) -> (u64, u64) {
    let ((sk, sch), (ck, cch)) = keys;
    let (s0, c0) = (sch.stats(), cch.stats());
    let x = vec![0u64; server.in_len()];
    std::thread::scope(|s| {
        let c = s.spawn(|| layer::run(ck, cch, client, &x).expect("client layer"));
        layer::run(sk, sch, server, &x).expect("server layer");
        c.join().expect("client thread");
    });
    ((sch.stats() - s0).bytes_sent, (cch.stats() - c0).bytes_sent)
}

#[test]
fn bytes_on_the_wire_equal_the_model() {
    // A 17-bit field (replies at level 4) and the 32-bit one (level 3).
    for bits in [17u32, 32] {
        let t = he_prime(bits).expect("field");
        let mut keys = setup(t);
        let (server_keys, client_keys) = ((keys.0).1.stats(), (keys.1).1.stats());
        assert_eq!(server_keys.bytes_sent, 0);
        assert_eq!(client_keys.bytes_sent, he::key_setup_bytes(), "{bits} bits");
        let g = geom([1, 5, 9, 9], 6, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 1);
        let (w, w2) = (vec![0u64; 6 * 5 * 9], vec![0u64; 300 * 7]);
        let cases: Vec<Case<'_>> = vec![
            (
                Box::new(Conv::new(&g, Some(&w)).expect("conv")),
                Box::new(Conv::new(&g, None).expect("conv")),
                he::conv(&g).expect("counts"),
            ),
            (
                Box::new(MatMul::new((2, 300, 7), Some(&w2)).expect("fc")),
                Box::new(MatMul::new((2, 300, 7), None).expect("fc")),
                he::matmul(2, 300, 7).expect("counts"),
            ),
        ];
        for (server, client, counts) in &cases {
            let want = he::layer(*counts, t);
            assert_eq!(
                layer_bytes(&mut keys, server.as_ref(), client.as_ref()),
                (want.sent(Role::P0), want.sent(Role::P1)),
                "{bits} bits, {counts:?}"
            );
        }
        println!(
            "{bits} bits: keys {} B, client ciphertext {} B, server ciphertext {} B (level {})",
            he::key_setup_bytes(),
            he::client_ct_bytes(),
            he::server_ct_bytes(t),
            sci_ir::backend::reply_level(t)
        );
    }
}
