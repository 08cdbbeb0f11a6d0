//! The protocol of HE linear layers over any [`Packing`] (see the
//! [module documentation](super)): the client's encrypted share up, the
//! server's masked, re-randomized and flooded result down. One round trip,
//! for one layer ([`run`]) or for several independent layers together
//! ([`run_all`]: every layer's ciphertexts in one flight each way, so the
//! layers share the round trip); the server's work is spread over the
//! packing's work units (an output ciphertext, or a convolution's output
//! ciphertext of every tile) with rayon.

use fhe::bfv::{Ciphertext, Encoding, Plaintext};
use fhe_math::rq::traits::TryConvertFrom;
use fhe_math::rq::{Poly, Representation};
use fhe_traits::{FheDecoder, FheDecrypter, FheEncoder, FheEncrypter};
use rayon::prelude::*;

use super::encode;
use super::keyswitch::{GaloisKeys, Hoisted};
use super::noise::{self, Flood};
use super::params::{CT_LEVEL, DEGREE, MODULI, Params, ROW, VARIANCE};
use super::rng::OsRng;
use super::session::{self, Keys};
use super::{HeError, check, wire};
use sci_net::Channel;
use sci_net::crypto::Prg;

/// A ciphertext with a worst-case bound on its noise ([`noise`]).
pub struct Noisy {
    /// The ciphertext (level 1).
    pub ct: Ciphertext,
    /// Bound on `‖v‖∞`.
    pub bound: f64,
}

/// How a linear layer sits in SIMD slots, and how the server evaluates it.
pub trait Packing: Sync {
    /// Number of ciphertexts the client sends.
    fn in_cts(&self) -> usize;
    /// Number of ciphertexts the server returns.
    fn out_cts(&self) -> usize;
    /// Length of the input share.
    fn in_len(&self) -> usize;
    /// Length of the output share.
    fn out_len(&self) -> usize;
    /// Slot vector (length `N`, values mod `t`) of input ciphertext `k` for
    /// the share `x`.
    fn pack(&self, x: &[u64], k: usize) -> Vec<u64>;
    /// Copies the output elements held by output ciphertext `g` (its slots)
    /// into `y`.
    fn unpack(&self, slots: &[u64], g: usize, y: &mut [u64]);
    /// Server: the ciphertexts that [`Packing::eval`] reads, derived once per
    /// layer from the input ciphertexts (noise bound [`noise::fresh`] each) and
    /// shared by all output ciphertexts (a convolution's rotated inputs). The
    /// default is the inputs themselves.
    fn prepare(
        &self,
        ev: &Evaluator<'_>,
        inputs: Vec<Ciphertext>,
    ) -> Result<Vec<Ciphertext>, HeError> {
        let _ = ev;
        Ok(inputs)
    }
    /// Number of the server's work units ([`Packing::eval`], run in parallel);
    /// by default one per output ciphertext.
    fn units(&self) -> usize {
        self.out_cts()
    }
    /// Server: the output ciphertexts of work unit `u` (with their indices)
    /// from the [`Packing::prepare`]d ciphertexts. Only called where the
    /// weights are known.
    fn eval(
        &self,
        ev: &Evaluator<'_>,
        inputs: &[Ciphertext],
        u: usize,
    ) -> Result<Vec<(usize, Noisy)>, HeError>;
}

/// The server's homomorphic operations with their noise bounds.
pub struct Evaluator<'a> {
    params: &'a Params,
    ek: &'a GaloisKeys,
}

