//! Single-point COT from a GGM tree: the puncturable PRF of Boyle, Couteau,
//! Gilboa, Ishai, Kohl and Scholl ("Efficient Pseudorandom Correlation
//! Generators: Silent OT Extension and More", CRYPTO 2019; CCS 2019 for the
//! OT form), as Ferret uses it (Yang, Weng, Lan, Zhang, Wang, CCS 2020, §4,
//! Fig. 5, semi-honest).
//!
//! The COT sender expands a random seed into a binary tree of depth `h`
//! with the length-doubling PRG `G(s) = h(s) ‖ h(s ⊕ 1)` (fixed-key MMO,
//! [`Mmo::expand_children`]); its outputs are the `2^h` leaves. For each level
//! `i` it computes the sums `K_0^i` (left children) and `K_1^i` (right
//! children). The receiver, with a punctured point `α`, learns
//! `K_{¬α_i}^i` by one OT per level (sent by [`super::mpcot`]) and rebuilds
//! every node off the path to `α` ([`punctured`]): all leaves but leaf `α`.
//!
//! Semi-honest only: Ferret's consistency check against a malicious sender
//! (its §4.2, a check over `F_{2^128}` with one extra COT per tree) is
//! omitted, so a malicious sender could send inconsistent level sums and
//! learn a bit of `α` from a selective failure.

use sci_net::crypto::{Block, Mmo};

/// Expands `seed` into the `leaves.len() = 2^h` leaves of its GGM tree and
/// writes the level sums `sums[i] = [K_0^{i+1}, K_1^{i+1}]` for `i < h`.
/// Cost: `2^(h+1) − 2` AES blocks, in place in `leaves`.
pub(crate) fn expand(mmo: &Mmo, seed: Block, leaves: &mut [Block], sums: &mut [[Block; 2]]) {
    leaves[0] = seed;
    let mut m = 1;
    for s in sums.iter_mut() {
        expand_level(mmo, leaves, m);
        m *= 2;
        *s = level_sums(&leaves[..m]);
    }
}

/// Replaces the `m` nodes `nodes[..m]` of a level (`m` a power of two) by
/// their `2m` children, in place and without a copy of the level: from the
/// top, the parents `[h/2, h)` have their children at `[h, 2h)`, disjoint,
/// for `h = m, m/2, …, 2`; the root's two children come last.
fn expand_level(mmo: &Mmo, nodes: &mut [Block], m: usize) {
    debug_assert!(m.is_power_of_two());
    let mut h = m;
    while h > 1 {
        let (parents, children) = nodes.split_at_mut(h);
        mmo.expand_children(&parents[h / 2..], &mut children[..h]);
        h /= 2;
    }
    let root = [nodes[0]];
    mmo.expand_children(&root, &mut nodes[..2]);
}

/// `[⊕ even nodes, ⊕ odd nodes]` of a level.
fn level_sums(level: &[Block]) -> [Block; 2] {
    level
        .chunks_exact(2)
        .fold([Block::ZERO; 2], |[a, b], p| [a ^ p[0], b ^ p[1]])
}

/// The punctured tree: from `keys[i] = K_{¬α_{i+1}}^{i+1}` (`α_1` the most
/// significant of the `h` bits of `alpha`), writes every leaf of the tree
/// into `leaves` (`2^h` blocks) but leaf `alpha`, which is set to zero.
/// Per level, the children of the known nodes are expanded, and the child
/// off the path is `K_{¬α_i}^i` xor the other known nodes of its side.
/// Cost: as [`expand`].
pub(crate) fn punctured(mmo: &Mmo, alpha: usize, keys: &[Block], leaves: &mut [Block]) {
    let h = keys.len();
    leaves[0] = Block::ZERO;
    let (mut m, mut path) = (1, 0);
    for (i, key) in keys.iter().enumerate() {
        expand_level(mmo, leaves, m);
        m *= 2;
        path = 2 * path + ((alpha >> (h - 1 - i)) & 1);
        let off = path ^ 1;
        // The known nodes of the off-path side: all of its parity but `off`
        // (the children of the unknown path node are garbage).
        let known = leaves[..m]
            .iter()
            .skip(off & 1)
            .step_by(2)
            .fold(Block::ZERO, |a, b| a ^ *b)
            ^ leaves[off];
        leaves[off] = *key ^ known;
        leaves[path] = Block::ZERO;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sci_net::crypto::Prg;

    #[test]
    fn punctured_leaves_equal_the_full_trees_but_at_alpha() {
        let mmo = Mmo::new();
        let mut prg = Prg::new(Block(99));
        for h in [1usize, 2, 5, 9] {
            for alpha in [0, (1 << h) - 1, (1 << h) / 3] {
                let mut full = vec![Block::ZERO; 1 << h];
                let mut sums = vec![[Block::ZERO; 2]; h];
                expand(&mmo, prg.next_block(), &mut full, &mut sums);
                let keys: Vec<Block> = (0..h)
                    .map(|i| sums[i][1 - ((alpha >> (h - 1 - i)) & 1)])
                    .collect();
                let mut part = vec![Block::ONES; 1 << h];
                punctured(&mmo, alpha, &keys, &mut part);
                for (j, (f, p)) in full.iter().zip(&part).enumerate() {
                    if j == alpha {
                        assert_eq!(*p, Block::ZERO);
                        assert_ne!(*f, Block::ZERO);
                    } else {
                        assert_eq!(f, p, "h {h} alpha {alpha} leaf {j}");
                    }
                }
                // The sums are those of the leaves' level.
                assert_eq!(sums[h - 1], level_sums(&full));
            }
        }
    }

    #[test]
    fn a_wrong_key_changes_the_off_path_leaves() {
        let mmo = Mmo::new();
        let (h, alpha) = (4, 6);
        let mut full = vec![Block::ZERO; 1 << h];
        let mut sums = vec![[Block::ZERO; 2]; h];
        expand(&mmo, Block(5), &mut full, &mut sums);
        // The on-path sums instead of the off-path ones: nothing matches.
        let keys: Vec<Block> = (0..h)
            .map(|i| sums[i][(alpha >> (h - 1 - i)) & 1])
            .collect();
        let mut part = vec![Block::ZERO; 1 << h];
        punctured(&mmo, alpha, &keys, &mut part);
        assert!(full.iter().zip(&part).all(|(f, p)| f != p));
    }
}
