//! The type checker: infers the type of every instruction from its operands and
//! attributes, rejecting anything ill-typed with an error that names the offending value,
//! the op, and what was expected vs found.
//!
//! It runs inside [`crate::Builder::push`], so every [`crate::Program`] is well-typed.
//! The rules per op are documented on [`crate::Op`]; in short: operand encodings must be
//! equal; additive ops need equal scales, products add scales, `Trunc` subtracts; shapes
//! follow each op's geometry (numpy broadcasting for `Add`/`Sub`/`Mul`); the owner of a
//! result is [`Owner::combine`] of the operands' owners; float-stage ops (`BatchNorm`,
//! `Identity`) are rejected outside `Real` programs with the name of the pass that
//! removes them. Whether a well-typed program can be run *securely* is a separate
//! question, answered by [`crate::secure`].
//!
//! One function per op family: [`io`] (input, const, output), [`linear`] (conv2d,
//! matmul), [`arith`] (elementwise and scaling ops), [`pool`] (pooling and argmax),
//! [`layout`] (reshape, flatten, transpose, concat, pad), [`float`] (the float-stage
//! ops). Cost: `O(1)` per instruction except constants (`O(elements)`, a NaN scan) and
//! ops whose attributes are lists (`O(list length)`).

mod arith;
mod float;
mod io;
mod layout;
mod linear;
mod pool;

pub use crate::error::{CheckError, CheckErrorKind};
pub use arith::broadcast;

use crate::id::ValueId;
use crate::math::Smooth;
use crate::ops::{Op, Scalar};
use crate::tensor::Tensor;
use crate::types::{Encoding, Owner, Type};

type K = CheckErrorKind;

/// Infers the type of `op` given the types of the values before it (`ty_of`, `None`
/// for a value not defined yet) and the constant table.
pub(crate) fn infer<'a>(
    op: &Op,
    ty_of: impl Fn(ValueId) -> Option<&'a Type>,
    consts: &[Option<Tensor>],
) -> Result<Type, K> {
    let labeled = op.labeled_operands();
    let tys = labeled
        .iter()
        .map(|(label, v)| {
            ty_of(**v).ok_or_else(|| K::UnknownOperand {
                operand: label.clone(),
                id: **v,
            })
        })
        .collect::<Result<Vec<&Type>, K>>()?;
    // Float-stage ops are rejected first, whatever else is wrong with them.
    float::reject_outside_real(op, &tys)?;
    let owner = tys.iter().fold(Owner::Public, |o, t| o.combine(t.owner()));
    let x = || tys[0];
    match op {
        Op::Input { ty, .. } => io::input(ty),
        Op::Const { id, ty } => io::constant(*id, ty, consts),
        Op::Output { .. } => Ok(io::output(x())),
        Op::Conv2d { conv, .. } => linear::conv2d(&tys, conv, owner),
        Op::MatMul { .. } => linear::matmul(&tys, owner),
        Op::Add { .. } | Op::Sub { .. } => arith::elementwise(x(), tys[1], false, owner),
        Op::Mul { .. } => arith::elementwise(x(), tys[1], true, owner),
        Op::MulPublic { .. } | Op::Relu { .. } | Op::Identity { .. } => Ok(x().clone()),
        Op::Sigmoid { .. } | Op::Tanh { .. } => {
            arith::smooth(x(), op.smooth().map_or(Smooth::Sigmoid, |(k, _)| k))
        }
        Op::Rsqrt { .. } => arith::rsqrt(x()),
        Op::Spline { func, .. } => arith::spline(x(), *func),
        Op::Softmax { axis, .. } => arith::softmax(x(), *axis),
        Op::ScaleUp { k, .. } => arith::scale_up(x(), *k),
        Op::Trunc { s, .. } | Op::ReluTrunc { s, .. } => arith::trunc(x(), *s),
        Op::DivPublic { d, .. } => arith::div_public(x(), *d),
        Op::MaxPool { pool, .. } => pool::pool2d(x(), pool, false),
        Op::AvgPool { pool, .. } => pool::pool2d(x(), pool, true),
        Op::GlobalAvgPool { .. } => pool::global_avgpool(x()),
        Op::ArgMax { axis, keepdims, .. } => pool::argmax(x(), *axis, *keepdims),
        Op::Reshape { shape, .. } => layout::reshape(x(), shape),
        Op::Flatten { axis, .. } => layout::flatten(x(), *axis),
        Op::Transpose { perm, .. } => layout::transpose(x(), perm),
        Op::Gather { axis, indices, .. } => layout::gather(x(), *axis, indices),
        Op::Concat { axis, .. } => layout::concat(&tys, *axis, owner),
        Op::Pad { pads, value, .. } => layout::pad(x(), pads, value),
        Op::BatchNorm { epsilon, .. } => float::batchnorm(&labeled, &tys, *epsilon, owner),
    }
}

fn same_encoding(label: &str, t: &Type, expected: Encoding) -> Result<(), K> {
    if t.encoding() == expected {
        Ok(())
    } else {
        Err(K::Encoding {
            operand: label.to_string(),
            expected: expected.to_string(),
            found: t.encoding(),
        })
    }
}

fn fixed_only(label: &str, t: &Type) -> Result<(), K> {
    if t.encoding().is_real() {
        Err(K::Encoding {
            operand: label.to_string(),
            expected: "a ring or field (fixed-point only)".into(),
            found: t.encoding(),
        })
    } else {
        Ok(())
    }
}

fn rank_is<'t>(label: &str, t: &'t Type, rank: usize, expected: &str) -> Result<&'t [usize], K> {
    if t.rank() == rank {
        Ok(t.shape())
    } else {
        Err(K::Shape {
            operand: label.to_string(),
            expected: expected.to_string(),
            found: t.shape().to_vec(),
        })
    }
}

fn bias_ok(b: &Type, enc: Encoding, scale: u32, n: usize) -> Result<(), K> {
    same_encoding("bias", b, enc)?;
    if b.scale() != scale {
        return Err(K::Scale {
            operand: "bias".into(),
            expected: scale,
            found: b.scale(),
        });
    }
    if b.shape() != [n] {
        return Err(K::Shape {
            operand: "bias".into(),
            expected: format!("[{n}]"),
            found: b.shape().to_vec(),
        });
    }
    Ok(())
}

fn modulus_str(enc: Encoding) -> String {
    match enc {
        Encoding::Real => "∞".into(),
        Encoding::Ring { bits } => format!("2^{bits}"),
        Encoding::Field { modulus } => modulus.to_string(),
    }
}

/// `d` must satisfy `0 < d < modulus` (the paper's `rdiv` precondition).
fn divisor_ok(attr: &'static str, d: u64, enc: Encoding) -> Result<(), K> {
    let below = enc.modulus().is_none_or(|m| u128::from(d) < m);
    if d == 0 || !below {
        return Err(K::Attribute {
            attr,
            reason: format!("divisor {d} must be in 1..{}", modulus_str(enc)),
        });
    }
    Ok(())
}

fn scalar_ok(attr: &'static str, v: &Scalar, enc: Encoding) -> Result<(), K> {
    match (v, enc.signed_range()) {
        (Scalar::F32(x), None) if !x.is_nan() => Ok(()),
        (Scalar::Int(i), Some((lo, hi))) if (lo..=hi).contains(&i128::from(*i)) => Ok(()),
        _ => Err(K::Attribute {
            attr,
            reason: format!("{v:?} is not a valid (non-NaN, in-range) value of encoding {enc}"),
        }),
    }
}
