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
use sci_net::Channel;

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
            let mut ct = Ciphertext::from_bytes(&b, par)
                .map_err(|e| HeError::Malformed(format!("ciphertext: {e}")))?;
            check_ct(&ct, par, level, "ciphertext")?;
            constant_time(&mut ct);
            Ok(ct)
        })
        .collect()
}

/// Clears fhe-math's variable-time flag on every polynomial of a ciphertext
/// received from the peer (and of the server's replies, so that they have one
/// size on the wire). The flag travels inside a serialised polynomial (and a
/// seeded ciphertext's expanded half carries it), so without this a client
/// would choose whether the server's products with its weights run in variable
/// time: a timing side channel on the weights. Cost: none beyond a flag per
/// polynomial.
pub(crate) fn constant_time(ct: &mut Ciphertext) {
    for poly in ct.iter_mut() {
        poly.disallow_variable_time_computations();
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use sci_net::mem;
    use std::time::Duration;

    /// A ciphertext whose polynomials carry the variable-time flag arrives with it
    /// cleared: equal (flag included, `Poly: PartialEq`) to the constant-time
    /// originals, and not to what was sent.
    #[test]
    fn received_ciphertexts_are_constant_time() {
        let params = Params::new(4_295_049_217).unwrap();
        let ctx = params.bfv.context_at_level(0).unwrap();
        let mut rng = crate::rng::OsRng::new().unwrap();
        let honest: Vec<Poly> = (0..2)
            .map(|_| Poly::random(ctx, Representation::Ntt, &mut rng))
            .collect();
        let mut flagged = honest.clone();
        for p in &mut flagged {
            // SAFETY: the test only serialises the polynomial; no secret is involved.
            unsafe { p.allow_variable_time_computations() }
        }
        assert_ne!(flagged, honest);
        let sent = Ciphertext::new(flagged, &params.bfv).unwrap();
        let (mut a, mut b) = mem::pair(Some(Duration::from_secs(10)));
        send_cts(&mut a, &[sent]).unwrap();
        let got = recv_cts(&mut b, 1, &params.bfv, None).unwrap();
        assert_eq!(got[0].iter().cloned().collect::<Vec<_>>(), honest);
    }
}
