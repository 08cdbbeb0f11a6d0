//! Selection and conversion: the multiplexer `Π_MUX` (CrypTFlow2 Algorithm 6), boolean
//! to arithmetic `Π_B2A` (Algorithm 7), AND from bit triples (App. A) and
//! `ReLU = DReLU · x` (Algorithm 8).
//!
//! * MUX with fields of `η_f` bits: two correlated OTs, role `P0`'s first (role `P1`
//!   requests, `P0` answers with its own request, `P1` answers): `2λ + 2Σ η_f` bits per
//!   element (the paper's chosen-message OTs cost `2λ + 4η`); one round for role `P1`.
//! * B2A into `Z_n`: one correlated OT, `λ + η` bits per element, one round.
//! * AND of `n` bit pairs: `⌈n/2⌉` `(16 1)-OT_2` for the triples and one exchange of
//!   2 bits per AND from each party: `⌈n/2⌉·(2λ + 32) + 4n` bits, two rounds.
//! * ReLU: a sign test and a MUX, `Π_MILL^{ℓ−1} + 2λ + 2ℓ` bits over `Z_{2^ℓ}` (4148 at
//!   ℓ = 32, m = 4; the paper's 4212 less 2ℓ); rounds: the sign test's plus 1.

use super::mill::exchange;
use super::ot::{Widths, cot_call, kk_call};
use super::{Modulus, Role, Transcript, sign};

/// One batch of `n` correlated OTs of `bits` bits each, `receiver` choosing.
pub fn cots(receiver: Role, n: usize, bits: u64) -> Transcript {
    cot_call(receiver, vec![n], Widths::uniform(n, bits), false)
}

/// MUX of `n` elements, each with fields of the moduli `fields`.
pub fn mux(fields: &[Modulus], n: usize) -> Transcript {
    let wire: u64 = fields.iter().map(|f| u64::from(f.bits())).sum();
    cots(Role::P1, n, wire).then(cots(Role::P0, n, wire))
}

/// B2A of `n` bits into `md`.
pub fn b2a(md: Modulus, n: usize) -> Transcript {
    cots(Role::P1, n, u64::from(md.bits()))
}

/// The regular triples of `n` ANDs: `⌈n/2⌉` instances of `(16 1)-OT_2`, role `P1`
/// receiving (on the silent engine `n` random OTs each way).
pub fn and_triples(n: usize) -> Transcript {
    kk_call(Role::P1, &[], &[(n, 0)])
}

/// The opening of `n` ANDs given their triples: 2 bits each from each party, role `P0`
/// first.
pub fn and_open(n: usize) -> Transcript {
    exchange(2 * n as u64)
}

/// AND of `n` pairs of shared bits: triples, then the opening.
pub fn and(n: usize) -> Transcript {
    and_triples(n).then(and_open(n))
}

/// ReLU of `n` shares mod `md` at radix `m`.
pub fn relu(md: Modulus, m: u32, n: usize) -> Transcript {
    sign::drelu(md, m, n).then(mux(&[md], n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's ReLU costs (Table 2) less 2ℓ for the correlated-OT multiplexer.
    #[test]
    fn relu_per_element() {
        let n = 1 << 16;
        assert_eq!(relu(Modulus::Pow2(32), 4, n).bits(), (4212 - 64) * n as u64);
        assert_eq!(relu(Modulus::Pow2(32), 7, n).bits(), (3298 - 64) * n as u64);
        let field = Modulus::Odd(4_293_918_721);
        assert_eq!(relu(field, 7, n).bits(), (5288 - 64) * n as u64);
        assert_eq!(relu(Modulus::Pow2(32), 4, n).rounds(Role::P1), 4);
        assert_eq!(relu(field, 7, n).rounds(Role::P1), 5);
        assert_eq!(mux(&[Modulus::Pow2(32)], 8).rounds(Role::P0), 2);
        assert_eq!(and(100).rounds(Role::P0), 2);
    }
}
