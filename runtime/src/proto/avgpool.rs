//! `Avgpool_d` (CrypTFlow2 §5.1.2): the sum of each window (local) followed
//! by a division by the window count ([`rdiv`]), over any [`Modulus`]
//! (`Z_{2^ℓ}` or odd `Z_n`).
//!
//! Counts may differ per output position (borders with `count_include_pad =
//! false`); [`rdiv`] takes one divisor per element. Cost and rounds are those
//! of [`rdiv`] on the outputs.

use super::maxpool::Windows;
use super::modulus::Modulus;
use super::{Ctx, ProtoError, local, rdiv::rdiv};
use sci_ir::Pool2d;

/// The divisor of each output of a 2-D average pooling of an `[n, c, h, w]`
/// tensor: the window positions inside the padded input if
/// `count_include_pad`, else inside the input (as in [`sci_ir::Op::AvgPool`]).
pub fn counts(
    shape: [usize; 4],
    pool: &Pool2d,
    count_include_pad: bool,
) -> Result<Vec<u64>, ProtoError> {
    let [n, c, h, w] = shape;
    let (oh, ow) = sci_ir::check::pool_output(pool, h, w)
        .map_err(|e| ProtoError::InvalidArgument(format!("pooling geometry: {e}")))?;
    let count = |o: usize, size: usize, a: usize| {
        let start = (o * pool.strides[a]) as i64 - pool.pads[a] as i64;
        let end = start + pool.kernel[a] as i64;
        if count_include_pad {
            (end.min((size + pool.pads[a + 2]) as i64) - start).max(0) as u64
        } else {
            (end.clamp(0, size as i64) - start.clamp(0, size as i64)) as u64
        }
    };
    let plane: Vec<u64> = (0..oh)
        .flat_map(|oy| (0..ow).map(move |ox| (oy, ox)))
        .map(|(oy, ox)| (count(oy, h, 0) * count(ox, w, 1)).max(1))
        .collect();
    Ok(plane.repeat(n * c))
}

/// Shares of the average pooling of `x` (`[n, c, h, w]`, shares mod `md`,
/// `Z_{2^ℓ}` for an ℓ given as `u32`), outputs in `[n, c, oh, ow]` order.
pub fn avgpool(
    ctx: &mut Ctx<'_>,
    md: impl Into<Modulus>,
    x: &[u64],
    shape: [usize; 4],
    pool: &Pool2d,
    count_include_pad: bool,
) -> Result<Vec<u64>, ProtoError> {
    let md = md.into();
    let sums = local::window_sums(md, x, &Windows::pool2d(shape, pool)?)?;
    rdiv(ctx, md, &sums, &counts(shape, pool, count_include_pad)?)
}

