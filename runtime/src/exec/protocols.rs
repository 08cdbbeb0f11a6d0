//! The executor's calls into [`crate::proto`]: each protocol run over the session's `T`
//! lanes, its batch cut into one contiguous chunk per lane ([`Session::run`]), so the
//! lanes' channels and OT instances work in parallel and, with the roles alternating
//! across chunks, load both directions of the link. Results do not depend on `T`.
//!
//! Element-wise protocols (ReLU, truncation, division) split the elements. MaxPool and
//! ArgMax split the windows: the signs of all inputs (exact comparisons) are computed
//! first, split by elements, then each lane reduces its share of the windows
//! ([`maxpool::reduce_windows`]).

use super::StepError;
use crate::ot::{Chunk, Session};
use crate::proto::bits::Bits;
use crate::proto::maxpool::{self, Windows};
use crate::proto::{Ctx, ProtoError, Role, drelu, rdiv, relu, trunc};
use std::ops::Range;

/// Protocol parameters of a run.
#[derive(Clone, Copy, Debug)]
pub struct Cfg {
    /// Ring width ℓ.
    pub bits: u32,
    /// Millionaires' radix m.
    pub radix: u32,
}

/// The protocol context of a chunk.
fn ctx<'a>(chunk: &'a mut Chunk<'_>, c: Cfg) -> Ctx<'a> {
    Ctx::new(
        &mut chunk.lane.ch,
        &mut chunk.lane.ot,
        Role::from_sender(chunk.sender),
    )
    .with_radix(c.radix)
}

/// Runs `f` on each lane's range of `0..n` and concatenates the results.
fn chunked<T: Send>(
    s: &mut Session,
    c: Cfg,
    n: usize,
    f: impl Fn(&mut Ctx<'_>, Range<usize>) -> Result<Vec<T>, ProtoError> + Sync,
) -> Result<Vec<T>, StepError> {
    let parts = s.run(n, |mut chunk| {
        let range = chunk.range.clone();
        f(&mut ctx(&mut chunk, c), range)
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// Shares of `ReLU(x)` ([`relu::relu`]).
pub fn relu(s: &mut Session, c: Cfg, x: &[u64]) -> Result<Vec<u64>, StepError> {
    chunked(s, c, x.len(), |ctx, r| relu::relu(ctx, c.bits, &x[r]))
}

/// Shares of `x ≫ shift` ([`trunc::trunc`]), or with `nonneg` the cheaper
/// [`trunc::trunc_nonneg`] for inputs known to be non-negative.
pub fn trunc(
    s: &mut Session,
    c: Cfg,
    shift: u32,
    nonneg: bool,
    x: &[u64],
) -> Result<Vec<u64>, StepError> {
    chunked(s, c, x.len(), |ctx, r| {
        if nonneg {
            trunc::trunc_nonneg(ctx, c.bits, shift, &x[r])
        } else {
            trunc::trunc(ctx, c.bits, shift, &x[r])
        }
    })
}

/// Shares of `rdiv(x_i, d_i)` ([`rdiv::rdiv`]).
pub fn div(s: &mut Session, c: Cfg, x: &[u64], d: &[u64]) -> Result<Vec<u64>, StepError> {
    chunked(s, c, x.len(), |ctx, r| {
        rdiv::rdiv(ctx, c.bits, &x[r.clone()], &d[r])
    })
}

/// Shares of the maximum of each window (`index = false`) or of the position of its
/// first maximum (`index = true`), with exact signed comparisons.
pub fn reduce(
    s: &mut Session,
    c: Cfg,
    x: &[u64],
    windows: &Windows,
    index: bool,
) -> Result<Vec<u64>, StepError> {
    let signs: Vec<Bits> = chunked(s, c, x.len(), |ctx, r| {
        Ok(vec![drelu::msb(ctx, c.bits, &x[r])?])
    })?;
    let signs = Bits::concat(&signs);
    chunked(s, c, windows.len(), |ctx, r| {
        let (vals, idx) =
            maxpool::reduce_windows(ctx, c.bits, x, Some(&signs), &windows.slice(r), index)?;
        Ok(if index { idx } else { vals })
    })
}
