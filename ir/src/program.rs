//! Programs: an SSA arena of typed instructions in execution order, and the [`Builder`]
//! that is the only way to make one (so every [`Program`] is well-typed).
//!
//! A program is a `Vec` of [`Instr`]s in topological order; instruction `i` defines value
//! `ValueId(i)`, which has a unique name and a [`Type`]. Inputs, constants and outputs are
//! instructions too ([`Op::Input`], [`Op::Const`], [`Op::Output`]). Constant data lives
//! in the program's constant table, indexed by [`ConstId`]; server-owned data may be
//! withheld (the client's view of a plan). Protocol parameters ([`Params`]) are part of
//! the program.
//!
//! Passes rebuild programs: iterate over [`Program::instrs`], push rewritten ops into a
//! fresh [`Builder`] (remapping operands with [`Op::map_operands`]), and
//! [`Builder::finish`]. The builder type-checks each instruction as it is pushed.

use crate::backend::{Backend, OtKind};
use crate::check;
use crate::error::{CheckError, CheckErrorKind};
pub use crate::id::{ConstId, ValueId};
use crate::ops::Op;
use crate::tensor::Tensor;
use crate::types::{Encoding, Owner, Type};
use std::collections::HashMap;
use thiserror::Error;

/// Program-level protocol parameters, carried into the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    /// Radix `m` of the millionaires' protocol (Algorithm 1: the inputs are split into
    /// `m`-bit digits compared with `(2^m choose 1)`-OT); 1..=8, default 4 as in the paper.
    pub mill_radix: u32,
    /// Number of parallel chunks (threads, each with its own channel and OT instance) the
    /// runtime splits layers into; 1..=256, default 1. Both parties must agree.
    pub threads: u32,
    /// How the products with the server's weights run (and so the encoding: a ring for
    /// [`Backend::Ot`], an HE field for [`Backend::He`]; [`Program::check_secure`]
    /// checks it). Default OT.
    pub backend: Backend,
    /// The OT engine of the run (IKNP or Ferret's silent OT); both parties run the
    /// plan's unless `sci-run --ot` overrides it for both. Default IKNP, the paper's, for
    /// a program built here or parsed from IR text without `ot=`; `sci-compile` records
    /// silent for an ONNX model unless told otherwise.
    pub ot: OtKind,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            mill_radix: 4,
            threads: 1,
            backend: Backend::Ot,
            ot: OtKind::Iknp,
        }
    }
}

/// Invalid protocol parameters.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParamsError {
    /// `mill_radix` outside 1..=8.
    #[error("millionaires' radix m = {0} is outside 1..=8")]
    MillRadix(u32),
    /// `threads` outside 1..=256.
    #[error("thread count {0} is outside 1..=256")]
    Threads(u32),
}

impl Params {
    /// Checks the ranges documented on the fields.
    pub fn validate(&self) -> Result<(), ParamsError> {
        if !(1..=8).contains(&self.mill_radix) {
            return Err(ParamsError::MillRadix(self.mill_radix));
        }
        if !(1..=256).contains(&self.threads) {
            return Err(ParamsError::Threads(self.threads));
        }
        Ok(())
    }
}

/// One instruction: defines the value `name` of type `ty` by `op`.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    /// The value's name (unique in the program; used in errors and the text format).
    pub name: String,
    /// The operation.
    pub op: Op,
    /// The value's type (as inferred by the type checker).
    pub ty: Type,
}

/// A well-typed program. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    instrs: Vec<Instr>,
    consts: Vec<Option<Tensor>>,
    params: Params,
    names: HashMap<String, ValueId>,
    /// Products that run by another backend than the program's
    /// ([`Program::set_product_backend`]).
    product_backends: HashMap<ValueId, Backend>,
}

impl Program {
    /// The instructions, in execution order; `instrs()[v.index()]` defines `v`.
    pub fn instrs(&self) -> &[Instr] {
        &self.instrs
    }

