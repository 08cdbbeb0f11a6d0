//! The opcode table: the one place that gives each op its opcode ([`opcode`]) and the
//! order of its operands and attributes in an [`OpMsg`] ([`fields`]). The encoder and
//! the decoder both walk [`fields`] (through the two implementations of [`Fields`]), so
//! the two directions cannot disagree; the table in [`OpMsg`]'s documentation is
//! checked against this one by a unit test.

use super::error::{PlanError, invalid};
use super::messages::OpMsg;
use crate::id::{ConstId, ValueId};
use crate::ops::{Conv2d, Op, Pool2d, Scalar};
use crate::program::Builder;
use crate::types::Type;
use std::convert::Infallible;

/// The opcode of `const` (the decoder counts constants before decoding them).
pub(super) const CONST: u32 = 1;

/// The opcode of `op`, as in the table of [`OpMsg`].
fn opcode<V>(op: &Op<V>) -> u32 {
    match op {
        Op::Input { .. } => 0,
        Op::Const { .. } => CONST,
        Op::Conv2d { .. } => 2,
        Op::MatMul { .. } => 3,
        Op::Add { .. } => 4,
        Op::Sub { .. } => 5,
        Op::Mul { .. } => 6,
        Op::MulPublic { .. } => 7,
        Op::ScaleUp { .. } => 8,
        Op::Trunc { .. } => 9,
        Op::DivPublic { .. } => 10,
        Op::Relu { .. } => 11,
        Op::MaxPool { .. } => 12,
        Op::AvgPool { .. } => 13,
        Op::GlobalAvgPool { .. } => 14,
        Op::ArgMax { .. } => 15,
        Op::Reshape { .. } => 16,
        Op::Flatten { .. } => 17,
        Op::Transpose { .. } => 18,
        Op::Concat { .. } => 19,
        Op::Pad { .. } => 20,
        Op::Output { .. } => 21,
        Op::BatchNorm { .. } => 22,
        Op::Identity { .. } => 23,
        Op::Gather { .. } => 24,
        Op::Sigmoid { .. } => 25,
        Op::Tanh { .. } => 26,
        Op::Rsqrt { .. } => 27,
        Op::Softmax { .. } => 28,
    }
}

/// Every op once, with placeholder operands and attributes (an instruction of type
/// `ty`): the decoder picks the one whose [`opcode`] it reads, then fills it in with
/// [`fields`].
fn templates(ty: &Type) -> [Op; 29] {
    let x = ValueId(0);
    let pool = Pool2d {
        kernel: [0; 2],
        strides: [0; 2],
        pads: [0; 4],
        ceil_mode: false,
    };
    [
        Op::Input {
            name: String::new(),
            ty: ty.clone(),
        },
        Op::Const {
            id: ConstId(0),
            ty: ty.clone(),
        },
        Op::Conv2d {
            x,
            w: x,
            bias: None,
            conv: Conv2d::default(),
        },
        Op::MatMul {
            a: x,
            b: x,
            bias: None,
        },
        Op::Add { a: x, b: x },
        Op::Sub { a: x, b: x },
        Op::Mul { a: x, b: x },
        Op::MulPublic { x, k: 0 },
        Op::ScaleUp { x, k: 0 },
        Op::Trunc {
            x,
            s: 0,
            nonneg: false,
        },
        Op::DivPublic { x, d: 0 },
        Op::Relu { x },
        Op::MaxPool { x, pool },
        Op::AvgPool {
            x,
            pool,
            count_include_pad: false,
        },
        Op::GlobalAvgPool { x },
        Op::ArgMax {
            x,
            axis: 0,
            keepdims: false,
        },
        Op::Reshape { x, shape: vec![] },
        Op::Flatten { x, axis: 0 },
        Op::Transpose { x, perm: vec![] },
        Op::Concat {
            xs: vec![],
            axis: 0,
        },
        Op::Pad {
            x,
            pads: vec![],
            value: Scalar::Int(0),
        },
        Op::Output {
            x,
            name: String::new(),
            logits: false,
        },
        Op::BatchNorm {
            x,
            scale: x,
            bias: x,
            mean: x,
            var: x,
            epsilon: 0.0,
        },
        Op::Identity { x },
        Op::Gather {
            x,
            axis: 0,
            indices: vec![],
        },
        Op::Sigmoid { x },
        Op::Tanh { x },
        Op::Rsqrt { x },
        Op::Softmax { x, axis: 0 },
    ]
}

