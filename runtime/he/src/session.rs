//! Per-session key material: the client generates a secret key, the Galois
//! keys of the power-of-two column rotations and of the row swap (hybrid key
//! switching: ciphertexts at level 1, keys at level 0), and a public key, and
//! sends the latter two to the server (once per session and plaintext
//! modulus, one message).

use fhe::bfv::{Ciphertext, EvaluationKeyBuilder, PublicKey, SecretKey};
use fhe_math::rq::{Poly, Representation};
use fhe_traits::{DeserializeParametrized, DeserializeWithContext, Serialize};

use super::keyswitch::GaloisKeys;
use super::params::{CT_LEVEL, DEGREE, MODULI, Params, ROW};
use super::rng::OsRng;
use super::{HeError, wire};
use sci_net::{Channel, Party};

/// Column rotations with a Galois key: `2^j` for `2^j < ROW` (others are
/// composed).
pub(crate) fn rotation_steps() -> impl Iterator<Item = usize> {
    (0..ROW.trailing_zeros()).map(|j| 1usize << j)
}

/// One party's HE keys.
pub enum Keys {
    /// The client: decrypts.
    Client {
        /// Parameters.
        params: Params,
        /// The secret key.
        sk: SecretKey,
    },
    /// The server: evaluates.
    Server {
        /// Parameters.
        params: Params,
        /// Galois keys (rotations, row swap).
        ek: Box<GaloisKeys>,
        /// The client's public key (an encryption of zero) switched to the
        /// ciphertexts' level [`CT_LEVEL`], for the re-randomization.
        pk: Ciphertext,
    },
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (role, t) = match self {
            Keys::Client { params, .. } => ("client", params.t),
            Keys::Server { params, .. } => ("server", params.t),
        };
        write!(f, "Keys({role}, t = {t})")
    }
}

impl Keys {
    /// Key set-up over `ch` for the plaintext modulus `t`: the client
    /// (`Party::Client`) generates and sends, the server receives and checks
    /// that every needed rotation is supported. One message (≈ 11.8 MB).
    pub fn setup(ch: &mut Channel, party: Party, t: u64) -> Result<Keys, HeError> {
        let params = Params::new(t)?;
        match party {
            Party::Client => {
                let mut rng = OsRng::new()?;
                let sk = SecretKey::random(&params.bfv, &mut rng);
                let mut b = EvaluationKeyBuilder::new_leveled(&sk, CT_LEVEL, 0)?;
                for k in rotation_steps() {
                    b.enable_column_rotation(k)?;
                }
                b.enable_row_rotation()?;
                let ek = b.build(&mut rng)?;
                let pk = PublicKey::new(&sk, &mut rng);
                wire::send_bytes(ch, &ek.to_bytes())?;
                wire::send_bytes(ch, &pk.to_bytes())?;
                ch.flush()?;
                Ok(Keys::Client { params, sk })
            }
            Party::Server => Keys::receive(ch, params),
        }
    }