    /// All value ids, in execution order.
    pub fn ids(&self) -> impl Iterator<Item = ValueId> + '_ {
        (0..self.instrs.len()).map(|i| ValueId(i as u32))
    }

    /// The instruction defining `v`, or `None` if `v` is not a value of this program.
    pub fn get(&self, v: ValueId) -> Option<&Instr> {
        self.instrs.get(v.index())
    }

    /// The instruction defining `v`.
    ///
    /// # Panics
    /// If `v` was not produced for this program (ids are only meaningful in the program
    /// or builder that made them).
    pub fn instr(&self, v: ValueId) -> &Instr {
        self.get(v)
            .expect("ValueId does not belong to this program")
    }

    /// The type of `v` (panics like [`Program::instr`]).
    pub fn ty(&self, v: ValueId) -> &Type {
        &self.instr(v).ty
    }

    /// The name of `v` (panics like [`Program::instr`]).
    pub fn name(&self, v: ValueId) -> &str {
        &self.instr(v).name
    }

    /// The value called `name`.
    pub fn lookup(&self, name: &str) -> Option<ValueId> {
        self.names.get(name).copied()
    }

    /// The [`Op::Input`] values, in program order (the order of the interpreter's and the
    /// executor's inputs).
    pub fn inputs(&self) -> Vec<ValueId> {
        self.ids()
            .filter(|&v| matches!(self.instr(v).op, Op::Input { .. }))
            .collect()
    }

    /// The [`Op::Output`] values, in program order (the order of the outputs).
    pub fn outputs(&self) -> Vec<ValueId> {
        self.ids()
            .filter(|&v| matches!(self.instr(v).op, Op::Output { .. }))
            .collect()
    }

    /// The external name of each [`Op::Output`], in program order, and whether it holds
    /// logits (the input of a dropped trailing Softmax; see [`Op::Output`]).
    pub fn output_names(&self) -> Vec<(&str, bool)> {
        self.ids()
            .filter_map(|v| match &self.instr(v).op {
                Op::Output { name, logits, .. } => Some((name.as_str(), *logits)),
                _ => None,
            })
            .collect()
    }

    /// The protocol parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Number of entries of the constant table.
    pub fn num_consts(&self) -> usize {
        self.consts.len()
    }

    /// The data of constant `id`: `None` if withheld (server data in a client view) or if
    /// `id` is out of range.
    pub fn const_data(&self, id: ConstId) -> Option<&Tensor> {
        self.consts.get(id.index()).and_then(Option::as_ref)
    }

    /// The constant table (entries `None` where withheld).
    pub(crate) fn consts(&self) -> &[Option<Tensor>] {
        &self.consts
    }

    /// For every value, the values that use it as an operand (in program order).
    pub fn users(&self) -> Vec<Vec<ValueId>> {
        let mut users = vec![Vec::new(); self.instrs.len()];
        for v in self.ids() {
            for o in self.instr(v).op.operands() {
                users[o.index()].push(v);
            }
        }
        users
    }

    /// The encoding shared by every value, if there is exactly one (`None` for an empty
    /// program or one that mixes encodings).
    pub fn encoding(&self) -> Option<Encoding> {
        let mut it = self.instrs.iter().map(|i| i.ty.encoding());
        let first = it.next()?;
        it.all(|e| e == first).then_some(first)
    }

    /// Whether some server-owned constant's data is withheld (a client view).
    pub fn has_withheld_consts(&self) -> bool {
        self.consts.iter().any(Option::is_none)
    }

    /// The same program with the data of every server-owned constant withheld: what the
    /// client may see. Public constants keep their data.
    pub fn client_view(&self) -> Program {
        let mut p = self.clone();
        for i in &self.instrs {
            if let Op::Const { id, ty } = &i.op
                && ty.owner() == Owner::Server
            {
                p.consts[id.index()] = None;
            }
        }
        p
    }

    /// A builder holding a copy of this program (same instructions, constants, params),
    /// to append to it.
    pub fn to_builder(&self) -> Builder {
        Builder {
            instrs: self.instrs.clone(),
            consts: self.consts.clone(),
            const_used: self.consts.iter().map(|_| true).collect(),
            params: self.params,
            names: self.names.clone(),
            product_backends: self.product_backends.clone(),
        }
    }

    /// The backend that runs instruction `v`'s product with the server's weights:
    /// `None` unless `v` is one ([`Program::is_secure_product`]); otherwise the one
    /// recorded for it ([`Program::set_product_backend`]) or the program's: the plan's
    /// per-instruction record (`InstrMsg::backend`), and the only place
    /// [`crate::schedule::Step::of`] reads a product's backend from.
    pub fn product_backend(&self, v: ValueId) -> Option<Backend> {
        self.is_secure_product(v).then(|| {
            self.product_backends
                .get(&v)
                .copied()
                .unwrap_or(self.params.backend)
        })
    }

    /// The backend that runs instruction `v`'s product of two secret operands
    /// ([`Program::is_secret_product`]): `None` unless `v` is one; otherwise the one
    /// recorded for it ([`Program::set_product_backend`]) or the rule's default: a
    /// `matmul` of an RLWE program by RLWE (its two cross terms as RLWE products,
    /// `sci_ir::rlwe::secret_matmul`), anything else by OT (`proto::secmul`; an
    /// elementwise `mul` always). The plan's per-instruction record, and the only place
    /// [`crate::schedule::Step::of`] reads a secret product's backend from. Cost:
    /// constant.
    pub fn secret_product_backend(&self, v: ValueId) -> Option<Backend> {
        self.is_secret_product(v).then(|| {
            self.product_backends
                .get(&v)
                .copied()
                .unwrap_or_else(|| self.default_secret_backend(v))
        })
    }

    /// The rule's backend of secret product `v` (see
    /// [`Program::secret_product_backend`]).
    pub(crate) fn default_secret_backend(&self, v: ValueId) -> Backend {
        match self.instr(v).op {
            Op::MatMul { .. } if self.params.backend == Backend::Rlwe => Backend::Rlwe,
            _ => Backend::Ot,
        }
    }

    /// Records that product `v` runs by `backend` (a per-instruction choice, e.g.
    /// `--backend auto`'s). `v` must be a product with the server's weights, and
    /// `backend` must share the program's shares ([`Backend::mixes_with`]: OT and RLWE
    /// on the ring); or a product of two secret operands
    /// ([`Program::is_secret_product`]) on the ring, by OT, or by RLWE if it is a
    /// `matmul`. Passes that rebuild a program drop these choices: make them last.
    pub fn set_product_backend(
        &mut self,
        v: ValueId,
        backend: Backend,
    ) -> Result<(), ProductBackendError> {
        let name = || self.instr(v).name.clone();
        let default = if self.is_secure_product(v) {
            self.params.backend
        } else if self.is_secret_product(v) {
            let matmul = matches!(self.instr(v).op, Op::MatMul { .. });
            if !(backend == Backend::Ot || (backend == Backend::Rlwe && matmul)) {
                return Err(ProductBackendError::Secret {
                    value: name(),
                    backend,
                });
            }
            self.default_secret_backend(v)
        } else {
            return Err(ProductBackendError::NotAProduct(name()));
        };
        if !self.params.backend.mixes_with(backend) {
            return Err(ProductBackendError::Mix {
                value: name(),
                backend,
                program: self.params.backend,
            });
        }
        if backend == default {
            self.product_backends.remove(&v);
        } else {
            self.product_backends.insert(v, backend);
        }
        Ok(())
    }
}