/// Visits an op's operands and attributes in their stored order: the encoder copies
/// them into an [`OpMsg`], the decoder overwrites them from one.
trait Fields {
    /// Why a field cannot be read (never, for the encoder).
    type Error;
    /// One operand.
    fn operand(&mut self, v: &mut ValueId) -> Result<(), Self::Error>;
    /// An optional operand (a bias), stored only if present: always the last one.
    fn optional(&mut self, v: &mut Option<ValueId>) -> Result<(), Self::Error>;
    /// Every operand (of `concat`).
    fn operand_list(&mut self, v: &mut Vec<ValueId>) -> Result<(), Self::Error>;
    /// The next entry of `attrs`.
    fn attr<T: Attr>(&mut self, v: &mut T) -> Result<(), Self::Error>;
    /// Every remaining entry of `attrs`.
    fn attr_list(&mut self, v: &mut Vec<usize>) -> Result<(), Self::Error>;
    /// The `int` field.
    fn int(&mut self, v: &mut i64);
    /// The `float` field.
    fn float(&mut self, v: &mut f32);
    /// The `label` field.
    fn label(&mut self, v: &mut String);
    /// The instruction's type (stored in the instruction, not in the op).
    fn ty(&mut self, v: &mut Type);
    /// A constant-table id, stored as an entry of `attrs`.
    fn const_id(&mut self, v: &mut ConstId) -> Result<(), Self::Error>;
    /// A fill value of operand `x`'s encoding: `float` for f32, else `int`.
    fn fill(&mut self, v: &mut Scalar, x: ValueId);

    /// Consecutive entries of `attrs`.
    fn attrs<T: Attr, const N: usize>(&mut self, v: &mut [T; N]) -> Result<(), Self::Error> {
        v.iter_mut().try_for_each(|a| self.attr(a))
    }
    /// A pooling window: kernel(2), strides(2), pads(4), ceil_mode.
    fn pool(&mut self, p: &mut Pool2d) -> Result<(), Self::Error> {
        self.attrs(&mut p.kernel)?;
        self.attrs(&mut p.strides)?;
        self.attrs(&mut p.pads)?;
        self.attr(&mut p.ceil_mode)
    }
}

/// The operands and attributes of every op, in their stored order (the table of
/// [`OpMsg`]); operands come first, so a missing one is reported before attributes.
fn fields<F: Fields>(op: &mut Op, f: &mut F) -> Result<(), F::Error> {
    match op {
        Op::Input { name, ty } => {
            f.ty(ty);
            f.label(name);
        }
        Op::Const { id, ty } => {
            f.ty(ty);
            f.const_id(id)?;
        }
        Op::Conv2d { x, w, bias, conv } => {
            f.operand(x)?;
            f.operand(w)?;
            f.optional(bias)?;
            f.attrs(&mut conv.strides)?;
            f.attrs(&mut conv.pads)?;
            f.attrs(&mut conv.dilations)?;
            f.attr(&mut conv.groups)?;
        }
        Op::MatMul { a, b, bias } => {
            f.operand(a)?;
            f.operand(b)?;
            f.optional(bias)?;
        }
        Op::Add { a, b } | Op::Sub { a, b } | Op::Mul { a, b } => {
            f.operand(a)?;
            f.operand(b)?;
        }
        Op::MulPublic { x, k } => {
            f.operand(x)?;
            f.int(k);
        }
        Op::ScaleUp { x, k } => {
            f.operand(x)?;
            f.attr(k)?;
        }
        Op::Trunc { x, s, nonneg } => {
            f.operand(x)?;
            f.attr(s)?;
            f.attr(nonneg)?;
        }
        Op::DivPublic { x, d } => {
            f.operand(x)?;
            f.attr(d)?;
        }
        Op::Relu { x }
        | Op::Sigmoid { x }
        | Op::Tanh { x }
        | Op::Rsqrt { x }
        | Op::GlobalAvgPool { x }
        | Op::Identity { x } => f.operand(x)?,
        Op::MaxPool { x, pool } => {
            f.operand(x)?;
            f.pool(pool)?;
        }
        Op::AvgPool {
            x,
            pool,
            count_include_pad,
        } => {
            f.operand(x)?;
            f.pool(pool)?;
            f.attr(count_include_pad)?;
        }
        Op::Softmax { x, axis } => {
            f.operand(x)?;
            f.attr(axis)?;
        }
        Op::ArgMax { x, axis, keepdims } => {
            f.operand(x)?;
            f.attr(axis)?;
            f.attr(keepdims)?;
        }
        Op::Reshape { x, shape: list } | Op::Transpose { x, perm: list } => {
            f.operand(x)?;
            f.attr_list(list)?;
        }
        Op::Flatten { x, axis } => {
            f.operand(x)?;
            f.attr(axis)?;
        }
        Op::Gather { x, axis, indices } => {
            f.operand(x)?;
            f.attr(axis)?;
            f.attr_list(indices)?;
        }
        Op::Concat { xs, axis } => {
            f.operand_list(xs)?;
            f.attr(axis)?;
        }
        Op::Pad { x, pads, value } => {
            f.operand(x)?;
            f.attr_list(pads)?;
            f.fill(value, *x);
        }
        Op::Output { x, name, logits } => {
            f.operand(x)?;
            f.label(name);
            f.attr(logits)?;
        }
        Op::BatchNorm {
            x,
            scale,
            bias,
            mean,
            var,
            epsilon,
        } => {
            for v in [x, scale, bias, mean, var] {
                f.operand(v)?;
            }
            f.float(epsilon);
        }
    }
    Ok(())
}

