//! Ciphertexts and keys on the wire: each object is its `fhe` serialization
//! (protobuf: polynomials packed at the primes' bit widths, `c_1` of a fresh
//! encryption as its seed) behind a 4-byte little-endian length. Lengths are
//! bounded before anything is allocated, and decoding errors are
//! [`HeError::Malformed`].

use std::sync::Arc;

use fhe::bfv::{BfvParameters, Ciphertext};
use fhe_math::rq::{Poly, Representation};
use fhe_traits::{DeserializeParametrized, Serialize};

use super::HeError;
use super::params::DEGREE;
use crate::net::Channel;

/// Largest accepted object: a ciphertext is below 0.7 MB, the Galois keys
/// ≈ 12 MB.
const MAX_LEN: usize = 64 << 20;

/// Sends one length-prefixed byte string (not flushed).
pub(crate) fn send_bytes(ch: &mut Channel, bytes: &[u8]) -> Result<(), HeError> {
    let len = u32::try_from(bytes.len())
        .map_err(|_| HeError::InvalidArgument("object too large to send".into()))?;
    ch.send(&len.to_le_bytes())?;
    ch.send(bytes)?;
    Ok(())
}

/// Receives one length-prefixed byte string.
pub(crate) fn recv_bytes(ch: &mut Channel) -> Result<Vec<u8>, HeError> {
    let mut len = [0u8; 4];
    ch.recv(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_LEN {
        return Err(HeError::Malformed(format!("a {len}-byte object")));
    }
    Ok(ch.recv_vec(len)?)
}

/// Sends ciphertexts and flushes.
pub(crate) fn send_cts(ch: &mut Channel, cts: &[Ciphertext]) -> Result<(), HeError> {
    for ct in cts {
        send_bytes(ch, &ct.to_bytes())?;
    }
    ch.flush()?;
    Ok(())
}

/// Receives `n` ciphertexts of parameters `par`, each of two polynomials
/// (and at level `level`, if given: the server's products assume it).
pub(crate) fn recv_cts(
    ch: &mut Channel,
    n: usize,
    par: &Arc<BfvParameters>,
    level: Option<usize>,
) -> Result<Vec<Ciphertext>, HeError> {
    (0..n)
        .map(|_| {
            let b = recv_bytes(ch)?;
            let ct = Ciphertext::from_bytes(&b, par)
                .map_err(|e| HeError::Malformed(format!("ciphertext: {e}")))?;
            check_ct(&ct, par, level, "ciphertext")?;
            Ok(ct)
        })
        .collect()
}

/// Checks a ciphertext received from the peer (`what` names it): two
/// polynomials, each in NTT form with reduced coefficients ([`check_poly`]),
/// and at level `level` if given (the server's products assume it).
pub(crate) fn check_ct(
    ct: &Ciphertext,
    par: &Arc<BfvParameters>,
    level: Option<usize>,
    what: &str,
) -> Result<(), HeError> {
    if ct.len() != 2 {
        return Err(HeError::Malformed(format!(
            "a {what} of {} polynomials",
            ct.len()
        )));
    }
    for (k, poly) in ct.iter().enumerate() {
        check_poly(
            poly,
            Representation::Ntt,
            &format!("polynomial {k} of a {what}"),
        )?;
    }
    if let Some(l) = level {
        let found = par.level_of_context(ct[0].ctx())?;
        if found != l {
            return Err(HeError::Malformed(format!(
                "a {what} at level {found}, expected {l}"
            )));
        }
    }
    Ok(())
}

/// Checks a polynomial received from the peer: in the representation `want`
/// and with every coefficient reduced mod its prime. The server's arithmetic
/// (`fhe-math`) asserts both, so a peer's polynomial that is not is refused here
/// ([`HeError::Malformed`] naming `what`) instead of panicking there.
pub(crate) fn check_poly(poly: &Poly, want: Representation, what: &str) -> Result<(), HeError> {
    if *poly.representation() != want {
        return Err(HeError::Malformed(format!(
            "{what} is in {:?} form, expected {want:?}",
            poly.representation()
        )));
    }
    let q = poly.ctx().moduli();
    let c = poly.coefficients();
    if c.dim() != (q.len(), DEGREE) {
        return Err(HeError::Malformed(format!(
            "{what} has {} × {} coefficients, expected {} × {}",
            c.dim().0,
            c.dim().1,
            q.len(),
            DEGREE
        )));
    }
    for (row, &qi) in c.outer_iter().zip(q) {
        if row.iter().any(|&x| x >= qi) {
            return Err(HeError::Malformed(format!(
                "{what} has coefficients not reduced mod {qi}"
            )));
        }
    }
    Ok(())
}
