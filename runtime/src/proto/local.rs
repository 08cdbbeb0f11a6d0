//! Local operations on shares: everything linear that needs no
//! communication (CrypTFlow2 §5: linear layers on additive shares).
//!
//! Each party applies the same function to its own share; the results are
//! shares of the function of the secret. Sums and public multiples are
//! linear; data movement permutes, copies and drops elements; a constant
//! known to one party (a public value, a server bias) becomes a sharing by
//! [`share_known`] — the holder's share is the value, the other's is zero —
//! and is then added like any share. All values are reduced mod `2^ℓ` (or
//! mod `n` for the sums of shares over any [`Modulus`]).
//!
//! `Reshape` and `Flatten` change only the shape, never the data.

use super::modulus::Modulus;
use super::{ProtoError, check};
use crate::net::pack::mask;

/// Row-major strides of a shape.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

fn check_len(x: &[u64], shape: &[usize]) -> Result<(), ProtoError> {
    check(x.len() == numel(shape), || {
        format!("{} elements for shape {shape:?}", x.len())
    })
}

/// This party's share of a value known to one party: the value itself for
/// the holder, zeros for the other.
pub fn share_known(values: &[u64], holder: bool) -> Vec<u64> {
    if holder {
        values.to_vec()
    } else {
        vec![0; values.len()]
    }
}

/// `f(a, b)` elementwise with numpy broadcasting; returns the data and the
/// output shape.
fn broadcast(
    a: &[u64],
    ash: &[usize],
    b: &[u64],
    bsh: &[usize],
    f: impl Fn(u64, u64) -> u64,
) -> Result<(Vec<u64>, Vec<usize>), ProtoError> {
    check_len(a, ash)?;
    check_len(b, bsh)?;
    let out = sci_ir::check::broadcast(ash, bsh)
        .map_err(|e| ProtoError::InvalidArgument(format!("broadcasting: {e}")))?;
    if ash == bsh {
        return Ok((a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect(), out));
    }
    let r = out.len();
    // Strides of an operand in the output's index space (0 where broadcast).
    let bstrides = |sh: &[usize]| {
        let st = strides(sh);
        let mut s = vec![0; r];
        for (i, (&d, &t)) in sh.iter().zip(&st).enumerate() {
            if d != 1 {
                s[r - sh.len() + i] = t;
            }
        }
        s
    };
    let (sa, sb) = (bstrides(ash), bstrides(bsh));
    let n = numel(&out);
    let mut data = Vec::with_capacity(n);
    let mut idx = vec![0usize; r];
    let (mut oa, mut ob) = (0usize, 0usize);
    for _ in 0..n {
        data.push(f(a[oa], b[ob]));
        for d in (0..r).rev() {
            idx[d] += 1;
            oa += sa[d];
            ob += sb[d];
            if idx[d] < out[d] {
                break;
            }
            oa -= sa[d] * out[d];
            ob -= sb[d] * out[d];
            idx[d] = 0;
        }
    }
    Ok((data, out))
}

/// Shares of `a + b` mod `md` (`Z_{2^ℓ}` for an ℓ given as `u32`; operands
/// reduced) with numpy broadcasting: `(data, shape)`.
pub fn add(
    md: impl Into<Modulus>,
    (a, ash): (&[u64], &[usize]),
    (b, bsh): (&[u64], &[usize]),
) -> Result<(Vec<u64>, Vec<usize>), ProtoError> {
    let md = md.into().check()?;
    broadcast(a, ash, b, bsh, |x, y| md.add(md.reduce(x), md.reduce(y)))
}

/// Shares of `a − b` mod `md` with numpy broadcasting: `(data, shape)`.
pub fn sub(
    md: impl Into<Modulus>,
    (a, ash): (&[u64], &[usize]),
    (b, bsh): (&[u64], &[usize]),
) -> Result<(Vec<u64>, Vec<usize>), ProtoError> {
    let md = md.into().check()?;
    broadcast(a, ash, b, bsh, |x, y| md.sub(md.reduce(x), md.reduce(y)))
}

/// Shares of `x · k` for a public integer `k` (reduced mod `2^ℓ`).
pub fn mul_public(ell: u32, x: &[u64], k: i64) -> Vec<u64> {
    let (m, k) = (mask(ell), k as u64);
    x.iter().map(|&v| v.wrapping_mul(k) & m).collect()
}

