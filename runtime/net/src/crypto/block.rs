//! The 128-bit [`Block`] and its zero-copy view as AES blocks.
//!
//! This module holds three `unsafe` operations: reinterpreting a slice of
//! [`Block`]s as a slice of the `aes` crate's 16-byte blocks, so that AES runs
//! in place on our data (`encrypt_blocks` on whole slices is what makes the
//! AES-NI/VAES backends fast), and as a slice of 64-bit words or of bytes. All are
//! tested against a copy below.

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

#[cfg(target_endian = "big")]
compile_error!("sci-runtime assumes a little-endian host (Block bytes are u128 memory)");

/// A 128-bit value: an AES block, a row of the OT-extension matrix, a seed.
///
/// Bit `i` is bit `i` of the `u128` (bit `i % 8` of byte `i / 8` of the
/// little-endian byte form).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Block(pub u128);

impl Block {
    /// All zeros.
    pub const ZERO: Block = Block(0);
    /// All ones.
    pub const ONES: Block = Block(u128::MAX);

    /// From 16 little-endian bytes.
    #[inline]
    pub fn from_bytes(b: [u8; 16]) -> Block {
        Block(u128::from_le_bytes(b))
    }

    /// To 16 little-endian bytes.
    #[inline]
    pub fn to_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    /// From two 64-bit halves.
    #[inline]
    pub fn from_u64s(lo: u64, hi: u64) -> Block {
        Block(lo as u128 | ((hi as u128) << 64))
    }

    /// Low 64 bits.
    #[inline]
    pub fn lo(self) -> u64 {
        self.0 as u64
    }

    /// High 64 bits.
    #[inline]
    pub fn hi(self) -> u64 {
        (self.0 >> 64) as u64
    }

    /// Bit `i` (0..128).
    #[inline]
    pub fn bit(self, i: usize) -> bool {
        (self.0 >> (i & 127)) & 1 == 1
    }

    /// The blocks as 64-bit words: block `t` gives words `2t` (its low half,
    /// [`Block::lo`]) and `2t + 1` ([`Block::hi`]).
    #[inline]
    pub fn as_words(b: &[Block]) -> &[u64] {
        // SAFETY: `Block` is `repr(transparent)` over `u128`: 16 bytes, align
        // 16, so `2·len` `u64`s (8 bytes, align 8) fit exactly with their
        // alignment met, every bit pattern is valid for both, and the shared
        // borrow is carried over. On the little-endian hosts we support (the
        // `compile_error!` above), word `2t` is the low half of block `t`.
        unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<u64>(), 2 * b.len()) }
    }

    /// The blocks as 32-bit words: block `t` gives words `4t .. 4t + 4`, from
    /// its low end up (word `2t` and `2t + 1` of [`Block::as_words`] are the
    /// low and high halves of its word `t`).
    #[inline]
    pub fn as_u32s(b: &[Block]) -> &[u32] {
        // SAFETY: `Block` is `repr(transparent)` over `u128`: 16 bytes, align
        // 16, so `4·len` `u32`s (4 bytes, align 4) fit exactly with their
        // alignment met, every bit pattern is valid for both, and the shared
        // borrow is carried over. On the little-endian hosts we support, word
        // `4t + k` is bits `32k .. 32k + 32` of block `t`.
        unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<u32>(), 4 * b.len()) }
    }

    /// The blocks as bytes: block `t` gives bytes `16t .. 16t + 16`, its
    /// little-endian form ([`Block::to_bytes`]), so bit `i` of the
    /// sequence is bit `i % 128` of block `i / 128`.
    #[inline]
    pub fn as_bytes(b: &[Block]) -> &[u8] {
        // SAFETY: `Block` is `repr(transparent)` over `u128`: 16 bytes, so
        // `16·len` bytes (align 1) fit exactly, every bit pattern is valid,
        // and the shared borrow is carried over. On the little-endian hosts
        // we support, byte `16t + k` is byte `k` of `to_bytes` of block `t`.
        unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<u8>(), 16 * b.len()) }
    }

    /// All ones if `b`, else all zeros.
    #[inline]
    pub fn splat(b: bool) -> Block {
        Block((b as u128).wrapping_neg())
    }
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Block({:032x})", self.0)
    }
}

