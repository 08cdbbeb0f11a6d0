//! `Einsum` of one or two operands as data movement around one matrix product:
//! MaxViT's attention (`B G H I D, B G H J D -> B G H I J` and back).
//!
//! Each letter of a two-operand equation is a batch letter (in both operands and
//! the output), a contracted letter (in both, not in the output) or a free letter of
//! one operand (in it and the output). The left operand is transposed to
//! `[batch…, left…, contracted…]` and reshaped to `[batch…, M, K]`, the right one to
//! `[batch…, K, N]`; their `MatMul` ([`super::matmul`]: by the server's weights if
//! one is constant, else a secret × secret product, one wave for the whole batch)
//! is reshaped to `[batch…, left…, right…]` and transposed to the output's order.
//! Transposes and reshapes are data movement (free); the product costs what that
//! `MatMul` costs. A one-operand equation that only permutes is a transpose.
//! Rejected, naming the node: ellipsis (`...`), a letter repeated within an operand
//! (diagonals), a letter summed away that only one operand has, shared letters of
//! different sizes (broadcasting), three or more operands.

use sci_ir::Op;

use super::matmul::matmul_values;
use crate::error::Result;
use crate::fold;
use crate::ops::shape_ops::reshape_value;
use crate::ops::{Ctx, Value};

/// `v` transposed by `perm` (nothing if `perm` is the identity): folded for a
/// constant, an IR `transpose` otherwise.
fn permuted(cx: &mut Ctx<'_>, v: &Value, perm: Vec<usize>) -> Result<Value> {
    if perm.iter().copied().eq(0..perm.len()) {
        return Ok(v.clone());
    }
    match v {
        Value::Const(t) => {
            let p: Vec<i64> = perm.iter().map(|&p| p as i64).collect();
            fold::transpose(t, Some(&p))
                .map(Value::constant)
                .map_err(|e| cx.error(e))
        }
        Value::Act(x) => cx.emit_value(Op::Transpose { x: *x, perm }),
    }
}

