//! The two-party protocol of one product (see the [module documentation](super)):
//! the client's encrypted share up, the server's masked, re-randomized,
//! flooded and switched result down, trimmed to the coefficients that carry
//! outputs. One round trip; the public key rides along with the first layer
//! of each parameter set.

use rayon::prelude::*;
use sci_ir::rlwe::{PARAM_SETS, ParamSet};

use super::encode::Layer;
use super::keys::{PublicKey, SecretKey};
use super::params::{Ring, Scale, cbd, mulmod, ring, signed_mod, ternary};
use super::{CheetahError, wire};
use sci_net::Channel;
use sci_net::crypto::Prg;
use sci_net::pack::mask;

/// One party's keys, per parameter set, set up on first use.
#[derive(Debug)]
pub enum Keys {
    /// The client's secret keys.
    Client(Vec<Option<SecretKey>>),
    /// The server's copies of the client's public keys.
    Server(Vec<Option<PublicKey>>),
}

impl Keys {
    /// The client's (no key yet).
    pub fn client() -> Keys {
        Keys::Client(PARAM_SETS.iter().map(|_| None).collect())
    }

    /// The server's (no key yet).
    pub fn server() -> Keys {
        Keys::Server(PARAM_SETS.iter().map(|_| None).collect())
    }

    /// Whether the key of `set` is already set up (the first layer of a set
    /// also carries the key: [`ParamSet::key_bytes`] more from the client).
    pub fn has(&self, set: &ParamSet) -> bool {
        let i = usize::from(set.id);
        match self {
            Keys::Client(k) => k[i].is_some(),
            Keys::Server(k) => k[i].is_some(),
        }
    }