/// Shares of the global average pooling of `x` (`[n, c, h, w]` → `[n, c]`):
/// the sum of each `h×w` plane divided by `h·w`.
pub fn global_avgpool(
    ctx: &mut Ctx<'_>,
    md: impl Into<Modulus>,
    x: &[u64],
    shape: [usize; 4],
) -> Result<Vec<u64>, ProtoError> {
    let md = md.into();
    let [n, c, h, w] = shape;
    let hw = h * w;
    let windows = Windows::new(
        (0..=n * c).map(|p| p * hw).collect(),
        (0..n * c * hw).collect(),
    )?;
    let sums = local::window_sums(md, x, &windows)?;
    rdiv(ctx, md, &sums, &[hw as u64])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Role;
    use crate::proto::testutil;
    use crate::proto::testutil::{
        field_values_with_edges, open, open_mod, prg, run2, share, share_mod,
    };
    use sci_ir::Op;

    fn reference(
        ell: u32,
        shape: [usize; 4],
        x: &[u64],
        op: impl Fn(sci_ir::ValueId) -> Op,
    ) -> Vec<u64> {
        testutil::reference(ell, &[(x, &shape, sci_ir::Owner::Client)], |v| op(v[0])).0
    }

    #[test]
    fn avgpool_equals_reference() {
        let shape = [1usize, 3, 13, 14];
        for (ell, k, s, p, incl, ceil) in [
            (32u32, 3usize, 2usize, 1usize, false, false),
            (32, 3, 2, 1, true, true),
            (41, 2, 2, 0, false, false),
            (16, 7, 1, 3, false, true),
        ] {
            let pool = Pool2d {
                kernel: [k, k],
                strides: [s, s],
                pads: [p, p, p, p],
                ceil_mode: ceil,
            };
            let mut g = prg(ell as u128 + k as u128);
            let x: Vec<u64> = g
                .ring_elems(shape.iter().product(), ell - 4)
                .iter()
                .map(|&v| v.wrapping_sub(1 << (ell - 5)) & crate::net::pack::mask(ell))
                .collect();
            let (x0, x1) = share(&mut g, &x, ell);
            let r = run2(4, |ctx| {
                avgpool(
                    ctx,
                    ell,
                    if ctx.role == Role::P0 { &x0 } else { &x1 },
                    shape,
                    &pool,
                    incl,
                )
            });
            let want = reference(ell, shape, &x, |i| Op::AvgPool {
                x: i,
                pool,
                count_include_pad: incl,
            });
            assert_eq!(
                open(&r.p0, &r.p1, ell),
                want,
                "ℓ={ell} k={k} s={s} p={p} incl={incl}"
            );
        }
    }

    #[test]
    fn global_avgpool_equals_reference() {
        let (ell, shape) = (32u32, [2usize, 5, 7, 7]);
        let mut g = prg(2);
        let x: Vec<u64> = g
            .ring_elems(shape.iter().product(), 25)
            .iter()
            .map(|&v| v.wrapping_sub(1 << 24) & 0xffff_ffff)
            .collect();
        let (x0, x1) = share(&mut g, &x, ell);
        let r = run2(4, |ctx| {
            global_avgpool(
                ctx,
                ell,
                if ctx.role == Role::P0 { &x0 } else { &x1 },
                shape,
            )
        });
        let want = reference(ell, shape, &x, |i| Op::GlobalAvgPool { x: i });
        assert_eq!(open(&r.p0, &r.p1, ell), want);
    }

    #[test]
    fn avgpool_over_fields_equals_reference() {
        let shape = [1usize, 3, 9, 10];
        let numel: usize = shape.iter().product();
        let pl = Pool2d {
            kernel: [3, 3],
            strides: [2, 2],
            pads: [1, 1, 1, 1],
            ceil_mode: false,
        };
        for n in [65537u64, 4_293_918_721, 2_199_023_190_017, (1 << 61) - 1] {
            let md = Modulus::Odd(n);
            let enc = sci_ir::Encoding::field(n).expect("prime");
            let mut g = prg(n as u128);
            // Full-range elements (sums wrap mod n, as in the interpreter) and
            // the edges.
            let x = field_values_with_edges(&mut g, numel - 9, md);
            let (x0, x1) = share_mod(&mut g, &x, md);
            for incl in [false, true] {
                let r = run2(4, |ctx| {
                    let xs = if ctx.role == Role::P0 { &x0 } else { &x1 };
                    Ok((
                        avgpool(ctx, md, xs, shape, &pl, incl)?,
                        global_avgpool(ctx, md, xs, shape)?,
                    ))
                });
                let c = [(&x[..], &shape[..], sci_ir::Owner::Client)];
                let want = testutil::reference_in(enc, &c, |v| Op::AvgPool {
                    x: v[0],
                    pool: pl,
                    count_include_pad: incl,
                })
                .0;
                assert_eq!(open_mod(&r.p0.0, &r.p1.0, md), want, "n={n} incl={incl}");
                let want = testutil::reference_in(enc, &c, |v| Op::GlobalAvgPool { x: v[0] }).0;
                assert_eq!(open_mod(&r.p0.1, &r.p1.1, md), want, "n={n}");
            }
        }
    }
}
