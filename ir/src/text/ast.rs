//! The parse tree of the text format, before names are resolved and the program is
//! type-checked by the [`crate::Builder`].

use crate::types::Type;

/// A value name with its byte offset in the source.
pub(crate) type Name = (String, usize);

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
    /// `const withheld` (`None`: withheld server data) or `const [data]`.
    Const(Option<Vec<Num>>),
    /// Any other op as written: its mnemonic, operand names and attributes, read into
    /// an op by the op table's walk once the operands are resolved.
    Op {
        mnemonic: Name,
        operands: Vec<Name>,
        args: Vec<Arg>,
    },
}

/// An attribute as written after an op's operands.
pub(crate) enum Arg {
    /// `key=value`.
    Value { key: Name, value: Value },
    /// `key` alone (a flag that is set).
    Flag(Name),
    /// `"text"` (a label: an external name).
    Label { text: String, loc: usize },
}

impl Arg {
    /// The key and its position (a label has none).
    pub fn key(&self) -> Option<&Name> {
        match self {
            Arg::Value { key, .. } | Arg::Flag(key) => Some(key),
            Arg::Label { .. } => None,
        }
    }

    /// The position of the attribute in the source.
    pub fn loc(&self) -> usize {
        match self {
            Arg::Value { key, .. } | Arg::Flag(key) => key.1,
            Arg::Label { loc, .. } => *loc,
        }
    }
}

/// The value of a `key=value` attribute.
pub(crate) enum Value {
    /// A number.
    Num(Num),
    /// `[n, …]`, with the position of its `[`.
    List { items: Vec<Num>, loc: usize },
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
