//! Keys: the client's ternary secret key and its public key, sent once per
//! session and parameter set (the server uses it only to re-randomize its
//! replies), and the client's symmetric encryption of its shares.

use sci_ir::rlwe::ParamSet;

use super::params::{Ring, Scale, cbd, ring, signed_mod, ternary};
use super::{CheetahError, wire};
use sci_net::Channel;
use sci_net::crypto::{Block, Prg};

/// The client's secret key `s` (uniform ternary).
pub struct SecretKey {
    pub(crate) ring: &'static Ring,
    /// `s` in NTT form.
    pub(crate) s_ntt: Vec<u64>,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretKey").finish_non_exhaustive()
    }
}

/// The public key `(b, a) = (−a·s + e, a)`, `a` expanded from a seed; both in
/// NTT form.
#[derive(Clone)]
pub struct PublicKey {
    pub(crate) ring: &'static Ring,
    pub(crate) seed: Block,
    pub(crate) b: Vec<u64>,
    pub(crate) a: Vec<u64>,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicKey")
            .field("set", &self.ring.set.id)
            .finish_non_exhaustive()
    }
}

/// `−a·s + e` (coefficient form) for `a` in NTT form.
fn mask_poly(ring: &Ring, a: &[u64], s_ntt: &[u64], e: &[i64]) -> Vec<u64> {
    let mut p = ring.zero();
    ring.mul_acc(&mut p, a, s_ntt);
    ring.inv(&mut p);
    for (chunk, &q) in p.chunks_mut(ring.n).zip(ring.moduli()) {
        for (c, &e) in chunk.iter_mut().zip(e) {
            *c = ((q - *c) % q + signed_mod(e, q)) % q;
        }
    }
    p
}

impl SecretKey {
    /// A fresh key pair of `set` from `prg`.
    pub fn generate(set: &'static ParamSet, prg: &mut Prg) -> (SecretKey, PublicKey) {
        let ring = ring(set);
        let s = ternary(prg, ring.n);
        let mut s_ntt = ring.from_signed(|j| s[j]);
        ring.fwd(&mut s_ntt);
        let seed = prg.next_block();
        let a = ring.uniform(&mut Prg::new(seed));
        let mut b = mask_poly(ring, &a, &s_ntt, &cbd(prg, ring.n));
        ring.fwd(&mut b);
        (SecretKey { ring, s_ntt }, PublicKey { ring, seed, b, a })
    }

    /// Encrypts the plaintext `m` (`N` values `< 2^ℓ`): `c_0 = −a·s + e +
    /// ⌊q·m/2^ℓ⌉` in coefficient form, with `c_1 = a` expanded from the
    /// returned seed (in NTT form). Randomness from `prg`.
    pub fn encrypt(&self, m: &[u64], scale: &Scale, prg: &mut Prg) -> (Block, Vec<u64>) {
        let ring = self.ring;
        let seed = prg.next_block();
        let a = ring.uniform(&mut Prg::new(seed));
        let mut c0 = mask_poly(ring, &a, &self.s_ntt, &cbd(prg, ring.n));
        for (i, (chunk, &q)) in c0.chunks_mut(ring.n).zip(ring.moduli()).enumerate() {
            for (c, &m) in chunk.iter_mut().zip(m) {
                *c = (*c + scale.encode(m, i, q)) % q;
            }
        }
        (seed, c0)
    }

    /// `c_1·s` (coefficient form) for `c_1` given as values mod `2^k`.
    pub(crate) fn times_s(&self, c1: &[u64]) -> Vec<u64> {
        let ring = self.ring;
        let mut p = ring.zero();
        for (chunk, &q) in p.chunks_mut(ring.n).zip(ring.moduli()) {
            for (c, &v) in chunk.iter_mut().zip(c1) {
                *c = v % q;
            }
        }
        ring.fwd(&mut p);
        let mut out = ring.zero();
        ring.mul_acc(&mut out, &p, &self.s_ntt);
        ring.inv(&mut out);
        out
    }
}

impl PublicKey {
    /// Sends the key (header, seed of `a`, `b`).
    pub fn send(&self, ch: &mut Channel) -> Result<(), CheetahError> {
        wire::send_header(ch, self.ring.set, 1)?;
        wire::send_poly(ch, self.ring.set, self.seed, &self.b)
    }

    /// Receives a key of `set` (for the layer named `layer`), refusing a wrong
    /// header or unreduced residues.
    pub fn recv(
        ch: &mut Channel,
        set: &'static ParamSet,
        layer: &str,
    ) -> Result<PublicKey, CheetahError> {
        wire::recv_header(ch, set, 1, layer)?;
        let (seed, b) = wire::recv_poly(ch, set, layer, "the public key")?;
        let ring = ring(set);
        let a = ring.uniform(&mut Prg::new(seed));
        Ok(PublicKey { ring, seed, b, a })
    }
}
