//! Products of two secret-shared operands over `Z_{2^ℓ}`: the elementwise
//! product of two shared tensors and the matrix product of two shared
//! matrices (several at once, e.g. attention's per-head `Q·Kᵀ`), by
//! correlated OT.
//!
//! # Protocol
//! With `X = X_0 + X_1` and `Y = Y_0 + Y_1` shared, `X·Y = X·Y_0 + X·Y_1`,
//! and each term is a product of the shared `X` with a matrix one party
//! knows, as in [`super::matmul`] (CrypTFlow2 §5.1.1): for `X·Y_b` party `b`
//! is the OT sender, computes `X_b·Y_b` itself, and for each bit `i` of the
//! other party's share element `X_{1−b}[r][c]` runs one correlated OT of
//! correlation `Y_b[c][·] mod 2^{ℓ−i}` (the other party chooses with that
//! bit): the standard COT cross term, `ℓ` COTs of widths `ℓ, ℓ−1, …, 1` per
//! element of `X` and output column. Role `P0` sends first (its `Y_0`),
//! then role `P1` (its `Y_1`) over the same channel with the roles
//! exchanged; each party's output is the sum of its shares of both terms.
//! Products are exact mod `2^ℓ` (the interpreter's `Mul`/`MatMul`); a
//! fixed-point product of scale `2s` is brought back to scale `s` by
//! [`super::trunc`] (exact floor shift).
//!
//! # Cost
//! Twice an OT-based product with known weights ([`sci_ir::cost::secmul`]):
//! `2·R·C·(ℓλ + O·ℓ(ℓ+1)/2)` bits on IKNP for `R×C` by `C×O`, an
//! elementwise product `2ℓλ + ℓ(ℓ+1)` bits per element (9,248 at ℓ = 32; on
//! the silent engine the `ℓλ` become `ℓ` bits plus the engine's share).
//! The products of one [`products`] call share one OT call per direction:
//! bytes add up, rounds are one product's — 1 for role `P1`, 2 for role `P0`
//! (role `P1` requests, `P0` answers and requests, `P1` answers).

use super::matmul::{self, Product};
use super::{Ctx, ProtoError, Role, check, check_ell, trunc};
use crate::pack::mask;

/// One product of two shared operands: this party's shares of both.
#[derive(Clone, Copy, Debug)]
pub enum SecretProduct<'a> {
    /// `Z = X·Y`, `[R, C] × [C, O] → [R, O]`, row-major.
    MatMul {
        /// `(R, C, O)`.
        dims: (usize, usize, usize),
        /// This party's share of `X`.
        x: &'a [u64],
        /// This party's share of `Y`.
        y: &'a [u64],
    },
    /// The elementwise product `x ⊙ y` (same length; broadcast both
    /// operands to the output shape first).
    Mul {
        /// This party's share of `x`.
        x: &'a [u64],
        /// This party's share of `y`.
        y: &'a [u64],
    },
}

impl<'a> SecretProduct<'a> {
    /// `(R, C, O)` of the product (`(n, 1, 1)` elementwise).
    pub fn dims(&self) -> (usize, usize, usize) {
        match *self {
            SecretProduct::MatMul { dims, .. } => dims,
            SecretProduct::Mul { x, .. } => (x.len(), 1, 1),
        }
    }

