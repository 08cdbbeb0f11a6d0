//! Linear maps on tensors that need not be values of a program: checked entry points
//! to the interpreter's own kernels.
//!
//! The runtime applies these to *secret shares*: for a linear map `f`,
//! `f(x₀) + f(x₁) = f(x₀ + x₁)` in `Z_{2^ℓ}`, so each party applying `f` to its share
//! holds a share of `f(x)`. Ops of a program are evaluated with [`super::eval_op`];
//! the functions here cover what the runtime computes between protocol steps (adding a
//! bias to a protocol's output, the transposes of a `W·X` product, broadcasting an
//! operand of an elementwise product, the window sums of average pooling). They share
//! the kernels — and so the arithmetic — of [`super::run`], and check their arguments
//! instead of trusting a type checker: they return errors, never panic.
//!
//! Arithmetic is the encoding's: wrapping in `Z_{2^ℓ}`, mod `n` in `Z_n`, f32 for
//! `Real`. Each function costs one pass over its output.

use super::domain::Dom;
use super::kernels::{self, PoolKind};
use super::{FieldD, RealD, RingD, with_dom};
use crate::check::{self, CheckErrorKind};
use crate::ops::Pool2d;
use crate::tensor::Tensor;
use crate::types::Encoding;

/// Builds the result tensor (the kernels produce data of the right length).
fn tensor(enc: Encoding, shape: Vec<usize>, data: crate::tensor::Data) -> Tensor {
    Tensor::new(enc, shape, data).expect("kernels return data of the output's shape and domain")
}

/// `a + b` with numpy broadcasting. Errors if the encodings differ or the shapes do not
/// broadcast.
pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor, CheckErrorKind> {
    let enc = a.encoding();
    if b.encoding() != enc {
        return Err(CheckErrorKind::Encoding {
            operand: "b".into(),
            expected: enc.to_string(),
            found: b.encoding(),
        });
    }
    let out = check::broadcast(a.shape(), b.shape())?;
    let data = with_dom!(enc, d => {
        let v = kernels::broadcast(slice(d, a), a.shape(), slice(d, b), b.shape(), &out, |p, q| {
            d.add(p, q)
        });
        wrap(d, v)
    });
    Ok(tensor(enc, out, data))
}

/// `x` repeated along broadcast dimensions to `shape` (numpy broadcasting). Errors if
/// `x`'s shape does not broadcast to exactly `shape`.
pub fn broadcast_to(x: &Tensor, shape: &[usize]) -> Result<Tensor, CheckErrorKind> {
    if check::broadcast(x.shape(), shape)? != shape {
        return Err(CheckErrorKind::Broadcast {
            a: x.shape().to_vec(),
            b: shape.to_vec(),
        });
    }
    let data = with_dom!(x.encoding(), d => {
        // Broadcast against a scalar that is ignored.
        let zero = [d.zero()];
        wrap(d, kernels::broadcast(slice(d, x), x.shape(), &zero, &[], shape, |p, _| p))
    });
    Ok(tensor(x.encoding(), shape.to_vec(), data))
}

/// Permutes the dimensions of `x`: output dimension `i` is input dimension `perm[i]`.
/// Errors if `perm` is not a permutation of `x`'s axes.
pub fn transpose(x: &Tensor, perm: &[usize]) -> Result<Tensor, CheckErrorKind> {
    let rank = x.shape().len();
    let mut seen = vec![false; rank];
    if perm.len() != rank
        || !perm
            .iter()
            .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true))
    {
        return Err(CheckErrorKind::Attribute {
            attr: "perm",
            reason: format!("{perm:?} is not a permutation of 0..{rank}"),
        });
    }
    let shape = perm.iter().map(|&p| x.shape()[p]).collect();
    let data =
        with_dom!(x.encoding(), d => wrap(d, kernels::transpose(slice(d, x), x.shape(), perm)));
    Ok(tensor(x.encoding(), shape, data))
}