/// Why a product cannot run by the backend asked ([`Program::set_product_backend`]).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ProductBackendError {
    /// The instruction is no product with the server's weights.
    #[error(
        "%{0} is no product with the server's weights nor of two secret operands: it has no backend"
    )]
    NotAProduct(String),
    /// A product of two secret operands asked to run by a backend that does not run it.
    #[error(
        "%{value} multiplies two secret operands, which runs by OT (or by RLWE for a matmul), not by {backend}"
    )]
    Secret {
        /// The value.
        value: String,
        /// The backend asked.
        backend: Backend,
    },
    /// The backend's shares differ from the program's.
    #[error(
        "%{value} cannot run by {backend} in a {program} program: only OT and RLWE mix (both on the ring Z_2^ℓ)"
    )]
    Mix {
        /// The value.
        value: String,
        /// The backend asked.
        backend: Backend,
        /// The program's backend.
        program: Backend,
    },
}

/// Builds a [`Program`] one instruction at a time, type-checking each.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    instrs: Vec<Instr>,
    consts: Vec<Option<Tensor>>,
    const_used: Vec<bool>,
    params: Params,
    names: HashMap<String, ValueId>,
    product_backends: HashMap<ValueId, Backend>,
}

impl Builder {
    /// An empty builder with default [`Params`].
    pub fn new() -> Builder {
        Builder::default()
    }

    /// An empty builder with the given parameters (validated by [`Builder::finish`]).
    pub fn with_params(params: Params) -> Builder {
        Builder {
            params,
            ..Builder::default()
        }
    }