    /// The product restricted to the rows `r` of its left operand (for a
    /// `mul`, its elements `r`): the chunk of one lane. Errors if `r` exceeds
    /// the rows or the operands do not match the dimensions.
    pub fn rows(&self, r: std::ops::Range<usize>) -> Result<SecretProduct<'a>, ProtoError> {
        let (rows, cols, _) = self.dims();
        check(r.start <= r.end && r.end <= rows, || {
            format!("rows {r:?} of a product with {rows} rows")
        })?;
        match *self {
            SecretProduct::MatMul { dims, x, y } => {
                let x = x.get(r.start * cols..r.end * cols).ok_or_else(|| {
                    ProtoError::InvalidArgument(format!(
                        "{} shares for a left operand of dimensions {dims:?}",
                        x.len()
                    ))
                })?;
                Ok(SecretProduct::MatMul {
                    dims: (r.len(), cols, dims.2),
                    x,
                    y,
                })
            }
            SecretProduct::Mul { x, y } => {
                let y = y.get(r.clone()).ok_or_else(|| {
                    ProtoError::InvalidArgument(format!(
                        "{} and {} shares for an elementwise product",
                        x.len(),
                        y.len()
                    ))
                })?;
                Ok(SecretProduct::Mul { x: &x[r], y })
            }
        }
    }

    /// The product of the shared left operand with this party's share of
    /// the right one, which it sends as the OT correlation if `sender`.
    fn half(&self, sender: bool) -> Product<'a> {
        match *self {
            SecretProduct::MatMul { dims, x, y } => Product::MatMul {
                dims,
                x,
                w: sender.then_some(y),
            },
            SecretProduct::Mul { x, y } => Product::Mul {
                x,
                w: sender.then_some(y),
            },
        }
    }

    /// Errors unless the operands' lengths match the dimensions and the
    /// shares are reduced mod `2^ℓ`.
    pub(crate) fn validate(&self, ell: u32) -> Result<(), ProtoError> {
        let (rows, cols, outs) = self.dims();
        let (x, y, ylen) = match *self {
            SecretProduct::MatMul { x, y, .. } => (x, y, cols * outs),
            SecretProduct::Mul { x, y } => (x, y, x.len()),
        };
        check(x.len() == rows * cols && y.len() == ylen, || {
            format!(
                "{} and {} shares for a product of dimensions {:?}",
                x.len(),
                y.len(),
                self.dims()
            )
        })?;
        let m = mask(ell);
        check(x.iter().chain(y).all(|&v| v & !m == 0), || {
            format!("shares must be reduced mod 2^{ell}")
        })
    }
}

