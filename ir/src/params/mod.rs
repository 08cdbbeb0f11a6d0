//! The protocols' parameters: what both parties must agree on to run a protocol, apart
//! from what it costs. The runtime's protocols and the cost model ([`crate::cost`]) read
//! them from here; the cost model prices them and nothing here depends on a price.
//! (Choices made *from* prices — the millionaires' radix on each engine
//! (`cost::radix`), the LPN set for a demand (`cost::ferret::params_for`) — live with
//! the prices they compare.) The HE backends' constants are beside them, in
//! [`crate::backend`] (BFV) and [`crate::rlwe`] (the RLWE sets and layouts).
//!
//! | module | parameters |
//! |---|---|
//! | this one | the paper's roles [`Role`], the share moduli [`Modulus`] |
//! | [`ot`] | λ, the base-OT element, the classes of a 1-of-N call |
//! | [`mill`] | the millionaires' digits and tree |
//! | [`div`] | the shape of a division's comparisons and its correction's moduli |
//! | [`pool`] | the multiplexed fields of MaxPool/ArgMax |
//! | [`linear`] | the OT batches of a product with the server's weights |
//! | [`ferret`] | Ferret's LPN parameter sets, with their estimated security |
//! | [`lanes`] | how a layer is cut over the lanes |

pub mod div;
pub mod ferret;
pub mod lanes;
pub mod linear;
pub mod mill;
pub mod ot;
pub mod pool;

use std::fmt;

/// Which of the paper's two parties sends a flight: `P0` is the sender of the one-way
/// OTs (e.g. of the millionaires' leaves) and speaks first in an exchange; `P1` is the
/// other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The paper's `P0`.
    P0,
    /// The paper's `P1`.
    P1,
}

impl Role {
    /// `P0` if `sender`, else `P1`.
    pub fn from_sender(sender: bool) -> Role {
        if sender { Role::P0 } else { Role::P1 }
    }

    /// The other role.
    pub fn other(self) -> Role {
        match self {
            Role::P0 => Role::P1,
            Role::P1 => Role::P0,
        }
    }

    /// 0 for `P0`, 1 for `P1`.
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// A modulus of shares: `Z_{2^ℓ}` or an odd `Z_n` (SCI_HE's field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Modulus {
    /// `Z_{2^ℓ}`, ℓ in 1..=64.
    Pow2(u32),
    /// `Z_n`, `n` odd (at least 3).
    Odd(u64),
}

impl From<u32> for Modulus {
    fn from(ell: u32) -> Self {
        Modulus::Pow2(ell)
    }
}

impl fmt::Display for Modulus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Modulus::Pow2(ell) => write!(f, "2^{ell}"),
            Modulus::Odd(n) => write!(f, "{n}"),
        }
    }
}

impl Modulus {
    /// The modulus as an integer.
    pub fn value(self) -> u128 {
        match self {
            Modulus::Pow2(ell) => 1u128 << ell,
            Modulus::Odd(n) => u128::from(n),
        }
    }

    /// Bits of one element on the wire, `⌈log₂ n⌉` (ℓ for `2^ℓ`).
    pub fn bits(self) -> u32 {
        match self {
            Modulus::Pow2(ell) => ell,
            Modulus::Odd(n) => 64 - (n - 1).leading_zeros(),
        }
    }
}
