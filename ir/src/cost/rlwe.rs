//! The RLWE products over `Z_{2^ℓ}` shares (Cheetah's coefficient encoding, no
//! rotations; [`crate::rlwe`]), as sci-runtime's `cheetah` module runs them: the
//! bytes of a product each way and of the client's key set-up.
//!
//! # A product
//! One exchange on lane 0 (the server is role `P0`): the client sends its encrypted
//! share ([`Layout::bytes_up`]: a header, then per ciphertext a 16-byte seed and `c_0`
//! at the primes' widths), the server answers ([`Layout::bytes_down`]: a header, then
//! per output ciphertext `c_1` and the coefficients of `c_0` that carry outputs, at the
//! reply modulus' width). One round for each party. Independent products of one wave
//! run as one exchange ([`wave`]).
//!
//! # Key set-up
//! Once per session, from the client on lane 0, before the first product: the public
//! key of every parameter set the program's RLWE products use, in the sets' order
//! ([`ParamSet::key_bytes`] each). One flight; the server then answers the first
//! product, so the keys add no round of their own to a session whose next message on
//! lane 0 is the client's.

use super::{Role, Transcript};
use crate::rlwe::{Layout, ParamSet};

/// The exchange of one product of layout `l`.
pub fn layer(l: &Layout) -> Transcript {
    wave([l])
}

/// The exchange of independent products run together (the runtime's
/// `cheetah::run_all`, a wave of the schedule): every layer's ciphertexts in one
/// flight from the client, every reply in one from the server.
pub fn wave<'a>(layouts: impl IntoIterator<Item = &'a Layout>) -> Transcript {
    let (up, down) = layouts
        .into_iter()
        .fold((0, 0), |(u, d), l| (u + l.bytes_up(), d + l.bytes_down()));
    Transcript::new().send(Role::P1, up).send(Role::P0, down)
}

/// Bytes of the key set-up of `sets`: their public keys.
pub fn key_setup_bytes(sets: &[&ParamSet]) -> u64 {
    sets.iter().map(|s| s.key_bytes()).sum()
}

/// The key set-up of `sets` (nothing when empty).
pub fn key_setup(sets: &[&ParamSet]) -> Transcript {
    Transcript::new().send(Role::P1, key_setup_bytes(sets))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rlwe::PARAM_SETS;

    #[test]
    fn keys_and_layers_price_the_layouts() {
        let l = crate::rlwe::matmul_layout(1, 512, 10, 37).unwrap();
        let t = layer(&l);
        assert_eq!(
            (t.sent(Role::P1), t.sent(Role::P0)),
            (l.bytes_up(), l.bytes_down())
        );
        assert_eq!((t.rounds(Role::P0), t.rounds(Role::P1)), (1, 1));
        let s = crate::rlwe::sets([&l, &l]);
        assert_eq!(s, vec![&PARAM_SETS[usize::from(l.set.id)]]);
        assert_eq!(key_setup(&s).sent(Role::P1), l.set.key_bytes());
        assert_eq!(key_setup(&[]).sent(Role::P1), 0);
        // Set 1 (N = 8192, three primes): a seed and 8192 coefficients of 163 bits.
        assert_eq!(PARAM_SETS[1].key_bytes(), 6 + 16 + 8192 * 163 / 8);
    }
}
