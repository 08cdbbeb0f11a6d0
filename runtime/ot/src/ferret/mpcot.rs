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
use sci_ir::params::ferret::LpnParams;
use sci_net::Outbox;
use sci_net::crypto::{Block, Mmo, Prg, Tccr};

/// The low bit, which carries the choice bit.
const LSB: Block = Block(1);

/// Scratch buffers of a side, kept across iterations: the hashed pads, the
/// message, and the sender's tree seeds and one tree.
#[derive(Default)]
pub(crate) struct Scratch {
    pads: [Vec<Block>; 2],
    pub(crate) msg: Vec<u8>,
    seeds: Vec<Block>,
    tree: Vec<Block>,
    sums: Vec<[Block; 2]>,
}

/// One iteration as a side sees it: the hashes, the parameters, and the
/// side's `t·h` base COTs numbered from `tweak`.
pub(crate) struct Iteration<'a> {
    pub(crate) mmo: &'a Mmo,
    pub(crate) tccr: &'a Tccr,
    pub(crate) p: LpnParams,
    pub(crate) base: &'a [Block],
    pub(crate) tweak: u128,
}

/// The hashed pads `H(tweak0 + i, base[i] ⊕ x)` of the base COTs.
fn pads(tccr: &Tccr, base: &[Block], x: Block, tweak0: u128, out: &mut Vec<Block>) {
    out.clear();
    out.extend(base.iter().map(|b| *b ^ x));
    tccr.hash_in_place(tweak0, out);
}

/// Expands the GGM tree of `seed` into `leaves` (low bits cleared) and its
/// level sums into `sums`; returns `Δ ⊕ ⊕ leaves`.
fn sender_tree(
    mmo: &Mmo,
    delta: Block,
    seed: Block,
    leaves: &mut [Block],
    sums: &mut [[Block; 2]],
) -> Block {
    spcot::expand(mmo, seed, leaves, sums);
    leaves.iter_mut().fold(delta, |psi, v| {
        *v &= !LSB;
        psi ^ *v
    })
}

/// The sender's message of an iteration, sent at once (the announcement;
/// the outputs follow from [`Trees::sender`] later): draws the `t` tree seeds
/// from `prg` (kept in `s`), expands each tree and sends its level sums
/// masked with the pads of the base COTs (the sender's `q`) and `ψ`,
/// `p.iteration_bytes()` bytes.
pub(crate) fn announce(
    out: &mut impl Outbox,
    it: &Iteration<'_>,
    prg: &mut Prg,
    delta: Block,
    s: &mut Scratch,
) -> Result<(), OtError> {
    let Iteration {
        mmo,
        tccr,
        p,
        base,
        tweak,
    } = *it;
    let h = p.log_leaves as usize;
    let Scratch {
        pads: [y0, y1],
        msg,
        seeds,
        tree,
        sums,
    } = s;
    pads(tccr, base, Block::ZERO, tweak, y0);
    pads(tccr, base, delta, tweak, y1);
    seeds.clear();
    seeds.extend((0..p.t).map(|_| prg.next_block()));
    tree.resize(1 << h, Block::ZERO);
    sums.resize(h, [Block::ZERO; 2]);
    msg.clear();
    for (tau, seed) in seeds.iter().enumerate() {
        let psi = sender_tree(mmo, delta, *seed, tree, sums);
        for (i, [k0, k1]) in sums.iter().enumerate() {
            let j = tau * h + i;
            msg.extend_from_slice(&(*k0 ^ y0[j]).to_bytes());
            msg.extend_from_slice(&(*k1 ^ y1[j]).to_bytes());
        }
        msg.extend_from_slice(&psi.to_bytes());
    }
    out.send(msg)?;
    Ok(out.flush()?)
}

/// An opened iteration of the multi-point COT: what a side keeps to write
/// its `n` outputs tree by tree, in any order ([`Trees::write`]), so that
/// they can be generated lazily.
pub(crate) enum Trees {
    /// The sender's: `Δ` and the `t` tree seeds drawn by [`announce`].
    Sender { delta: Block, seeds: Vec<Block> },
    /// The receiver's, opened from the sender's message: per tree `τ` its
    /// punctured point `α_τ`, its `h` keys `K_{¬α_i}^i` and `ψ_τ`.
    Receiver {
        alpha: Vec<usize>,
        keys: Vec<Block>,
        psi: Vec<Block>,
    },
}

impl Trees {
    /// The sender's trees of the last [`announce`]d iteration (its seeds,
    /// taken from `s`).
    pub(crate) fn sender(delta: Block, s: &mut Scratch) -> Trees {
        Trees::Sender {
            delta,
            seeds: std::mem::take(&mut s.seeds),
        }
    }

    /// The receiver's trees of iteration `it` from the sender's message in
    /// `s.msg`, the base COTs being the receiver's `t = q ⊕ b·Δ` (choice
    /// bit `b` in the low bit): opens each level's key `K_{b_i}^i =
    /// K_{¬α_i}^i` with the pad `H(j_i, t_i)`. Cost: `t·h` hashes.
    pub(crate) fn receiver(it: &Iteration<'_>, s: &mut Scratch) -> Trees {
        let (p, base) = (it.p, it.base);
        let h = p.log_leaves as usize;
        let Scratch {
            pads: [y, _], msg, ..
        } = s;
        debug_assert_eq!(msg.len() as u64, p.iteration_bytes());
        pads(it.tccr, base, Block::ZERO, it.tweak, y);
        let block =
            |k: usize| Block::from_bytes(msg[16 * k..16 * k + 16].try_into().expect("16 bytes"));
        let (mut alpha, mut keys, mut psi) = (
            Vec::with_capacity(p.t),
            Vec::with_capacity(p.t * h),
            Vec::with_capacity(p.t),
        );
        for tau in 0..p.t {
            let first = tau * (2 * h + 1);
            let mut a = 0;
            for i in 0..h {
                let j = tau * h + i;
                let b = base[j].bit(0);
                a = 2 * a + usize::from(!b);
                keys.push(block(first + 2 * i + usize::from(b)) ^ y[j]);
            }
            alpha.push(a);
            psi.push(block(first + 2 * h));
        }
        Trees::Receiver { alpha, keys, psi }
    }

    /// Writes tree `tau`'s outputs (the multi-point COT's `leaves.len() =
    /// 2^h` outputs from `tau·2^h` on) into `leaves`: the sender's `v`, the
    /// receiver's `w = v ⊕ e·Δ`; `sums` is scratch. Cost: `2^(h+1) − 2` AES
    /// blocks.
    pub(crate) fn write(
        &self,
        mmo: &Mmo,
        tau: usize,
        leaves: &mut [Block],
        sums: &mut Vec<[Block; 2]>,
    ) {
        let h = leaves.len().trailing_zeros() as usize;
        match self {
            Trees::Sender { delta, seeds } => {
                sums.resize(h, [Block::ZERO; 2]);
                sender_tree(mmo, *delta, seeds[tau], leaves, sums);
            }
            Trees::Receiver { alpha, keys, psi } => {
                let a = alpha[tau];
                spcot::punctured(mmo, a, &keys[tau * h..(tau + 1) * h], leaves);
                let mut w = psi[tau];
                for v in leaves.iter_mut() {
                    *v &= !LSB;
                    w ^= *v;
                }
                leaves[a] = w;
            }
        }
    }
}
