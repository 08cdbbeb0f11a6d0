//! The parse tree of the text format, before names are resolved and the program is
//! type-checked by the [`crate::Builder`].

use crate::ops::Op;
use crate::types::Type;

/// A value name with its byte offset in the source.
pub(crate) type Name = (String, usize);

/// Two sizes (strides, dilations, kernels).
pub(crate) type U2 = [usize; 2];

/// Four sizes (pads: top, left, bottom, right).
pub(crate) type U4 = [usize; 4];

/// A numeric literal as written: its sign and text (integer or float syntax).
#[derive(Clone, Debug)]
pub(crate) struct Num {
    pub neg: bool,
    pub text: String,
    pub loc: usize,
}

impl Num {
    /// Whether the literal is written as an integer (no `.`, exponent, `inf` or `nan`).
    pub fn is_int(&self) -> bool {
        self.text.bytes().all(|b| b.is_ascii_digit())
    }
}

/// The right-hand side of an instruction.
pub(crate) enum Body {
    Input(String),
    /// `None`: withheld server data.
    Const(Option<Vec<Num>>),
    /// Any other op, with value names as operands. `Pad` carries its fill value
    /// separately because its kind depends on the literal.
    Op(Op<Name>),
    Pad {
        x: Name,
        pads: Vec<usize>,
        value: Num,
    },
}

/// One instruction: `%name: type = body [linear=backend]`.
pub(crate) struct RawInstr {
    pub name: Name,
    pub ty: Type,
    pub body: Body,
    /// The product's backend if it differs from the program's.
    pub linear: Option<crate::backend::Backend>,
}

/// A parsed file.
pub(crate) struct RawProgram {
    pub params: Option<(u32, u32, crate::backend::Backend, crate::backend::OtKind)>,
    pub instrs: Vec<RawInstr>,
}

/// Errors raised inside grammar actions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ActionError {
    pub loc: usize,
    pub message: String,
}