    /// Replaces the protocol parameters (validated by [`Builder::finish`]).
    pub fn set_params(&mut self, params: Params) {
        self.params = params;
    }

    /// The protocol parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Adds an entry to the constant table (`None`: withheld server data) and returns its
    /// id, to be used by exactly one [`Op::Const`]. The data is checked against the
    /// declared type when that instruction is pushed.
    pub fn add_const(&mut self, data: Option<Tensor>) -> ConstId {
        self.consts.push(data);
        self.const_used.push(false);
        ConstId(self.consts.len() as u32 - 1)
    }

    /// Appends an instruction defining a value called `name`, type-checks it and returns
    /// the new value. Errors name the value and the op, with expected vs found.
    pub fn push(&mut self, name: &str, op: Op) -> Result<ValueId, CheckError> {
        let err = |kind| CheckError {
            value: name.to_string(),
            op: op.mnemonic(),
            kind,
        };
        if name.is_empty() {
            return Err(err(CheckErrorKind::EmptyName));
        }
        if self.names.contains_key(name) {
            return Err(err(CheckErrorKind::DuplicateName));
        }
        if self.instrs.len() >= u32::MAX as usize {
            return Err(err(CheckErrorKind::TooManyValues));
        }
        let ty = check::infer(
            &op,
            |v| self.instrs.get(v.index()).map(|i| &i.ty),
            &self.consts,
        )
        .map_err(err)?;
        match &op {
            Op::Const { id, .. } => {
                if self.const_used[id.index()] {
                    return Err(err(CheckErrorKind::Const {
                        reason: format!(
                            "constant #{} is already used by another instruction",
                            id.0
                        ),
                    }));
                }
                self.const_used[id.index()] = true;
            }
            Op::Input { name: ext, .. } | Op::Output { name: ext, .. } => {
                let clash = self.instrs.iter().any(|i| match (&i.op, &op) {
                    (Op::Input { name, .. }, Op::Input { .. })
                    | (Op::Output { name, .. }, Op::Output { .. }) => name == ext,
                    _ => false,
                });
                if clash {
                    return Err(err(CheckErrorKind::DuplicateExternal { name: ext.clone() }));
                }
            }
            _ => {}
        }
        let id = ValueId(self.instrs.len() as u32);
        self.names.insert(name.to_string(), id);
        self.instrs.push(Instr {
            name: name.to_string(),
            op,
            ty,
        });
        Ok(id)
    }

    /// Appends a client input called `name` (value name and external name) of type `ty`
    /// (owner must be `Client`).
    pub fn input(&mut self, name: &str, ty: Type) -> Result<ValueId, CheckError> {
        self.push(
            name,
            Op::Input {
                name: name.to_string(),
                ty,
            },
        )
    }

    /// Appends a constant called `name` of type `ty` (owner `Server` or `Public`) with the
    /// given data (which must match the type's encoding and shape).
    pub fn constant(&mut self, name: &str, ty: Type, data: Tensor) -> Result<ValueId, CheckError> {
        let id = self.add_const(Some(data));
        let r = self.push(name, Op::Const { id, ty });
        if r.is_err() {
            // Drop the unused table entry again so a failed push leaves no trace.
            self.consts.pop();
            self.const_used.pop();
        }
        r
    }

    /// Appends an output revealing `x` to the client under `name` (value name and external
    /// name).
    pub fn output(&mut self, name: &str, x: ValueId) -> Result<ValueId, CheckError> {
        self.push(
            name,
            Op::Output {
                x,
                name: name.to_string(),
                logits: false,
            },
        )
    }

    /// The type of `v`, or `None` if `v` is not a value of this builder.
    pub fn get_ty(&self, v: ValueId) -> Option<&Type> {
        self.instrs.get(v.index()).map(|i| &i.ty)
    }

    /// The type of `v`.
    ///
    /// # Panics
    /// If `v` was not returned by this builder.
    pub fn ty(&self, v: ValueId) -> &Type {
        self.get_ty(v)
            .expect("ValueId does not belong to this builder")
    }

