//! The millionaires' protocol `Π_MILL^{ℓ,m}` (CrypTFlow2 Algorithm 1): inputs of ℓ bits
//! cut into `q = ⌈ℓ/m⌉` digits at radix `m`, combined in a tree of `⌈log₂ q⌉` levels.
//! Its price: `cost::mill`.

/// Largest number of comparisons per element.
pub const MAX_K: usize = 4;

/// The digit widths `w_j` of ℓ-bit inputs at radix `m`, lowest first.
pub fn digit_widths(bits: u32, m: u32) -> Vec<u32> {
    let q = bits.div_ceil(m);
    (0..q).map(|j| m.min(bits - j * m)).collect()
}

/// `⌈log₂ q⌉`, the number of tree levels of `q` digits.
pub fn levels(q: usize) -> usize {
    q.next_power_of_two().trailing_zeros() as usize
}

/// The OT classes `(N, bits per message)` of the leaves, lowest digit first (digit 0
/// carries `lt` only, the others `lt` and `eq`).
pub fn leaf_classes(bits: u32, m: u32, k: usize) -> Vec<(usize, u32)> {
    digit_widths(bits, m)
        .iter()
        .enumerate()
        .map(|(j, &w)| (1usize << w, if j == 0 { k } else { 2 * k } as u32))
        .collect()
}
