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

use crate::ops::{Op, Pool2d, Scalar};
use crate::program::{ConstId, Instr, ValueId};
use crate::tensor::{Data, Tensor};
use crate::types::{Encoding, Owner, ShapeDisplay, Type, TypeError, numel};
use thiserror::Error;

/// A type error at one instruction.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("%{value} = {op}: {kind}")]
pub struct CheckError {
    /// Name of the value the instruction defines.
    pub value: String,
    /// The op's mnemonic.
    pub op: &'static str,
    /// What is wrong.
    pub kind: CheckErrorKind,
}

/// What is wrong with an instruction.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum CheckErrorKind {
    /// Value names must be non-empty.
    #[error("empty value name")]
    EmptyName,
    /// The name is already defined.
    #[error("the name is already defined")]
    DuplicateName,
    /// Two inputs (or two outputs) share an external name.
    #[error("external name {name:?} is already used by another instruction of the same kind")]
    DuplicateExternal {
        /// The external name.
        name: String,
    },
    /// More than 2^32 − 1 values.
    #[error("too many values")]
    TooManyValues,
    /// An operand refers to no earlier value.
    #[error("operand `{operand}` refers to {id}, which is not defined before this instruction")]
    UnknownOperand {
        /// Operand label.
        operand: String,
        /// The id.
        id: ValueId,
    },
    /// Wrong operand encoding.
    #[error("operand `{operand}` has encoding {found}, expected {expected}")]
    Encoding {
        /// Operand label.
        operand: String,
        /// What was expected.
        expected: String,
        /// What was found.
        found: Encoding,
    },
    /// Wrong operand scale.
    #[error("operand `{operand}` has scale {found}, expected {expected}")]
    Scale {
        /// Operand label.
        operand: String,
        /// Expected scale.
        expected: u32,
        /// Found scale.
        found: u32,
    },
    /// Wrong operand shape.
    #[error(
        "operand `{operand}` has shape {}, expected {expected}",
        ShapeDisplay(found)
    )]
    Shape {
        /// Operand label.
        operand: String,
        /// Description of the expected shape.
        expected: String,
        /// Found shape.
        found: Vec<usize>,
    },
    /// Shapes that do not broadcast.
    #[error("shapes {} and {} do not broadcast", ShapeDisplay(a), ShapeDisplay(b))]
    Broadcast {
        /// Left shape.
        a: Vec<usize>,
        /// Right shape.
        b: Vec<usize>,
    },
    /// Wrong owner.
    #[error("operand `{operand}` is owned by {found}, expected {expected}")]
    Owner {
        /// Operand label (or `type` for a declared type).
        operand: String,
        /// What was expected.
        expected: String,
        /// Found owner.
        found: Owner,
    },
    /// Invalid attribute value.
    #[error("attribute `{attr}`: {reason}")]
    Attribute {
        /// Attribute name.
        attr: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// A float-stage op in a fixed-point program.
    #[error(
        "float-stage op in a {encoding} program: it must be removed by the {pass} pass before quantization"
    )]
    FloatOnly {
        /// The operand encoding found.
        encoding: Encoding,
        /// The pass that removes it.
        pass: &'static str,
    },
    /// Constant data does not match its declared type.
    #[error("constant: {reason}")]
    Const {
        /// Why.
        reason: String,
    },
    /// The result type would be invalid (e.g. a scale that does not fit the encoding).
    #[error("invalid result type: {0}")]
    Result(#[from] TypeError),
}

type K = CheckErrorKind;

