//! The rebuilding machinery shared by the passes.
//!
//! A pass walks the old program in order and pushes instructions into a fresh
//! [`Builder`] (which type-checks each one), keeping a map from old values to new ones.
//! Constants are emitted lazily, just before their first use, so a constant that a pass
//! replaces (a weight folded with a BatchNorm, say) never appears in the result and its
//! name stays free for the replacement. [`Rewriter::finish`] removes whatever became
//! dead ([`crate::dce`]).

use crate::dce;
use crate::error::PassError;
use sci_ir::{Builder, Op, Params, Program, Tensor, Type, ValueId};

/// Rebuilds a program: see the module docs.
pub(crate) struct Rewriter<'a> {
    /// The program being rewritten.
    pub old: &'a Program,
    b: Builder,
    map: Vec<Option<ValueId>>,
    /// Constants computed by the pass for old values, emitted on first use.
    pending: Vec<Option<(Type, Tensor)>>,
}

impl<'a> Rewriter<'a> {
    /// A rewriter of `old` with an empty builder carrying `old`'s parameters.
    pub fn new(old: &'a Program) -> Self {
        Rewriter::with_params(old, *old.params())
    }

    /// A rewriter of `old` with an empty builder carrying `params`.
    pub fn with_params(old: &'a Program, params: Params) -> Self {
        let n = old.instrs().len();
        Rewriter {
            old,
            b: Builder::with_params(params),
            map: vec![None; n],
            pending: vec![None; n],
        }
    }

    /// The new value standing for the old value `v`. An old constant (or one the pass
    /// computed with [`Rewriter::define_const`]) is emitted here on its first use.
    pub fn get(&mut self, v: ValueId) -> Result<ValueId, PassError> {
        if let Some(n) = self.map[v.index()] {
            return Ok(n);
        }
        let old = self.old;
        let instr = old.instr(v);
        let n = if let Some((ty, t)) = self.pending[v.index()].take() {
            self.constant(&instr.name, ty, t)?
        } else if let Op::Const { id, ty } = &instr.op {
            let cid = self.b.add_const(self.old.const_data(*id).cloned());
            let name = self.b.fresh_name(&instr.name);
            self.b.push(
                &name,
                Op::Const {
                    id: cid,
                    ty: ty.clone(),
                },
            )?
        } else {
            return Err(PassError::Internal(format!(
                "%{} is used before the pass defined it",
                instr.name
            )));
        };
        self.map[v.index()] = Some(n);
        Ok(n)
    }

    /// Records that the old value `old` is now `new`.
    pub fn set(&mut self, old: ValueId, new: ValueId) {
        self.map[old.index()] = Some(new);
    }

    /// Records that the old value `old` is now the constant `t` of type `ty`, emitted on
    /// first use under `old`'s name.
    pub fn define_const(&mut self, old: ValueId, ty: Type, t: Tensor) {
        self.pending[old.index()] = Some((ty, t));
    }

    /// Copies the old instruction `v` with its operands mapped; constants are left for
    /// [`Rewriter::get`] to emit on first use.
    pub fn copy(&mut self, v: ValueId) -> Result<(), PassError> {
        let old = self.old;
        let instr = old.instr(v);
        if matches!(instr.op, Op::Const { .. }) {
            return Ok(());
        }
        let op = instr.op.try_map_operands(|o| self.get(*o))?;
        let n = self.push(&instr.name, op)?;
        self.set(v, n);
        Ok(())
    }

    /// Pushes `op` under `base` (or `base.1`, ... if taken) and returns the new value.
    pub fn push(&mut self, base: &str, op: Op) -> Result<ValueId, PassError> {
        let name = self.b.fresh_name(base);
        Ok(self.b.push(&name, op)?)
    }

    /// Pushes a constant under `base` (or a fresh variant).
    pub fn constant(&mut self, base: &str, ty: Type, t: Tensor) -> Result<ValueId, PassError> {
        let name = self.b.fresh_name(base);
        Ok(self.b.constant(&name, ty, t)?)
    }

    /// The type of a new value.
    pub fn ty(&self, new: ValueId) -> &Type {
        self.b.ty(new)
    }

    /// Finishes the program and removes dead values.
    pub fn finish(self) -> Result<Program, PassError> {
        let p = self.b.finish()?;
        dce::run(&p)
    }
}

/// Runs `sweep` until it reports no change (for rewrites that enable each other, such
/// as folding a `mul` and then an `add` into the same convolution). Each sweep returns
/// the new program and whether it changed anything.
pub(crate) fn fixpoint(
    p: &Program,
    sweep: impl Fn(&Program) -> Result<(Program, bool), PassError>,
) -> Result<Program, PassError> {
    let (mut cur, mut changed) = sweep(p)?;
    // Every sweep removes at least one instruction it rewrites, so this terminates; the
    // bound only guards against a bug.
    let mut rounds = 0;
    while changed {
        rounds += 1;
        if rounds > p.instrs().len() + 1 {
            return Err(PassError::Internal(
                "a rewrite did not reach a fixpoint".into(),
            ));
        }
        (cur, changed) = sweep(&cur)?;
    }
    Ok(cur)
}
