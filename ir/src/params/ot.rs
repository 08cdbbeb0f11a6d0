//! The OT layer's parameters: the security parameter, the base OTs' group element, and
//! the classes of instances of a 1-of-N OT call. Their prices: `cost::ot`.

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