impl<'a> Evaluator<'a> {
    /// The evaluator of the server's keys.
    pub fn new(params: &'a Params, ek: &'a GaloisKeys) -> Evaluator<'a> {
        Evaluator { params, ek }
    }

    /// The plaintext modulus.
    pub fn t(&self) -> u64 {
        self.params.t
    }

    /// Encodes a slot vector (values mod `t`) for products, in NTT form at the
    /// ciphertexts' level (`encode::Encoder`).
    pub fn encode(&self, slots: &[u64]) -> Result<Poly, HeError> {
        self.params.encoder.encode(slots)
    }

    /// `Σ_k cts[k] ⊙ pts[k]` over the pairs whose plaintext is `Some`, with
    /// inputs of noise bound `b_in`; `None` if there is none.
    pub fn dot(
        &self,
        cts: &[Ciphertext],
        pts: &[Option<Poly>],
        b_in: f64,
    ) -> Result<Option<Noisy>, HeError> {
        self.dot_terms(
            cts.iter()
                .zip(pts)
                .filter_map(|(ct, pt)| pt.as_ref().map(|pt| (ct, pt, b_in))),
        )
    }

    /// `Σ ct ⊙ pt` over `(ct, pt, b)` terms (`pt` from [`Evaluator::encode`],
    /// `b` the noise bound of `ct`); `None` if there is none. One fused pass
    /// ([`encode::dot`]: 128-bit accumulation, one reduction per coefficient)
    /// instead of a product and a sum per term.
    pub fn dot_terms<'c>(
        &self,
        terms: impl IntoIterator<Item = (&'c Ciphertext, &'c Poly, f64)>,
    ) -> Result<Option<Noisy>, HeError> {
        let (mut pairs, mut bound) = (Vec::new(), 0.0);
        for (ct, pt, b) in terms {
            pairs.push((ct, pt));
            bound += noise::product(b, self.t());
        }
        Ok(encode::dot(&self.params.bfv, &pairs)?.map(|ct| Noisy { ct, bound }))
    }

    /// Rotates both rows left by `k` (slot `i` gets slot `i + k` of its row)
    /// by composing the power-of-two rotations: one key switch per set bit
    /// ([`GaloisKeys::switch`]).
    pub fn rotate(&self, x: Noisy, k: usize) -> Result<Noisy, HeError> {
        let k = k % ROW;
        if k == 0 {
            return Ok(x);
        }
        let h = self.hoist(&x.ct)?;
        self.rotate_hoisted(&h, x.bound, k)
    }

    /// The digits of `ct` for several rotations of it
    /// ([`Evaluator::rotate_hoisted`]; [`GaloisKeys::hoist`]).
    pub fn hoist<'c>(&self, ct: &'c Ciphertext) -> Result<Hoisted<'c>, HeError> {
        self.ek.hoist(ct)
    }

    /// [`Evaluator::rotate`] of the hoisted ciphertext `h` (noise bound `bound`)
    /// by `k`: its first key switch reuses `h`'s digits.
    pub fn rotate_hoisted(&self, h: &Hoisted<'_>, bound: f64, k: usize) -> Result<Noisy, HeError> {
        let k = k % ROW;
        let first = k.trailing_zeros();
        let out = Noisy {
            ct: if k == 0 {
                h.ciphertext().clone()
            } else {
                self.ek.switch(h, session::galois_element(1 << first))?
            },
            bound: if k == 0 {
                bound
            } else {
                bound + noise::key_switch()
            },
        };
        let mut out = out;
        for j in first + 1..ROW.trailing_zeros() {
            if (k >> j) & 1 == 1 {
                let h = self.hoist(&out.ct)?;
                out = Noisy {
                    ct: self.ek.switch(&h, session::galois_element(1 << j))?,
                    bound: out.bound + noise::key_switch(),
                };
            }
        }
        Ok(out)
    }

    /// Swaps the two rows.
    pub fn swap_rows(&self, x: Noisy) -> Result<Noisy, HeError> {
        let h = self.hoist(&x.ct)?;
        Ok(Noisy {
            ct: self.ek.switch(&h, 2 * DEGREE - 1)?,
            bound: x.bound + noise::key_switch(),
        })
    }

    /// Whether `count` output ciphertexts, each of computation noise at most
    /// `bound`, can be flooded within the layer's statistical distance
    /// ([`noise::check_distance`]).
    pub fn floodable(&self, bound: f64, count: usize) -> bool {
        Flood::choose(self.params, bound)
            .and_then(|f| noise::check_distance(std::iter::repeat_n(f.log_distance, count)))
            .is_ok()
    }

    /// A ciphertext of zero with no noise: `like ⊙ 0` (for an output no weight
    /// reaches).
    pub fn zero(&self, like: &Ciphertext) -> Result<Noisy, HeError> {
        let zero = self.encode(&[])?;
        self.dot_terms([(like, &zero, 0.0)])?
            .ok_or_else(|| HeError::InvalidArgument("no product".into()))
    }

    /// `a + b`.
    pub fn add(&self, mut a: Noisy, b: &Noisy) -> Noisy {
        a.ct += &b.ct;
        a.bound += b.bound;
        a
    }

    /// `Σ_j R(j·step)(terms[j])` by Horner's rule (`terms[0] + R(step)(terms[1]
    /// + R(step)(…))`): one rotation by a multiple of `step` per present term
    /// (absent terms are zero), i.e. `popcount` key switches each.
    pub fn horner(&self, terms: Vec<Option<Noisy>>, step: usize) -> Result<Option<Noisy>, HeError> {
        // acc = Σ_{j ≥ low} R((j − low)·step)(terms[j]).
        let mut acc: Option<(Noisy, usize)> = None;
        for (j, term) in terms.into_iter().enumerate().rev() {
            let Some(t) = term else { continue };
            acc = Some(match acc {
                None => (t, j),
                Some((a, low)) => (self.add(self.rotate(a, (low - j) * step)?, &t), j),
            });
        }
        acc.map(|(a, low)| self.rotate(a, low * step)).transpose()
    }
}

