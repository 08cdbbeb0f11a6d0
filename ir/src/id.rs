//! Identifiers of a program's values and constant-table entries: the indices every
//! other module ([`crate::ops`], [`crate::check`], [`crate::program`], ...) names
//! operands and constants by.

use std::fmt;

/// A value of a program: the index of the instruction that defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub(crate) u32);

impl ValueId {
    /// The index of the defining instruction in [`crate::Program::instrs`] (use it to index
    /// per-value side tables).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ValueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// An entry of a program's constant table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConstId(pub(crate) u32);

impl ConstId {
    /// The index in the constant table.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