/// Shares of the products `ps` (each over this party's shares of both
/// operands) mod `2^ℓ`, as one OT call in each direction. Cost: see the
/// [module documentation](self) ([`sci_ir::cost::secmul::products`]).
pub fn products(
    ctx: &mut Ctx<'_>,
    ell: u32,
    ps: &[SecretProduct<'_>],
) -> Result<Vec<Vec<u64>>, ProtoError> {
    check_ell(ell)?;
    for p in ps {
        p.validate(ell)?;
    }
    let halves = |sender: bool| ps.iter().map(|p| p.half(sender)).collect::<Vec<_>>();
    // X·Y_0: role P0 sends its share of Y.
    let first = matmul::products(ctx, ell, &halves(ctx.role == Role::P0))?;
    // X·Y_1: role P1 sends, over the same channel with the roles exchanged.
    let mut other = Ctx {
        ch: &mut *ctx.ch,
        ot: &mut *ctx.ot,
        prg: &mut *ctx.prg,
        role: ctx.role.other(),
        radix: ctx.radix,
    };
    let second = matmul::products(&mut other, ell, &halves(ctx.role == Role::P1))?;
    let m = mask(ell);
    Ok(first
        .into_iter()
        .zip(second)
        .map(|(a, b)| {
            a.iter()
                .zip(&b)
                .map(|(&u, &v)| u.wrapping_add(v) & m)
                .collect()
        })
        .collect())
}

/// Shares of `x ⊙ y` mod `2^ℓ` for this party's shares of both ([`products`]
/// of one [`SecretProduct::Mul`]).
pub fn mul(ctx: &mut Ctx<'_>, ell: u32, x: &[u64], y: &[u64]) -> Result<Vec<u64>, ProtoError> {
    matmul::one(products(ctx, ell, &[SecretProduct::Mul { x, y }]))
}

/// Shares of the rounded fixed-point product `(x·y + 2^{s−1}) >> s` (`s ≥ 1`) for
/// this party's shares of both, when every exact product is known to satisfy `0 ≤ x·y
/// < 2^{ℓ−1} − 2^{s−1}` (the result is unspecified otherwise): [`mul`], the half added
/// by role `P1`, then [`super::trunc::trunc_nonneg`] (exact). Cost:
/// [`sci_ir::cost::secmul::mul_round`].
pub fn mul_round(
    ctx: &mut Ctx<'_>,
    ell: u32,
    s: u32,
    x: &[u64],
    y: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    check(s >= 1 && s < ell, || {
        format!("a rounded product needs 1 ≤ s = {s} < ℓ = {ell}")
    })?;
    let mut z = mul(ctx, ell, x, y)?;
    if ctx.role == Role::P1 {
        let (half, m) = (1u64 << (s - 1), mask(ell));
        z.iter_mut().for_each(|v| *v = v.wrapping_add(half) & m);
    }
    trunc::trunc_nonneg(ctx, ell, s, &z)
}

/// Shares of `X·Y` (`[R, C] × [C, O]`) mod `2^ℓ` for this party's shares of
/// both ([`products`] of one [`SecretProduct::MatMul`]).
pub fn matmul(
    ctx: &mut Ctx<'_>,
    ell: u32,
    dims: (usize, usize, usize),
    x: &[u64],
    y: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    matmul::one(products(ctx, ell, &[SecretProduct::MatMul { dims, x, y }]))
}

/// Shares of the batched matrix product `Z[b] = X[b]·Y[b]` for `b < batch`
/// (`x`: `[batch, R, C]`, `y`: `[batch, C, O]`, output `[batch, R, O]`,
/// row-major): the `batch` products in one [`products`] call.
pub fn batch_matmul(
    ctx: &mut Ctx<'_>,
    ell: u32,
    batch: usize,
    (rows, cols, outs): (usize, usize, usize),
    x: &[u64],
    y: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    let (xs, ys) = (rows * cols, cols * outs);
    check(x.len() == batch * xs && y.len() == batch * ys, || {
        format!(
            "{} and {} shares for {batch} products {rows}×{cols} by {cols}×{outs}",
            x.len(),
            y.len()
        )
    })?;
    let ps: Vec<SecretProduct<'_>> = (0..batch)
        .map(|b| SecretProduct::MatMul {
            dims: (rows, cols, outs),
            x: &x[b * xs..(b + 1) * xs],
            y: &y[b * ys..(b + 1) * ys],
        })
        .collect();
    Ok(products(ctx, ell, &ps)?.concat())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{measured, open, prg, reference, run2, run2_tcp, share, signed};
    use crate::proto::trunc;
    use sci_ir::cost;
    use sci_ir::{Op, Owner};

    /// The widths the products are tested at.
    const WIDTHS: [u32; 7] = [1, 2, 8, 16, 32, 37, 64];

    /// The edges of the signed range of `Z_{2^ℓ}`: 0, ±1, ±2, the largest and
    /// smallest values and their neighbours (reduced).
    fn edges(ell: u32) -> Vec<u64> {
        let hi = (1i128 << (ell - 1)) - 1;
        let lo = -(1i128 << (ell - 1));
        [0, 1, -1, 2, -2, hi, lo, hi - 1, lo + 1]
            .iter()
            .map(|&e| (e as u64) & mask(ell))
            .collect()
    }

    /// `n` random pairs, then every pair of edges.
    fn operands(ell: u32, n: usize, seed: u128) -> (Vec<u64>, Vec<u64>) {
        let mut g = prg(seed);
        let (mut x, mut y) = (g.ring_elems(n, ell), g.ring_elems(n, ell));
        let e = edges(ell);
        for &a in &e {
            for &b in &e {
                x.push(a);
                y.push(b);
            }
        }
        (x, y)
    }

    /// The interpreter on `op(x, y)`, both client inputs.
    fn interp(
        ell: u32,
        (xs, x): (&[usize], &[u64]),
        (ys, y): (&[usize], &[u64]),
        op: impl Fn(sci_ir::ValueId, sci_ir::ValueId) -> Op,
    ) -> Vec<u64> {
        let inputs = [(x, xs, Owner::Client), (y, ys, Owner::Client)];
        reference(ell, &inputs, |v| op(v[0], v[1])).0
    }

    fn mul_op(a: sci_ir::ValueId, b: sci_ir::ValueId) -> Op {
        Op::Mul { a, b }
    }

    fn matmul_op(a: sci_ir::ValueId, b: sci_ir::ValueId) -> Op {
        Op::MatMul { a, b, bias: None }
    }

    /// Each role's shares of `x` and `y`.
    struct Shared {
        x: [Vec<u64>; 2],
        y: [Vec<u64>; 2],
    }

    impl Shared {
        fn new(ell: u32, x: &[u64], y: &[u64], seed: u128) -> Shared {
            let mut g = prg(seed);
            let (x0, x1) = share(&mut g, x, ell);
            let (y0, y1) = share(&mut g, y, ell);
            Shared {
                x: [x0, x1],
                y: [y0, y1],
            }
        }

        fn of(&self, role: Role) -> (&[u64], &[u64]) {
            let i = usize::from(role == Role::P1);
            (&self.x[i], &self.y[i])
        }
    }

    #[test]
    fn elementwise_equals_interpreter() {
        for ell in WIDTHS {
            let (x, y) = operands(ell, 3000, u128::from(ell));
            let n = x.len();
            let want = interp(ell, (&[n], &x), (&[n], &y), mul_op);
            let sh = Shared::new(ell, &x, &y, u128::from(ell) + 100);
            let r = measured(4, |ctx, warm| {
                let (x, y) = sh.of(ctx.role);
                let k = if warm { 3 } else { n };
                mul(ctx, ell, &x[..k], &y[..k])
            });
            assert_eq!(open(&r.p0, &r.p1, ell), want, "ℓ={ell}");
            let what = format!("mul ℓ={ell}");
            r.pin_costs(
                &cost::secmul::mul(ell, 3, true),
                &cost::secmul::mul(ell, n, true),
                &what,
            );
        }
        // 2ℓλ + ℓ(ℓ+1) bits per element, each direction's batch padded to 8.
        assert_eq!(
            cost::secmul::mul(32, 8000, true).bits(),
            8000 * (2 * 32 * 128 + 32 * 33)
        );
    }

    #[test]
    fn matrix_products_equal_interpreter() {
        for (ell, dims) in [
            (8u32, (7usize, 5usize, 3usize)),
            (16, (1, 9, 1)),
            (32, (12, 16, 10)),
            (37, (6, 1, 8)),
            (64, (5, 11, 4)),
        ] {
            let (m, k, o) = dims;
            let mut g = prg(u128::from(ell) + 7);
            let (mut x, mut y) = (g.ring_elems(m * k, ell), g.ring_elems(k * o, ell));
            // The edges in the first row of X and the first column of Y.
            for (i, e) in edges(ell).into_iter().enumerate() {
                x[i % k] = e;
                y[(i % k) * o] = e;
            }
            let want = interp(ell, (&[m, k], &x), (&[k, o], &y), matmul_op);
            let sh = Shared::new(ell, &x, &y, 5);
            let warm_dims = (1, k, o);
            let r = measured(4, |ctx, warm| {
                let (x, y) = sh.of(ctx.role);
                if warm {
                    matmul(ctx, ell, warm_dims, &x[..k], y)
                } else {
                    matmul(ctx, ell, dims, x, y)
                }
            });
            assert_eq!(open(&r.p0, &r.p1, ell), want, "ℓ={ell} {dims:?}");
            r.pin_costs(
                &cost::secmul::matmul(ell, warm_dims, true),
                &cost::secmul::matmul(ell, dims, true),
                &format!("matmul ℓ={ell} {dims:?}"),
            );
        }
    }

    /// A batch of products in one call (attention's heads): as the
    /// interpreter per head, at the cost of one call each way.
    #[test]
    fn batched_products_in_one_call() {
        let (ell, batch, dims) = (37u32, 4usize, (6usize, 5usize, 6usize));
        let (m, k, o) = dims;
        let mut g = prg(77);
        let x = g.ring_elems(batch * m * k, ell);
        let y = g.ring_elems(batch * k * o, ell);
        let want: Vec<u64> = (0..batch)
            .flat_map(|b| {
                interp(
                    ell,
                    (&[m, k], &x[b * m * k..(b + 1) * m * k]),
                    (&[k, o], &y[b * k * o..(b + 1) * k * o]),
                    matmul_op,
                )
            })
            .collect();
        let sh = Shared::new(ell, &x, &y, 78);
        let r = measured(4, |ctx, warm| {
            let (x, y) = sh.of(ctx.role);
            let nb = if warm { 1 } else { batch };
            batch_matmul(ctx, ell, nb, dims, &x[..nb * m * k], &y[..nb * k * o])
        });
        assert_eq!(open(&r.p0, &r.p1, ell), want);
        r.pin_costs(
            &cost::secmul::matmul(ell, dims, true),
            &cost::secmul::products(ell, &[dims; 4], true),
            "batch",
        );
        // A matrix product and an elementwise one of another size in one call.
        let (a, b) = operands(ell, 50, 79);
        let n = a.len();
        let sa = Shared::new(ell, &a, &b, 80);
        let r = run2(4, |ctx| {
            let (x, y) = sh.of(ctx.role);
            let (a, b) = sa.of(ctx.role);
            let ps = [
                SecretProduct::MatMul {
                    dims,
                    x: &x[..m * k],
                    y: &y[..k * o],
                },
                SecretProduct::Mul { x: a, y: b },
            ];
            products(ctx, ell, &ps)
        });
        assert_eq!(open(&r.p0[0], &r.p1[0], ell), want[..m * o]);
        assert_eq!(
            open(&r.p0[1], &r.p1[1], ell),
            interp(ell, (&[n], &a), (&[n], &b), mul_op)
        );
    }

    /// A fixed-point product: scale-`s` operands, product at scale `2s`,
    /// then the exact truncation by `s`: the floor of the signed product
    /// shifted by `s`.
    #[test]
    fn composes_with_truncation() {
        for (ell, s) in [(16u32, 5u32), (32, 12), (37, 15), (64, 20)] {
            let (x, y) = operands(ell, 2000, u128::from(ell) + 3);
            let sh = Shared::new(ell, &x, &y, 4);
            let r = run2(4, |ctx| {
                let (x, y) = sh.of(ctx.role);
                let z = mul(ctx, ell, x, y)?;
                trunc::trunc(ctx, ell, s, &z)
            });
            let want: Vec<u64> = x
                .iter()
                .zip(&y)
                .map(|(&a, &b)| {
                    (signed(a.wrapping_mul(b) & mask(ell), ell) >> s) as u64 & mask(ell)
                })
                .collect();
            assert_eq!(open(&r.p0, &r.p1, ell), want, "ℓ={ell} s={s}");
        }
    }

    /// Two batches streamed each way over TCP loopback (messages far beyond
    /// the socket buffers): no deadlock, the interpreter's result.
    #[test]
    fn streamed_over_tcp_loopback() {
        let (ell, dims) = (32u32, (64usize, 64usize, 40usize));
        assert_eq!(
            sci_ir::params::linear::batch_pairs(ell, dims.0 * dims.1, dims.2).count(),
            2
        );
        let (m, k, o) = dims;
        let mut g = prg(31);
        let (x, y) = (g.ring_elems(m * k, ell), g.ring_elems(k * o, ell));
        let want = interp(ell, (&[m, k], &x), (&[k, o], &y), matmul_op);
        let sh = Shared::new(ell, &x, &y, 32);
        let r = run2_tcp(4, |ctx| {
            let (x, y) = sh.of(ctx.role);
            matmul(ctx, ell, dims, x, y)
        });
        assert_eq!(open(&r.p0, &r.p1, ell), want);
    }

    #[test]
    fn rejects_bad_operands() {
        let r = run2(4, |ctx| {
            Ok([
                mul(ctx, 8, &[1, 2], &[3]).is_err(),
                mul(ctx, 8, &[256], &[1]).is_err(),
                mul(ctx, 0, &[1], &[1]).is_err(),
                matmul(ctx, 8, (2, 2, 2), &[1; 4], &[1; 3]).is_err(),
                batch_matmul(ctx, 8, 2, (1, 1, 1), &[1; 2], &[1; 3]).is_err(),
            ])
        });
        assert!(
            r.p0.iter().chain(&r.p1).all(|&e| e),
            "{:?} {:?}",
            r.p0,
            r.p1
        );
    }
}
