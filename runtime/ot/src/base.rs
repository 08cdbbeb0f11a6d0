//! Base OTs: the Chou–Orlandi "simplest OT" over Ristretto255, random-OT
//! variant, semi-honest.
//!
//! T. Chou and C. Orlandi, "The Simplest Protocol for Oblivious Transfer",
//! LATINCRYPT 2015 (eprint 2015/267), with the output keys derived by hashing
//! the whole transcript of each OT (`i`, `A`, `B_i` and the shared point), the
//! fix discussed by Hauck and Loss (eprint 2017/1011) and Genç, Iovino and Rial
//! (eprint 2017/1135) for the original's key derivation.
//!
//! For `n` OTs, with `G` the Ristretto basepoint and `H` SHA-256 truncated to
//! 128 bits:
//! 1. the sender draws `a`, sends `A = a·G` (32 bytes);
//! 2. the receiver, for each `i` with choice `c_i`, draws `b_i` and sends
//!    `B_i = b_i·G + c_i·A` (32 bytes each), keeping
//!    `k_i = H(i, A, B_i, b_i·A)`;
//! 3. the sender sets `k_{i,0} = H(i, A, B_i, a·B_i)` and
//!    `k_{i,1} = H(i, A, B_i, a·B_i − a·A)`.
//!
//! Cost: `32 + 32·n` bytes, two messages (one round for the sender). The
//! sender does one variable-base multiplication per OT, the receiver one
//! fixed-base and one variable-base; all messages of a batch go in one send.
//! Scalars are `from_bytes_mod_order_wide` of 64 bytes from the caller's
//! [`Prg`] (seeded from the OS in production, see [`sci_net::crypto::Prg`]).

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use sha2::{Digest, Sha256};

use super::OtError;
use sci_net::Channel;
use sci_net::crypto::{Block, Prg};

fn random_scalars(prg: &mut Prg, n: usize) -> Vec<Scalar> {
    let mut bytes = vec![0u8; 64 * n];
    prg.fill_bytes(&mut bytes);
    bytes
        .as_chunks::<64>()
        .0
        .iter()
        .map(Scalar::from_bytes_mod_order_wide)
        .collect()
}

fn kdf(i: usize, a: &CompressedRistretto, b: &CompressedRistretto, p: &RistrettoPoint) -> Block {
    let d = Sha256::new()
        .chain_update(b"sci-base-ot/chou-orlandi")
        .chain_update((i as u64).to_le_bytes())
        .chain_update(a.as_bytes())
        .chain_update(b.as_bytes())
        .chain_update(p.compress().as_bytes())
        .finalize();
    let mut k = [0u8; 16];
    k.copy_from_slice(&d[..16]);
    Block::from_bytes(k)
}

fn decompress(
    bytes: &[u8; 32],
    what: &str,
) -> Result<(CompressedRistretto, RistrettoPoint), OtError> {
    let c = CompressedRistretto(*bytes);
    let p = c
        .decompress()
        .ok_or_else(|| OtError::Protocol(format!("{what} is not a Ristretto point")))?;
    Ok((c, p))
}

/// Sender of `n` random base OTs, drawing its scalar from `prg`: returns the
/// key pairs `(k_{i,0}, k_{i,1})`.
pub fn send(ch: &mut Channel, n: usize, prg: &mut Prg) -> Result<Vec<[Block; 2]>, OtError> {
    let a = random_scalars(prg, 1)[0];
    let big_a = RistrettoPoint::mul_base(&a);
    let ca = big_a.compress();
    ch.send(ca.as_bytes())?;
    let bytes = ch.recv_vec(32 * n)?;
    let aa = a * big_a;
    bytes
        .as_chunks::<32>()
        .0
        .iter()
        .enumerate()
        .map(|(i, bi)| {
            let (cb, pb) = decompress(bi, "base-OT receiver message")?;
            let p0 = a * pb;
            Ok([kdf(i, &ca, &cb, &p0), kdf(i, &ca, &cb, &(p0 - aa))])
        })
        .collect()
}

/// Receiver of random base OTs with the given choice bits, drawing its
/// scalars from `prg`: returns `k_{i,c_i}`.
pub fn recv(ch: &mut Channel, choices: &[bool], prg: &mut Prg) -> Result<Vec<Block>, OtError> {
    let bs = random_scalars(prg, choices.len());
    let mut abytes = [0u8; 32];
    ch.recv(&mut abytes)?;
    let (ca, big_a) = decompress(&abytes, "base-OT sender message")?;
    let cbs: Vec<CompressedRistretto> = bs
        .iter()
        .zip(choices)
        .map(|(b, &c)| {
            let p = RistrettoPoint::mul_base(b);
            if c { p + big_a } else { p }.compress()
        })
        .collect();
    let mut msg = Vec::with_capacity(32 * cbs.len());
    cbs.iter().for_each(|c| msg.extend_from_slice(c.as_bytes()));
    ch.send(&msg)?;
    ch.flush()?;
    Ok(bs
        .iter()
        .zip(&cbs)
        .enumerate()
        .map(|(i, (b, cb))| kdf(i, &ca, cb, &(b * big_a)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sci_net::mem;
    use std::time::Duration;

    #[test]
    fn base_ot_correct() {
        let (mut a, mut b) = mem::pair(Some(Duration::from_secs(20)));
        let choices: Vec<bool> = (0..40).map(|i| i % 3 == 1).collect();
        let c2 = choices.clone();
        let h = std::thread::spawn(move || {
            recv(&mut b, &c2, &mut Prg::new(Block(1))).map(|k| (k, b.stats()))
        });
        let keys = send(&mut a, 40, &mut Prg::new(Block(2))).expect("sender");
        let (got, rs) = h.join().expect("thread").expect("receiver");
        for ((k, g), c) in keys.iter().zip(&got).zip(&choices) {
            assert_eq!(k[*c as usize], *g);
            assert_ne!(k[!*c as usize], *g);
        }
        assert_eq!(a.stats().bytes_sent, 32);
        assert_eq!(rs.bytes_sent, 32 * 40);
        assert_eq!((a.stats().rounds, rs.rounds), (1, 0));
    }

    #[test]
    fn invalid_point_is_an_error() {
        let (mut a, mut b) = mem::pair(Some(Duration::from_secs(20)));
        let h = std::thread::spawn(move || {
            let mut buf = [0u8; 32];
            b.recv(&mut buf).expect("A");
            b.send(&[0xff; 32]).expect("send");
            b.flush().expect("flush");
            b
        });
        let r = send(&mut a, 1, &mut Prg::new(Block(3)));
        assert!(matches!(r, Err(OtError::Protocol(_))), "{r:?}");
        drop(h.join());
    }
}