/// An integer attribute type and its `u64` form in `attrs` (booleans are 0/1).
trait Attr: Copy {
    /// Why a stored value does not convert back.
    const OUT_OF_RANGE: &'static str = "attribute out of range";
    /// The stored form.
    fn to_u64(self) -> u64;
    /// The value of a stored form, `None` if out of range.
    fn from_u64(v: u64) -> Option<Self>;
}

impl Attr for u64 {
    fn to_u64(self) -> u64 {
        self
    }
    fn from_u64(v: u64) -> Option<Self> {
        Some(v)
    }
}

impl Attr for u32 {
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(v: u64) -> Option<Self> {
        u32::try_from(v).ok()
    }
}

impl Attr for usize {
    fn to_u64(self) -> u64 {
        self as u64
    }
    fn from_u64(v: u64) -> Option<Self> {
        usize::try_from(v).ok()
    }
}

impl Attr for bool {
    const OUT_OF_RANGE: &'static str = "boolean attribute is not 0 or 1";
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(v: u64) -> Option<Self> {
        match v {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

/// Copies an op's fields into a message.
struct Encoder(OpMsg);

impl Fields for Encoder {
    type Error = Infallible;

    fn operand(&mut self, v: &mut ValueId) -> Result<(), Infallible> {
        self.0.operands.push(v.0);
        Ok(())
    }
    fn optional(&mut self, v: &mut Option<ValueId>) -> Result<(), Infallible> {
        self.0.operands.extend(v.iter().map(|v| v.0));
        Ok(())
    }
    fn operand_list(&mut self, v: &mut Vec<ValueId>) -> Result<(), Infallible> {
        self.0.operands.extend(v.iter().map(|v| v.0));
        Ok(())
    }
    fn attr<T: Attr>(&mut self, v: &mut T) -> Result<(), Infallible> {
        self.0.attrs.push(v.to_u64());
        Ok(())
    }
    fn attr_list(&mut self, v: &mut Vec<usize>) -> Result<(), Infallible> {
        self.0.attrs.extend(v.iter().map(|&a| a as u64));
        Ok(())
    }
    fn int(&mut self, v: &mut i64) {
        self.0.int = *v;
    }
    fn float(&mut self, v: &mut f32) {
        self.0.float = *v;
    }
    fn label(&mut self, v: &mut String) {
        self.0.label.clone_from(v);
    }
    fn ty(&mut self, _: &mut Type) {}
    fn const_id(&mut self, v: &mut ConstId) -> Result<(), Infallible> {
        self.0.attrs.push(u64::from(v.0));
        Ok(())
    }
    fn fill(&mut self, v: &mut Scalar, _: ValueId) {
        match *v {
            Scalar::Int(i) => self.0.int = i,
            Scalar::F32(x) => self.0.float = x,
        }
    }
}

/// The message of `op`. Cost: linear in its operands and attributes.
pub(super) fn encode(op: &Op) -> OpMsg {
    let mut e = Encoder(OpMsg {
        opcode: opcode(op),
        ..OpMsg::default()
    });
    // The walk takes `&mut` (shared with the decoder); encoding only reads.
    match fields(&mut op.clone(), &mut e) {
        Ok(()) => e.0,
        Err(never) => match never {},
    }
}

/// Overwrites an op's fields from a message, checking counts and ranges.
struct Decoder<'a> {
    index: usize,
    m: &'a OpMsg,
    ty: &'a Type,
    operand_pos: usize,
    attr_pos: usize,
    konst: &'a mut dyn FnMut(&mut Builder, usize) -> Result<ConstId, PlanError>,
    b: &'a mut Builder,
}

impl Decoder<'_> {
    fn arity(&self) -> PlanError {
        invalid(
            self.index,
            format!(
                "opcode {} with {} operands",
                self.m.opcode,
                self.m.operands.len()
            ),
        )
    }

    fn next_attr(&mut self) -> Result<u64, PlanError> {
        let a = self.m.attrs.get(self.attr_pos).copied();
        self.attr_pos += 1;
        a.ok_or_else(|| invalid(self.index, "missing attribute"))
    }

    /// Errors unless every operand and attribute was read.
    fn finish(&self) -> Result<(), PlanError> {
        if self.operand_pos != self.m.operands.len() {
            return Err(self.arity());
        }
        if self.attr_pos != self.m.attrs.len() {
            return Err(invalid(self.index, "too many attributes"));
        }
        Ok(())
    }
}

impl Fields for Decoder<'_> {
    type Error = PlanError;

