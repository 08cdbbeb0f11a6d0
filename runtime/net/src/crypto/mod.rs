//! Symmetric cryptography for the OT engine: the 128-bit [`Block`], an
//! AES-128 PRG ([`Prg`]), the tweakable correlation-robust hash of
//! Guo–Katz–Wang–Yu ([`Tccr`]) for IKNP, the re-keyed AES-256 hash for the
//! 256-bit rows of Kolesnikov–Kumaresan ([`RkAes256`]), and OS randomness.
//!
//! AES comes from the `aes` 0.9 crate, which detects AES-NI (and VAES with
//! AVX-512) at run time and otherwise falls back to a constant-time software
//! implementation. The development machine of this project reports `aes`,
//! `vaes`, `avx2` and `avx512f` in `/proc/cpuinfo`, so AES-NI/VAES is used
//! there; [`aes_hardware_accelerated`] tells at run time (the benchmark
//! prints it). All AES work is done on whole slices (`encrypt_blocks`), which
//! is what lets those backends pipeline. AES-128 under a fixed key (the
//! hashes, the LPN code) runs on this crate's own kernels instead
//! (`fixed_aes.rs`), whose round keys stay in registers across calls.

mod block;
mod fixed_aes;
mod hash;
mod prg;
mod rk_aes;

pub use block::Block;
pub use block::as_aes_blocks_mut;
pub use fixed_aes::FixedAes;
pub use hash::{Mmo, RkAes256, Tccr};
pub use prg::Prg;
pub use rk_aes::{hash_rows, row_index, rows_len};

/// The operating system's randomness source failed.
#[derive(Debug, thiserror::Error)]
#[error("OS randomness unavailable: {0}")]
pub struct RandomnessError(pub getrandom::Error);

/// A fresh uniformly random block from the operating system (`getrandom`).
pub fn random_block() -> Result<Block, RandomnessError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(RandomnessError)?;
    Ok(Block::from_bytes(b))
}

/// Whether AES runs on AES-NI/VAES on this machine (else the software
/// fallback, roughly 10-20x slower).
pub fn aes_hardware_accelerated() -> bool {
    aes::hardware_accelerated()
}
