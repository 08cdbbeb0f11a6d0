//! Constant folding.
//!
//! **Rewrites:** every op whose operands are all constants (with their data present)
//! into a constant holding its result, computed by the reference interpreter
//! ([`sci_ir::interp`]) — e.g. the `transpose` of a weight matrix that the frontend
//! emits for `Gemm(transB=1)`, or the `scale_up` of a constant that
//! [`crate::place_truncs`] leaves behind. Folding repeats along chains (a `reshape` of a
//! folded `transpose` folds too). The folded constant keeps the op's name and type: it
//! is server-owned if any operand was, public otherwise.
//!
//! **Why it is exact:** the value is computed by the same interpreter, with the same
//! semantics, that defines the op; it is simply computed at compile time instead of at
//! run time. (`input`, `const` and `output` are never folded.)

use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::{Builder, Op, Program, Tensor, ValueId, interp};

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    let mut rw = Rewriter::new(p);
    // Known constant data of old values (constants and folded ops).
    let mut known: Vec<Option<Tensor>> = vec![None; p.instrs().len()];
    for v in p.ids() {
        let instr = p.instr(v);
        match &instr.op {
            Op::Const { id, .. } => known[v.index()] = p.const_data(*id).cloned(),
            Op::Input { .. } | Op::Output { .. } => {}
            op => {
                let operands = op.operands();
                if !operands.is_empty() && operands.iter().all(|o| known[o.index()].is_some()) {
                    let t = evaluate(p, v, &known)?;
                    rw.define_const(v, instr.ty.clone(), t.clone());
                    known[v.index()] = Some(t);
                    continue;
                }
            }
        }
        rw.copy(v)?;
    }
    rw.finish()
}

/// Evaluates the instruction `v` of `p` on the known data of its operands, by running a
/// two-level program (the operands as constants, then the op) in the interpreter.
fn evaluate(p: &Program, v: ValueId, known: &[Option<Tensor>]) -> Result<Tensor, PassError> {
    let instr = p.instr(v);
    let mut b = Builder::with_params(*p.params());
    let mut local: Vec<(ValueId, ValueId)> = Vec::new();
    for o in instr.op.operands() {
        if local.iter().any(|(old, _)| old == o) {
            continue;
        }
        let data = known[o.index()]
            .clone()
            .ok_or_else(|| PassError::Internal("folding an unknown operand".into()))?;
        let name = format!("c{}", local.len());
        let id = b.constant(&name, p.ty(*o).clone(), data)?;
        local.push((*o, id));
    }
    let op = instr.op.try_map_operands(|o| {
        local
            .iter()
            .find(|(old, _)| old == o)
            .map(|&(_, new)| new)
            .ok_or_else(|| PassError::Internal("operand not mapped".into()))
    })?;
    let y = b.push("y", op)?;
    b.output("out", y)?;
    let mini = b.finish()?;
    let mut outs = interp::run(&mini, &[]).map_err(|error| PassError::Fold {
        value: instr.name.clone(),
        error,
    })?;
    outs.pop()
        .ok_or_else(|| PassError::Internal("folded program has no output".into()))
}
