//! The IKNP column extension, shared by [`super::iknp`] (`W = 1`: 128 base
//! OTs, 128-bit rows) and [`super::kkot`] (`W = 2`: 256 base OTs, 256-bit rows).
//!
//! Ishai–Kilian–Nissim–Petrank (CRYPTO 2003), in the form of Asharov et al.
//! (CCS 2013): the extension *receiver* holds both seeds `(k_{i,0}, k_{i,1})`
//! of each base OT `i`; the extension *sender* holds a random `s` and
//! `k_{i,s_i}`. For a batch of `m` instances and receiver columns `x_i ∈
//! {0,1}^m` (the choice bits for IKNP; the code-word bits for KK):
//! - receiver: `t_i = G(k_{i,0})`, sends `u_i = t_i ⊕ G(k_{i,1}) ⊕ x_i`;
//! - sender: `q_i = G(k_{i,s_i}) ⊕ s_i·u_i = t_i ⊕ s_i·x_i`;
//!
//! so, by rows, `q_j = t_j ⊕ (x_j ∧ s)`. `G` is the AES PRG keyed by the seed;
//! it is never rewound, so each batch uses fresh columns. Rows are produced in
//! steps of [`CHUNK`] instances (the receiver flushes each step so the sender
//! starts while the receiver computes the next), and handed to a per-step
//! closure with the OT index of the first row (its hash tweak); OT indices
//! advance by the padded batch size `8⌈m/8⌉` and are never reused. The
//! buffers of a step live in the state and are reused by every batch.

use std::ops::Range;

use super::{OtError, base, transpose::transpose128};
use sci_net::crypto::{Block, Prg};
use sci_net::{Channel, Outbox};

/// Instances per internal step (a multiple of 128; keeps the working set in
/// cache).
pub(crate) const CHUNK: usize = 1 << 14;

/// XORs `src` into `dst`.
#[inline]
pub(crate) fn xor_into(dst: &mut [u8], src: &[u8]) {
    dst.iter_mut().zip(src).for_each(|(d, s)| *d ^= *s);
}

/// Rows of one step: `rows[w][j]` is block `w` of the row of instance
/// `offset + j`.
pub(crate) type Rows<const W: usize> = [Vec<Block>; W];

/// Extension sender state (base-OT receiver), with the buffers of a step
/// (kept across batches: no fresh pages per batch).
pub(crate) struct ExtSender<const W: usize> {
    s: [Block; W],
    prgs: Vec<Prg>,
    next: u128,
    u: Vec<u8>,
    q: Vec<u8>,
    rows: Rows<W>,
}

impl<const W: usize> ExtSender<W> {
    /// Runs `128·W` base OTs as their receiver, with random choices `s`
    /// (`s` and the base OTs' scalars from `prg`).
    pub(crate) fn setup(ch: &mut Channel, prg: &mut Prg) -> Result<Self, OtError> {
        let mut s = [Block::ZERO; W];
        prg.fill_blocks(&mut s);
        Self::setup_with_secret(ch, prg, s)
    }

    /// [`ExtSender::setup`] with the given secret `s` (the correlation of
    /// the raw rows, `q_j ⊕ t_j = x_j ∧ s`): Ferret's bootstrapping
    /// ([`super::ferret`]) fixes the low bit of its `Δ = s`. `s` must be
    /// uniform otherwise; the base OTs' scalars come from `prg`.
    pub(crate) fn setup_with_secret(
        ch: &mut Channel,
        prg: &mut Prg,
        s: [Block; W],
    ) -> Result<Self, OtError> {
        let choices: Vec<bool> = (0..128 * W).map(|i| s[i / 128].bit(i % 128)).collect();
        let keys = base::recv(ch, &choices, prg)?;
        Ok(ExtSender {
            s,
            prgs: keys.into_iter().map(Prg::new).collect(),
            next: 0,
            u: Vec::new(),
            q: Vec::new(),
            rows: std::array::from_fn(|_| Vec::new()),
        })
    }

    /// The secret `s`.
    pub(crate) fn s(&self) -> &[Block; W] {
        &self.s
    }

