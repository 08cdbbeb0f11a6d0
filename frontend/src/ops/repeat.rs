//! Repetition of a tensor's entries: `Expand` (numpy broadcasting to a constant
//! shape) and `Tile` (whole copies along each axis by constant repeats).
//!
//! Both fold on constants; on run-time tensors they lower to a `reshape` (where
//! `Expand` adds leading axes) and one IR `gather` per repeated axis, with
//! repeated indices. `gather` is data movement: local on secret shares, exact,
//! free in communication and rounds.

use super::select::gather_axis;
use super::shape_ops::reshape_value;
use super::{Ctx, Registry, Value};
use crate::error::Result;
use crate::shape;

pub(crate) fn register(reg: &mut Registry) {
    reg.op("Expand", expand);
    reg.op("Tile", tile);
}

/// The non-negative dimensions of a constant integer input (a shape or repeats).
fn dims_input(cx: &Ctx<'_>, i: usize, what: &str) -> Result<Vec<usize>> {
    cx.const_ints(i, what)?
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                cx.error(format!(
                    "negative value {d} in {what} of {}",
                    cx.node.op_type()
                ))
            })
        })
        .collect()
}

/// `Expand(input, shape)`: the input broadcast (numpy rules, in both directions)
/// with the constant `shape`. Each axis of size 1 that grows to `n` becomes a
/// `gather` of index 0 repeated `n` times.
fn expand(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&[])?;
    let target = dims_input(cx, 1, "shape")?;
    let x = cx.input(0)?.clone();
    let in_shape = cx.shape_of(&x);
    let out = shape::broadcast(&in_shape, &target).map_err(|e| cx.error(e))?;
    let mut padded = vec![1; out.len() - in_shape.len()];
    padded.extend_from_slice(&in_shape);
    let mut v = reshape_value(cx, &x, padded.clone())?;
    for (axis, (&d_in, &d_out)) in padded.iter().zip(&out).enumerate() {
        if d_in != d_out {
            v = gather_axis(cx, &v, axis, vec![0; d_out])?;
        }
    }
    Ok(vec![v])
}

/// `Tile(input, repeats)`: along each axis `a`, `repeats[a]` copies of the input
/// one after the other (output index `j` reads input index `j mod d_a`).
/// `repeats` must be constant, one entry per axis; a zero repeat would give an
/// empty tensor, which the IR does not have.
fn tile(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&[])?;
    let repeats = dims_input(cx, 1, "repeats")?;
    let mut v = cx.input(0)?.clone();
    let in_shape = cx.shape_of(&v);
    if repeats.len() != in_shape.len() {
        return Err(cx.error(format!(
            "repeats has {} entries but the input has rank {} (shape {in_shape:?})",
            repeats.len(),
            in_shape.len()
        )));
    }
    for (axis, (&d, &r)) in in_shape.iter().zip(&repeats).enumerate() {
        if r == 0 {
            return Err(cx.error(format!(
                "repeats[{axis}] = 0 gives an empty tensor; empty tensors are not supported"
            )));
        }
        if r > 1 {
            let indices = (0..r).flat_map(|_| 0..d).collect();
            v = gather_axis(cx, &v, axis, indices)?;
        }
    }
    Ok(vec![v])
}
