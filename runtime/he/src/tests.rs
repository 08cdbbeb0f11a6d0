//! Both parties of the HE layers in two threads, outputs reconstructed and
//! compared with the reference interpreter's field semantics; the noise
//! bounds against the noise actually measured with the secret key.

use std::time::Duration;

use super::conv::Conv;
use super::fc::MatMul;
use super::layer::{self, Evaluator, Packing};
use super::mul::Mul;
use super::params::Params;
use super::session::Keys;
use sci_ir::ConvGeom;
use sci_ir::{Op, Owner};
use sci_net::crypto::{Block, Prg};
use sci_net::{Channel, Party, Stats, mem};
use sci_ot::Modulus;
use sci_ot::testing::{open, reference, share};

/// The 33-bit field of ℓ = 32 and the 42-bit one of ℓ = 41.
const T32: u64 = 4_295_049_217;
const T41: u64 = 2_199_023_288_321;

/// Keys of both parties over a fresh in-memory pair: (server, client,
/// channels).
fn setup(t: u64) -> ((Keys, Channel), (Keys, Channel)) {
    let (mut a, mut b) = mem::pair(Some(Duration::from_secs(300)));
    let c = std::thread::spawn(move || {
        let k = Keys::setup(&mut b, Party::Client, t).expect("client keys");
        (k, b)
    });
    let srv = Keys::setup(&mut a, Party::Server, t).expect("server keys");
    ((srv, a), c.join().expect("client thread"))
}

/// Runs a layer: the server with `server` (holding the weights) and share
/// `x0`, the client with `client` and `x1`; returns the opened output and the
/// layer's counters (server side).
fn run_layer(
    keys: &mut ((Keys, Channel), (Keys, Channel)),
    server: &dyn Packing,
    client: &dyn Packing,
    x0: &[u64],
    x1: &[u64],
    md: Modulus,
) -> (Vec<u64>, Stats) {
    let ((sk, sch), (ck, cch)) = keys;
    let before = sch.stats();
    let (y0, y1) = std::thread::scope(|s| {
        let c = s.spawn(|| layer::run(ck, cch, client, x1).expect("client layer"));
        let y0 = layer::run(sk, sch, server, x0).expect("server layer");
        (y0, c.join().expect("client thread"))
    });
    (open(&y0, &y1, md), sch.stats() - before)
}

/// Random elements of `Z_t` with small signed values (weights) or any
/// (activations).
fn elems(g: &mut Prg, n: usize, md: Modulus, small: Option<i64>) -> Vec<u64> {
    md.random(g, n)
        .iter()
        .map(|&v| match small {
            Some(b) => md.reduce_i128((v % (2 * b as u64 + 1)) as i128 - b as i128),
            None => v,
        })
        .collect()
}

/// A convolution: input, c_out, kernel, strides, pads, dilations, groups.
type Case = (
    [usize; 4],
    usize,
    [usize; 2],
    [usize; 2],
    [usize; 4],
    [usize; 2],
    usize,
);