    /// Sets up the keys of `sets` that are not yet: the client generates each
    /// (from `prg`) and sends its public key ([`ParamSet::key_bytes`], in the
    /// order of `sets`, no flush: the next message of the client follows in
    /// the same flight); the server receives and checks them (`what` names the
    /// step in its errors). Returns whether any key was set up. Both parties
    /// must pass the same sets (they follow from the public plan).
    pub fn setup(
        &mut self,
        ch: &mut Channel,
        prg: &mut Prg,
        sets: &[&'static ParamSet],
        what: &str,
    ) -> Result<bool, CheetahError> {
        let mut made = false;
        for &set in sets {
            let i = usize::from(set.id);
            match self {
                Keys::Client(sks) if sks[i].is_none() => {
                    let (sk, pk) = SecretKey::generate(set, prg);
                    pk.send(ch)?;
                    sks[i] = Some(sk);
                }
                Keys::Server(pks) if pks[i].is_none() => {
                    pks[i] = Some(PublicKey::recv(ch, set, what)?);
                }
                _ => continue,
            }
            made = true;
        }
        Ok(made)
    }
}

/// One input ciphertext at the server: `c_0` and `c_1 = a`, NTT form.
struct Input {
    c0: Vec<u64>,
    a: Vec<u64>,
}

/// Runs the product `layer` on this party's share `x` (mod `2^ℓ`, the
/// product's input layout); returns this party's share of the output: [`run_all`]
/// of one product.
pub fn run(
    keys: &mut Keys,
    ch: &mut Channel,
    prg: &mut Prg,
    layer: &Layer,
    x: &[u64],
) -> Result<Vec<u64>, CheetahError> {
    let mut out = run_all(keys, ch, prg, &[(layer, x)])?;
    Ok(out.pop().unwrap_or_default())
}

/// Runs the independent products `layers` (each with this party's share of its
/// input) in one round trip: the client's keys of the sets not yet set up
/// ([`Keys::setup`]), then every layer's ciphertexts, one flight; the server's
/// replies, one flight. Returns this party's output shares, in order. The
/// server's layers hold the weights. Randomness from the lane's `prg`. Bytes:
/// the sum of the layers' [`sci_ir::rlwe::Layout::bytes_up`] (plus the keys)
/// and [`sci_ir::rlwe::Layout::bytes_down`].
pub fn run_all(
    keys: &mut Keys,
    ch: &mut Channel,
    prg: &mut Prg,
    layers: &[(&Layer, &[u64])],
) -> Result<Vec<Vec<u64>>, CheetahError> {
    let inputs = layers
        .iter()
        .map(|(layer, x)| layer.conv_input(x))
        .collect::<Result<Vec<_>, _>>()?;
    let sets = sci_ir::rlwe::sets(layers.iter().map(|(l, _)| &l.layout));
    let first = layers.first().map_or("", |(l, _)| l.name.as_str());
    keys.setup(ch, prg, &sets, first)?;
    let mut ys: Vec<Vec<u64>> = layers
        .iter()
        .map(|(l, _)| vec![0u64; l.out_len()])
        .collect();
    match keys {
        Keys::Client(sks) => {
            for ((layer, _), x) in layers.iter().zip(&inputs) {
                let l = &layer.layout;
                let sk = client_key(sks, l.set)?;
                let scale = Scale::new(ring(l.set), l.ell);
                let prgs: Vec<Prg> = (0..l.in_cts()).map(|_| prg.fork()).collect();
                let cts: Vec<_> = prgs
                    .into_par_iter()
                    .enumerate()
                    .map(|(k, mut g)| sk.encrypt(&layer.pack(x, k), &scale, &mut g))
                    .collect();
                wire::send_header(ch, l.set, cts.len())?;
                for (seed, c0) in &cts {
                    wire::send_poly(ch, l.set, *seed, c0)?;
                }
            }
            ch.flush()?;
            for ((layer, _), y) in layers.iter().zip(&mut ys) {
                let l = &layer.layout;
                let sk = client_key(sks, l.set)?;
                wire::recv_header(ch, l.set, l.out_cts(), &layer.name)?;
                let k = l.set.reply_bits(l.ell);
                let replies = (0..l.out_cts())
                    .map(|g| wire::recv_reply(ch, sk.ring.n, l.outputs(g).len(), k))
                    .collect::<Result<Vec<_>, _>>()?;
                let parts: Vec<Vec<(usize, u64)>> = replies
                    .into_par_iter()
                    .enumerate()
                    .map(|(g, (c1, c0))| decrypt(sk, layer, g, &c1, &c0))
                    .collect();
                for (i, v) in parts.into_iter().flatten() {
                    y[i] = v;
                }
            }
        }
        Keys::Server(pks) => {
            let mut received = Vec::with_capacity(layers.len());
            for (layer, _) in layers {
                let l = &layer.layout;
                wire::recv_header(ch, l.set, l.in_cts(), &layer.name)?;
                received.push(
                    (0..l.in_cts())
                        .map(|k| {
                            wire::recv_poly(ch, l.set, &layer.name, &format!("ciphertext {k}"))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
            for (((layer, _), x), (cts, y)) in layers
                .iter()
                .zip(&inputs)
                .zip(received.into_iter().zip(&mut ys))
            {
                let l = &layer.layout;
                let pk = pks[usize::from(l.set.id)].as_ref().ok_or_else(|| {
                    CheetahError::InvalidArgument("no public key for the layer's set".into())
                })?;
                let ring = ring(l.set);
                let scale = Scale::new(ring, l.ell);
                let inputs: Vec<Input> = cts
                    .into_par_iter()
                    .enumerate()
                    .map(|(k, (seed, mut c0))| {
                        let m = layer.pack(x, k);
                        for (i, (chunk, &q)) in c0.chunks_mut(ring.n).zip(ring.moduli()).enumerate()
                        {
                            for (c, &m) in chunk.iter_mut().zip(&m) {
                                *c = (*c + scale.encode(m, i, q)) % q;
                            }
                        }
                        ring.fwd(&mut c0);
                        Input {
                            c0,
                            a: ring.uniform(&mut Prg::new(seed)),
                        }
                    })
                    .collect();
                let replies = serve(layer, ring, &scale, pk, &inputs, prg)?;
                wire::send_header(ch, l.set, replies.len())?;
                let k = l.set.reply_bits(l.ell);
                for r in &replies {
                    wire::send_reply(ch, &r.c1, &r.c0, k)?;
                    for &(i, v) in &r.share {
                        y[i] = v;
                    }
                }
            }
            ch.flush()?;
        }
    }
    Ok(layers
        .iter()
        .zip(ys)
        .map(|((layer, _), y)| layer.product_output(y))
        .collect())
}

/// The client's secret key of `set` (set up by [`Keys::setup`]).
fn client_key<'k>(
    sks: &'k [Option<SecretKey>],
    set: &ParamSet,
) -> Result<&'k SecretKey, CheetahError> {
    sks[usize::from(set.id)]
        .as_ref()
        .ok_or_else(|| CheetahError::InvalidArgument("no secret key for the layer's set".into()))
}

/// One output ciphertext as sent, and the server's output share of it.
struct Reply {
    g: usize,
    c1: Vec<u64>,
    c0: Vec<u64>,
    share: Vec<(usize, u64)>,
}

/// The server's products: work units of one output group and a run of
/// blocks (so every thread has work), each unit's kernels transformed once
/// and applied to its blocks; returns the replies in order.
fn serve(
    layer: &Layer,
    ring: &Ring,
    scale: &Scale,
    pk: &PublicKey,
    inputs: &[Input],
    prg: &mut Prg,
) -> Result<Vec<Reply>, CheetahError> {
    let l = &layer.layout;
    let blocks = l.conv.batch * l.bh_count * l.bw_count;
    let want = 4 * rayon::current_num_threads();
    let per = blocks.div_ceil(want.div_ceil(l.out_groups).clamp(1, blocks));
    let units: Vec<(usize, usize, Prg)> = (0..l.out_groups)
        .flat_map(|mo| (0..blocks).step_by(per).map(move |b| (mo, b)))
        .map(|(mo, b)| (mo, b, prg.fork()))
        .collect();
    let mut replies = units
        .into_par_iter()
        .map(|(mo, b0, mut g)| {
            let kernels = layer.kernels(mo)?;
            let bs = b0..(b0 + per).min(blocks);
            let mut acc: Vec<(Vec<u64>, Vec<u64>)> =
                bs.clone().map(|_| (ring.zero(), ring.zero())).collect();
            for (ci, taps) in kernels.iter().enumerate() {
                if taps.is_empty() {
                    continue;
                }
                let mut kp = ring.zero();
                for (chunk, &q) in kp.chunks_mut(ring.n).zip(ring.moduli()) {
                    for &(coef, w) in taps {
                        chunk[coef] = signed_mod(w, q);
                    }
                }
                ring.fwd(&mut kp);
                for (b, (a0, a1)) in bs.clone().zip(&mut acc) {
                    let input = &inputs[b * l.in_groups + ci];
                    ring.mul_acc(a0, &input.c0, &kp);
                    ring.mul_acc(a1, &input.a, &kp);
                }
            }
            Ok(bs
                .zip(acc)
                .map(|(b, (a0, a1))| {
                    finish(
                        layer,
                        ring,
                        scale,
                        pk,
                        b * l.out_groups + mo,
                        a0,
                        a1,
                        &mut g,
                    )
                })
                .collect::<Vec<_>>())
        })
        .collect::<Result<Vec<_>, CheetahError>>()?
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    replies.sort_by_key(|r| r.g);
    Ok(replies)
}

/// The server's last steps on output ciphertext `g` (accumulators in NTT
/// form): re-randomize with the public key (`+ (u·b + e_1, u·a + e_2)`),
/// subtract a uniform mask `r` (the server's share) and flood the used
/// coefficients of `c_0`, switch to `2^k`.
#[allow(clippy::too_many_arguments)]
fn finish(
    layer: &Layer,
    ring: &Ring,
    scale: &Scale,
    pk: &PublicKey,
    g: usize,
    mut a0: Vec<u64>,
    mut a1: Vec<u64>,
    prg: &mut Prg,
) -> Reply {
    let l = &layer.layout;
    let (n, k, ell) = (ring.n, l.set.reply_bits(l.ell), l.ell);
    let u = ternary(prg, n);
    let mut u = ring.from_signed(|j| u[j]);
    ring.fwd(&mut u);
    ring.mul_acc(&mut a0, &u, &pk.b);
    ring.mul_acc(&mut a1, &u, &pk.a);
    ring.inv(&mut a0);
    ring.inv(&mut a1);
    let e2 = cbd(prg, n);
    for (chunk, &q) in a1.chunks_mut(n).zip(ring.moduli()) {
        for (c, &e) in chunk.iter_mut().zip(&e2) {
            *c = (*c + signed_mod(e, q)) % q;
        }
    }
    let c1: Vec<u64> = (0..n).map(|j| ring.switch(&a1, j, k)).collect();
    let outputs = l.outputs(g);
    let e1 = cbd(prg, outputs.len());
    let r: Vec<u64> = prg
        .u64s(outputs.len())
        .iter()
        .map(|v| v & mask(ell))
        .collect();
    let flood = Flood::new(ring, l.flood_bits());
    let mut c0 = Vec::with_capacity(outputs.len());
    for (t, &(coef, _)) in outputs.iter().enumerate() {
        let f = flood.sample(prg);
        for (i, &q) in ring.moduli().iter().enumerate() {
            let c = &mut a0[i * n + coef];
            let minus_r = (q - scale.encode(r[t], i, q)) % q;
            *c = ((*c + minus_r) % q + (signed_mod(e1[t], q) + f[i]) % q) % q;
        }
        c0.push(ring.switch(&a0, coef, k));
    }
    let share = outputs
        .iter()
        .zip(r)
        .map(|(&(_, idx), r)| (idx, r))
        .collect();
    Reply { g, c1, c0, share }
}

/// Sampler of the flooding `U[−2^f, 2^f)` in RNS form: `f + 1` random bits
/// (two blocks when `f ≥ 128`), reduced into each prime, minus `2^f`.
struct Flood<'r> {
    ring: &'r Ring,
    f: u32,
    /// Per prime: `2^128 mod q`, `2^f mod q`.
    consts: Vec<(u64, u64)>,
}

impl<'r> Flood<'r> {
    fn new(ring: &'r Ring, f: u32) -> Flood<'r> {
        let pow2 = |e: u32, q: u64| {
            (0..e).fold(1 % q, |r, _| ((u128::from(r) << 1) % u128::from(q)) as u64)
        };
        let consts = ring
            .moduli()
            .iter()
            .map(|&q| (pow2(128, q), pow2(f, q)))
            .collect();
        Flood { ring, f, consts }
    }

    fn sample(&self, prg: &mut Prg) -> [u64; 8] {
        let bits = self.f + 1;
        let lo = prg.next_block().0 & sci_net::pack::mask128(bits.min(128));
        let hi = if bits > 128 {
            prg.next_block().0 & sci_net::pack::mask128(bits - 128)
        } else {
            0
        };
        let mut out = [0u64; 8];
        for (i, (&q, &(two128, two_f))) in self.ring.moduli().iter().zip(&self.consts).enumerate() {
            let qq = u128::from(q);
            let v = (mulmod((hi % qq) as u64, two128, q) as u128 + lo % qq) % qq;
            out[i] = ((v + qq - u128::from(two_f)) % qq) as u64;
        }
        out
    }
}

/// The client's output share from reply `g`: `⌊(c_0 + c_1·s mod 2^k) /
/// 2^{k−ℓ}⌉ mod 2^ℓ` at each output coefficient, with the output's index.
fn decrypt(sk: &SecretKey, layer: &Layer, g: usize, c1: &[u64], c0: &[u64]) -> Vec<(usize, u64)> {
    let l = &layer.layout;
    let (k, ell) = (l.set.reply_bits(l.ell), l.ell);
    let cs = sk.times_s(c1);
    l.outputs(g)
        .iter()
        .zip(c0)
        .map(|(&(coef, idx), &c)| {
            let v = c.wrapping_add(sk.ring.small_mod64(&cs, coef)) & mask(k);
            let y = (v.wrapping_add(1 << (k - ell - 1)) & mask(k)) >> (k - ell);
            (idx, y)
        })
        .collect()
}
