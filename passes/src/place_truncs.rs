//! Truncation placement: the peephole of CrypTFlow2 §6.2.
//!
//! **Rewrites:** a `t = trunc(p, k)` (placed right after a product by
//! [`crate::quantize`]) is moved forward along the chain of its uses, past:
//!
//! * `relu` and `maxpool`,
//! * `reshape`, `flatten`, `transpose` (pure data movement),
//! * `add(t, b)` / `add(b, t)` and `sub(t, b)`, whose other operand `b` is then
//!   multiplied by `2^k` (`scale_up b, k`, a free local operation; for a constant `b` the
//!   next [`crate::fold_constants`] folds it),
//!
//! as long as each value on the chain has exactly one use (a value with several uses —
//! the input of a residual block, say — must keep its scale for its other users, so the
//! chain stops there and the truncation is placed before it). Among the points the chain
//! reaches, the truncation goes where it is cheapest: the fewest elements, counting a
//! truncation whose input is provably non-negative ([`sci_ir::analysis::nonneg`]) as half the cost
//! of a general one (it skips the DReLU of Algorithm 5, step 2); ties go to the earliest
//! point. So `conv → trunc → relu` becomes `conv → relu → trunc nonneg` and
//! `conv → trunc → maxpool → relu` becomes `conv → maxpool → relu → trunc nonneg` (a
//! quarter of the truncations for a 2×2 pool, none needing DReLU). A chain never enters an
//! op already on another truncation's chain. The moved truncation keeps its name; the ops
//! it passed now carry values at the wider scale.
//!
//! Then a `concat` of truncations `trunc(x_i, k)` by the same `k`, each used by the concat
//! only, whose single user a chain can enter, becomes `trunc(concat(x_i), k)` (named
//! `<concat>.trunc`), and that truncation is placed as above; repeated while such concats
//! remain (nested ones). So SqueezeNet's fire module followed by a pool,
//! `maxpool(concat(relu(e1) ▹ trunc, relu(e3) ▹ trunc))`, truncates once after the pool:
//! a quarter of the elements (3×3/2 pool).
//!
//! **Why it is exact:** write `T(x) = ⌊x / 2^k⌋`, the truncation of the signed value.
//! `T` is monotone with `T(0) = 0`, so `max(T(x), 0) = T(max(x, 0))` (ReLU) and
//! `max_i T(x_i) = T(max_i x_i)` (MaxPool; padded positions are never compared). Data
//! movement (and `concat`) permutes elements. And `T(x) + b = T(x + b·2^k)`, `T(x) − b = T(x − b·2^k)`,
//! because `b·2^k` is a multiple of `2^k`. (Not `b − T(x)`, which rounds the other way:
//! that `sub` stops the chain; nor `avgpool`, whose division does not commute with `T`.)
//! These identities hold over the integers, hence in `Z_{2^ℓ}` as long as the wider
//! values stay in the signed range: moving a truncation later widens the values it
//! passed by `k` bits, so the bit width must be chosen on the final pipeline, after this
//! pass — which is what [`crate::autotune`] does. The tests check bit-identical outputs
//! of the interpreter before and after the pass on random programs and inputs.

use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::analysis::nonneg::nonneg;
use sci_ir::{Op, Program, ValueId};

/// A truncation to move: the chain of ops it moves past.
struct Plan {
    trunc: ValueId,
    shift: u32,
    chain: Vec<ValueId>,
}

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    let mut cur = move_truncs(p)?;
    // Each round merges at least two truncations into one, so this terminates.
    while let Some(merged) = merge_concats(&cur)? {
        cur = move_truncs(&merged)?;
    }
    Ok(cur)
}