/// Infers the type of `op` given the instructions before it and the constant table.
pub(crate) fn infer(op: &Op, instrs: &[Instr], consts: &[Option<Tensor>]) -> Result<Type, K> {
    let cx = Cx { instrs };
    let labeled = op.labeled_operands();
    let mut tys = Vec::with_capacity(labeled.len());
    for (label, v) in &labeled {
        tys.push(cx.get(label, **v)?);
    }
    // Float-stage ops are rejected first, whatever else is wrong with them.
    if op.is_float_only()
        && let Some(t) = tys.iter().find(|t| !t.encoding().is_real())
    {
        let pass = match op {
            Op::BatchNorm { .. } => "BatchNorm folding (sci-passes `fold_batchnorm`)",
            _ => "identity elimination (sci-passes `remove_identity`)",
        };
        return Err(K::FloatOnly {
            encoding: t.encoding(),
            pass,
        });
    }
    let owner = tys.iter().fold(Owner::Public, |o, t| o.combine(t.owner()));
    let unary = || tys[0];
    match op {
        Op::Input { ty, .. } => {
            if ty.owner() != Owner::Client {
                return Err(K::Owner {
                    operand: "type".into(),
                    expected: "client (inputs are the client's)".into(),
                    found: ty.owner(),
                });
            }
            Ok(ty.clone())
        }
        Op::Const { id, ty } => check_const(*id, ty, consts).map(|()| ty.clone()),
        Op::Conv2d {
            strides,
            pads,
            dilations,
            groups,
            ..
        } => {
            let (x, w) = (tys[0], tys[1]);
            let enc = x.encoding();
            same_encoding("w", w, enc)?;
            let xs = rank_is("x", x, 4, "[N, C, H, W]")?;
            let ws = rank_is("w", w, 4, "[C_out, C/groups, kH, kW]")?;
            let g = *groups;
            if g == 0 || xs[1] % g != 0 || ws[0] % g != 0 {
                return Err(K::Attribute {
                    attr: "groups",
                    reason: format!(
                        "{g} must be ≥ 1 and divide the input channels {} and output channels {}",
                        xs[1], ws[0]
                    ),
                });
            }
            if ws[1] != xs[1] / g || ws[2] == 0 || ws[3] == 0 {
                return Err(K::Shape {
                    operand: "w".into(),
                    expected: format!("[{}, {}, kH ≥ 1, kW ≥ 1]", ws[0], xs[1] / g),
                    found: ws.to_vec(),
                });
            }
            positive("strides", strides)?;
            positive("dilations", dilations)?;
            let mut out = vec![xs[0], ws[0]];
            for a in 0..2 {
                let eff = dilations[a]
                    .checked_mul(ws[2 + a] - 1)
                    .and_then(|e| e.checked_add(1));
                let padded = xs[2 + a]
                    .checked_add(pads[a])
                    .and_then(|h| h.checked_add(pads[a + 2]));
                match (eff, padded) {
                    (Some(e), Some(p)) if p >= e => out.push((p - e) / strides[a] + 1),
                    _ => {
                        return Err(K::Attribute {
                            attr: "pads",
                            reason: format!(
                                "dilated kernel {:?} does not fit input {} with pads {:?}",
                                [ws[2], ws[3]],
                                ShapeDisplay(xs),
                                pads
                            ),
                        });
                    }
                }
            }
            let scale = x.scale() + w.scale();
            if let Some(b) = tys.get(2) {
                bias_ok(b, enc, scale, ws[0])?;
            }
            Ok(Type::new(enc, scale, out, owner)?)
        }
        Op::MatMul { .. } => {
            let (a, b) = (tys[0], tys[1]);
            let enc = a.encoding();
            same_encoding("b", b, enc)?;
            let ash = rank_is("a", a, 2, "[M, K]")?;
            let bsh = rank_is("b", b, 2, "[K, N]")?;
            if bsh[0] != ash[1] {
                return Err(K::Shape {
                    operand: "b".into(),
                    expected: format!("[{}, N]", ash[1]),
                    found: bsh.to_vec(),
                });
            }
            let scale = a.scale() + b.scale();
            if let Some(bias) = tys.get(2) {
                bias_ok(bias, enc, scale, bsh[1])?;
            }
            Ok(Type::new(enc, scale, vec![ash[0], bsh[1]], owner)?)
        }
        Op::Add { .. } | Op::Sub { .. } | Op::Mul { .. } => {
            let (a, b) = (tys[0], tys[1]);
            same_encoding("b", b, a.encoding())?;
            let scale = if matches!(op, Op::Mul { .. }) {
                a.scale() + b.scale()
            } else {
                if b.scale() != a.scale() {
                    return Err(K::Scale {
                        operand: "b".into(),
                        expected: a.scale(),
                        found: b.scale(),
                    });
                }
                a.scale()
            };
            let shape = broadcast(a.shape(), b.shape())?;
            Ok(Type::new(a.encoding(), scale, shape, owner)?)
        }
        Op::MulPublic { .. } | Op::Relu { .. } => Ok(unary().clone()),
        Op::ScaleUp { k, .. } => {
            let x = unary();
            fixed_only("x", x)?;
            if *k == 0 {
                return Err(K::Attribute {
                    attr: "k",
                    reason: "must be ≥ 1 (scale_up by 0 is a no-op)".into(),
                });
            }
            Ok(x.with_scale(x.scale().saturating_add(*k))?)
        }
        Op::Trunc { s, .. } => {
            let x = unary();
            fixed_only("x", x)?;
            if *s == 0 || *s > x.scale() {
                return Err(K::Attribute {
                    attr: "s",
                    reason: format!(
                        "must be in 1..={} (the operand's scale), found {s}",
                        x.scale()
                    ),
                });
            }
            Ok(x.with_scale(x.scale() - s)?)
        }
        Op::DivPublic { d, .. } => {
            let x = unary();
            divisor_ok("d", *d, x.encoding())?;
            Ok(x.clone())
        }
        Op::MaxPool { pool, .. } | Op::AvgPool { pool, .. } => {
            let x = unary();
            let xs = rank_is("x", x, 4, "[N, C, H, W]")?;
            let (oh, ow) = pool_output(pool, xs[2], xs[3])?;
            if matches!(op, Op::AvgPool { .. }) {
                divisor_ok(
                    "kernel",
                    (pool.kernel[0] as u64).saturating_mul(pool.kernel[1] as u64),
                    x.encoding(),
                )?;
            }
            Ok(x.with_shape(vec![xs[0], xs[1], oh, ow])?)
        }
        Op::GlobalAvgPool { .. } => {
            let x = unary();
            let xs = rank_is("x", x, 4, "[N, C, H, W]")?;
            let hw = (xs[2] as u64).saturating_mul(xs[3] as u64);
            divisor_ok("H·W", hw, x.encoding()).map_err(|_| K::Shape {
                operand: "x".into(),
                expected: format!("H·W in 1..{}", modulus_str(x.encoding())),
                found: xs.to_vec(),
            })?;
            Ok(x.with_shape(vec![xs[0], xs[1], 1, 1])?)
        }
        Op::ArgMax { axis, keepdims, .. } => {
            let x = unary();
            let xs = x.shape();
            if *axis >= xs.len() {
                return Err(K::Attribute {
                    attr: "axis",
                    reason: format!("{axis} is out of range for rank {}", xs.len()),
                });
            }
            let n = xs[*axis];
            let max_index = match x.encoding().signed_range() {
                Some((_, hi)) => hi,
                None => 1 << 24, // integers exactly representable in f32
            };
            if n == 0 || (n - 1) as i128 > max_index {
                return Err(K::Shape {
                    operand: "x".into(),
                    expected: format!("axis {axis} of size 1..={}", max_index.saturating_add(1)),
                    found: xs.to_vec(),
                });
            }
            let mut shape = xs.to_vec();
            if *keepdims {
                shape[*axis] = 1;
            } else {
                shape.remove(*axis);
            }
            Ok(Type::new(x.encoding(), 0, shape, x.owner())?)
        }
        Op::Reshape { shape, .. } => {
            let x = unary();
            let t = x.with_shape(shape.clone())?;
            if t.numel() != x.numel() {
                return Err(K::Attribute {
                    attr: "shape",
                    reason: format!(
                        "{} has {} elements, the operand {} has {}",
                        ShapeDisplay(shape),
                        t.numel(),
                        ShapeDisplay(x.shape()),
                        x.numel()
                    ),
                });
            }
            Ok(t)
        }
        Op::Flatten { axis, .. } => {
            let x = unary();
            if *axis > x.rank() {
                return Err(K::Attribute {
                    attr: "axis",
                    reason: format!("{axis} exceeds the rank {}", x.rank()),
                });
            }
            let (l, r) = x.shape().split_at(*axis);
            Ok(x.with_shape(vec![numel(l), numel(r)])?)
        }
        Op::Transpose { perm, .. } => {
            let x = unary();
            let mut seen = vec![false; x.rank()];
            for &p in perm {
                match seen.get_mut(p) {
                    Some(s) if !*s => *s = true,
                    _ => {
                        return Err(K::Attribute {
                            attr: "perm",
                            reason: format!("{perm:?} is not a permutation of 0..{}", x.rank()),
                        });
                    }
                }
            }
            if perm.len() != x.rank() {
                return Err(K::Attribute {
                    attr: "perm",
                    reason: format!("{perm:?} is not a permutation of 0..{}", x.rank()),
                });
            }
            Ok(x.with_shape(perm.iter().map(|&p| x.shape()[p]).collect())?)
        }
        Op::Concat { axis, .. } => {
            let Some(first) = tys.first() else {
                return Err(K::Attribute {
                    attr: "xs",
                    reason: "concat needs at least one operand".into(),
                });
            };
            if *axis >= first.rank() {
                return Err(K::Attribute {
                    attr: "axis",
                    reason: format!("{axis} is out of range for rank {}", first.rank()),
                });
            }
            let mut shape = first.shape().to_vec();
            for (i, t) in tys.iter().enumerate().skip(1) {
                let label = format!("xs[{i}]");
                same_encoding(&label, t, first.encoding())?;
                if t.scale() != first.scale() {
                    return Err(K::Scale {
                        operand: label,
                        expected: first.scale(),
                        found: t.scale(),
                    });
                }
                let compatible = t.rank() == first.rank()
                    && (0..first.rank()).all(|d| d == *axis || t.shape()[d] == first.shape()[d]);
                if !compatible {
                    return Err(K::Shape {
                        operand: label,
                        expected: format!(
                            "{} except along axis {axis}",
                            ShapeDisplay(first.shape())
                        ),
                        found: t.shape().to_vec(),
                    });
                }
                shape[*axis] = shape[*axis].saturating_add(t.shape()[*axis]);
            }
            Ok(Type::new(first.encoding(), first.scale(), shape, owner)?)
        }
        Op::Pad { pads, value, .. } => {
            let x = unary();
            if pads.len() != 2 * x.rank() {
                return Err(K::Attribute {
                    attr: "pads",
                    reason: format!(
                        "needs 2·rank = {} entries, found {}",
                        2 * x.rank(),
                        pads.len()
                    ),
                });
            }
            scalar_ok("value", value, x.encoding())?;
            let r = x.rank();
            let shape = (0..r)
                .map(|d| {
                    x.shape()[d]
                        .saturating_add(pads[d])
                        .saturating_add(pads[d + r])
                })
                .collect();
            Ok(x.with_shape(shape)?)
        }
        Op::Output { .. } => {
            let x = unary();
            let owner = if x.owner() == Owner::Public {
                Owner::Public
            } else {
                Owner::Client
            };
            Ok(x.with_owner(owner))
        }
        Op::BatchNorm { epsilon, .. } => {
            let x = unary();
            if x.rank() < 2 {
                return Err(K::Shape {
                    operand: "x".into(),
                    expected: "[N, C, ...]".into(),
                    found: x.shape().to_vec(),
                });
            }
            let c = x.shape()[1];
            for (i, (label, _)) in labeled.iter().enumerate().skip(1) {
                if tys[i].shape() != [c] {
                    return Err(K::Shape {
                        operand: label.clone(),
                        expected: format!("[{c}]"),
                        found: tys[i].shape().to_vec(),
                    });
                }
            }
            if !epsilon.is_finite() || *epsilon < 0.0 {
                return Err(K::Attribute {
                    attr: "epsilon",
                    reason: format!("must be finite and ≥ 0, found {epsilon}"),
                });
            }
            Ok(x.with_owner(owner))
        }
        Op::Identity { .. } => Ok(unary().clone()),
    }
}

