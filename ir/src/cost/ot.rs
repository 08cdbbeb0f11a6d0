//! The OT layer: the base OTs of the set-up (Chou–Orlandi), IKNP correlated OT and
//! Kolesnikov–Kumaresan `(N 1)`-OT, as transcripts.
//!
//! An extension batch of `n` instances: the receiver sends λ-bit rows (2λ for KK) for
//! `8⌈n/8⌉` instances (the extension matrix is transposed in blocks of 8), then the
//! sender answers with its packed messages. An empty batch sends nothing.

use super::{Role, Transcript, bytes_of};

/// The security parameter λ (bits).
pub const LAMBDA: u64 = 128;

/// Bytes of a Ristretto255 point (a base-OT message element).
pub const POINT_BYTES: u64 = 32;

/// One class of instances of a 1-of-N OT call: `count` instances of
/// `(n_msgs 1)-OT_bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KkClass {
    /// `N`, the number of messages (2..=256).
    pub n_msgs: usize,
    /// Message width in bits (1..=128).
    pub bits: u32,
    /// Number of instances.
    pub count: usize,
}

/// Bytes of the extension rows of `n` instances of `w`·λ bits each.
fn rows(n: usize, w: u64) -> u64 {
    w * LAMBDA / 8 * n.next_multiple_of(8) as u64
}

/// One correlated-OT batch of `n` instances with `payload` correction bits in all
/// (`Σ_j W_j`), `receiver` sending first: λ bits per instance (padded to 8 instances)
/// from the receiver, `⌈payload/8⌉` bytes from the sender.
pub fn cot(receiver: Role, n: usize, payload: u64) -> Transcript {
    if n == 0 {
        return Transcript::new();
    }
    Transcript::new()
        .send(receiver, rows(n, 1))
        .send(receiver.other(), bytes_of(payload))
        .with_cots(n as u64)
}

/// Bits on the wire of [`cot`] (both directions).
pub fn cot_bits(n: usize, payload: u64) -> u64 {
    cot(Role::P1, n, payload).bits()
}

/// One KK13 call with `classes` (in call order), `receiver` sending first: 2λ bits per
/// instance (padded to 8 instances) from the receiver, `⌈Σ count·N·bits / 8⌉` bytes from
/// the sender.
pub fn kk(receiver: Role, classes: &[KkClass]) -> Transcript {
    let n: usize = classes.iter().map(|c| c.count).sum();
    if n == 0 {
        return Transcript::new();
    }
    let msg: u64 = classes
        .iter()
        .map(|c| (c.count * c.n_msgs) as u64 * u64::from(c.bits))
        .sum();
    let cots: u64 = classes
        .iter()
        .map(|c| c.count as u64 * u64::from(c.n_msgs.next_power_of_two().trailing_zeros()))
        .sum();
    Transcript::new()
        .send(receiver, rows(n, 2))
        .send(receiver.other(), bytes_of(msg))
        .with_cots(cots)
}

/// Bits on the wire of [`kk`] (both directions).
pub fn kk_bits(classes: &[KkClass]) -> u64 {
    kk(Role::P1, classes).bits()
}

/// `n` base OTs (Chou–Orlandi over Ristretto255), `sender` first: one point from the
/// sender, one point per OT from the receiver.
pub fn base(sender: Role, n: usize) -> Transcript {
    Transcript::new()
        .send(sender, POINT_BYTES)
        .send(sender.other(), POINT_BYTES * n as u64)
}

/// The OT set-up of one lane, `first` being the party that is the extension sender
/// first (the server): IKNP with `first` as extension sender (it is the base OTs'
/// receiver, 128 base OTs), IKNP the other way, then KK (256 base OTs) in the same two
/// orders. `2·(32 + 128·32) + 2·(32 + 256·32)` bytes, half each way.
pub fn setup(first: Role) -> Transcript {
    let second = first.other();
    base(second, 128)
        .then(base(first, 128))
        .then(base(second, 256))
        .then(base(first, 256))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_sizes() {
        assert_eq!(cot_bits(0, 5), 0);
        assert_eq!(cot_bits(1, 5), 128 * 8 + 8);
        assert_eq!(cot_bits(9, 9 * 33), 128 * 16 + 8 * 38);
        let c = KkClass {
            n_msgs: 16,
            bits: 2,
            count: 3,
        };
        assert_eq!(kk_bits(&[c]), 256 * 8 + 8 * 12);
        let s = setup(Role::P0);
        assert_eq!(s.sent(Role::P0), 32 + 128 * 32 + 32 + 256 * 32);
        assert_eq!(s.sent(Role::P1), s.sent(Role::P0));
    }
}