impl From<u128> for Block {
    fn from(x: u128) -> Block {
        Block(x)
    }
}

impl From<Block> for u128 {
    fn from(b: Block) -> u128 {
        b.0
    }
}

macro_rules! bitop {
    ($tr:ident, $f:ident, $tra:ident, $fa:ident, $op:tt) => {
        impl $tr for Block {
            type Output = Block;
            #[inline]
            fn $f(self, o: Block) -> Block {
                Block(self.0 $op o.0)
            }
        }
        impl $tra for Block {
            #[inline]
            fn $fa(&mut self, o: Block) {
                self.0 = self.0 $op o.0;
            }
        }
    };
}
bitop!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);
bitop!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bitop!(BitOr, bitor, BitOrAssign, bitor_assign, |);

impl Not for Block {
    type Output = Block;
    #[inline]
    fn not(self) -> Block {
        Block(!self.0)
    }
}

/// Views blocks as AES blocks, for in-place encryption.
#[inline]
pub fn as_aes_blocks_mut(b: &mut [Block]) -> &mut [aes::Block] {
    // SAFETY: `Block` is `repr(transparent)` over `u128`: 16 bytes, align 16,
    // every bit pattern valid. `aes::Block` is `hybrid_array::Array<u8, U16>`,
    // `repr(transparent)` over `[u8; 16]`: 16 bytes, align 1, every bit pattern
    // valid. So the cast keeps the length in bytes, only lowers the alignment
    // requirement, and the exclusive borrow is carried over. On the
    // little-endian hosts we support (see the `compile_error!` above), byte `k`
    // of the AES block is byte `k` of `Block::to_bytes`.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast::<aes::Block>(), b.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::{BlockCipherEncrypt, KeyInit};

    #[test]
    fn aes_view_matches_bytes() {
        let aes = aes::Aes128::new(&[7u8; 16].into());
        let mut blocks: Vec<Block> = (0..37u128)
            .map(|i| Block(i * 0x1234_5678_9abc_def1))
            .collect();
        let expected: Vec<Block> = blocks
            .iter()
            .map(|b| {
                let mut a = aes::Block::from(b.to_bytes());
                aes.encrypt_block(&mut a);
                Block::from_bytes(a.into())
            })
            .collect();
        aes.encrypt_blocks(as_aes_blocks_mut(&mut blocks));
        assert_eq!(blocks, expected);
    }

    #[test]
    fn block_ops() {
        let a = Block::from_u64s(3, 5);
        assert_eq!(a.lo(), 3);
        assert_eq!(a.hi(), 5);
        assert!(a.bit(0) && a.bit(1) && !a.bit(2) && a.bit(64) && a.bit(66));
        assert_eq!(a ^ a, Block::ZERO);
        assert_eq!(a & Block::ONES, a);
        assert_eq!(!Block::ZERO, Block::ONES);
        assert_eq!(Block::splat(true), Block::ONES);
        assert_eq!(Block::from_bytes(a.to_bytes()), a);
        let bs = [a, Block::from_u64s(7, u64::MAX), Block::ZERO];
        let words: Vec<u64> = bs.iter().flat_map(|b| [b.lo(), b.hi()]).collect();
        assert_eq!(Block::as_words(&bs), &words[..]);
        let quarters: Vec<u32> = bs
            .iter()
            .flat_map(|b| (0..4).map(move |k| (b.0 >> (32 * k)) as u32))
            .collect();
        assert_eq!(Block::as_u32s(&bs), &quarters[..]);
        let bytes: Vec<u8> = bs.iter().flat_map(|b| b.to_bytes()).collect();
        assert_eq!(Block::as_bytes(&bs), &bytes[..]);
    }
}