    fn operand(&mut self, v: &mut ValueId) -> Result<(), PlanError> {
        let id = self
            .m
            .operands
            .get(self.operand_pos)
            .ok_or_else(|| self.arity())?;
        *v = ValueId(*id);
        self.operand_pos += 1;
        Ok(())
    }
    fn optional(&mut self, v: &mut Option<ValueId>) -> Result<(), PlanError> {
        *v = self.m.operands.get(self.operand_pos).map(|&id| ValueId(id));
        self.operand_pos += usize::from(v.is_some());
        Ok(())
    }
    fn operand_list(&mut self, v: &mut Vec<ValueId>) -> Result<(), PlanError> {
        let rest = self.m.operands.get(self.operand_pos..).unwrap_or_default();
        *v = rest.iter().map(|&id| ValueId(id)).collect();
        self.operand_pos = self.m.operands.len();
        Ok(())
    }
    fn attr<T: Attr>(&mut self, v: &mut T) -> Result<(), PlanError> {
        let a = self.next_attr()?;
        *v = T::from_u64(a).ok_or_else(|| invalid(self.index, T::OUT_OF_RANGE))?;
        Ok(())
    }
    fn attr_list(&mut self, v: &mut Vec<usize>) -> Result<(), PlanError> {
        v.clear();
        while self.attr_pos < self.m.attrs.len() {
            let mut a = 0;
            self.attr(&mut a)?;
            v.push(a);
        }
        Ok(())
    }
    fn int(&mut self, v: &mut i64) {
        *v = self.m.int;
    }
    fn float(&mut self, v: &mut f32) {
        *v = self.m.float;
    }
    fn label(&mut self, v: &mut String) {
        v.clone_from(&self.m.label);
    }
    fn ty(&mut self, v: &mut Type) {
        v.clone_from(self.ty);
    }
    fn const_id(&mut self, v: &mut ConstId) -> Result<(), PlanError> {
        let mut raw = 0;
        self.attr(&mut raw)?;
        *v = (self.konst)(self.b, raw)?;
        Ok(())
    }
    fn fill(&mut self, v: &mut Scalar, x: ValueId) {
        *v = match self.b.get_ty(x).map(|t| t.encoding().is_real()) {
            Some(true) => Scalar::F32(self.m.float),
            _ => Scalar::Int(self.m.int),
        };
    }
}

/// The op of message `m` at instruction `index` of type `ty`; `konst` resolves a
/// constant id into the builder's constant table. Errors on an unknown opcode, a wrong
/// operand count, missing, extra or out-of-range attributes.
pub(super) fn decode(
    index: usize,
    m: &OpMsg,
    ty: &Type,
    konst: &mut dyn FnMut(&mut Builder, usize) -> Result<ConstId, PlanError>,
    b: &mut Builder,
) -> Result<Op, PlanError> {
    let mut op = templates(ty)
        .into_iter()
        .find(|t| opcode(t) == m.opcode)
        .ok_or_else(|| invalid(index, format!("unknown opcode {}", m.opcode)))?;
    let mut d = Decoder {
        index,
        m,
        ty,
        operand_pos: 0,
        attr_pos: 0,
        konst,
        b,
    };
    fields(&mut op, &mut d)?;
    d.finish()?;
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Owner;
    use std::mem::discriminant;

    /// The templates hold every opcode once, in order, and the table documented on
    /// [`OpMsg`] (`messages.rs`) names the same op for every opcode.
    #[test]
    fn templates_and_documented_table_match_the_opcodes() {
        let ty = Type::real(vec![1], Owner::Client).unwrap();
        let ts = templates(&ty);
        let codes: Vec<u32> = ts.iter().map(opcode).collect();
        assert_eq!(codes, (0..ts.len() as u32).collect::<Vec<_>>());
        for (i, t) in ts.iter().enumerate() {
            assert!(ts[..i].iter().all(|u| discriminant(u) != discriminant(t)));
        }
        let doc = include_str!("messages.rs");
        let mut documented = vec![None; ts.len()];
        for row in doc.lines().filter_map(|l| l.trim().strip_prefix("/// | ")) {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let (codes, names) = (cells[0], cells[1]);
            if codes.parse::<u32>().is_err() && !codes.contains(',') {
                continue; // the header row and its rule
            }
            for (c, n) in codes.split(',').zip(names.split(',')) {
                let c: usize = c.trim().parse().unwrap();
                documented[c] = Some(n.trim().to_string());
            }
        }
        let names: Vec<Option<String>> =
            ts.iter().map(|t| Some(t.mnemonic().to_string())).collect();
        assert_eq!(documented, names);
    }
}