/// Runs one HE linear layer: [`run_all`] of one layer.
pub fn run(
    keys: &Keys,
    ch: &mut Channel,
    packing: &dyn Packing,
    x: &[u64],
) -> Result<Vec<u64>, HeError> {
    Ok(run_all(keys, ch, &[(packing, x)])?
        .into_iter()
        .next()
        .unwrap_or_default())
}

/// Runs independent HE linear layers together: each `(packing, x)` is a
/// layer and this party's share of its input; the client passes its shares
/// (`Keys::Client`), the server its shares (`Keys::Server`; the packings know
/// the weights). Both get their output shares (length [`Packing::out_len`]
/// each), in order. One round trip for all: the client sends the ciphertexts
/// of every layer in one flight, the server answers every layer in one;
/// bytes are the layers' summed (see the [module documentation](super)).
pub fn run_all(
    keys: &Keys,
    ch: &mut Channel,
    layers: &[(&dyn Packing, &[u64])],
) -> Result<Vec<Vec<u64>>, HeError> {
    let t = keys.params().t;
    for (packing, x) in layers {
        check(x.len() == packing.in_len(), || {
            format!(
                "{} shares for a layer of {} inputs",
                x.len(),
                packing.in_len()
            )
        })?;
        check(x.iter().all(|&v| v < t), || {
            format!("shares must be reduced mod {t}")
        })?;
    }
    let mut ys: Vec<Vec<u64>> = layers
        .iter()
        .map(|(p, _)| vec![0u64; p.out_len()])
        .collect();
    match keys {
        Keys::Client { params, sk } => {
            let mut cts = Vec::new();
            for (packing, x) in layers {
                cts.extend(
                    (0..packing.in_cts())
                        .into_par_iter()
                        .map(|k| {
                            let pt = plaintext(params, &packing.pack(x, k))?;
                            Ok(sk.try_encrypt(&pt, &mut OsRng::new()?)?)
                        })
                        .collect::<Result<Vec<Ciphertext>, HeError>>()?,
                );
            }
            wire::send_cts(ch, &cts)?;
            for ((packing, _), y) in layers.iter().zip(&mut ys) {
                let outs = wire::recv_cts(ch, packing.out_cts(), &params.bfv, None)?;
                for (g, ct) in outs.iter().enumerate() {
                    let pt = sk.try_decrypt(ct)?;
                    let slots = Vec::<u64>::try_decode(&pt, Encoding::simd())?;
                    packing.unpack(&slots, g, y);
                }
            }
        }
        Keys::Server { params, ek, pk } => {
            let inputs = layers
                .iter()
                .map(|(p, _)| wire::recv_cts(ch, p.in_cts(), &params.bfv, Some(CT_LEVEL)))
                .collect::<Result<Vec<_>, _>>()?;
            let ev = Evaluator { params, ek };
            let mut cts = Vec::new();
            for (((packing, x), inputs), y) in layers.iter().zip(inputs).zip(&mut ys) {
                cts.extend(serve(params, pk, &ev, *packing, x, inputs, y)?);
            }
            // The replies go without the variable-time flag too (the server's own
            // polynomials may set it on one of a reply's two): one size on the wire,
            // the one `sci_ir::cost::he::server_ct_bytes` predicts.
            cts.iter_mut().for_each(wire::constant_time);
            wire::send_cts(ch, &cts)?;
        }
    }
    Ok(ys)
}

/// The server's part of one layer of [`run_all`]: adds its share `x` to the
/// client's ciphertexts `inputs`, evaluates the layer, masks and floods every
/// output ciphertext; writes its output share to `y` and returns the
/// ciphertexts to send.
fn serve(
    params: &Params,
    pk: &Ciphertext,
    ev: &Evaluator<'_>,
    packing: &dyn Packing,
    x: &[u64],
    mut inputs: Vec<Ciphertext>,
    y: &mut [u64],
) -> Result<Vec<Ciphertext>, HeError> {
    inputs
        .par_iter_mut()
        .enumerate()
        .try_for_each(|(k, ct)| -> Result<(), HeError> {
            *ct += &plaintext(params, &packing.pack(x, k))?;
            Ok(())
        })?;
    let inputs = packing.prepare(ev, inputs)?;
    let mut outs = (0..packing.units())
        .into_par_iter()
        .map(|u| {
            packing
                .eval(ev, &inputs, u)?
                .into_iter()
                .map(|(g, v)| Ok((g, finish(params, pk, v)?)))
                .collect::<Result<Vec<_>, HeError>>()
        })
        .collect::<Result<Vec<_>, HeError>>()?
        .concat();
    outs.sort_by_key(|&(g, _)| g);
    check(
        outs.iter().map(|&(g, _)| g).eq(0..packing.out_cts()),
        || "the packing's work units do not yield each output once".into(),
    )?;
    noise::check_distance(outs.iter().map(|(_, o)| o.2.log_distance))?;
    Ok(outs
        .into_iter()
        .map(|(g, (ct, r, _))| {
            packing.unpack(&r, g, y);
            ct
        })
        .collect())
}

