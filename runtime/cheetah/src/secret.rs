//! Products of two secret matrices by RLWE (attention's `Q·Kᵀ` and `softmax·V`):
//! `A·B` for `A = A_0 + A_1` `[n, k]` and `B = B_0 + B_1` `[k, m]` shared mod `2^ℓ`
//! (the server holds `A_0`, `B_0`, the client `A_1`, `B_1`).
//!
//! `A·B = A_0·B_0 + A_1·B_1 + A_0·B_1 + A_1·B_0`: each party computes its local term
//! alone; each cross term is one RLWE product of [`super::protocol`] whose weights
//! are the server's share and whose encrypted input is the client's share, the
//! server adding no share of its own (its `x_0` is zero): `A_0·B_1` is `W·X` with
//! `W = A_0` ([`Layer::matmul_left`], the client encrypts `B_1`), `A_1·B_0` is `X·W`
//! with `W = B_0` ([`Layer::matmul`], the client encrypts `A_1`). Each returns the
//! server a uniform mask `r` and the client `W·X − r`, so the sum of a party's local
//! term and its two output shares is its share of `A·B` mod `2^ℓ`, exactly (the
//! interpreter's `matmul`). The cross terms of every product of a wave run in one
//! exchange ([`products`] over [`super::run_all`], the server's work over rayon's threads); bytes and
//! rounds: [`sci_ir::cost::rlwe::wave`] of the layouts of
//! [`sci_ir::rlwe::secret_matmul`]. The flooding bound (`≤ 2^−40` per cross term)
//! holds as for weights: [`sci_ir::rlwe`] says why.

use rayon::prelude::*;

use super::encode::check_elems;
use super::{CheetahError, Layer};
use sci_net::pack::mask;

/// One product `A·B` of two shared matrices: this party's shares of both.
#[derive(Clone, Copy, Debug)]
pub struct SecretMatMul<'a> {
    /// The name errors give (the instruction's).
    pub name: &'a str,
    /// `(n, k, m)`: `A [n, k]`, `B [k, m]`, row-major.
    pub dims: (usize, usize, usize),
    /// This party's share of `A`.
    pub a: &'a [u64],
    /// This party's share of `B`.
    pub b: &'a [u64],
}

impl SecretMatMul<'_> {
    /// The two cross terms as RLWE products with this party's input share of each:
    /// `A_0·B_1` (the server's `A_0` as weights on the left, the client's `B_1`
    /// encrypted), then `A_1·B_0` (the server's `B_0` on the right, the client's
    /// `A_1` encrypted); the server's inputs are zero. Errors if the shares do not
    /// match the dimensions or are not reduced mod `2^ℓ`, or no layout floods a term.
    pub fn cross_terms(
        &self,
        server: bool,
        ell: u32,
    ) -> Result<[(Layer, Vec<u64>); 2], CheetahError> {
        let (n, k, m) = self.dims;
        check_elems(self.a, n * k, ell, "shares of the left operand")?;
        check_elems(self.b, k * m, ell, "shares of the right operand")?;
        let (wa, wb) = if server {
            (Some(self.a), Some(self.b))
        } else {
            (None, None)
        };
        let left = Layer::matmul_left(self.name, (n, k, m), ell, wa)?;
        let right = Layer::matmul(self.name, (n, k, m), ell, wb)?;
        let (xl, xr) = if server {
            (vec![0; k * m], vec![0; n * k])
        } else {
            (self.b.to_vec(), self.a.to_vec())
        };
        Ok([(left, xl), (right, xr)])
    }

    /// This party's share of `A·B` mod `2^ℓ`: its local term `A_b·B_b` plus its
    /// output shares of the two cross terms ([`SecretMatMul::cross_terms`]' order).
    /// Cost: `n·k·m` multiplications, over rayon's threads by rows.
    pub fn combine(&self, ell: u32, cross: [Vec<u64>; 2]) -> Vec<u64> {
        let (_, k, m) = self.dims;
        let mk = mask(ell);
        let mut y: Vec<u64> = cross[0]
            .iter()
            .zip(&cross[1])
            .map(|(&u, &v)| u.wrapping_add(v))
            .collect();
        y.par_chunks_mut(m.max(1))
            .zip(self.a.par_chunks(k.max(1)))
            .for_each(|(row, a)| {
                for (&ai, b) in a.iter().zip(self.b.chunks(m.max(1))) {
                    for (o, &bj) in row.iter_mut().zip(b) {
                        *o = o.wrapping_add(ai.wrapping_mul(bj));
                    }
                }
                row.iter_mut().for_each(|o| *o &= mk);
            });
        y
    }
}

/// Shares of the products `ps` (each over this party's shares of both operands; the
/// `server`'s or the client's) mod `2^ℓ`: every cross term of every product as one
/// call of `run` (an exchange of [`super::run_all`]: on a session, the engine's
/// `rlwe_products`, which sets up the keys of sets not yet set up ahead of the
/// client's ciphertexts), then each party's local terms. Cost: see the [module
/// documentation](self).
pub fn products<E: From<CheetahError>>(
    server: bool,
    ell: u32,
    ps: &[SecretMatMul<'_>],
    run: impl FnOnce(&[(&Layer, &[u64])]) -> Result<Vec<Vec<u64>>, E>,
) -> Result<Vec<Vec<u64>>, E> {
    let terms = ps
        .iter()
        .map(|p| p.cross_terms(server, ell))
        .collect::<Result<Vec<_>, _>>()?;
    let calls: Vec<(&Layer, &[u64])> = terms
        .iter()
        .flatten()
        .map(|(l, x)| (l, x.as_slice()))
        .collect();
    let mut ys = run(&calls)?.into_iter();
    ps.iter()
        .map(|p| {
            let (left, right) = (ys.next(), ys.next());
            match (left, right) {
                (Some(l), Some(r)) => Ok(p.combine(ell, [l, r])),
                _ => Err(E::from(CheetahError::InvalidArgument(
                    "fewer cross-term shares than products".into(),
                ))),
            }
        })
        .collect()
}
