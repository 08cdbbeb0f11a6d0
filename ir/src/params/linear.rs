//! The OT batches of a product with the server's weights (CrypTFlow2 §5.1.1): each
//! element of the client's share is decomposed into its ℓ bits, bit `i` one correlated
//! OT carrying the `O` weights it multiplies, in batches of at most [`BATCH_WORDS`]
//! correlation words. Its price: `cost::linear`.

/// Largest number of correlation words (`u64`) of one OT batch.
pub const BATCH_WORDS: usize = 1 << 22;

/// Pairs `(r, c)` of each OT batch of a product with `total` pairs and `outs` outputs
/// per element.
pub fn batch_pairs(ell: u32, total: usize, outs: usize) -> impl Iterator<Item = usize> {
    let per = (BATCH_WORDS / (ell as usize * outs.max(1))).max(1);
    (0..total.div_ceil(per)).map(move |b| per.min(total - b * per))
}
