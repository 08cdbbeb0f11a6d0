//! The plan encoding of an op: its opcode and the order of its operands and attributes
//! in an [`OpMsg`] are the op table's ([`crate::ops`]: each op's row declares them). The
//! encoder and the decoder are the two plan implementations of the table's one walk
//! over an op's fields ([`Fields`]), so the two directions cannot disagree.

use super::error::{PlanError, invalid};
use super::messages::OpMsg;
use crate::id::{ConstId, ValueId};
use crate::ops::{Attr, Fields, Op, Scalar};
use crate::program::Builder;
use crate::types::Type;
use std::convert::Infallible;

/// The opcode of `const` (the decoder counts constants before decoding them).
pub(super) const CONST: u32 = 1;

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
    fn attr<T: Attr>(&mut self, _: &'static str, v: &mut T) -> Result<(), Infallible> {
        self.0.attrs.push(v.to_u64());
        Ok(())
    }
    fn list(&mut self, _: &'static str, v: &mut Vec<usize>) -> Result<(), Infallible> {
        self.0.attrs.extend(v.iter().map(|&a| a as u64));
        Ok(())
    }
    fn int(&mut self, _: &'static str, v: &mut i64) -> Result<(), Infallible> {
        self.0.int = *v;
        Ok(())
    }
    fn float(&mut self, _: &'static str, v: &mut f32) -> Result<(), Infallible> {
        self.0.float = *v;
        Ok(())
    }
    fn label(&mut self, v: &mut String) -> Result<(), Infallible> {
        self.0.label.clone_from(v);
        Ok(())
    }
    fn ty(&mut self, _: &mut Type) {}
    fn const_id(&mut self, v: &mut ConstId) -> Result<(), Infallible> {
        self.0.attrs.push(u64::from(v.0));
        Ok(())
    }
    fn fill(&mut self, _: &'static str, v: &mut Scalar, _: ValueId) -> Result<(), Infallible> {
        match *v {
            Scalar::Int(i) => self.0.int = i,
            Scalar::F32(x) => self.0.float = x,
        }
        Ok(())
    }
}

/// The message of `op`. Cost: linear in its operands and attributes.
pub(super) fn encode(op: &Op) -> OpMsg {
    let mut e = Encoder(OpMsg {
        opcode: op.opcode(),
        ..OpMsg::default()
    });
    // The walk takes `&mut` (shared with the decoder); encoding only reads.
    match op.clone().fields(&mut e) {
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
    fn attr<T: Attr>(&mut self, _: &'static str, v: &mut T) -> Result<(), PlanError> {
        let a = self.next_attr()?;
        *v = T::from_u64(a).ok_or_else(|| invalid(self.index, T::OUT_OF_RANGE))?;
        Ok(())
    }
    fn list(&mut self, key: &'static str, v: &mut Vec<usize>) -> Result<(), PlanError> {
        v.clear();
        while self.attr_pos < self.m.attrs.len() {
            let mut a = 0;
            self.attr(key, &mut a)?;
            v.push(a);
        }
        Ok(())
    }
    fn int(&mut self, _: &'static str, v: &mut i64) -> Result<(), PlanError> {
        *v = self.m.int;
        Ok(())
    }
    fn float(&mut self, _: &'static str, v: &mut f32) -> Result<(), PlanError> {
        *v = self.m.float;
        Ok(())
    }
    fn label(&mut self, v: &mut String) -> Result<(), PlanError> {
        v.clone_from(&self.m.label);
        Ok(())
    }
    fn ty(&mut self, v: &mut Type) {
        v.clone_from(self.ty);
    }
    fn const_id(&mut self, v: &mut ConstId) -> Result<(), PlanError> {
        let mut raw = 0;
        self.attr("id", &mut raw)?;
        *v = (self.konst)(self.b, raw)?;
        Ok(())
    }
    fn fill(&mut self, _: &'static str, v: &mut Scalar, x: ValueId) -> Result<(), PlanError> {
        *v = match self.b.get_ty(x).map(|t| t.encoding().is_real()) {
            Some(true) => Scalar::F32(self.m.float),
            _ => Scalar::Int(self.m.int),
        };
        Ok(())
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
    let mut op = Op::template(m.opcode, ty)
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
    op.fields(&mut d)?;
    d.finish()?;
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::OPCODES;
    use crate::types::Owner;
    use std::mem::discriminant;

    /// The table gives every opcode from 0 once, `const` is [`CONST`], mnemonics are
    /// unique, and each opcode's template is its own op.
    #[test]
    fn the_table_numbers_every_op_once() {
        let ty = Type::real(vec![1], Owner::Client).unwrap();
        let mut codes: Vec<u32> = OPCODES.iter().map(|&(c, _)| c).collect();
        codes.sort_unstable();
        assert_eq!(codes, (0..OPCODES.len() as u32).collect::<Vec<_>>());
        let ts: Vec<Op> = (0..OPCODES.len() as u32)
            .map(|c| Op::template(c, &ty).unwrap())
            .collect();
        for (i, t) in ts.iter().enumerate() {
            assert_eq!(t.opcode(), i as u32);
            assert!(ts[..i].iter().all(|u| discriminant(u) != discriminant(t)));
            assert!(ts[..i].iter().all(|u| u.mnemonic() != t.mnemonic()));
        }
        assert_eq!(ts[CONST as usize].mnemonic(), "const");
        assert!(Op::template(OPCODES.len() as u32, &ty).is_none());
    }
}