/// `concat(trunc(x_1, k), …, trunc(x_n, k))` → `trunc(concat(x_1, …, x_n), k)` where each
/// truncation is used by the concat only and the concat's single user is an op a chain
/// can enter (so the merged truncation may move on); `None` if there is no such concat.
/// Exact: the truncation acts elementwise and the concat only places elements.
fn merge_concats(p: &Program) -> Result<Option<Program>, PassError> {
    let users = p.users();
    // The shift and the nonneg flag of the truncations merged into each concat.
    let merge = |v: ValueId| -> Option<(u32, bool)> {
        let Op::Concat { xs, .. } = &p.instr(v).op else {
            return None;
        };
        let [u] = users[v.index()][..] else {
            return None;
        };
        if !movable(&p.instr(u).op, v) {
            return None;
        }
        let mut shift = None;
        let mut all_nonneg = true;
        for x in xs {
            let Op::Trunc { s, nonneg, .. } = p.instr(*x).op else {
                return None;
            };
            if users[x.index()] != [v] || shift.is_some_and(|k| k != s) {
                return None;
            }
            shift = Some(s);
            all_nonneg &= nonneg;
        }
        shift.map(|k| (k, all_nonneg))
    };
    let merges: Vec<Option<(u32, bool)>> = p.ids().map(merge).collect();
    if merges.iter().all(Option::is_none) {
        return Ok(None);
    }
    let mut rw = Rewriter::new(p);
    for v in p.ids() {
        let instr = p.instr(v);
        let (Some((s, nonneg)), Op::Concat { xs, axis }) = (merges[v.index()], &instr.op) else {
            rw.copy(v)?;
            continue;
        };
        let wide = xs
            .iter()
            .map(|x| match &p.instr(*x).op {
                Op::Trunc { x, .. } => rw.get(*x),
                _ => Err(PassError::Internal("merged operand is not a trunc".into())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let c = rw.push(
            &instr.name,
            Op::Concat {
                xs: wide,
                axis: *axis,
            },
        )?;
        let t = rw.push(
            &format!("{}.trunc", instr.name),
            Op::Trunc { x: c, s, nonneg },
        )?;
        rw.set(v, t);
    }
    rw.finish().map(Some)
}

/// Moves every truncation along its chain (the first part of the module docs).
fn move_truncs(p: &Program) -> Result<Program, PassError> {
    let plans = plan(p);
    if plans.is_empty() {
        return Ok(p.clone());
    }
    let n = p.instrs().len();
    // For each old value on a chain: (plan index, position in the chain).
    let mut on_chain: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut moved = vec![None; n];
    for (i, pl) in plans.iter().enumerate() {
        moved[pl.trunc.index()] = Some(i);
        for (pos, &u) in pl.chain.iter().enumerate() {
            on_chain[u.index()] = Some((i, pos));
        }
    }
    let mut rw = Rewriter::new(p);
    // The wide (untruncated) new value standing for an old value of a chain.
    let mut wide: Vec<Option<ValueId>> = vec![None; n];
    for v in p.ids() {
        let instr = p.instr(v);
        if moved[v.index()].is_some() {
            let Op::Trunc { x, .. } = &instr.op else {
                return Err(PassError::Internal("planned value is not a trunc".into()));
            };
            wide[v.index()] = Some(rw.get(*x)?);
            continue;
        }
        let Some((i, pos)) = on_chain[v.index()] else {
            rw.copy(v)?;
            continue;
        };
        let pl = &plans[i];
        let pred = if pos == 0 {
            pl.trunc
        } else {
            pl.chain[pos - 1]
        };
        let pred_wide = wide[pred.index()]
            .ok_or_else(|| PassError::Internal("chain predecessor not emitted".into()))?;
        // Operands: the predecessor becomes its wide value; any other operand (of add/sub)
        // is scaled up by 2^shift.
        let mut other = Vec::new();
        for o in instr.op.operands() {
            if *o != pred {
                other.push(*o);
            }
        }
        let mut scaled = Vec::new();
        for o in other {
            let on = rw.get(o)?;
            let up = rw.push(
                &format!("{}.up", p.name(o)),
                Op::ScaleUp { x: on, k: pl.shift },
            )?;
            scaled.push((o, up));
        }
        let op = instr.op.try_map_operands(|o| {
            if *o == pred {
                Ok(pred_wide)
            } else {
                scaled
                    .iter()
                    .find(|(old, _)| old == o)
                    .map(|&(_, up)| up)
                    .ok_or_else(|| PassError::Internal("operand not scaled".into()))
            }
        })?;
        let w = rw.push(&instr.name, op)?;
        wide[v.index()] = Some(w);
        if pos + 1 == pl.chain.len() {
            let t = rw.push(
                p.name(pl.trunc),
                Op::Trunc {
                    x: w,
                    s: pl.shift,
                    nonneg: false,
                },
            )?;
            rw.set(v, t);
        }
    }
    rw.finish()
}

/// Chooses, in program order, where each truncation goes (only truncations that move).
fn plan(p: &Program) -> Vec<Plan> {
    let users = p.users();
    let nn = nonneg(p);
    let mut claimed = vec![false; p.instrs().len()];
    let mut plans = Vec::new();
    for t in p.ids() {
        let Op::Trunc { x, s, .. } = &p.instr(t).op else {
            continue;
        };
        // The maximal movable chain.
        let mut chain = Vec::new();
        let mut cur = t;
        while let [u] = users[cur.index()][..] {
            if claimed[u.index()] || !movable(&p.instr(u).op, cur) {
                break;
            }
            chain.push(u);
            cur = u;
        }
        // Cost of placing the truncation after chain[..k]: elements, doubled unless the
        // input is provably non-negative. The first minimum wins (fewest widened values).
        let cost = |k: usize| {
            let (at, nonneg) = if k == 0 {
                (t, nn[x.index()])
            } else {
                (chain[k - 1], nn[chain[k - 1].index()])
            };
            p.ty(at).numel() as u128 * if nonneg { 1 } else { 2 }
        };
        let best = (0..=chain.len()).min_by_key(|&k| (cost(k), k)).unwrap_or(0);
        if best > 0 {
            chain.truncate(best);
            for u in &chain {
                claimed[u.index()] = true;
            }
            plans.push(Plan {
                trunc: t,
                shift: *s,
                chain,
            });
        }
    }
    plans
}

/// Whether a truncation of `cur` can move past `op` (a user of `cur`).
fn movable(op: &Op, cur: ValueId) -> bool {
    match op {
        Op::Relu { .. }
        | Op::MaxPool { .. }
        | Op::Reshape { .. }
        | Op::Flatten { .. }
        | Op::Transpose { .. }
        | Op::Gather { .. } => true,
        Op::Add { a, b } => a != b,
        Op::Sub { a, b } => *a == cur && *b != cur,
        _ => false,
    }
}
