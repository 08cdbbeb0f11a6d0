//! Entry points of the `he` fuzz target (cargo-fuzz, `fuzz/`): what the server
//! receives of HE from a peer, replayed from the input ([`sci_net::replay`]). Each
//! function accepts any bytes and returns normally; a panic is the bug a fuzzer
//! finds. Compiled with the `fuzzing` feature; `sci-runtime`'s `fuzz_entry`
//! re-exports them beside the other targets.

use std::sync::OnceLock;

use fhe::bfv::{Ciphertext, Plaintext, SecretKey};
use fhe_traits::{FheEncoder, FheEncrypter, Serialize};
use sci_net::replay::replay;

use crate::params::{CT_LEVEL, MIN_PLAIN_BITS, plain_modulus_above};
use crate::{Keys, Params, wire};

/// The plaintext modulus of the HE targets and its parameters (built once).
fn he_params() -> &'static Params {
    static PARAMS: OnceLock<Params> = OnceLock::new();
    PARAMS.get_or_init(|| {
        let t = plain_modulus_above(MIN_PLAIN_BITS).expect("a prime above 2^16 exists");
        Params::new(t).expect("valid HE parameters")
    })
}

/// What the server receives of HE: the first byte picks the message (even: two
/// ciphertexts at the level the products assume, as the linear layers receive them;
/// odd: the client's Galois keys and public key, as the key set-up receives them).
pub fn he(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let params = he_params();
    let mut ch = replay(rest);
    if which % 2 == 0 {
        let _ = wire::recv_cts(&mut ch, 2, &params.bfv, Some(CT_LEVEL));
    } else {
        let _ = Keys::receive(&mut ch, params.clone());
    }
}

/// Wire bytes of one fresh encryption of zero under a fresh key at the parameters of
/// [`he`], for seeding its corpus (about 0.1 MB).
pub fn he_ciphertext_seed() -> Vec<u8> {
    let params = he_params();
    let mut rng = crate::rng::OsRng::new().expect("OS randomness");
    let sk = SecretKey::random(&params.bfv, &mut rng);
    let pt = Plaintext::try_encode(
        &[0u64; 4],
        fhe::bfv::Encoding::simd_at_level(CT_LEVEL),
        &params.bfv,
    )
    .expect("encoding zero");
    let ct: Ciphertext = sk.try_encrypt(&pt, &mut rng).expect("encrypting zero");
    let bytes = ct.to_bytes();
    let mut out = (bytes.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&bytes);
    out
}