    /// The server's side of [`Keys::setup`] with parameters already built: receives
    /// the client's Galois keys and public key and validates them as ciphertexts are
    /// ([`galois_keys`], [`public_key`]). A malformed or incomplete key is
    /// [`HeError::Malformed`] naming what is wrong.
    pub fn receive(ch: &mut Channel, params: Params) -> Result<Keys, HeError> {
        let ek = galois_keys(&wire::recv_bytes(ch)?, &params)?;
        let pk = public_key(&wire::recv_bytes(ch)?, &params)?;
        Ok(Keys::Server {
            params,
            ek: Box::new(ek),
            pk,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        match self {
            Keys::Client { params, .. } | Keys::Server { params, .. } => params,
        }
    }
}

/// Decodes the client's Galois keys into the server's form ([`GaloisKeys`]) and
/// checks them first: keys
/// for ciphertexts at level [`CT_LEVEL`] with their key-switching keys at level 0
/// (hybrid key switching, no digit decomposition), one key-switching polynomial
/// pair per ciphertext prime, every polynomial in the `NttShoup` form the key
/// switching multiplies by with reduced coefficients ([`wire::check_poly`]), and
/// a key for every needed rotation and the row swap.
fn galois_keys(bytes: &[u8], params: &Params) -> Result<GaloisKeys, HeError> {
    use prost::Message;
    let bad = |m: String| HeError::Malformed(format!("Galois keys: {m}"));
    let proto = fhe::proto::bfv::EvaluationKey::decode(bytes).map_err(|e| bad(e.to_string()))?;
    if proto.ciphertext_level as usize != CT_LEVEL || proto.evaluation_key_level != 0 {
        return Err(bad(format!(
            "for ciphertexts at level {} with keys at level {}, expected {CT_LEVEL} and 0",
            proto.ciphertext_level, proto.evaluation_key_level
        )));
    }
    let ctx = params.bfv.context_at_level(0)?;
    let digits = MODULI.len() - CT_LEVEL;
    let mut keys: Vec<(usize, Vec<Poly>, Vec<Poly>)> = Vec::with_capacity(proto.gk.len());
    for gk in &proto.gk {
        let e = gk.exponent;
        let ksk = gk
            .ksk
            .as_ref()
            .ok_or_else(|| bad(format!("the key of Galois element {e} is empty")))?;
        if ksk.ciphertext_level as usize != CT_LEVEL || ksk.ksk_level != 0 || ksk.log_base != 0 {
            return Err(bad(format!(
                "the key of Galois element {e} is for ciphertext level {}, key level {} and base 2^{}, expected {CT_LEVEL}, 0 and none",
                ksk.ciphertext_level, ksk.ksk_level, ksk.log_base
            )));
        }
        if ksk.c0.len() != digits || (ksk.seed.is_empty() && ksk.c1.len() != digits) {
            return Err(bad(format!(
                "the key of Galois element {e} has {} + {} polynomials, expected {digits} + {digits}",
                ksk.c0.len(),
                ksk.c1.len()
            )));
        }
        let mut polys = Vec::with_capacity(2 * digits);
        for (i, b) in ksk.c0.iter().chain(&ksk.c1).enumerate() {
            let what = format!("polynomial {i} of the key of Galois element {e}");
            let mut poly = Poly::from_bytes(b, ctx).map_err(|err| bad(format!("{what}: {err}")))?;
            // The flag travels in the bytes: the server's key switching must not let
            // the client choose variable time (see `wire::constant_time`).
            poly.disallow_variable_time_computations();
            wire::check_poly(
                &poly,
                Representation::NttShoup,
                &format!("Galois keys: {what}"),
            )?;
            polys.push(poly);
        }
        let a = if ksk.seed.is_empty() {
            polys.split_off(digits)
        } else {
            polys.truncate(digits);
            let seed = <[u8; 32]>::try_from(ksk.seed.as_slice())
                .map_err(|_| bad(format!("the key of Galois element {e} has a bad seed")))?;
            seeded_polys(ctx, seed, digits)
        };
        let g = e as usize;
        if g.is_multiple_of(2) || g >= 2 * DEGREE || keys.iter().any(|(h, ..)| *h == g) {
            return Err(bad(format!(
                "Galois element {e} is even, too large or repeated"
            )));
        }
        keys.push((g, polys, a));
    }
    let needed = rotation_steps().map(galois_element).chain([2 * DEGREE - 1]);
    let ek = GaloisKeys::new(&params.bfv, keys)?;
    for g in needed {
        if !ek.supports(g) {
            return Err(bad(format!("a rotation is missing (Galois element {g})")));
        }
    }
    Ok(ek)
}

/// The polynomials `a_i` of a key-switching key that `fhe` sends as a seed
/// (`fhe`'s `KeySwitchingKey::generate_c1`: a ChaCha8 stream seeds each).
fn seeded_polys(
    ctx: &std::sync::Arc<fhe_math::rq::Context>,
    seed: [u8; 32],
    n: usize,
) -> Vec<Poly> {
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};
    let mut rng = ChaCha8Rng::from_seed(seed);
    (0..n)
        .map(|_| {
            let mut seed_i = [0u8; 32];
            rng.fill_bytes(&mut seed_i);
            Poly::random_from_seed(ctx, Representation::NttShoup, seed_i)
        })
        .collect()
}

/// The Galois element of the column rotation by `k`: `3^k mod 2N` (`fhe`'s).
pub(crate) fn galois_element(k: usize) -> usize {
    (0..k).fold(1usize, |g, _| g * 3 % (2 * DEGREE))
}

/// Decodes the client's public key (an encryption of zero at level 0, the full
/// modulus), checks it as a ciphertext ([`wire::check_ct`]) and switches it to
/// the ciphertexts' level.
fn public_key(bytes: &[u8], params: &Params) -> Result<Ciphertext, HeError> {
    use prost::Message;
    let bad = |m: String| HeError::Malformed(format!("public key: {m}"));
    let proto = fhe::proto::bfv::PublicKey::decode(bytes).map_err(|e| bad(e.to_string()))?;
    let c = proto.c.ok_or_else(|| bad("no ciphertext".into()))?;
    let ct =
        Ciphertext::from_bytes(&c.encode_to_vec(), &params.bfv).map_err(|e| bad(e.to_string()))?;
    wire::check_ct(&ct, &params.bfv, Some(0), "public key")?;
    PublicKey::from_bytes(bytes, &params.bfv).map_err(|e| bad(e.to_string()))?;
    let mut ct = ct;
    wire::constant_time(&mut ct);
    ct.switch_to_level(CT_LEVEL)?;
    Ok(ct)
}
