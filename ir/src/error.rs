//! The type checker's errors ([`CheckError`], [`CheckErrorKind`]), below every module
//! that reports one: the checker ([`crate::check`]), the op geometry ([`crate::ops`]),
//! the builder and the interpreter.

use crate::id::ValueId;
use crate::types::{Encoding, Owner, ShapeDisplay, TypeError};
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

/// `Ok` if no entry of `v` is 0, else an error on attribute `attr`.
pub(crate) fn positive(attr: &'static str, v: &[usize]) -> Result<(), CheckErrorKind> {
    if v.contains(&0) {
        Err(CheckErrorKind::Attribute {
            attr,
            reason: format!("{v:?} must be ≥ 1"),
        })
    } else {
        Ok(())
    }
}
