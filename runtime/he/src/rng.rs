//! The randomness `fhe` asks for (a `rand_core` 0.9 `CryptoRng`): our AES
//! counter-mode [`Prg`] seeded from the operating system, buffered.

use sci_net::crypto::{Prg, RandomnessError};

/// A cryptographic RNG for `fhe`'s key generation, encryption and sampling.
pub(crate) struct OsRng {
    prg: Prg,
    buf: [u8; 512],
    pos: usize,
}

impl OsRng {
    /// A fresh generator seeded from the OS.
    pub(crate) fn new() -> Result<OsRng, RandomnessError> {
        Ok(OsRng {
            prg: Prg::from_os()?,
            buf: [0; 512],
            pos: 512,
        })
    }
}

impl rand_core::RngCore for OsRng {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        let mut done = 0;
        while done < dst.len() {
            if self.pos == self.buf.len() {
                self.prg.fill_bytes(&mut self.buf);
                self.pos = 0;
            }
            let k = (dst.len() - done).min(self.buf.len() - self.pos);
            dst[done..done + k].copy_from_slice(&self.buf[self.pos..self.pos + k]);
            done += k;
            self.pos += k;
        }
    }
}

impl rand_core::CryptoRng for OsRng {}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::RngCore;

    #[test]
    fn yields_distinct_streams() {
        let (mut a, mut b) = (OsRng::new().expect("os"), OsRng::new().expect("os"));
        let mut x = vec![0u8; 1000];
        a.fill_bytes(&mut x);
        assert_ne!(a.next_u64(), b.next_u64());
        assert!(x.iter().any(|&v| v != 0));
    }
}
