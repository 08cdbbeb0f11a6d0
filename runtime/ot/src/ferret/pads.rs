//! Ferret as a correlated-OT engine ([`crate::derived`]): the standard
//! derandomisation of its random COTs (e.g. Ferret §2 / Beaver's
//! precomputed OT, with the IKNP pads of Ishai–Kilian–Nissim–Petrank).
//! Random COT `j` gives the sender the pads `y_0 = H(j, q_j)`, `y_1 = H(j,
//! q_j ⊕ Δ)` ([`Tccr`], `j` never reused) and the receiver `b_j` and `H(j,
//! t_j) = y_{b_j}`. For a chosen choice `c_j` the receiver sends `d_j = c_j
//! ⊕ b_j` (one bit) and the sender uses the pads in the order `(y_{d_j},
//! y_{1⊕d_j})`, of which the receiver knows the `c_j`-th. Per *piece* of
//! COTs (a batch of the call, cut where an iteration's COTs end; generated
//! chunk by chunk, `source::Piece`) the receiver sends its `d` bits in one
//! message, `⌈len/8⌉` bytes. Random OT with random choices
//! ([`CorrelatedSender::random_pads`], overridden) sends nothing: the COTs'
//! own choices are the OTs'. Cost: that plus the engine's share of its
//! iterations ([`sci_ir::cost::ferret::derived`] exactly for one piece,
//! with the derivation's answer).

use super::source::{FerretReceiver, FerretSender, Piece};
use crate::OtError;
use crate::derived::{
    CorrelatedReceiver, CorrelatedSender, Inflow, RecvEvent, STEP, SendEvent, hash_pairs,
};
use sci_net::Channel;
use sci_net::crypto::{Block, Prg, Tccr};

/// The receiver's `d` bits of a piece, `choice(j) ⊕ b_j` for its COTs
/// (choice bit `b_j` in the low bit), 8 per byte, generating them
/// ([`Piece::parts`]); `run(tweak, j0, y)` gets the hashed pads `y` of each
/// run of at most [`STEP`] consecutive COTs `j0..` (`y` is scratch).
fn corrections(
    piece: Piece<'_>,
    choice: impl Fn(usize) -> bool,
    h: &Tccr,
    y: &mut Vec<Block>,
    mut run: impl FnMut(u128, usize, &[Block]) -> Result<(), OtError>,
) -> Result<Vec<u8>, OtError> {
    let first = piece.first();
    let mut d = vec![0u8; piece.len().div_ceil(8)];
    piece.parts(|id0, j, t| {
        for (s, ts) in t.chunks(STEP).enumerate() {
            let off = s * STEP;
            for (k, tk) in ts.iter().enumerate() {
                let (jk, x) = (j + off + k, j + off + k - first);
                d[x / 8] |= u8::from(choice(jk) ^ tk.bit(0)) << (x % 8);
            }
            y.clear();
            y.extend_from_slice(ts);
            h.hash_in_place(id0 + off as u128, y);
            run(id0 + off as u128, j + off, y)?;
        }
        Ok(())
    })?;
    Ok(d)
}

impl CorrelatedSender for FerretSender {
    /// [`FerretSender::setup`].
    fn prepare(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        self.setup(ch)
    }

    /// Per piece, reads the receiver's `d` bits, then hands out the pads in
    /// the order of its choices.
    fn pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        ends: &[usize],
        mut f: impl FnMut(SendEvent<'_>) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let (delta, h) = (self.delta(), Tccr::new());
        let mut y = [Vec::with_capacity(STEP), Vec::with_capacity(STEP)];
        self.take_pieces(ch, n, ends, |ch, piece| {
            let first = piece.first();
            let d = ch.recv_vec(piece.len().div_ceil(8))?;
            piece.parts(|id0, j, q| {
                for (s, qs) in q.chunks(STEP).enumerate() {
                    let (off, tweak) = (s * STEP, id0 + (s * STEP) as u128);
                    hash_pairs(&h, tweak, qs, delta, &mut y);
                    let [y0, y1] = &mut y;
                    for (i, (a, b)) in y0.iter_mut().zip(y1.iter_mut()).enumerate() {
                        let x = j + off + i - first;
                        if (d[x / 8] >> (x % 8)) & 1 == 1 {
                            std::mem::swap(a, b);
                        }
                    }
                    f(SendEvent::Pads(tweak, j + off, y0, y1))?;
                }
                Ok(())
            })?;
            f(SendEvent::End(ch))
        })
    }

    /// The random COTs as they are: no message beyond the engine's
    /// iterations ([`sci_ir::cost::ferret::random_cots`]).
    fn random_pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        mut f: impl FnMut(&[Block], &[Block]),
    ) -> Result<(), OtError> {
        let (delta, h) = (self.delta(), Tccr::new());
        let mut y = [Vec::with_capacity(STEP), Vec::with_capacity(STEP)];
        self.take(ch, n, |_, id0, q| {
            for (s, qs) in q.chunks(STEP).enumerate() {
                hash_pairs(&h, id0 + (s * STEP) as u128, qs, delta, &mut y);
                f(&y[0], &y[1]);
            }
            Ok(())
        })
    }
}

impl CorrelatedReceiver for FerretReceiver {
    /// [`FerretReceiver::setup`].
    fn prepare(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        self.setup(ch)
    }

    /// Per piece, hands out the chosen pads while computing the `d` bits,
    /// then sends them (one message).
    fn pads<L: Inflow>(
        &mut self,
        link: &mut L,
        n: usize,
        choice: impl Fn(usize) -> bool + Sync,
        ends: &[usize],
        mut f: impl FnMut(RecvEvent<'_, L>) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let h = Tccr::new();
        let mut y = Vec::with_capacity(STEP);
        self.take_with(link, n, ends, |l, piece| {
            let range = piece.first()..piece.first() + piece.len();
            let d = corrections(piece, &choice, &h, &mut y, |t, j, y| {
                f(RecvEvent::Pads(t, j, y))
            })?;
            l.send(&d)?;
            l.flush()?;
            f(RecvEvent::End(l, range))
        })
    }

    /// The random COTs as they are, their choice bits the OTs' (`prg` is
    /// not used).
    fn random_pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        _prg: &mut Prg,
        mut f: impl FnMut(&[bool], &[Block]),
    ) -> Result<(), OtError> {
        let h = Tccr::new();
        let (mut y, mut c) = (Vec::with_capacity(STEP), Vec::with_capacity(STEP));
        self.take(ch, n, |_, id0, t| {
            for (s, ts) in t.chunks(STEP).enumerate() {
                y.clear();
                y.extend_from_slice(ts);
                h.hash_in_place(id0 + (s * STEP) as u128, &mut y);
                c.clear();
                c.extend(ts.iter().map(|t| t.bit(0)));
                f(&c, &y);
            }
            Ok(())
        })
    }
}
