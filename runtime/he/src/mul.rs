//! Elementwise products `x ⊙ w` with the server's `w` (same length): `N`
//! elements per ciphertext, one plaintext product each, no rotation.

use fhe::bfv::Ciphertext;

use super::layer::{Evaluator, Noisy, Packing};
use super::noise;
use super::params::DEGREE;
use super::{HeError, check};

/// `x ⊙ w` for `n` elements; `w` (elements mod `t`) on the server only.
#[derive(Debug)]
pub struct Mul<'w> {
    n: usize,
    w: Option<&'w [u64]>,
}

impl<'w> Mul<'w> {
    /// The packing of `n` elements (weights `w` on the server).
    pub fn new(n: usize, w: Option<&'w [u64]>) -> Result<Mul<'w>, HeError> {
        check(n >= 1, || "an empty product".into())?;
        if let Some(w) = w {
            check(w.len() == n, || {
                format!("{} weights for {n} elements", w.len())
            })?;
        }
        Ok(Mul { n, w })
    }

    /// The elements of ciphertext `k`.
    fn range(&self, k: usize) -> std::ops::Range<usize> {
        k * DEGREE..((k + 1) * DEGREE).min(self.n)
    }
}

impl Packing for Mul<'_> {
    fn in_cts(&self) -> usize {
        self.n.div_ceil(DEGREE)
    }

    fn out_cts(&self) -> usize {
        self.in_cts()
    }

    fn in_len(&self) -> usize {
        self.n
    }

    fn out_len(&self) -> usize {
        self.n
    }

    fn pack(&self, x: &[u64], k: usize) -> Vec<u64> {
        let mut slots = x[self.range(k)].to_vec();
        slots.resize(DEGREE, 0);
        slots
    }

    fn unpack(&self, slots: &[u64], g: usize, y: &mut [u64]) {
        let r = self.range(g);
        let len = r.len();
        y[r].copy_from_slice(&slots[..len]);
    }

    fn eval(
        &self,
        ev: &Evaluator<'_>,
        inputs: &[Ciphertext],
        g: usize,
    ) -> Result<Vec<(usize, Noisy)>, HeError> {
        let w = self
            .w
            .ok_or_else(|| HeError::InvalidArgument("the server's weights are missing".into()))?;
        let pt = ev.encode(&self.pack(w, g))?;
        let v = ev.dot_terms([(&inputs[g], &pt, noise::fresh())])?;
        Ok(vec![(
            g,
            v.ok_or_else(|| HeError::InvalidArgument("no product".into()))?,
        )])
    }
}
