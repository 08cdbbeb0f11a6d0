//! `Maxpool_d` and `Argmax_d` (CrypTFlow2 §5.2.2), reduced in a tree over windows of
//! the given lengths: `⌈log₂ d⌉` levels for the longest window `d`; per level, one sign
//! test of the pairs' differences and one multiplexer of the winners (value, for ArgMax
//! the index, in exact mode the sign bit).
//!
//! The exact mode (operands not known to be non-negative) first tests the sign of every
//! input element, generates the regular triples of all comparisons' ANDs up front
//! (`(16 1)-OT_2`, two per instance), and opens one AND per comparison after each level's
//! sign test — exact on every input, at about 1.5–2× the narrow mode's traffic. The
//! narrow mode is the paper's (the sign of the difference only).

use super::select::{and_open, and_triples, mux};
use super::{Modulus, Transcript, sign};
use crate::Pool2d;
use crate::params::pool::{fields, separable};

/// The tree reduction of windows of lengths `lens` (each ≥ 1) of shares mod `md` at
/// radix `m`, given the inputs' signs in exact mode (their test is [`signs`]).
pub fn reduce(md: Modulus, m: u32, lens: &[usize], exact: bool, index: bool) -> Transcript {
    let widths = fields(md, index, exact);
    let mut lens = lens.to_vec();
    let mut t = Transcript::new();
    if exact {
        t = t.then(and_triples(lens.iter().map(|l| l - 1).sum()));
    }
    while lens.iter().any(|&l| l > 1) {
        let np: usize = lens.iter().map(|l| l / 2).sum();
        t = t.then(sign::drelu(md, m, np));
        if exact {
            t = t.then(and_open(np));
        }
        t = t.then(mux(&widths, np));
        lens.iter_mut().for_each(|l| *l = l.div_ceil(2));
    }
    t
}

/// The exact mode's sign tests of `n_in` input elements.
pub fn signs(md: Modulus, m: u32, n_in: usize) -> Transcript {
    sign::drelu(md, m, n_in)
}

/// MaxPool (`index = false`) or ArgMax on one lane: the signs of the `n_in` inputs in
/// exact mode, then the reduction.
pub fn maxpool(
    md: Modulus,
    m: u32,
    n_in: usize,
    lens: &[usize],
    exact: bool,
    index: bool,
) -> Transcript {
    let s = if exact {
        signs(md, m, n_in)
    } else {
        Transcript::new()
    };
    s.then(reduce(md, m, lens, exact, index))
}

/// MaxPool of an `[n, c, h, w]` tensor by `pool` on one lane, as the runtime runs it:
/// separably where [`crate::params::pool::separable`] says so (the columns pass, then
/// the rows pass, narrow comparisons), else all windows at once.
pub fn maxpool2d(md: Modulus, m: u32, shape: [usize; 4], pool: &Pool2d, exact: bool) -> Transcript {
    let [n, c, h, w] = shape;
    match separable(pool, [h, w], exact) {
        Some(sep) => reduce(md, m, &sep.cols_lens(n * c), false, false).then(reduce(
            md,
            m,
            &sep.rows_lens(n * c),
            false,
            false,
        )),
        None => {
            let lens: Vec<usize> = pool
                .window_counts([h, w], false)
                .unwrap_or_default()
                .into_iter()
                .map(|k| k as usize)
                .collect::<Vec<_>>()
                .repeat(n * c);
            maxpool(md, m, n * c * h * w, &lens, exact, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Role;

    #[test]
    fn levels_and_rounds() {
        let md = Modulus::Pow2(32);
        // Narrow: per level the sign test (3 rounds) and the multiplexer (1).
        assert_eq!(
            reduce(md, 4, &[4; 10], false, false).rounds(Role::P1),
            2 * 4
        );
        // Exact: the AND opening is a round of its own after a millionaires' with
        // tree levels; the signs and the triples up front.
        assert_eq!(
            maxpool(md, 4, 40, &[4; 10], true, false).rounds(Role::P1),
            3 + 1 + 2 * 5
        );
        assert_eq!(reduce(md, 4, &[1; 3], true, true), Transcript::new());
    }
}