struct Cx<'a> {
    instrs: &'a [Instr],
}

impl<'a> Cx<'a> {
    fn get(&self, label: &str, v: ValueId) -> Result<&'a Type, K> {
        self.instrs
            .get(v.index())
            .map(|i| &i.ty)
            .ok_or_else(|| K::UnknownOperand {
                operand: label.to_string(),
                id: v,
            })
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

fn positive(attr: &'static str, v: &[usize]) -> Result<(), K> {
    if v.contains(&0) {
        Err(K::Attribute {
            attr,
            reason: format!("{v:?} must be ≥ 1"),
        })
    } else {
        Ok(())
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

fn check_const(id: ConstId, ty: &Type, consts: &[Option<Tensor>]) -> Result<(), K> {
    let reason = |r: String| Err(K::Const { reason: r });
    if !matches!(ty.owner(), Owner::Server | Owner::Public) {
        return Err(K::Owner {
            operand: "type".into(),
            expected: "server or public".into(),
            found: ty.owner(),
        });
    }
    let Some(entry) = consts.get(id.index()) else {
        return reason(format!("no constant-table entry #{}", id.0));
    };
    let Some(t) = entry else {
        if ty.owner() == Owner::Public {
            return reason("public constant data cannot be withheld".into());
        }
        return Ok(());
    };
    if t.encoding() != ty.encoding() || t.shape() != ty.shape() {
        return reason(format!(
            "data is {}{}, the declared type says {}{}",
            t.encoding(),
            ShapeDisplay(t.shape()),
            ty.encoding(),
            ShapeDisplay(ty.shape())
        ));
    }
    if let Data::F32(v) = t.data()
        && let Some(i) = v.iter().position(|x| x.is_nan())
    {
        return reason(format!("element {i} is NaN"));
    }
    Ok(())
}

/// Numpy broadcasting of two shapes.
pub fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, CheckErrorKind> {
    let r = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| {
        if i < r - s.len() {
            1
        } else {
            s[i - (r - s.len())]
        }
    };
    (0..r)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            _ => Err(K::Broadcast {
                a: a.to_vec(),
                b: b.to_vec(),
            }),
        })
        .collect()
}

/// Output height and width of a 2-D pooling window over an `h × w` input (the rule is
/// documented on [`Pool2d`]); errors on invalid attributes.
pub fn pool_output(pool: &Pool2d, h: usize, w: usize) -> Result<(usize, usize), CheckErrorKind> {
    positive("kernel", &pool.kernel)?;
    positive("strides", &pool.strides)?;
    let mut out = [0; 2];
    for (a, size) in [h, w].into_iter().enumerate() {
        let (k, s) = (pool.kernel[a], pool.strides[a]);
        let (pb, pe) = (pool.pads[a], pool.pads[a + 2]);
        if pb >= k || pe >= k {
            return Err(K::Attribute {
                attr: "pads",
                reason: format!(
                    "{:?} must be smaller than the kernel {:?}",
                    pool.pads, pool.kernel
                ),
            });
        }
        // Saturation only happens for absurd attributes, whose output shape the result
        // type then rejects.
        let padded = size.saturating_add(pb).saturating_add(pe);
        if padded < k {
            return Err(K::Attribute {
                attr: "kernel",
                reason: format!(
                    "{:?} is larger than the padded input (size {size} along axis {a} with pads {:?})",
                    pool.kernel, pool.pads
                ),
            });
        }
        let span = padded - k;
        let mut n = if pool.ceil_mode {
            span.div_ceil(s) + 1
        } else {
            span / s + 1
        };
        if pool.ceil_mode && (n - 1).saturating_mul(s) >= size.saturating_add(pb) {
            n -= 1;
        }
        out[a] = n;
    }
    Ok((out[0], out[1]))
}