    /// Extends `n` instances: receives `u`, calls `f(offset, q_rows, tweak0)`
    /// per step with the rows of the real (unpadded) instances of the step.
    pub(crate) fn extend(
        &mut self,
        ch: &mut Channel,
        n: usize,
        mut f: impl FnMut(usize, &Rows<W>, u128) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let ExtSender {
            s,
            prgs,
            next,
            u,
            q,
            rows,
        } = self;
        let n_pad = n.next_multiple_of(8);
        let mut off = 0;
        while off < n_pad {
            let len = CHUNK.min(n_pad - off);
            let cb = len / 8;
            u.resize(128 * W * cb, 0u8);
            q.resize(128 * W * cb, 0u8);
            ch.recv(&mut u[..])?;
            for (i, (prg, (qi, ui))) in prgs
                .iter_mut()
                .zip(q.chunks_exact_mut(cb).zip(u.chunks_exact(cb)))
                .enumerate()
            {
                prg.fill_bytes(qi);
                if s[i / 128].bit(i % 128) {
                    xor_into(qi, ui);
                }
            }
            let real = len.min(n - off);
            for (w, r) in rows.iter_mut().enumerate() {
                r.resize(len, Block::ZERO);
                transpose128(&q[w * 128 * cb..(w + 1) * 128 * cb], r);
                r.truncate(real);
            }
            f(off, rows, *next + off as u128)?;
            off += len;
        }
        *next += n_pad as u128;
        Ok(())
    }
}

/// Extension receiver state (base-OT sender), with the buffers of a step.
pub(crate) struct ExtReceiver<const W: usize> {
    prgs: Vec<[Prg; 2]>,
    next: u128,
    u: Vec<u8>,
    t: Vec<u8>,
    g: Vec<u8>,
    rows: Rows<W>,
}

/// The receiver's columns when instance `j < n` has the
/// choice bit `choice(j)`, as [`ExtReceiver::extend`]'s `xcols` writes them: every
/// column holds the choice bits of the instances in `range` (bit `i` for instance
/// `range.start + i`; the padding past `n` left zero).
pub(crate) fn choice_columns(
    range: Range<usize>,
    cols: &mut [u8],
    n: usize,
    choice: impl Fn(usize) -> bool,
) {
    let cb = range.len() / 8;
    let (first, rest) = cols.split_at_mut(cb);
    for (i, j) in (range.start..range.end.min(n)).enumerate() {
        first[i / 8] |= u8::from(choice(j)) << (i % 8);
    }
    rest.chunks_exact_mut(cb)
        .for_each(|col| col.copy_from_slice(first));
}

impl<const W: usize> ExtReceiver<W> {
    /// Runs `128·W` base OTs as their sender (scalar from `prg`).
    pub(crate) fn setup(ch: &mut Channel, prg: &mut Prg) -> Result<Self, OtError> {
        let keys = base::send(ch, 128 * W, prg)?;
        Ok(ExtReceiver {
            prgs: keys
                .into_iter()
                .map(|[k0, k1]| [Prg::new(k0), Prg::new(k1)])
                .collect(),
            next: 0,
            u: Vec::new(),
            t: Vec::new(),
            g: Vec::new(),
            rows: std::array::from_fn(|_| Vec::new()),
        })
    }

    /// Extends `n` instances. Per step, `xcols(range, cols)` writes the
    /// receiver's columns for the instances in `range` (which may run past
    /// `n` into padding, to be left zero) into `cols`: column `i` is
    /// `cols[i·cb..(i+1)·cb]`, zeroed beforehand. Then `u` is sent and
    /// `f(offset, t_rows, tweak0)` is called with the rows of the real
    /// instances of the step.
    pub(crate) fn extend(
        &mut self,
        ch: &mut dyn Outbox,
        n: usize,
        mut xcols: impl FnMut(Range<usize>, &mut [u8]),
        mut f: impl FnMut(usize, &Rows<W>, u128) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let ExtReceiver {
            prgs,
            next,
            u,
            t,
            g,
            rows,
        } = self;
        let n_pad = n.next_multiple_of(8);
        let mut off = 0;
        while off < n_pad {
            let len = CHUNK.min(n_pad - off);
            let cb = len / 8;
            u.clear();
            u.resize(128 * W * cb, 0u8);
            t.resize(128 * W * cb, 0u8);
            g.resize(cb, 0u8);
            xcols(off..off + len, &mut u[..]);
            for ([p0, p1], (ti, ui)) in prgs
                .iter_mut()
                .zip(t.chunks_exact_mut(cb).zip(u.chunks_exact_mut(cb)))
            {
                p0.fill_bytes(ti);
                p1.fill_bytes(&mut g[..]);
                xor_into(ui, ti);
                xor_into(ui, &g[..]);
            }
            ch.send(&u[..])?;
            ch.flush()?;
            let real = len.min(n - off);
            for (w, r) in rows.iter_mut().enumerate() {
                r.resize(len, Block::ZERO);
                transpose128(&t[w * 128 * cb..(w + 1) * 128 * cb], r);
                r.truncate(real);
            }
            f(off, rows, *next + off as u128)?;
            off += len;
        }
        *next += n_pad as u128;
        Ok(())
    }
}
