//! How a layer is cut over a session's `T` lanes (each its own connection and OT
//! state): both parties and the cost model cut alike.

use std::ops::Range;

/// Cuts `0..n` into `t` contiguous ranges whose lengths differ by at most 1 (the first
/// `n mod t` one longer), as the runtime's sessions do.
pub fn split(n: usize, t: usize) -> Vec<Range<usize>> {
    let t = t.max(1);
    let (q, r) = (n / t, n % t);
    let mut start = 0;
    (0..t)
        .map(|i| {
            let len = q + usize::from(i < r);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}
