//! The op table: the one place an op's signature is declared. Each row of
//! [`op_table!`]'s invocation in [`crate::ops`] gives an op its variant (with its
//! documentation), its plan opcode, its text mnemonic and its fields in their stored
//! order, each with its *kind*:
//!
//! | kind | Rust type | plan message ([`crate::plan`]) | text |
//! |---|---|---|---|
//! | `operand` | `V` | an entry of `operands` | `%name`, comma-separated |
//! | `optional` | `Option<V>` | an entry of `operands` if present (the last operand) | `, %name` |
//! | `operands` | `Vec<V>` | every remaining entry of `operands` | `%a, %b, …` |
//! | `attr` | `u32`/`u64`/`usize` | an entry of `attrs` | `key=7` |
//! | `flag` | `bool` | an entry of `attrs` (0/1) | `key` when true |
//! | `list` | `Vec<usize>` | every remaining entry of `attrs` (the last attribute) | `key=[1, 2]` |
//! | `int` | `i64` | `int` | `key=-3` |
//! | `float` | `f32` | `float` | `key=1e-5` |
//! | `label` | `String` | `label` | `"text"` |
//! | `ty` | [`Type`] | the instruction's type | the instruction's type |
//! | `const_id` | [`ConstId`] | an entry of `attrs` | the data, or `withheld` |
//! | `conv` | [`Conv2d`] | strides(2), pads(4), dilations(2), groups | `strides=[..] pads=[..] dilations=[..] groups=g` |
//! | `pool` | [`Pool2d`] | kernel(2), strides(2), pads(4), ceil_mode | `kernel=[..] strides=[..] pads=[..]` and `ceil_mode` |
//! | `fill(x)` | [`Scalar`] of operand `x`'s encoding | `int`, or `float` for f32 | `key=0` or `key=0.5` |
//!
//! From the table come the [`Op`](super::Op) enum, its mnemonic, opcode, operands and operand
//! mapping, the decoder's template of each opcode, and one walk over an op's fields
//! ([`Fields`]) that the plan encoder and decoder ([`crate::plan`]), the text printer and
//! the text reader ([`crate::text`]) each implement, so no direction can disagree with
//! another. Adding an op is one row here (plus its semantics: the type checker, the
//! interpreter, its [`crate::schedule::Step`]); operands come before attributes, and a
//! new opcode is the next unused number (existing plans keep their bytes).

use super::{Conv2d, Pool2d, Scalar};
use crate::id::{ConstId, ValueId};
use crate::types::Type;
use std::fmt::Display;

