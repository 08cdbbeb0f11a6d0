//! MaxPool and ArgMax (CrypTFlow2 §5.2.2): what each level's multiplexer carries. Its
//! price: `cost::pool`.

use super::Modulus;

/// The multiplexer's fields: the value, the index (ArgMax), the sign (exact mode).
pub fn fields(md: Modulus, index: bool, exact: bool) -> Vec<Modulus> {
    let mut f = vec![md];
    if index {
        f.push(md);
    }
    if exact {
        f.push(Modulus::Pow2(1));
    }
    f
}

/// A 2-D max pooling as two 1-D ones: the maximum of each window's part of every input
/// row it covers (the columns pass), then the maximum of those along the window's rows
/// (the rows pass). A window's maximum is the maximum of its rows' maxima, so the value
/// is the same on every input; only the comparisons change. Per plane the columns pass
/// compares `R·Σ_ox (|cols(ox)| − 1)` pairs over the `R` input rows some window covers,
/// the rows pass `ow·Σ_oy (|rows(oy)| − 1)`, against `Σ_oy Σ_ox (|rows(oy)|·|cols(ox)| − 1)`
/// at once: for SqueezeNet's 3×3/2 poolings 17,604 against 23,328 per 109×109 plane
/// (−24.5 %), in `⌈log₂ 3⌉ + ⌈log₂ 3⌉ = 4` levels as `⌈log₂ 9⌉`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeparablePool {
    /// The input rows some window covers, ascending: the rows of the columns pass.
    pub rows: Vec<usize>,
    /// Per output column, its window's input columns (the columns pass' windows, within
    /// one row).
    pub cols: Vec<std::ops::Range<usize>>,
    /// Per output row, its window's rows as positions in [`SeparablePool::rows`] (the rows
    /// pass' windows, within one output column).
    pub row_windows: Vec<std::ops::Range<usize>>,
}

impl SeparablePool {
    /// The window lengths of the columns pass over `planes` planes, in its output order
    /// `[plane, row, ox]`.
    pub fn cols_lens(&self, planes: usize) -> Vec<usize> {
        let row: Vec<usize> = self.cols.iter().map(|c| c.len()).collect();
        row.repeat(self.rows.len() * planes)
    }

    /// The window lengths of the rows pass over `planes` planes, in the pooling's output
    /// order `[plane, oy, ox]`.
    pub fn rows_lens(&self, planes: usize) -> Vec<usize> {
        let ow = self.cols.len();
        let plane: Vec<usize> = self
            .row_windows
            .iter()
            .flat_map(|r| std::iter::repeat_n(r.len(), ow))
            .collect();
        plane.repeat(planes)
    }
}

/// The separable form of a max pooling `pool` of `[h, w]` planes, where both parties run
/// it ([`SeparablePool`]): with the paper's comparisons of differences (`exact` false:
/// an exact comparison would need the signs of the columns pass' maxima, one more sign
/// test), when it compares fewer pairs in no more tree levels than the pooling at once.
/// `None` otherwise, or for an invalid geometry or an empty window. Cost: `O(oh + ow)`.
pub fn separable(pool: &crate::Pool2d, [h, w]: [usize; 2], exact: bool) -> Option<SeparablePool> {
    let [oh, ow] = pool.output([h, w]).ok()?;
    if exact || oh == 0 || ow == 0 {
        return None;
    }
    let rows_of: Vec<std::ops::Range<usize>> = (0..oh)
        .map(|oy| pool.window([oy, 0], [h, w]).rows)
        .collect();
    let cols: Vec<std::ops::Range<usize>> = (0..ow)
        .map(|ox| pool.window([0, ox], [h, w]).cols)
        .collect();
    if rows_of.iter().chain(&cols).any(|r| r.is_empty()) {
        return None;
    }
    let mut rows: Vec<usize> = rows_of.iter().flat_map(|r| r.clone()).collect();
    rows.sort_unstable();
    rows.dedup();
    let at = |iy: usize| rows.partition_point(|&r| r < iy);
    let row_windows: Vec<std::ops::Range<usize>> = rows_of
        .iter()
        .map(|r| at(r.start)..at(r.end - 1) + 1)
        .collect();
    let sep = SeparablePool {
        rows,
        cols,
        row_windows,
    };
    let pairs = |lens: &[usize]| lens.iter().map(|l| l - 1).sum::<usize>();
    let levels = |lens: &[usize]| {
        let d = lens.iter().copied().max().unwrap_or(1);
        usize::BITS - (d - 1).leading_zeros()
    };
    let at_once: Vec<usize> = rows_of
        .iter()
        .flat_map(|r| sep.cols.iter().map(move |c| r.len() * c.len()))
        .collect();
    let (first, second) = (sep.cols_lens(1), sep.rows_lens(1));
    let fewer = pairs(&first) + pairs(&second) < pairs(&at_once);
    let no_deeper = levels(&first) + levels(&second) <= levels(&at_once);
    (fewer && no_deeper).then_some(sep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Pool2d;

    fn pool(k: usize, s: usize, p: usize, ceil_mode: bool) -> Pool2d {
        Pool2d {
            kernel: [k, k],
            strides: [s, s],
            pads: [p; 4],
            ceil_mode,
        }
    }

    #[test]
    fn squeezenet_pools_split_and_count() {
        // SqueezeNet 1.1's 3×3/2 (ceil) on a 109×109 plane: 54×54 outputs.
        let sep = separable(&pool(3, 2, 0, true), [109, 109], false).expect("separable");
        assert_eq!(sep.rows.len(), 109);
        let pairs = |l: Vec<usize>| l.iter().map(|l| l - 1).sum::<usize>();
        assert_eq!(pairs(sep.cols_lens(1)) + pairs(sep.rows_lens(1)), 17_604);
        assert_eq!(sep.rows_lens(1).len(), 54 * 54);
        // Exact comparisons, a 1×k kernel and a 5×5 one (3 + 3 levels > 5) stay at once.
        assert!(separable(&pool(3, 2, 0, true), [109, 109], true).is_none());
        let row = Pool2d {
            kernel: [1, 3],
            ..pool(3, 1, 0, false)
        };
        assert!(separable(&row, [8, 8], false).is_none());
        assert!(separable(&pool(5, 5, 0, false), [55, 55], false).is_none());
        // Windows that do not overlap (2×2/2, 2×2/3) compare as many pairs either way.
        assert!(separable(&pool(2, 2, 0, false), [56, 56], false).is_none());
        assert!(separable(&pool(2, 3, 0, false), [9, 9], false).is_none());
        // Padding clips the border windows (3×3/2, pads 1, on 6×6: 45 pairs, not 55).
        let sep = separable(&pool(3, 2, 1, false), [6, 6], false).expect("separable");
        assert_eq!(sep.cols, vec![0..2, 1..4, 3..6]);
        assert_eq!(sep.rows, (0..6).collect::<Vec<_>>());
        assert_eq!(sep.row_windows, vec![0..2, 1..4, 3..6]);
        assert_eq!(pairs(sep.cols_lens(1)) + pairs(sep.rows_lens(1)), 45);
    }
}
