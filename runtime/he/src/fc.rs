//! Fully connected layers `Y = X·W` (`X` shared `[R, C]`, `W` the server's
//! `[C, O]`) by Gazelle's hybrid diagonal method, with output rotations.
//!
//! # Layout
//! Each row of `X` is cut into chunks of `m = min(ROW, 2^⌈log₂ C⌉)` inputs;
//! a chunk is replicated in the `G = ROW/m` blocks of both rows of its
//! ciphertext, so a rotation by `d < m` reads, in every block, the chunk
//! rotated cyclically by `d`. Each block `β` of the two rows computes its own
//! group of `m_o` outputs (`m_o` a power of two, `m_o ≤ m`): `2G·m_o` outputs
//! per output ciphertext.
//!
//! # Evaluation
//! With `D_d[β, j] = W[c·m + (j + d) mod m][o(β, j mod m_o)]` (the `d`-th
//! extended diagonal of each block's `m × m_o` submatrix),
//!
//! `Σ_d R(d)(x) ⊙ D_d = Σ_d R(d)(x ⊙ R(−d)(D_d))`
//!
//! — the rotation moves to the product (the plaintext is rotated in the
//! clear), so the `m_o` sums are combined by Horner's rule with step 1
//! (`m_o − 1` key switches) and the chunks' products are summed before
//! rotating. Slot `j` of a block then holds partial sums of output `j mod
//! m_o`; `log₂(m/m_o)` rotate-and-add steps fold them into slots `0..m_o`.
//! Cost per output ciphertext: `chunks·m_o` products and `m_o − 1 +
//! log₂(m/m_o)` rotations.

use fhe::bfv::Ciphertext;

use super::layer::{Evaluator, Noisy, Packing};
use super::noise;
use super::params::{DEGREE, ROW};
use super::{HeError, check};

/// `X·W` in the layout of the [module documentation](self); `w` (`[C, O]`
/// row-major, elements mod `t`) on the server only.
#[derive(Debug)]
pub struct MatMul<'w> {
    rows: usize,
    cols: usize,
    outs: usize,
    w: Option<&'w [u64]>,
    /// Chunk length, chunks per row, blocks per ciphertext row, outputs per
    /// block, output ciphertexts per row of `X`.
    m: usize,
    chunks: usize,
    blocks: usize,
    mo: usize,
    out_per: usize,
}

impl<'w> MatMul<'w> {
    /// The packing of `[rows, cols] × [cols, outs]` (weights `w` on the
    /// server).
    pub fn new(
        (rows, cols, outs): (usize, usize, usize),
        w: Option<&'w [u64]>,
    ) -> Result<MatMul<'w>, HeError> {
        check(rows >= 1 && cols >= 1 && outs >= 1, || {
            format!("empty product {rows}×{cols}×{outs}")
        })?;
        if let Some(w) = w {
            check(w.len() == cols * outs, || {
                format!("{} weights for a {cols}×{outs} matrix", w.len())
            })?;
        }
        let m = cols.next_power_of_two().min(ROW);
        let blocks = ROW / m;
        let mo = outs.div_ceil(2 * blocks).next_power_of_two().min(m);
        Ok(MatMul {
            rows,
            cols,
            outs,
            w,
            m,
            chunks: cols.div_ceil(m),
            blocks,
            mo,
            out_per: outs.div_ceil(2 * blocks * mo),
        })
    }

    /// The output index of block `(r, β)`, local slot `j < m_o`, of output
    /// ciphertext `g` (within a row of `X`).
    fn out_index(&self, g: usize, r: usize, beta: usize, j: usize) -> usize {
        ((g * 2 + r) * self.blocks + beta) * self.mo + j
    }
}

impl Packing for MatMul<'_> {
    fn in_cts(&self) -> usize {
        self.rows * self.chunks
    }

    fn out_cts(&self) -> usize {
        self.rows * self.out_per
    }

    fn in_len(&self) -> usize {
        self.rows * self.cols
    }

    fn out_len(&self) -> usize {
        self.rows * self.outs
    }

    fn pack(&self, x: &[u64], kg: usize) -> Vec<u64> {
        let (row, c) = (kg / self.chunks, kg % self.chunks);
        let mut slots = vec![0u64; DEGREE];
        for (p, v) in slots.iter_mut().enumerate() {
            let i = c * self.m + p % self.m;
            if i < self.cols {
                *v = x[row * self.cols + i];
            }
        }
        slots
    }

    fn unpack(&self, slots: &[u64], gg: usize, y: &mut [u64]) {
        let (row, g) = (gg / self.out_per, gg % self.out_per);
        for r in 0..2 {
            for beta in 0..self.blocks {
                for j in 0..self.mo {
                    let o = self.out_index(g, r, beta, j);
                    if o < self.outs {
                        y[row * self.outs + o] = slots[r * ROW + beta * self.m + j];
                    }
                }
            }
        }
    }

    fn eval(
        &self,
        ev: &Evaluator<'_>,
        inputs: &[Ciphertext],
        gg: usize,
    ) -> Result<Vec<(usize, Noisy)>, HeError> {
        Ok(vec![(gg, self.eval_one(ev, inputs, gg)?)])
    }
}

impl MatMul<'_> {
    /// Output ciphertext `gg` (the [module documentation](self)).
    fn eval_one(
        &self,
        ev: &Evaluator<'_>,
        inputs: &[Ciphertext],
        gg: usize,
    ) -> Result<Noisy, HeError> {
        let w = self
            .w
            .ok_or_else(|| HeError::InvalidArgument("the server's weights are missing".into()))?;
        let (row, g) = (gg / self.out_per, gg % self.out_per);
        let row_in = &inputs[row * self.chunks..(row + 1) * self.chunks];
        let mut terms = Vec::with_capacity(self.mo);
        for d in 0..self.mo {
            let pts = (0..self.chunks)
                .map(|c| {
                    // R(−d)(D_d): slot p holds D_d at p − d (within its row).
                    let mut slots = vec![0u64; DEGREE];
                    let mut any = false;
                    for (p, v) in slots.iter_mut().enumerate() {
                        let (r, q) = (p / ROW, (p % ROW + ROW - d) % ROW);
                        let (beta, j) = (q / self.m, q % self.m);
                        let o = self.out_index(g, r, beta, j % self.mo);
                        let i = c * self.m + (j + d) % self.m;
                        // Zero plaintexts are skipped by the geometry only
                        // (work and noise bound must not depend on W).
                        if o < self.outs && i < self.cols {
                            *v = w[i * self.outs + o];
                            any = true;
                        }
                    }
                    any.then(|| ev.encode(&slots)).transpose()
                })
                .collect::<Result<Vec<_>, HeError>>()?;
            terms.push(ev.dot(row_in, &pts, noise::fresh())?);
        }
        let mut acc = match ev.horner(terms, 1)? {
            Some(a) => a,
            None => return ev.zero(&row_in[0]),
        };
        let mut sh = self.mo;
        while sh < self.m {
            let rotated = ev.rotate(
                Noisy {
                    ct: acc.ct.clone(),
                    bound: acc.bound,
                },
                sh,
            )?;
            acc = ev.add(acc, &rotated);
            sh *= 2;
        }
        Ok(acc)
    }
}
