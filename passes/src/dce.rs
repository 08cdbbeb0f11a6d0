//! Dead-code elimination.
//!
//! **Rewrites:** removes every instruction whose value no output depends on (directly or
//! through other values), constants included. Inputs are kept even when unused: they
//! are the program's interface (the client supplies them in order).
//!
//! **Why it is exact:** the outputs are computed from the same instructions as before,
//! in the same order; a removed instruction had no effect on them (IR ops have no side
//! effects besides `output`).

use crate::error::PassError;
use sci_ir::{Builder, Op, Program, ValueId};

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    let live = live(p);
    let mut b = Builder::with_params(*p.params());
    let mut map: Vec<Option<ValueId>> = vec![None; p.instrs().len()];
    for v in p.ids() {
        if !live[v.index()] {
            continue;
        }
        let instr = p.instr(v);
        let op = match &instr.op {
            Op::Const { id, ty } => Op::Const {
                id: b.add_const(p.const_data(*id).cloned()),
                ty: ty.clone(),
            },
            op => op.try_map_operands(|o| {
                map[o.index()].ok_or_else(|| {
                    PassError::Internal(format!("live %{} has a dead operand", instr.name))
                })
            })?,
        };
        map[v.index()] = Some(b.push(&instr.name, op)?);
    }
    Ok(b.finish()?)
}

/// Which values are live: outputs, inputs, and everything an output depends on.
pub fn live(p: &Program) -> Vec<bool> {
    let mut live = vec![false; p.instrs().len()];
    for (i, instr) in p.instrs().iter().enumerate().rev() {
        let op = &instr.op;
        if matches!(op, Op::Output { .. } | Op::Input { .. }) {
            live[i] = true;
        }
        if live[i] {
            for o in op.operands() {
                live[o.index()] = true;
            }
        }
    }
    live
}
