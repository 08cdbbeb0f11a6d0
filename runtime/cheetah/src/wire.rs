//! Messages of the RLWE products, and their validation.
//!
//! Every message starts with a header of [`HEADER_BYTES`]: the parameter
//! set's id, its number of primes (the ciphertexts' level) and the number of
//! objects (u32, little endian); the receiver knows all three from the public
//! layout and refuses a mismatch. Then, per object:
//! * a client ciphertext or the public key: a 16-byte seed (its uniform
//!   polynomial) and one polynomial packed at the primes' widths, prime by
//!   prime, every residue checked `< q_i` on receipt;
//! * a reply: `c_1` (`N` coefficients) then the used coefficients of `c_0`,
//!   at `k` bits each ([`ParamSet::reply_bits`]); objects end on a byte.
//!
//! A malformed message is [`CheetahError::Malformed`] naming the layer.

use sci_ir::rlwe::{HEADER_BYTES, ParamSet, SEED_BYTES};

use super::CheetahError;
use sci_net::Channel;
use sci_net::crypto::Block;
use sci_net::pack::{BitReader, BitWriter};

/// Sends a header for `count` objects of `set`.
pub(crate) fn send_header(
    ch: &mut Channel,
    set: &ParamSet,
    count: usize,
) -> Result<(), CheetahError> {
    let count = u32::try_from(count).map_err(|_| {
        CheetahError::InvalidArgument(format!("{count} ciphertexts in one message"))
    })?;
    let mut h = [set.id, set.moduli.len() as u8, 0, 0, 0, 0];
    h[2..].copy_from_slice(&count.to_le_bytes());
    const _: () = assert!(HEADER_BYTES == 6);
    Ok(ch.send(&h)?)
}

/// Receives a header and checks it announces `count` objects of `set`.
pub(crate) fn recv_header(
    ch: &mut Channel,
    set: &ParamSet,
    count: usize,
    layer: &str,
) -> Result<(), CheetahError> {
    let mut h = [0u8; HEADER_BYTES as usize];
    ch.recv(&mut h)?;
    let got = u32::from_le_bytes([h[2], h[3], h[4], h[5]]) as usize;
    let bad = |what: String| Err(CheetahError::malformed(layer, what));
    if h[0] != set.id {
        return bad(format!("parameter set {}, expected {}", h[0], set.id));
    }
    if usize::from(h[1]) != set.moduli.len() {
        return bad(format!(
            "ciphertexts at level {} (primes), expected {}",
            h[1],
            set.moduli.len()
        ));
    }
    if got != count {
        return bad(format!("{got} objects, expected {count}"));
    }
    Ok(())
}

/// Sends a seed and a polynomial (residues mod the primes).
pub(crate) fn send_poly(
    ch: &mut Channel,
    set: &ParamSet,
    seed: Block,
    p: &[u64],
) -> Result<(), CheetahError> {
    ch.send(&seed.to_bytes())?;
    let mut w = BitWriter::with_capacity_bits(p.len() as u64 * 64);
    for (chunk, bits) in p.chunks(set.degree).zip(set.prime_bits()) {
        for &c in chunk {
            w.push(c, bits);
        }
    }
    Ok(ch.send(&w.finish())?)
}

/// Receives a seed and a polynomial of `set`, each residue checked `< q_i`.
pub(crate) fn recv_poly(
    ch: &mut Channel,
    set: &ParamSet,
    layer: &str,
    what: &str,
) -> Result<(Block, Vec<u64>), CheetahError> {
    let mut seed = [0u8; SEED_BYTES as usize];
    ch.recv(&mut seed)?;
    let bytes = ch.recv_vec((set.degree as u64 * set.coeff_bits()).div_ceil(8) as usize)?;
    let mut r = BitReader::new(&bytes);
    let mut p = Vec::with_capacity(set.degree * set.moduli.len());
    for (&q, bits) in set.moduli.iter().zip(set.prime_bits()) {
        for _ in 0..set.degree {
            let c = r.read(bits);
            if c >= q {
                return Err(CheetahError::malformed(
                    layer,
                    format!("{what} has a coefficient {c} not reduced mod {q}"),
                ));
            }
            p.push(c);
        }
    }
    Ok((Block::from_bytes(seed), p))
}

/// Sends a reply: `c_1` and the used coefficients of `c_0`, at `k` bits.
pub(crate) fn send_reply(
    ch: &mut Channel,
    c1: &[u64],
    c0: &[u64],
    k: u32,
) -> Result<(), CheetahError> {
    let mut w = BitWriter::with_capacity_bits((c1.len() + c0.len()) as u64 * u64::from(k));
    for &c in c1.iter().chain(c0) {
        w.push(c, k);
    }
    Ok(ch.send(&w.finish())?)
}

/// Receives a reply of `n` coefficients of `c_1` and `used` of `c_0`.
pub(crate) fn recv_reply(
    ch: &mut Channel,
    n: usize,
    used: usize,
    k: u32,
) -> Result<(Vec<u64>, Vec<u64>), CheetahError> {
    let bytes = ch.recv_vec(((n + used) as u64 * u64::from(k)).div_ceil(8) as usize)?;
    let mut r = BitReader::new(&bytes);
    let c1 = (0..n).map(|_| r.read(k)).collect();
    let c0 = (0..used).map(|_| r.read(k)).collect();
    Ok((c1, c0))
}