/// Runs each convolution by HE over `Z_t` and compares it with the interpreter.
fn convolutions_equal_the_interpreter_mod(t: u64, seed: u128, cases: &[Case]) {
    let md = Modulus::Odd(t);
    let mut keys = setup(t);
    let mut g = Prg::new(Block(seed));
    for &(input, c_out, kernel, strides, pads, dilations, groups) in cases {
        let conv = sci_ir::Conv2d {
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
        let x = elems(&mut g, input.iter().product(), md, None);
        let wshape = [c_out, input[1] / groups, kernel[0], kernel[1]];
        let w = elems(&mut g, wshape.iter().product(), md, Some(1 << 12));
        let (x0, x1) = share(&mut g, &x, md);
        let server = Conv::new(&geom, Some(&w)).expect("server packing");
        let client = Conv::new(&geom, None).expect("client packing");
        let (y, _) = run_layer(&mut keys, &server, &client, &x0, &x1, md);
        let want = reference(
            md,
            &[(&x, &input, Owner::Client), (&w, &wshape, Owner::Server)],
            |v| Op::Conv2d {
                x: v[0],
                w: v[1],
                bias: None,
                conv,
            },
        );
        assert_eq!(y, want.0, "t = {t}: {geom:?}");
    }
}

#[test]
fn convolutions_equal_the_interpreter() {
    // (input, c_out, kernel, strides, pads, dilations, groups)
    // Of the stride-1 ones, the first five and the last replicate the input
    // channels (C_in ≤ c_n), the tiled one (c_n = 1) and the 100-channel one
    // (C_in > c_n = 64) do not. The strided ones run polyphase (module `conv`): a 7×7/2 first layer, a 3×3/2
    // with dilation 3 (two phases per axis, steps 0, 1, 3: phase channels
    // without a kernel element at some steps), dilations equal to the strides
    // (one phase), a depthwise 3×3/2, a 1×1/2 (one phase), a 2×2/3 (the stride
    // skips input rows), a batch of two, phase images cut into tiles, and
    // phase channels of several phases in one ciphertext without replication.
    let strided: [Case; 11] = [
        ([1, 4, 9, 8], 6, [3, 2], [2, 2], [1, 0, 2, 1], [1, 1], 2),
        ([1, 3, 15, 13], 4, [7, 7], [2, 2], [3, 3, 3, 3], [1, 1], 1),
        ([1, 3, 13, 14], 5, [3, 3], [2, 2], [2, 1, 1, 2], [3, 3], 1),
        ([1, 2, 11, 12], 3, [3, 3], [2, 3], [1, 2, 0, 1], [2, 3], 1),
        ([1, 8, 9, 9], 8, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 8),
        ([1, 5, 9, 10], 3, [1, 1], [2, 2], [0; 4], [1, 1], 1),
        ([1, 4, 10, 11], 2, [2, 2], [3, 3], [0, 1, 1, 0], [1, 1], 2),
        ([2, 3, 9, 8], 4, [3, 3], [2, 1], [1, 0, 0, 1], [1, 2], 1),
        ([1, 2, 200, 150], 3, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 1),
        ([1, 10, 45, 45], 6, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 1),
        ([1, 3, 70, 100], 2, [3, 3], [2, 2], [0; 4], [1, 1], 1),
    ];
    let mut cases = vec![
        ([1, 1, 8, 8], 6, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
        ([1, 3, 7, 9], 5, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
        ([1, 5, 6, 6], 4, [1, 1], [1, 1], [0; 4], [1, 1], 1),
        ([2, 2, 5, 5], 3, [2, 2], [1, 1], [0; 4], [2, 2], 1),
        ([1, 17, 4, 4], 33, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
        // Wider than a row: tiles with halos.
        ([1, 3, 70, 100], 2, [3, 3], [1, 1], [0; 4], [1, 1], 1),
        ([1, 100, 6, 6], 20, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
        ([1, 6, 5, 5], 6, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 6),
    ];
    cases.extend(strided);
    convolutions_equal_the_interpreter_mod(T32, 1, &cases);
    // The 41-bit field rotates the outputs (Horner over sparse steps).
    convolutions_equal_the_interpreter_mod(T41, 5, &strided[..4]);
}

#[test]
fn matrix_products_equal_the_interpreter() {
    let md = Modulus::Odd(T41);
    let mut keys = setup(T41);
    let mut g = Prg::new(Block(2));
    for (rows, cols, outs) in [
        (1usize, 1024usize, 10usize),
        (2, 37, 5),
        (1, 5000, 3),
        (1, 64, 300),
    ] {
        let x = elems(&mut g, rows * cols, md, None);
        let w = elems(&mut g, cols * outs, md, Some(1 << 12));
        let (x0, x1) = share(&mut g, &x, md);
        let server = MatMul::new((rows, cols, outs), Some(&w)).expect("packing");
        let client = MatMul::new((rows, cols, outs), None).expect("packing");
        let (y, _) = run_layer(&mut keys, &server, &client, &x0, &x1, md);
        let want = reference(
            md,
            &[
                (&x, &[rows, cols], Owner::Client),
                (&w, &[cols, outs], Owner::Server),
            ],
            |v| Op::MatMul {
                a: v[0],
                b: v[1],
                bias: None,
            },
        );
        assert_eq!(y, want.0, "{rows}×{cols}×{outs}");
    }
    // Elementwise products across two ciphertexts.
    let n = 9000;
    let x = elems(&mut g, n, md, None);
    let w = elems(&mut g, n, md, None);
    let (x0, x1) = share(&mut g, &x, md);
    let (server, client) = (
        Mul::new(n, Some(&w)).expect("mul"),
        Mul::new(n, None).expect("mul"),
    );
    let (y, _) = run_layer(&mut keys, &server, &client, &x0, &x1, md);
    let want: Vec<u64> = x.iter().zip(&w).map(|(&a, &b)| md.mul(a, b)).collect();
    assert_eq!(y, want);
}

/// At ℓ = 41 the server rotates the convolution's partial sums, at ℓ = 32 its
/// inputs (`Conv::rotate_inputs`, chosen by the noise bound): both bounds hold.
#[test]
fn noise_bounds_hold_and_communication_is_the_ciphertext_count() {
    for t in [T41, T32] {
        noise_bounds_hold(t);
    }
}

fn noise_bounds_hold(t: u64) {
    let mut keys = setup(t);
    let mut g = Prg::new(Block(3));
    // A 3×3 at stride 1, and at stride 2 (polyphase: 4 phases of 8 channels,
    // replicated, 32 alignments of 4 offsets).
    for (input, strides) in [([1, 8, 16, 16], [1, 1]), ([1, 8, 17, 17], [2, 2])] {
        let geom = ConvGeom {
            input,
            c_out: 8,
            kernel: [3, 3],
            conv: sci_ir::Conv2d {
                strides,
                pads: [1, 1, 1, 1],
                dilations: [1, 1],
                groups: 1,
            },
        };
        noise_bound_holds(&mut keys, &mut g, t, &geom);
    }
}

/// The noise of every output ciphertext of `geom`, measured with the client's
/// key, is below the server's bound, and the bytes are the ciphertext counts.
fn noise_bound_holds(
    keys: &mut ((Keys, Channel), (Keys, Channel)),
    g: &mut Prg,
    t: u64,
    geom: &ConvGeom,
) {
    let md = Modulus::Odd(t);
    let x = elems(g, geom.input.iter().product(), md, None);
    // Full-range weights: the bound must hold for any plaintext.
    let w = elems(g, geom.c_out * geom.input[1] * 9, md, None);
    let conv = Conv::new(geom, Some(&w)).expect("packing");
    // The server's computation decrypted with the client's key: measured
    // noise below the bound.
    let ((Keys::Server { params, ek, .. }, _), (Keys::Client { sk, .. }, _)) = &keys else {
        panic!("roles");
    };
    use fhe_traits::{DeserializeParametrized, FheEncoder, FheEncrypter, Serialize};
    let ev = Evaluator::new(params, ek);
    // Each party's objects carry its own parameters: ciphertexts cross over
    // serialized, as on the wire.
    let client_params = keys.1.0.params().bfv.clone();
    let inputs: Vec<_> = (0..conv.in_cts())
        .map(|k| {
            let slots = conv.pack(&x, k);
            let pt = fhe::bfv::Plaintext::try_encode(
                &slots,
                fhe::bfv::Encoding::simd_at_level(super::params::CT_LEVEL),
                &client_params,
            )
            .expect("encode");
            let ct: fhe::bfv::Ciphertext = sk
                .try_encrypt(&pt, &mut super::rng::OsRng::new().expect("rng"))
                .expect("encrypt");
            let mut ct =
                fhe::bfv::Ciphertext::from_bytes(&ct.to_bytes(), &params.bfv).expect("decode");
            ct += &layer::plaintext(params, &slots).expect("encode");
            ct
        })
        .collect();
    assert_eq!(conv.rotate_inputs(&ev), t == T32, "t = {t}: {geom:?}");
    let prepared = conv.prepare(&ev, inputs).expect("prepare");
    for u in 0..conv.units() {
        for (_, v) in conv.eval(&ev, &prepared, u).expect("eval") {
            let ct =
                fhe::bfv::Ciphertext::from_bytes(&v.ct.to_bytes(), &client_params).expect("decode");
            // SAFETY: `measure_noise` is unsafe only because it runs in variable
            // time (a test, no secret at stake).
            let measured = unsafe { sk.measure_noise(&ct) }.expect("noise");
            assert!(
                (measured as f64) <= v.bound.log2() + 1.0,
                "t = {t}: {measured} vs 2^{:.1}",
                v.bound.log2()
            );
        }
    }
    // Communication: the client's ciphertexts up, the server's down.
    let (x0, x1) = share(g, &x, md);
    let client = Conv::new(geom, None).expect("packing");
    let (_, stats) = run_layer(keys, &conv, &client, &x0, &x1, md);
    let (up, down) = (stats.bytes_recv as f64, stats.bytes_sent as f64);
    let per_up = up / conv.in_cts() as f64;
    let per_down = down / conv.out_cts() as f64;
    // 174-bit c_0 (+ seed) up, two 86-bit polynomials down.
    assert!((per_up - 8192.0 * 174.0 / 8.0).abs() < 2000.0, "{per_up}");
    assert!(
        (per_down - 2.0 * 8192.0 * 86.0 / 8.0).abs() < 2000.0,
        "{per_down}"
    );
}

/// A hostile client's ciphertexts over TCP: a polynomial in power-basis form
/// (which `fhe-math` would assert on when the server adds its share), a
/// ciphertext at the wrong level and bytes that are no ciphertext: each is an
/// error at the server (`HeError::Malformed`), never a panic.
#[test]
fn hostile_ciphertexts_are_refused_over_tcp() {
    use super::params::CT_LEVEL;
    use super::wire;
    use fhe::bfv::{Encoding, Plaintext};
    use fhe_traits::{FheEncoder, FheEncrypter, Serialize};
    let t = sci_ir::backend::he_prime(32).unwrap();
    let cfg = sci_net::tcp::TcpConfig {
        timeout: Some(Duration::from_secs(120)),
        ..Default::default()
    };
    let md = Modulus::Odd(t);
    let w = elems(&mut Prg::new(Block(7)), 16, md, Some(100));
    let x = vec![0u64; 16];
    // Each tamper turns an honest encryption (the bytes of one ciphertext) into
    // what the hostile client sends.
    type Tamper = fn(Vec<u8>) -> Vec<u8>;
    let power_basis: Tamper = |mut b| {
        // The first polynomial's `Rq` message: representation NTT (field 1 = 2),
        // degree 8192 (field 2); make it POWERBASIS (1).
        let at = b
            .windows(5)
            .position(|s| s == [0x08, 0x02, 0x10, 0x80, 0x40])
            .expect("an NTT polynomial of degree 8192 in the serialization");
        b[at + 1] = 0x01;
        b
    };
    let garbage: Tamper = |b| b.iter().map(|x| x ^ 0x5a).collect();
    let cases: [(Tamper, bool, &str); 3] = [
        (power_basis, true, "PowerBasis form"),
        (|b| b, false, "level"),
        (garbage, true, "ciphertext"),
    ];
    for (tamper, right_level, what) in cases {
        let (mut a, mut b) = sci_net::tcp::loopback_pair(&cfg).unwrap();
        let client = std::thread::spawn(move || {
            let keys = Keys::setup(&mut b, Party::Client, t).expect("client keys");
            let Keys::Client { params, sk } = &keys else {
                unreachable!("client keys")
            };
            let enc = if right_level {
                Encoding::simd_at_level(CT_LEVEL)
            } else {
                Encoding::simd()
            };
            let pt = Plaintext::try_encode(&[1u64; 16], enc, &params.bfv).unwrap();
            let ct: fhe::bfv::Ciphertext = sk
                .try_encrypt(&pt, &mut super::rng::OsRng::new().unwrap())
                .unwrap();
            wire::send_bytes(&mut b, &tamper(ct.to_bytes())).unwrap();
            b.flush().unwrap();
            // Wait until the server hangs up.
            let _ = b.recv_vec(1);
        });
        let keys = Keys::setup(&mut a, Party::Server, t).expect("server keys");
        let e = layer::run(&keys, &mut a, &Mul::new(16, Some(&w)).unwrap(), &x).unwrap_err();
        drop(a);
        client.join().expect("client thread");
        assert!(matches!(e, super::HeError::Malformed(_)), "{what}: {e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
    }
}

/// A hostile client's keys over TCP: a Galois key polynomial in NTT instead of
/// the `NttShoup` form the key switching multiplies by (`fhe-math` asserts on
/// it at the first rotation), a public key in power-basis form, Galois keys for
/// ciphertexts at the wrong level, keys without the row swap, and bytes that are
/// no keys: each is an error of the server's key set-up (`HeError::Malformed`
/// naming what is wrong), never a panic.
#[test]
fn hostile_keys_are_refused_over_tcp() {
    use super::params::CT_LEVEL;
    use super::session::rotation_steps;
    use super::wire;
    use fhe::bfv::{EvaluationKey, EvaluationKeyBuilder, PublicKey, SecretKey};
    use fhe_traits::{DeserializeParametrized, Serialize};
    let t = sci_ir::backend::he_prime(32).unwrap();
    let cfg = sci_net::tcp::TcpConfig {
        timeout: Some(Duration::from_secs(120)),
        ..Default::default()
    };
    /// The first polynomial header (`Rq`: representation `from`, degree 8192)
    /// of a serialization, switched to representation `to`.
    fn retype(mut b: Vec<u8>, from: u8, to: u8) -> Vec<u8> {
        let at = b
            .windows(5)
            .position(|s| s == [0x08, from, 0x10, 0x80, 0x40])
            .expect("a polynomial of degree 8192 in the serialization");
        b[at + 1] = to;
        b
    }
    /// How the hostile client builds its keys: (ciphertext level of the Galois
    /// keys, with the row swap, tamper of the Galois keys, tamper of the public
    /// key); then whether `fhe` alone decodes them, and the expected error.
    type Tamper = fn(Vec<u8>) -> Vec<u8>;
    type Case = (usize, bool, Tamper, Tamper, bool, &'static str);
    let garbage: Tamper = |b| b.iter().map(|x| x ^ 0x5a).collect();
    let cases: [Case; 5] = [
        (
            CT_LEVEL,
            true,
            |b| retype(b, 3, 2),
            |b| b,
            true,
            "in Ntt form, expected NttShoup",
        ),
        (
            CT_LEVEL,
            true,
            |b| b,
            |b| retype(b, 2, 1),
            true,
            "public key is in PowerBasis form",
        ),
        (0, true, |b| b, |b| b, true, "level 0"),
        (CT_LEVEL, false, |b| b, |b| b, true, "a rotation is missing"),
        (CT_LEVEL, true, garbage, |b| b, false, "Galois keys"),
    ];
    for (level, row_swap, tamper_ek, tamper_pk, decodes, what) in cases {
        let (mut a, mut b) = sci_net::tcp::loopback_pair(&cfg).unwrap();
        let client = std::thread::spawn(move || {
            let params = Params::new(t).unwrap();
            let mut rng = super::rng::OsRng::new().unwrap();
            let sk = SecretKey::random(&params.bfv, &mut rng);
            let mut kb = EvaluationKeyBuilder::new_leveled(&sk, level, 0).unwrap();
            for k in rotation_steps() {
                kb.enable_column_rotation(k).unwrap();
            }
            if row_swap {
                kb.enable_row_rotation().unwrap();
            }
            let ek = tamper_ek(kb.build(&mut rng).unwrap().to_bytes());
            let pk = tamper_pk(PublicKey::new(&sk, &mut rng).to_bytes());
            // `fhe` alone decodes the retyped polynomials: the checks are ours.
            let fhe_decodes = EvaluationKey::from_bytes(&ek, &params.bfv).is_ok()
                && PublicKey::from_bytes(&pk, &params.bfv).is_ok();
            assert_eq!(fhe_decodes, decodes);
            wire::send_bytes(&mut b, &ek).unwrap();
            wire::send_bytes(&mut b, &pk).unwrap();
            b.flush().unwrap();
            let _ = b.recv_vec(1);
        });
        let e = Keys::setup(&mut a, Party::Server, t).unwrap_err();
        drop(a);
        client.join().expect("client thread");
        assert!(matches!(e, super::HeError::Malformed(_)), "{what}: {e}");
        assert!(e.to_string().contains(what), "{what}: {e}");
    }
}

/// The server's rotations ([`super::keyswitch`]) against the cleartext slot
/// permutation: composed rotations, hoisted ones (several from one
/// decomposition) and the row swap, each decrypted by the client.
#[test]
fn rotations_permute_the_slots() {
    use super::layer::Noisy;
    use super::noise;
    use super::params::{CT_LEVEL, DEGREE, ROW};
    use fhe::bfv::{Ciphertext, Encoding, Plaintext};
    use fhe_traits::{
        DeserializeParametrized, FheDecoder, FheDecrypter, FheEncoder, FheEncrypter, Serialize,
    };
    let keys = setup(T32);
    let ((Keys::Server { params, ek, .. }, _), (Keys::Client { sk, .. }, _)) = &keys else {
        panic!("roles");
    };
    let client_params = keys.1.0.params().bfv.clone();
    let mut g = Prg::new(Block(4));
    let slots = elems(&mut g, DEGREE, Modulus::Odd(T32), None);
    let pt = Plaintext::try_encode(&slots, Encoding::simd_at_level(CT_LEVEL), &client_params)
        .expect("encode");
    let ct: Ciphertext = sk
        .try_encrypt(&pt, &mut super::rng::OsRng::new().expect("rng"))
        .expect("encrypt");
    let ct = Ciphertext::from_bytes(&ct.to_bytes(), &params.bfv).expect("decode");
    let decrypt = |x: &Noisy| -> Vec<u64> {
        let ct = Ciphertext::from_bytes(&x.ct.to_bytes(), &client_params).expect("decode");
        let pt = sk.try_decrypt(&ct).expect("decrypt");
        Vec::<u64>::try_decode(&pt, Encoding::simd()).expect("slots")
    };
    let rotated = |k: usize, swap: bool| -> Vec<u64> {
        (0..DEGREE)
            .map(|p| {
                let (r, i) = (p / ROW, p % ROW);
                slots[(r ^ usize::from(swap)) * ROW + (i + k) % ROW]
            })
            .collect()
    };
    let ev = Evaluator::new(params, ek);
    let fresh = || Noisy {
        ct: ct.clone(),
        bound: noise::fresh(),
    };
    let steps = [0usize, 1, 2, 3, 100, 1024, ROW - 1, ROW + 5];
    for &k in &steps {
        assert_eq!(
            decrypt(&ev.rotate(fresh(), k).expect("rotate")),
            rotated(k, false),
            "k = {k}"
        );
    }
    let h = ev.hoist(&ct).expect("hoist");
    for &k in &steps {
        let x = ev.rotate_hoisted(&h, noise::fresh(), k).expect("hoisted");
        assert_eq!(decrypt(&x), rotated(k, false), "hoisted k = {k}");
    }
    let swapped = ev.swap_rows(fresh()).expect("swap");
    assert_eq!(decrypt(&swapped), rotated(0, true));
}