/// The `fhe` plaintext of a slot vector (values mod `t`) at the ciphertexts'
/// level, for encryption and additions.
pub(crate) fn plaintext(params: &Params, slots: &[u64]) -> Result<Plaintext, HeError> {
    Ok(Plaintext::try_encode(
        slots,
        Encoding::simd_at_level(CT_LEVEL),
        &params.bfv,
    )?)
}

/// The server's last steps on an output ciphertext: subtract a uniform mask
/// `r` (returned), add a fresh encryption of zero, flood, switch down.
fn finish(
    params: &Params,
    pk: &Ciphertext,
    v: Noisy,
) -> Result<(Ciphertext, Vec<u64>, Flood), HeError> {
    let t = params.t;
    let mut prg = Prg::from_os()?;
    let r: Vec<u64> = (0..DEGREE)
        .map(|_| (prg.next_block().0 % u128::from(t)) as u64)
        .collect();
    let mut ct = v.ct;
    ct -= &plaintext(params, &r)?;
    // Enc_pk(0) = (u·pk_0 + e_1, u·pk_1 + e_2), `fhe`'s public-key encryption
    // with the key switched to the ciphertexts' level once per session.
    let ctx = params.bfv.context_at_level(CT_LEVEL)?;
    let mut rng = OsRng::new()?;
    let mut small = || Poly::small(ctx, Representation::Ntt, VARIANCE, &mut rng);
    let (u, e1, e2) = (small()?, small()?, small()?);
    let mut c0 = &u * &pk[0];
    c0 += &e1;
    let mut c1 = &u * &pk[1];
    c1 += &e2;
    ct += &Ciphertext::new(vec![c0, c1], &params.bfv)?;
    let flood = Flood::choose(params, v.bound)?;
    ct[0] += &flood_poly(params, flood.f, &mut prg)?;
    ct.switch_to_level(flood.level)?;
    Ok((ct, r, flood))
}

/// A polynomial at level 1 (NTT form) with coefficients uniform in `[−2^f,
/// 2^f)`: `f + 1` random bits per coefficient (at most 192), reduced into
/// each prime, minus `2^f`.
fn flood_poly(params: &Params, f: u32, prg: &mut Prg) -> Result<Poly, HeError> {
    use sci_net::pack::mask128;
    check(f < 191, || format!("flooding width 2^{f}"))?;
    let moduli = &MODULI[..MODULI.len() - CT_LEVEL];
    let bits = f + 1;
    // Per prime: 2^128 mod q and 2^f mod q.
    let consts: Vec<(u128, u128, u128)> = moduli
        .iter()
        .map(|&q| {
            let q = u128::from(q);
            let two64 = (1u128 << 64) % q;
            (q, two64 * two64 % q, pow2_mod(f, q))
        })
        .collect();
    let mut coeffs = vec![0u64; moduli.len() * DEGREE];
    for j in 0..DEGREE {
        let lo = prg.next_block().0 & mask128(bits);
        let hi = if bits > 128 {
            prg.next_block().0 & mask128(bits - 128)
        } else {
            0
        };
        for (i, &(q, two128, shift)) in consts.iter().enumerate() {
            // (hi·2^128 + lo − 2^f) mod q.
            let v = ((hi % q) * two128 + lo % q) % q;
            coeffs[i * DEGREE + j] = ((v + q - shift) % q) as u64;
        }
    }
    let ctx = params.bfv.context_at_level(CT_LEVEL)?;
    let mut p = Poly::try_convert_from(coeffs, ctx, false, Representation::PowerBasis)?;
    p.change_representation(Representation::Ntt);
    Ok(p)
}

/// `2^e mod q` for `q < 2^64`.
fn pow2_mod(e: u32, q: u128) -> u128 {
    (0..e).fold(1 % q, |r, _| (r << 1) % q)
}
