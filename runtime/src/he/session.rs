//! Per-session key material: the client generates a secret key, the Galois
//! keys of the power-of-two column rotations and of the row swap (hybrid key
//! switching: ciphertexts at level 1, keys at level 0), and a public key, and
//! sends the latter two to the server (once per session and plaintext
//! modulus, one message).

use fhe::bfv::{EvaluationKey, EvaluationKeyBuilder, PublicKey, SecretKey};
use fhe_traits::{DeserializeParametrized, Serialize};

use super::params::{CT_LEVEL, Params, ROW};
use super::rng::OsRng;
use super::{HeError, wire};
use crate::net::{Channel, Party};

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
        ek: Box<EvaluationKey>,
        /// The client's public key (re-randomization).
        pk: PublicKey,
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
    /// the client's Galois keys and public key and checks that every needed rotation
    /// is supported. A malformed or incomplete key is [`HeError::Malformed`].
    pub fn receive(ch: &mut Channel, params: Params) -> Result<Keys, HeError> {
        let ek = EvaluationKey::from_bytes(&wire::recv_bytes(ch)?, &params.bfv)
            .map_err(|e| HeError::Malformed(format!("Galois keys: {e}")))?;
        let pk = PublicKey::from_bytes(&wire::recv_bytes(ch)?, &params.bfv)
            .map_err(|e| HeError::Malformed(format!("public key: {e}")))?;
        let complete = ek.supports_row_rotation()
            && rotation_steps().all(|k| ek.supports_column_rotation_by(k));
        if !complete {
            return Err(HeError::Malformed("the Galois keys lack a rotation".into()));
        }
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