    /// The values pushed so far, in order.
    pub fn ids(&self) -> impl Iterator<Item = ValueId> + '_ {
        (0..self.instrs.len()).map(|i| ValueId(i as u32))
    }

    /// The instructions pushed so far.
    pub fn instrs(&self) -> &[Instr] {
        &self.instrs
    }

    /// The value called `name`.
    pub fn lookup(&self, name: &str) -> Option<ValueId> {
        self.names.get(name).copied()
    }

    /// A name not used yet: `base` itself if free, else `base.1`, `base.2`, ...
    pub fn fresh_name(&self, base: &str) -> String {
        if !base.is_empty() && !self.names.contains_key(base) {
            return base.to_string();
        }
        (1..)
            .map(|i| format!("{base}.{i}"))
            .find(|n| !self.names.contains_key(n))
            .expect("an unbounded sequence of names has a free one")
    }

    /// Finishes the program: validates the parameters and drops constant-table entries no
    /// instruction uses, renumbering the rest in order of first use.
    pub fn finish(mut self) -> Result<Program, ParamsError> {
        self.params.validate()?;
        // Choices copied by `Program::to_builder` that the parameters set since undo.
        let backend = self.params.backend;
        self.product_backends
            .retain(|_, b| *b != backend && backend.mixes_with(*b));
        let mut consts = Vec::new();
        for i in &mut self.instrs {
            if let Op::Const { id, .. } = &mut i.op {
                let new = ConstId(consts.len() as u32);
                consts.push(self.consts[id.index()].take());
                *id = new;
            }
        }
        Ok(Program {
            instrs: self.instrs,
            consts,
            params: self.params,
            names: self.names,
            product_backends: self.product_backends,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Encoding;

    fn ty(shape: Vec<usize>, owner: Owner) -> Type {
        Type::new(Encoding::ring(16).unwrap(), 4, shape, owner).unwrap()
    }

    #[test]
    fn builds_and_queries() {
        let mut b = Builder::new();
        let x = b.input("x", ty(vec![1, 4], Owner::Client)).unwrap();
        let w = b
            .constant(
                "w",
                ty(vec![4, 2], Owner::Server),
                Tensor::canonical(Encoding::ring(16).unwrap(), vec![4, 2], vec![1; 8]).unwrap(),
            )
            .unwrap();
        let y = b
            .push(
                "y",
                Op::MatMul {
                    a: x,
                    b: w,
                    bias: None,
                },
            )
            .unwrap();
        assert_eq!(b.ty(y).scale(), 8);
        assert_eq!(b.ty(y).owner(), Owner::Shared);
        let e = b.push("y", Op::Relu { x: y }).unwrap_err();
        assert_eq!(e.kind, CheckErrorKind::DuplicateName);
        assert_eq!(b.fresh_name("y"), "y.1");
        let o = b.output("out", y).unwrap();
        assert!(b.output("out2", ValueId(99)).is_err());
        let p = b.finish().unwrap();
        assert_eq!(p.inputs(), vec![x]);
        assert_eq!(p.outputs(), vec![o]);
        assert_eq!(p.lookup("w"), Some(w));
        assert_eq!(p.users()[y.index()], vec![o]);
        assert_eq!(p.ty(o).owner(), Owner::Client);
        let cv = p.client_view();
        assert!(cv.has_withheld_consts());
        assert!(!p.has_withheld_consts());
        assert_eq!(p.encoding(), Some(Encoding::ring(16).unwrap()));
    }

    #[test]
    fn unused_constants_are_dropped() {
        let mut b = Builder::new();
        let r = Encoding::ring(8).unwrap();
        b.add_const(None);
        let t = Type::new(r, 0, vec![1], Owner::Public).unwrap();
        b.constant(
            "c",
            t.clone(),
            Tensor::canonical(r, vec![1], vec![3]).unwrap(),
        )
        .unwrap();
        // A failing constant leaves no table entry behind.
        assert!(
            b.constant(
                "d",
                t.with_owner(Owner::Client),
                Tensor::canonical(r, vec![1], vec![3]).unwrap()
            )
            .is_err()
        );
        let p = b.finish().unwrap();
        assert_eq!(p.num_consts(), 1);
        let Op::Const { id, .. } = &p.instrs()[0].op else {
            panic!("expected a constant")
        };
        assert_eq!(id.index(), 0);
        assert_eq!(p.const_data(*id).unwrap().as_u64().unwrap(), &[3]);
    }

    #[test]
    fn params_are_validated() {
        let mut b = Builder::new();
        b.set_params(Params {
            mill_radix: 9,
            ..Params::default()
        });
        assert_eq!(b.finish(), Err(ParamsError::MillRadix(9)));
    }
}
