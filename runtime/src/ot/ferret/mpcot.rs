//! Multi-point COT with regular noise: `t` single-point COTs ([`super::spcot`])
//! of `2^h` leaves side by side (Ferret, Yang, Weng, Lan, Zhang, Wang, CCS
//! 2020, §5, the regular-noise `F_{MPCOT}`; semi-honest).
//!
//! The output over `n = t·2^h` positions: the sender gets `v`, the receiver
//! a noise vector `e` with exactly one 1 in each block of `2^h` (at `α_τ` in
//! tree `τ`) and `w = v ⊕ e·Δ`. Tree `τ` consumes the `h` base COTs
//! `base[τh..(τ+1)h]`; the receiver's random choice bits `b_i` of these fix
//! the noise position, `α_i = ¬b_i`, so the receiver sends nothing (as in
//! Ferret). The sender masks the level sums with the base COTs' pads, `c_b^i
//! = K_b^i ⊕ H(j_i, q_i ⊕ b·Δ)` ([`Tccr`] with the COT's never-reused index
//! `j_i`), from which the receiver opens `K_{b_i}^i = K_{¬α_i}^i`, and sends
//! `ψ = Δ ⊕ ⊕_j v_j`, from which the receiver gets `w_α = ψ ⊕ ⊕_{j≠α} v_j =
//! v_α ⊕ Δ`. One message of `t·(2h + 1)` blocks.
//!
//! Block convention (as emp-ot's): the sender's `q` and leaves have low bit
//! 0 and `Δ` has low bit 1, so a receiver's block carries its choice bit in
//! its low bit, and XORs of COTs (the LPN encoding) carry it along.

use super::super::OtError;
use super::spcot;
use crate::crypto::{Block, Mmo, Prg, Tccr};
use crate::net::Channel;
use sci_ir::cost::ferret::LpnParams;

/// The low bit, which carries the choice bit.
const LSB: Block = Block(1);

/// Scratch buffers of a side, kept across iterations.
#[derive(Default)]
pub(crate) struct Scratch {
    pads: [Vec<Block>; 2],
    msg: Vec<u8>,
}

/// The hashed pads `H(tweak0 + i, base[i] ⊕ x)` of the base COTs.
fn pads(tccr: &Tccr, base: &[Block], x: Block, tweak0: u128, out: &mut Vec<Block>) {
    out.clear();
    out.extend(base.iter().map(|b| *b ^ x));
    tccr.hash_in_place(tweak0, out);
}

/// The sender's side: writes `v` into `out` (`p.n()` blocks) and sends the
/// level messages, `base` being the sender's `q` of the `t·h` base COTs,
/// numbered from `tweak0`. Tree seeds from `prg`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn send(
    ch: &mut Channel,
    (mmo, tccr): (&Mmo, &Tccr),
    prg: &mut Prg,
    delta: Block,
    p: &LpnParams,
    base: &[Block],
    tweak0: u128,
    out: &mut [Block],
    s: &mut Scratch,
) -> Result<(), OtError> {
    let h = p.log_leaves as usize;
    let Scratch {
        pads: [y0, y1],
        msg,
    } = s;
    pads(tccr, base, Block::ZERO, tweak0, y0);
    pads(tccr, base, delta, tweak0, y1);
    msg.clear();
    let mut sums = vec![[Block::ZERO; 2]; h];
    for (tau, leaves) in out.chunks_exact_mut(1 << h).enumerate() {
        spcot::expand(mmo, prg.next_block(), leaves, &mut sums);
        let mut psi = delta;
        for v in leaves.iter_mut() {
            *v &= !LSB;
            psi ^= *v;
        }
        for (i, [k0, k1]) in sums.iter().enumerate() {
            let j = tau * h + i;
            msg.extend_from_slice(&(*k0 ^ y0[j]).to_bytes());
            msg.extend_from_slice(&(*k1 ^ y1[j]).to_bytes());
        }
        msg.extend_from_slice(&psi.to_bytes());
    }
    ch.send(msg)?;
    Ok(ch.flush()?)
}

/// The receiver's side: writes `w` into `out` (`p.n()` blocks), `base` being
/// the receiver's `t = q ⊕ b·Δ` of the `t·h` base COTs (choice bit `b` in the
/// low bit).
pub(crate) fn recv(
    ch: &mut Channel,
    (mmo, tccr): (&Mmo, &Tccr),
    p: &LpnParams,
    base: &[Block],
    tweak0: u128,
    out: &mut [Block],
    s: &mut Scratch,
) -> Result<(), OtError> {
    let h = p.log_leaves as usize;
    let Scratch { pads: [y, _], msg } = s;
    msg.resize(p.iteration_bytes() as usize, 0);
    ch.recv(msg)?;
    pads(tccr, base, Block::ZERO, tweak0, y);
    let block =
        |k: usize| Block::from_bytes(msg[16 * k..16 * k + 16].try_into().expect("16 bytes"));
    let mut keys = vec![Block::ZERO; h];
    for (tau, leaves) in out.chunks_exact_mut(1 << h).enumerate() {
        let first = tau * (2 * h + 1);
        let mut alpha = 0;
        for (i, key) in keys.iter_mut().enumerate() {
            let j = tau * h + i;
            let b = base[j].bit(0);
            alpha = 2 * alpha + usize::from(!b);
            *key = block(first + 2 * i + usize::from(b)) ^ y[j];
        }
        spcot::punctured(mmo, alpha, &keys, leaves);
        let mut w = block(first + 2 * h);
        for v in leaves.iter_mut() {
            *v &= !LSB;
            w ^= *v;
        }
        leaves[alpha] = w;
    }
    Ok(())
}