/// The sum of every window ([`Pool2d::window`]) of a 2-D pooling of `x` (`[n, c, h, w]`),
/// shape `[n, c, oh, ow]`: the linear part of average pooling (CrypTFlow2 §5.1.2), which
/// then divides each sum by its window's count ([`Pool2d::window_counts`]). Errors if
/// `x` is not of rank 4 or the geometry is invalid.
pub fn window_sums(x: &Tensor, pool: &Pool2d) -> Result<Tensor, CheckErrorKind> {
    let &[n, c, h, w] = x.shape() else {
        return Err(CheckErrorKind::Shape {
            operand: "x".into(),
            expected: "[N, C, H, W]".into(),
            found: x.shape().to_vec(),
        });
    };
    let [oh, ow] = pool.output([h, w])?;
    let shape = vec![n, c, oh, ow];
    // Checked like a type: the result's element count is bounded.
    crate::types::check_shape(&shape)?;
    let data = with_dom!(x.encoding(), d => wrap(
        d,
        kernels::pool2d(d, slice(d, x), [n, c, h, w], (oh, ow), pool, PoolKind::Sum)
    ));
    Ok(tensor(x.encoding(), shape, data))
}

/// The elements of a tensor of domain `D`.
fn slice<D: Dom>(_: D, t: &Tensor) -> &[D::E] {
    D::slice(t)
}

/// Wraps elements of domain `D` into tensor data.
fn wrap<D: Dom>(_: D, v: Vec<D::E>) -> crate::tensor::Data {
    D::wrap(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(bits: u32, shape: &[usize], v: &[i64]) -> Tensor {
        Tensor::signed(Encoding::ring(bits).unwrap(), shape.to_vec(), v).unwrap()
    }

    #[test]
    fn add_broadcasts_and_wraps() {
        let a = ring(8, &[2, 3], &[1, 2, 3, 4, 5, 127]);
        let b = ring(8, &[3], &[10, 20, 1]);
        let y = add(&a, &b).unwrap();
        assert_eq!(y.shape(), &[2, 3]);
        assert_eq!(y.to_signed().unwrap(), vec![11, 22, 4, 14, 25, -128]);
        assert!(add(&a, &ring(8, &[2], &[1, 2])).is_err());
        assert!(add(&a, &ring(16, &[3], &[1, 2, 3])).is_err());
    }

    #[test]
    fn broadcast_transpose_and_window_sums() {
        let b = ring(8, &[3, 1], &[1, 2, 3]);
        let y = broadcast_to(&b, &[2, 3, 2]).unwrap();
        assert_eq!(
            y.to_signed().unwrap(),
            vec![1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3]
        );
        assert!(broadcast_to(&b, &[2, 1]).is_err());
        // A scalar (the server's weight of `mul` by a scalar constant) fills the shape.
        let y = broadcast_to(&ring(8, &[], &[7]), &[2, 2]).unwrap();
        assert_eq!(y.to_signed().unwrap(), vec![7; 4]);
        let x = ring(8, &[2, 3], &[1, 2, 3, 4, 5, 6]);
        let t = transpose(&x, &[1, 0]).unwrap();
        assert_eq!(t.shape(), &[3, 2]);
        assert_eq!(t.to_signed().unwrap(), vec![1, 4, 2, 5, 3, 6]);
        assert!(transpose(&x, &[0, 0]).is_err());
        assert!(transpose(&x, &[0]).is_err());
        let x = ring(8, &[1, 1, 3, 3], &[1, 2, 3, 4, 5, 6, 7, 8, 100]);
        let pool = Pool2d {
            kernel: [2, 2],
            strides: [2, 2],
            pads: [1, 1, 1, 1],
            ceil_mode: false,
        };
        let s = window_sums(&x, &pool).unwrap();
        assert_eq!(s.shape(), &[1, 1, 2, 2]);
        // Windows (padding ignored): [1], [2+3], [4+7], [5+6+8+100] wraps to 119 − 256.
        assert_eq!(s.to_signed().unwrap(), vec![1, 5, 11, 119]);
        assert_eq!(pool.window_counts([3, 3], false).unwrap(), vec![1, 2, 2, 4]);
        assert_eq!(pool.window_counts([3, 3], true).unwrap(), vec![4, 4, 4, 4]);
        assert!(window_sums(&ring(8, &[3], &[1, 2, 3]), &pool).is_err());
        let bad = Pool2d {
            kernel: [0, 1],
            ..pool
        };
        assert!(window_sums(&x, &bad).is_err());
    }
}