/// Shares of `x · 2^k` (`k < 64`).
pub fn scale_up(ell: u32, x: &[u64], k: u32) -> Vec<u64> {
    let m = mask(ell);
    x.iter()
        .map(|&v| v.checked_shl(k).unwrap_or(0) & m)
        .collect()
}

/// Permutes dimensions (output dim `i` is input dim `perm[i]`): `(data,
/// shape)`.
pub fn transpose(
    x: &[u64],
    shape: &[usize],
    perm: &[usize],
) -> Result<(Vec<u64>, Vec<usize>), ProtoError> {
    check_len(x, shape)?;
    let mut seen = vec![false; shape.len()];
    check(
        perm.len() == shape.len()
            && perm
                .iter()
                .all(|&p| p < shape.len() && !std::mem::replace(&mut seen[p], true)),
        || format!("{perm:?} is not a permutation of the {} axes", shape.len()),
    )?;
    let st = strides(shape);
    let out: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let ist: Vec<usize> = perm.iter().map(|&p| st[p]).collect();
    let n = x.len();
    let mut data = Vec::with_capacity(n);
    let r = out.len();
    let mut idx = vec![0usize; r];
    let mut off = 0usize;
    for _ in 0..n {
        data.push(x[off]);
        for d in (0..r).rev() {
            idx[d] += 1;
            off += ist[d];
            if idx[d] < out[d] {
                break;
            }
            off -= ist[d] * out[d];
            idx[d] = 0;
        }
    }
    Ok((data, out))
}

/// Concatenation along `axis` of tensors equal in every other dimension:
/// `(data, shape)`.
pub fn concat(
    parts: &[(&[u64], &[usize])],
    axis: usize,
) -> Result<(Vec<u64>, Vec<usize>), ProtoError> {
    let Some(&(_, first)) = parts.first() else {
        return Err(ProtoError::InvalidArgument(
            "concatenation of nothing".into(),
        ));
    };
    check(axis < first.len(), || {
        format!("axis {axis} of a rank-{} tensor", first.len())
    })?;
    for (x, sh) in parts {
        check_len(x, sh)?;
        check(
            sh.len() == first.len()
                && sh
                    .iter()
                    .zip(first)
                    .enumerate()
                    .all(|(d, (a, b))| d == axis || a == b),
            || format!("cannot concatenate {sh:?} with {first:?} along {axis}"),
        )?;
    }
    let outer: usize = first[..axis].iter().product();
    let inner: usize = first[axis + 1..].iter().product();
    let mut shape = first.to_vec();
    shape[axis] = parts.iter().map(|(_, s)| s[axis]).sum();
    let mut data = Vec::with_capacity(numel(&shape));
    for o in 0..outer {
        for (x, sh) in parts {
            let chunk = sh[axis] * inner;
            data.extend_from_slice(&x[o * chunk..(o + 1) * chunk]);
        }
    }
    Ok((data, shape))
}

/// Constant padding (`pads`: all begins, then all ends); new positions hold
/// `fill`, this party's share of the padding value (see [`share_known`]):
/// `(data, shape)`.
pub fn pad(
    x: &[u64],
    shape: &[usize],
    pads: &[usize],
    fill: u64,
) -> Result<(Vec<u64>, Vec<usize>), ProtoError> {
    check_len(x, shape)?;
    let r = shape.len();
    check(pads.len() == 2 * r, || {
        format!("{} pads for rank {r}", pads.len())
    })?;
    let out: Vec<usize> = (0..r).map(|d| shape[d] + pads[d] + pads[r + d]).collect();
    let ost = strides(&out);
    let mut data = vec![fill; numel(&out)];
    let base: usize = (0..r).map(|d| pads[d] * ost[d]).sum();
    let mut idx = vec![0usize; r];
    let mut off = 0usize;
    for &v in x {
        data[base + off] = v;
        for d in (0..r).rev() {
            idx[d] += 1;
            off += ost[d];
            if idx[d] < shape[d] {
                break;
            }
            off -= ost[d] * shape[d];
            idx[d] = 0;
        }
    }
    Ok((data, out))
}

