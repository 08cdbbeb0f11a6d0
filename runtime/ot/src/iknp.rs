//! IKNP OT extension as a correlated-OT engine ([`super::derived`]).
//!
//! Built on the column extension of `ext` (Ishai–Kilian–Nissim–Petrank,
//! CRYPTO 2003; Asharov–Lindell–Schneider–Zohner, CCS 2013) with the sender's
//! pads `y_{j,0} = H(j, q_j)`, `y_{j,1} = H(j, q_j ⊕ s)` and the receiver's
//! `H(j, t_j) = y_{j,b_j}`, `H` the Guo–Katz–Wang–Yu TCCR hash
//! ([`sci_net::crypto::Tccr`]) and `j` the never-reused OT index. The
//! receiver's choices are its columns: per instance it sends λ = 128 bits
//! (one row of the extension matrix, see [`super`] for the padding of a
//! batch), and the sender answers with the derived OT's packed messages
//! ([`super::derived`]), so:
//! - `(2 1)-OT_ℓ`, ℓ ≤ 128: `m_0 ⊕ y_0, m_1 ⊕ y_1`, 2ℓ bits — total λ + 2ℓ;
//! - random OT: the sender gets `(y_0, y_1)`, nothing more is sent — total
//!   λ (with random choices too: the receiver draws them);
//! - correlated OT with a payload of `W` bits ([`super::derived::cot`]):
//!   total `λ + W` ([`cot_bits`]). This is the multiplexer's and B2A's OT,
//!   and the `NKℓ` wide OTs of the OT-based matrix product (§5.1.1), whose
//!   correlations are read and outputs consumed through closures, step by
//!   step, so nothing of size `n·k` is built.
//!
//! All are two messages per batch (receiver → sender → receiver; random OT
//! only the first): one round for the receiver. The sender answers once it
//! has read the receiver's whole message (so a TCP link never has both
//! sides blocked writing). Each batch of a call is an OT call of its own on
//! the wire; several batches over a full-duplex channel are pipelined, one
//! round for the whole stream ([`super::derived`]).

use super::OtError;
use super::derived::{
    CorrelatedReceiver, CorrelatedSender, Inflow, RecvEvent, SendEvent, batches, hash_pairs,
};
use super::ext::{ExtReceiver, ExtSender, choice_columns};
use sci_net::Channel;
use sci_net::crypto::{Block, Prg, Tccr};

pub use super::derived::cot_bits;

/// The sender side of IKNP (the base-OT receiver).
pub struct IknpSender {
    ext: ExtSender<1>,
    h: Tccr,
    /// The pads of a step.
    pads: [Vec<Block>; 2],
}

impl std::fmt::Debug for IknpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IknpSender")
    }
}

impl IknpSender {
    /// Runs the 128 base OTs (as their receiver), drawing the secret and the
    /// base OTs' scalars from `prg`. Cost: 32 + 128·32 bytes, one round.
    pub fn setup(ch: &mut Channel, prg: &mut Prg) -> Result<Self, OtError> {
        Ok(IknpSender {
            ext: ExtSender::setup(ch, prg)?,
            h: Tccr::new(),
            pads: [Vec::new(), Vec::new()],
        })
    }
}

impl CorrelatedSender for IknpSender {
    /// One extension per batch (empty batches skip): the receiver's matrix
    /// message is read step by step, and each step's pads handed out.
    fn pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        ends: &[usize],
        mut f: impl FnMut(SendEvent<'_>) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let IknpSender { ext, h, pads } = self;
        let s = ext.s()[0];
        for batch in batches(n, ends).filter(|b| !b.is_empty()) {
            ext.extend(ch, batch.len(), |off, rows, tweak| {
                hash_pairs(h, tweak, &rows[0], s, pads);
                f(SendEvent::Pads(
                    tweak,
                    batch.start + off,
                    &pads[0],
                    &pads[1],
                ))
            })?;
            f(SendEvent::End(ch))?;
        }
        Ok(())
    }
}

/// The receiver side of IKNP (the base-OT sender).
pub struct IknpReceiver {
    ext: ExtReceiver<1>,
    h: Tccr,
    /// The chosen pads of a step.
    step: Vec<Block>,
}

impl std::fmt::Debug for IknpReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IknpReceiver")
    }
}

impl IknpReceiver {
    /// Runs the 128 base OTs (as their sender, scalar from `prg`). Cost:
    /// 32 + 128·32 bytes.
    pub fn setup(ch: &mut Channel, prg: &mut Prg) -> Result<Self, OtError> {
        Ok(IknpReceiver {
            ext: ExtReceiver::setup(ch, prg)?,
            h: Tccr::new(),
            step: Vec::new(),
        })
    }
}

impl CorrelatedReceiver for IknpReceiver {
    /// One extension per batch (empty batches skip), the choices its
    /// columns: the matrix message is sent step by step (each flushed), and
    /// each step's chosen pads handed out.
    fn pads<L: Inflow>(
        &mut self,
        link: &mut L,
        n: usize,
        choice: impl Fn(usize) -> bool + Sync,
        ends: &[usize],
        mut f: impl FnMut(RecvEvent<'_, L>) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let IknpReceiver { ext, h, step } = self;
        for batch in batches(n, ends).filter(|b| !b.is_empty()) {
            let (start, len) = (batch.start, batch.len());
            ext.extend(
                link,
                len,
                |range, cols| choice_columns(range, cols, len, |j| choice(start + j)),
                |off, rows, tweak| {
                    step.clear();
                    step.extend_from_slice(&rows[0]);
                    h.hash_in_place(tweak, step);
                    f(RecvEvent::Pads(tweak, start + off, step))
                },
            )?;
            f(RecvEvent::End(link, batch))?;
        }
        Ok(())
    }
}