/// The operand terms and the output term of `equation` (spaces ignored; without
/// `->`, the output is the letters that occur once, in alphabetical order).
fn parse(equation: &str) -> std::result::Result<(Vec<Vec<char>>, Vec<char>), String> {
    let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    if eq.contains("...") {
        return Err(format!(
            "equation '{equation}': ellipsis ('...') is not supported"
        ));
    }
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let letters = |term: &str| -> std::result::Result<Vec<char>, String> {
        let t: Vec<char> = term.chars().collect();
        if let Some(c) = t.iter().find(|c| !c.is_ascii_alphabetic()) {
            return Err(format!("equation '{equation}': '{c}' is not a letter"));
        }
        if let Some(c) = (0..t.len())
            .map(|i| t[i])
            .find(|c| t.iter().filter(|d| *d == c).count() > 1)
        {
            return Err(format!(
                "equation '{equation}': letter '{c}' repeats within one term (diagonals are not supported)"
            ));
        }
        Ok(t)
    };
    let terms = lhs
        .split(',')
        .map(letters)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let out = match rhs {
        Some(r) => letters(r)?,
        None => {
            let mut once: Vec<char> = terms
                .iter()
                .flatten()
                .copied()
                .filter(|c| terms.iter().flatten().filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            once
        }
    };
    if let Some(c) = out.iter().find(|c| !terms.iter().any(|t| t.contains(c))) {
        return Err(format!(
            "equation '{equation}': output letter '{c}' is in no operand"
        ));
    }
    Ok((terms, out))
}

pub(super) fn einsum(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&["equation"])?;
    let equation = cx
        .node
        .attr_string("equation")?
        .ok_or_else(|| cx.node.attr_error("equation", "missing"))?;
    let (terms, out) = parse(&equation).map_err(|e| cx.node.attr_error("equation", e))?;
    if terms.len() != cx.num_inputs() {
        return Err(cx.node.attr_error(
            "equation",
            format!(
                "'{equation}' has {} operand terms but the node has {} inputs",
                terms.len(),
                cx.num_inputs()
            ),
        ));
    }
    let values = (0..terms.len())
        .map(|i| cx.input(i).cloned())
        .collect::<Result<Vec<_>>>()?;
    // The size of every letter, checked against each operand's shape.
    let mut size: Vec<(char, usize)> = Vec::new();
    for (i, (term, v)) in terms.iter().zip(&values).enumerate() {
        let shape = cx.shape_of(v);
        if shape.len() != term.len() {
            return Err(cx.error(format!(
                "operand {i} has shape {shape:?} but its term '{}' has {} letters",
                term.iter().collect::<String>(),
                term.len()
            )));
        }
        for (&c, &d) in term.iter().zip(&shape) {
            match size.iter().find(|(l, _)| *l == c) {
                Some(&(_, e)) if e != d => {
                    return Err(cx.error(format!(
                        "letter '{c}' has size {e} and {d} (broadcasting is not supported)"
                    )));
                }
                Some(_) => {}
                None => size.push((c, d)),
            }
        }
    }
    let dim = |c: char| size.iter().find(|(l, _)| *l == c).map_or(1, |&(_, d)| d);
    let position =
        |term: &[char], c: char| term.iter().position(|&l| l == c).expect("letter of term");
    let y = match (terms.as_slice(), values.as_slice()) {
        ([t], [v]) => {
            if t.len() != out.len() {
                return Err(cx.error(format!(
                    "'{equation}' sums over letters of its one operand; only permutations are supported"
                )));
            }
            permuted(cx, v, out.iter().map(|&c| position(t, c)).collect())?
        }
        ([ta, tb], [a, b]) => {
            if let Some(c) = ta
                .iter()
                .chain(tb)
                .find(|c| !(out.contains(c) || (ta.contains(c) && tb.contains(c))))
            {
                return Err(cx.error(format!(
                    "'{equation}' sums letter '{c}' over one operand only; not supported"
                )));
            }
            // The letters of `from` that satisfy `keep`, in `from`'s order.
            let pick = |from: &[char], keep: &dyn Fn(&char) -> bool| -> Vec<char> {
                from.iter().copied().filter(keep).collect()
            };
            let batch = pick(&out, &|c| ta.contains(c) && tb.contains(c));
            let left = pick(&out, &|c| ta.contains(c) && !tb.contains(c));
            let right = pick(&out, &|c| tb.contains(c) && !ta.contains(c));
            let con = pick(ta, &|c| tb.contains(c) && !out.contains(c));
            if cx.all_const() && !batch.is_empty() {
                return Err(cx.error(format!(
                    "'{equation}' of two constants with batch letters is not supported"
                )));
            }
            let prod = |ls: &[char]| ls.iter().map(|&c| dim(c)).product::<usize>();
            let dims = |ls: &[char]| ls.iter().map(|&c| dim(c)).collect::<Vec<usize>>();
            let (m, k, n) = (prod(&left), prod(&con), prod(&right));
            let order =
                |t: &[char], ls: &[&[char]]| ls.concat().iter().map(|&c| position(t, c)).collect();
            let a = permuted(cx, a, order(ta, &[&batch, &left, &con]))?;
            let b = permuted(cx, b, order(tb, &[&batch, &con, &right]))?;
            let a = reshape_value(cx, &a, [dims(&batch), vec![m, k]].concat())?;
            let b = reshape_value(cx, &b, [dims(&batch), vec![k, n]].concat())?;
            let p = matmul_values(cx, &a, &b)?;
            let got: Vec<char> = [batch.as_slice(), &left, &right].concat();
            let p = reshape_value(cx, &p, dims(&got))?;
            permuted(cx, &p, out.iter().map(|&c| position(&got, c)).collect())?
        }
        _ => {
            return Err(cx.error(format!(
                "'{equation}' has {} operands; one or two are supported",
                terms.len()
            )));
        }
    };
    Ok(vec![y])
}