/// Shares of the sum of each window (for average pooling) mod `md`.
pub fn window_sums(
    md: impl Into<Modulus>,
    x: &[u64],
    windows: &super::maxpool::Windows,
) -> Result<Vec<u64>, ProtoError> {
    let md = md.into().check()?;
    check(windows.input_len() <= x.len(), || {
        "windows reach past the input".into()
    })?;
    Ok((0..windows.len())
        .map(|i| {
            windows
                .get(i)
                .iter()
                .fold(0u64, |s, &k| md.add(s, md.reduce(x[k])))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil;
    use crate::proto::testutil::{open, prg, share};
    use sci_ir::{Op, Scalar, ValueId};

    /// The interpreter on `op` over client inputs of the given shapes.
    fn reference(
        ell: u32,
        inputs: &[(&[u64], &[usize])],
        op: impl Fn(&[ValueId]) -> Op,
    ) -> (Vec<u64>, Vec<usize>) {
        let with_owner: Vec<_> = inputs
            .iter()
            .map(|&(x, s)| (x, s, sci_ir::Owner::Client))
            .collect();
        testutil::reference(ell, &with_owner, op)
    }

    /// Applies `f` to both shares and checks the opened result.
    fn check_local(
        ell: u32,
        inputs: &[(&[u64], &[usize])],
        op: impl Fn(&[ValueId]) -> Op,
        f: impl Fn(&[(&[u64], &[usize])], bool) -> (Vec<u64>, Vec<usize>),
    ) {
        let mut g = prg(ell as u128);
        let shared: Vec<(Vec<u64>, Vec<u64>)> =
            inputs.iter().map(|(x, _)| share(&mut g, x, ell)).collect();
        let side = |first: bool| -> Vec<(&[u64], &[usize])> {
            shared
                .iter()
                .zip(inputs)
                .map(|((a, b), (_, s))| (if first { &a[..] } else { &b[..] }, *s))
                .collect()
        };
        let (y0, s0) = f(&side(true), true);
        let (y1, s1) = f(&side(false), false);
        let (want, wshape) = reference(ell, inputs, op);
        assert_eq!(s0, wshape);
        assert_eq!(s1, wshape);
        assert_eq!(open(&y0, &y1, ell), want);
    }

    #[test]
    fn linear_ops_and_data_movement_equal_reference() {
        let ell = 37;
        let mut g = prg(1);
        let a = g.ring_elems(2 * 3 * 4, ell);
        let b = g.ring_elems(3, ell);
        let (ash, bsh) = ([2usize, 3, 4], [3usize, 1]);
        check_local(
            ell,
            &[(&a, &ash), (&b, &bsh)],
            |v| Op::Add { a: v[0], b: v[1] },
            |x, _| add(ell, x[0], x[1]).expect("add"),
        );
        check_local(
            ell,
            &[(&b, &bsh), (&a, &ash)],
            |v| Op::Sub { a: v[0], b: v[1] },
            |x, _| sub(ell, x[0], x[1]).expect("sub"),
        );
        check_local(
            ell,
            &[(&a, &ash)],
            |v| Op::MulPublic { x: v[0], k: -7 },
            |x, _| (mul_public(ell, x[0].0, -7), ash.to_vec()),
        );
        check_local(
            ell,
            &[(&a, &ash)],
            |v| Op::Transpose {
                x: v[0],
                perm: vec![2, 0, 1],
            },
            |x, _| transpose(x[0].0, x[0].1, &[2, 0, 1]).expect("transpose"),
        );
        let c = g.ring_elems(2 * 5 * 4, ell);
        let csh = [2usize, 5, 4];
        check_local(
            ell,
            &[(&a, &ash), (&c, &csh)],
            |v| Op::Concat {
                xs: v.to_vec(),
                axis: 1,
            },
            |x, _| concat(x, 1).expect("concat"),
        );
        // Padding with −3: role P0 holds the value.
        let fill = (-3i64) as u64 & mask(ell);
        check_local(
            ell,
            &[(&a, &ash)],
            |v| Op::Pad {
                x: v[0],
                pads: vec![0, 1, 2, 1, 0, 3],
                value: Scalar::Int(-3),
            },
            |x, first| {
                pad(
                    x[0].0,
                    x[0].1,
                    &[0, 1, 2, 1, 0, 3],
                    share_known(&[fill], first)[0],
                )
                .expect("pad")
            },
        );
    }

    #[test]
    fn scale_up_and_errors() {
        assert_eq!(scale_up(8, &[3, 255], 2), vec![12, 252]);
        assert_eq!(scale_up(64, &[3], 63), vec![1 << 63]);
        assert!(transpose(&[1, 2], &[2], &[0, 0]).is_err());
        assert!(concat(&[(&[1], &[1]), (&[1, 2], &[1, 2])], 0).is_err());
        assert!(add(8, (&[1, 2], &[2]), (&[1, 2, 3], &[3])).is_err());
        assert!(pad(&[1], &[1], &[1], 0).is_err());
    }
}