/// An integer attribute type and its `u64` form in a plan's `attrs` (booleans are 0/1).
pub(crate) trait Attr: Copy + Display {
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

/// The function of a `spline` (its code, [`crate::spline::SplineFn::code`]).
impl Attr for crate::spline::SplineFn {
    const OUT_OF_RANGE: &'static str = "unknown spline function (0 erf, 1 gelu, 2 gelu tanh)";
    fn to_u64(self) -> u64 {
        self.code()
    }
    fn from_u64(v: u64) -> Option<Self> {
        crate::spline::SplineFn::from_code(v)
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

/// Visits an op's fields in their stored order ([`Op::fields`](super::Op::fields)), one method per kind
/// of the table; `key` is the field's name (its key in the text format). A writer
/// reads the fields, a reader overwrites them.
pub(crate) trait Fields {
    /// Why a field cannot be read (never, for a writer).
    type Error;
    /// One operand.
    fn operand(&mut self, v: &mut ValueId) -> Result<(), Self::Error>;
    /// An optional operand (a bias), present or not: always the last one.
    fn optional(&mut self, v: &mut Option<ValueId>) -> Result<(), Self::Error>;
    /// Every remaining operand (of `concat`).
    fn operand_list(&mut self, v: &mut Vec<ValueId>) -> Result<(), Self::Error>;
    /// An integer attribute.
    fn attr<T: Attr>(&mut self, key: &'static str, v: &mut T) -> Result<(), Self::Error>;
    /// A boolean attribute (by default an integer one, 0/1).
    fn flag(&mut self, key: &'static str, v: &mut bool) -> Result<(), Self::Error> {
        self.attr(key, v)
    }
    /// A fixed number of integer attributes (by default one [`Fields::attr`] each).
    fn array<const N: usize>(
        &mut self,
        key: &'static str,
        v: &mut [usize; N],
    ) -> Result<(), Self::Error> {
        v.iter_mut().try_for_each(|a| self.attr(key, a))
    }
    /// Every remaining integer attribute.
    fn list(&mut self, key: &'static str, v: &mut Vec<usize>) -> Result<(), Self::Error>;
    /// The signed attribute.
    fn int(&mut self, key: &'static str, v: &mut i64) -> Result<(), Self::Error>;
    /// The float attribute.
    fn float(&mut self, key: &'static str, v: &mut f32) -> Result<(), Self::Error>;
    /// The label (an external name).
    fn label(&mut self, v: &mut String) -> Result<(), Self::Error>;
    /// The instruction's type (stored in the instruction, not in the op).
    fn ty(&mut self, v: &mut Type);
    /// A constant-table id.
    fn const_id(&mut self, v: &mut ConstId) -> Result<(), Self::Error>;
    /// A fill value of operand `x`'s encoding.
    fn fill(&mut self, key: &'static str, v: &mut Scalar, x: ValueId) -> Result<(), Self::Error>;

    /// A convolution's strides, pads, dilations and groups.
    fn conv(&mut self, c: &mut Conv2d) -> Result<(), Self::Error> {
        self.array("strides", &mut c.strides)?;
        self.array("pads", &mut c.pads)?;
        self.array("dilations", &mut c.dilations)?;
        self.attr("groups", &mut c.groups)
    }
    /// A pooling window: kernel, strides, pads, ceil_mode.
    fn pool(&mut self, p: &mut Pool2d) -> Result<(), Self::Error> {
        self.array("kernel", &mut p.kernel)?;
        self.array("strides", &mut p.strides)?;
        self.array("pads", &mut p.pads)?;
        self.flag("ceil_mode", &mut p.ceil_mode)
    }
}

/// The operands of one field, by kind, appended to `out` with their labels.
macro_rules! field_operands {
    (operand, $name:expr, $v:ident, $out:ident) => {
        $out.push(($name.to_string(), $v))
    };
    (optional, $name:expr, $v:ident, $out:ident) => {
        $out.extend($v.iter().map(|b| ($name.to_string(), b)))
    };
    (operands, $name:expr, $v:ident, $out:ident) => {
        $out.extend(
            $v.iter()
                .enumerate()
                .map(|(i, x)| (format!("{}[{i}]", $name), x)),
        )
    };
    ($other:ident, $name:expr, $v:ident, $out:ident) => {};
}

/// One field with its operands mapped through `f`, by kind.
macro_rules! field_map {
    (operand, $v:ident, $f:ident) => {
        $f($v)?
    };
    (optional, $v:ident, $f:ident) => {
        $v.as_ref().map(&mut $f).transpose()?
    };
    (operands, $v:ident, $f:ident) => {
        $v.iter().map(&mut $f).collect::<Result<_, _>>()?
    };
    ($other:ident, $v:ident, $f:ident) => {
        $v.clone()
    };
}

/// A placeholder value of one field, by kind (the decoders' templates).
macro_rules! field_placeholder {
    (operand, $ty:ident) => {
        ValueId(0)
    };
    (optional, $ty:ident) => {
        None
    };
    (ty, $ty:ident) => {
        $ty.clone()
    };
    (const_id, $ty:ident) => {
        ConstId(0)
    };
    (conv, $ty:ident) => {
        Conv2d {
            strides: [0; 2],
            pads: [0; 4],
            dilations: [0; 2],
            groups: 0,
        }
    };
    (pool, $ty:ident) => {
        Pool2d {
            kernel: [0; 2],
            strides: [0; 2],
            pads: [0; 4],
            ceil_mode: false,
        }
    };
    (fill, $ty:ident) => {
        Scalar::Int(0)
    };
    ($other:ident, $ty:ident) => {
        Default::default()
    };
}

/// The visit of one field, by kind.
macro_rules! field_visit {
    (operand, $key:expr, $v:ident, $f:ident) => {
        $f.operand($v)?
    };
    (optional, $key:expr, $v:ident, $f:ident) => {
        $f.optional($v)?
    };
    (operands, $key:expr, $v:ident, $f:ident) => {
        $f.operand_list($v)?
    };
    (attr, $key:expr, $v:ident, $f:ident) => {
        $f.attr($key, $v)?
    };
    (flag, $key:expr, $v:ident, $f:ident) => {
        $f.flag($key, $v)?
    };
    (list, $key:expr, $v:ident, $f:ident) => {
        $f.list($key, $v)?
    };
    (int, $key:expr, $v:ident, $f:ident) => {
        $f.int($key, $v)?
    };
    (float, $key:expr, $v:ident, $f:ident) => {
        $f.float($key, $v)?
    };
    (label, $key:expr, $v:ident, $f:ident) => {
        $f.label($v)?
    };
    (ty, $key:expr, $v:ident, $f:ident) => {
        $f.ty($v)
    };
    (const_id, $key:expr, $v:ident, $f:ident) => {
        $f.const_id($v)?
    };
    (conv, $key:expr, $v:ident, $f:ident) => {
        $f.conv($v)?
    };
    (pool, $key:expr, $v:ident, $f:ident) => {
        $f.pool($v)?
    };
    (fill ($x:ident), $key:expr, $v:ident, $f:ident) => {
        $f.fill($key, $v, *$x)?
    };
}

/// Declares the ops (see the [module documentation](self)): the `Op` enum and everything
/// derived from its signatures.
///
macro_rules! op_table {
    (
        $(#[$meta:meta])*
        pub enum Op<V = ValueId> {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $code:literal $mnemonic:literal {
                    $(
                        $(#[$fmeta:meta])*
                        $field:ident : $fty:ty => $kind:ident $(($karg:ident))?
                    ),* $(,)?
                }
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum Op<V = ValueId> {
            $(
                $(#[$vmeta])*
                $variant {
                    $( $(#[$fmeta])* $field: $fty, )*
                },
            )*
        }

        /// Every op's opcode and mnemonic, in the table's order.
        pub const OPCODES: &[(u32, &str)] = &[$(($code, $mnemonic)),*];

        impl<V> Op<V> {
            /// The op's mnemonic, as in the text format (`conv2d`, `matmul`, ...).
            pub fn mnemonic(&self) -> &'static str {
                match self {
                    $(Op::$variant { .. } => $mnemonic,)*
                }
            }

            /// The op's opcode in plan files.
            pub fn opcode(&self) -> u32 {
                match self {
                    $(Op::$variant { .. } => $code,)*
                }
            }

            /// The operands with a label for each (`x`, `w`, `bias`, `xs[2]`, ...), in
            /// order.
            #[allow(unused_variables)]
            pub fn labeled_operands(&self) -> Vec<(String, &V)> {
                let mut out = Vec::new();
                match self {
                    $(Op::$variant { $($field),* } => {
                        $( field_operands!($kind, stringify!($field), $field, out); )*
                    })*
                }
                out
            }

            /// The same op with every operand mapped through `f` (stops at the first
            /// error). Passes use it to remap operands into a new program.
            pub fn try_map_operands<W, E>(
                &self,
                mut f: impl FnMut(&V) -> Result<W, E>,
            ) -> Result<Op<W>, E> {
                Ok(match self {
                    $(Op::$variant { $($field),* } => Op::$variant {
                        $( $field: field_map!($kind, $field, f), )*
                    },)*
                })
            }
        }

        impl Op {
            /// The op of opcode `code` with placeholder operands and attributes (an
            /// instruction of type `ty`), for a reader to fill in with
            /// [`Op::fields`]; `None` for an unknown opcode.
            pub(crate) fn template(code: u32, ty: &Type) -> Option<Op> {
                match code {
                    $($code => Some(Op::$variant {
                        $( $field: field_placeholder!($kind, ty), )*
                    }),)*
                    _ => None,
                }
            }

            /// Visits the op's fields in their stored order (operands first).
            pub(crate) fn fields<F: Fields>(&mut self, f: &mut F) -> Result<(), F::Error> {
                match self {
                    $(Op::$variant { $($field),* } => {
                        $( field_visit!($kind $(($karg))?, stringify!($field), $field, f); )*
                    })*
                }
                Ok(())
            }
        }
    };
}
