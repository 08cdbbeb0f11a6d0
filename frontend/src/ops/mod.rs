//! The op registry: one small function per ONNX op, registered by name in a
//! table (in the style of tract's `onnx/src/ops`). Each function reads its
//! attributes through the helpers of [`crate::model::Node`] (errors name the node
//! and the attribute), branches visibly on the opset version where the op's
//! signature changed, and either folds the node (all inputs constant) or emits
//! IR ops through [`Ctx`].
//!
//! Families: [`shape_ops`] (data movement and the shape subgraphs exporters emit),
//! [`select`] (`Gather`, `Slice`, `Split`: selection by constant indices),
//! [`repeat`] (`Expand`, `Tile`: repetition by constant shapes and counts),
//! [`reduce`] (`ReduceSum`, `ReduceMean` over any axes), [`resize`]
//! (`Resize`, `Upsample`: nearest neighbour),
//! [`arith`] (elementwise arithmetic), [`nn`] (convolution, matrix products,
//! normalisation, activations, pooling).

pub(crate) mod arith;
pub(crate) mod nn;
pub(crate) mod reduce;
pub(crate) mod repeat;
pub(crate) mod resize;
pub(crate) mod select;
pub(crate) mod shape_ops;

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::OnceLock;

use sci_ir::{Builder, Op, Owner, Type, ValueId};

use crate::error::{FrontendError, Result};
use crate::model::Node;
use crate::note::Note;
use crate::tensor::Tensor;

/// The value of an ONNX tensor during lowering.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// Known at compile time (initializers and everything folded from them).
    Const(Rc<Tensor>),
    /// Computed at run time: an IR value of encoding `Real`.
    Act(ValueId),
}

impl Value {
    pub(crate) fn constant(t: Tensor) -> Value {
        Value::Const(Rc::new(t))
    }
}

/// Lowering function of one ONNX op: returns one value per node output (trailing
/// optional outputs may be left out).
pub(crate) type OpFn = fn(&mut Ctx<'_>) -> Result<Vec<Value>>;

/// The op table: ONNX op type (default domain) → lowering function, and whether
/// the op is only evaluated on constants (shape and weight computations).
#[derive(Default)]
pub(crate) struct Registry {
    ops: HashMap<&'static str, (OpFn, bool)>,
}

impl Registry {
    /// Registers an op that lowers to the IR (and folds on constants).
    pub(crate) fn op(&mut self, name: &'static str, f: OpFn) {
        self.ops.insert(name, (f, false));
    }

    /// Registers an op that is only evaluated on constants.
    pub(crate) fn const_op(&mut self, name: &'static str, f: OpFn) {
        self.ops.insert(name, (f, true));
    }

    /// The lowering function of `op_type`.
    pub(crate) fn get(&self, op_type: &str) -> Option<OpFn> {
        self.ops.get(op_type).map(|&(f, _)| f)
    }

    /// Sorted names of the ops with (`const_only = false`) or without an IR lowering.
    fn names(&self, const_only: bool) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self
            .ops
            .iter()
            .filter(|(_, (_, c))| *c == const_only)
            .map(|(n, _)| *n)
            .collect();
        v.sort_unstable();
        v
    }
}

/// The registry of all ops.
pub(crate) fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut reg = Registry::default();
        shape_ops::register(&mut reg);
        select::register(&mut reg);
        repeat::register(&mut reg);
        reduce::register(&mut reg);
        resize::register(&mut reg);
        arith::register(&mut reg);
        nn::register(&mut reg);
        reg
    })
}

/// The supported ops of the default domain, for error messages: those lowered to
/// the IR, then those evaluated on constants only.
pub fn supported_ops() -> String {
    let reg = registry();
    format!(
        "{}; on constants only (shape and weight computations): {}",
        reg.names(false).join(", "),
        reg.names(true).join(", ")
    )
}

/// State shared by the op functions while lowering one node.
pub(crate) struct Ctx<'a> {
    /// The default-domain opset of the model.
    pub opset: i64,
    /// The node being lowered.
    pub node: &'a Node,
    /// The node's input values (`None` for omitted optional inputs).
    inputs: Vec<Option<Value>>,
    /// The IR program being built.
    builder: &'a mut Builder,
    /// IR constants already emitted, by ONNX tensor name.
    const_ids: &'a mut HashMap<String, ValueId>,
    /// Notes for the compiler's report.
    pub notes: &'a mut Vec<Note>,
    /// For each output of the node, the requested outputs it reaches unchanged (itself,
    /// or through `Identity`/`Cast`/`Reshape` only); empty if another needed node reads
    /// it (the lowering may drop a monotone trailing op only on a final output).
    pub final_outputs: Vec<Vec<String>>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        opset: i64,
        node: &'a Node,
        inputs: Vec<Option<Value>>,
        builder: &'a mut Builder,
        const_ids: &'a mut HashMap<String, ValueId>,
        notes: &'a mut Vec<Note>,
        final_outputs: Vec<Vec<String>>,
    ) -> Ctx<'a> {
        Ctx {
            opset,
            node,
            inputs,
            builder,
            const_ids,
            notes,
            final_outputs,
        }
    }

    /// An error about the current node.
    pub fn error(&self, msg: impl Into<String>) -> FrontendError {
        self.node.error(msg)
    }

    /// Number of inputs (including omitted optional ones).
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// The name of input `i` (empty if absent).
    pub fn input_name(&self, i: usize) -> &str {
        self.node.inputs.get(i).map_or("", String::as_str)
    }

    /// Input `i`, which must be present.
    pub fn input(&self, i: usize) -> Result<&Value> {
        self.opt_input(i)
            .ok_or_else(|| self.error(format!("required input #{i} is missing")))
    }

    /// Input `i`, or `None` if it is omitted.
    pub fn opt_input(&self, i: usize) -> Option<&Value> {
        self.inputs.get(i).and_then(Option::as_ref)
    }

    /// Input `i` as a constant; errors if it is computed at run time.
    pub fn const_input(&self, i: usize, what: &str) -> Result<Rc<Tensor>> {
        match self.input(i)? {
            Value::Const(t) => Ok(t.clone()),
            Value::Act(_) => Err(self.error(format!(
                "input #{i} ('{}', {what}) must be a constant (computed from initializers only), \
                 but it depends on the graph input",
                self.input_name(i)
            ))),
        }
    }

    /// Input `i` as a constant, or `None` if omitted.
    pub fn opt_const_input(&self, i: usize, what: &str) -> Result<Option<Rc<Tensor>>> {
        match self.opt_input(i) {
            None => Ok(None),
            Some(_) => self.const_input(i, what).map(Some),
        }
    }

    /// Input `i` as a constant list of integers (e.g. a shape or axes input).
    pub fn const_ints(&self, i: usize, what: &str) -> Result<Vec<i64>> {
        let t = self.const_input(i, what)?;
        t.as_ints().map(<[i64]>::to_vec).ok_or_else(|| {
            self.error(format!(
                "input #{i} ({what}) must be an integer tensor, found {}",
                t.dtype()
            ))
        })
    }

    /// Optional integer-list input `i`.
    pub fn opt_const_ints(&self, i: usize, what: &str) -> Result<Option<Vec<i64>>> {
        match self.opt_input(i) {
            None => Ok(None),
            Some(_) => self.const_ints(i, what).map(Some),
        }
    }

    /// Whether every present input is constant.
    pub fn all_const(&self) -> bool {
        self.inputs
            .iter()
            .flatten()
            .all(|v| matches!(v, Value::Const(_)))
    }

    /// The shape of a value.
    pub fn shape_of(&self, v: &Value) -> Vec<usize> {
        match v {
            Value::Const(t) => t.shape().to_vec(),
            Value::Act(id) => self.builder.ty(*id).shape().to_vec(),
        }
    }

    /// The shape of input `i`.
    pub fn input_shape(&self, i: usize) -> Result<Vec<usize>> {
        Ok(self.shape_of(self.input(i)?))
    }

    /// Input `i` as an IR value, emitting it as a server-owned constant if it is
    /// constant (once per ONNX tensor name).
    pub fn input_act(&mut self, i: usize) -> Result<ValueId> {
        let v = self.input(i)?.clone();
        let name = self.input_name(i).to_string();
        self.act_named(&v, &name)
    }

    /// `v` as an IR value; a constant is emitted once per `name`.
    pub fn act_named(&mut self, v: &Value, name: &str) -> Result<ValueId> {
        match v {
            Value::Act(id) => Ok(*id),
            Value::Const(t) => {
                if let Some(&id) = self.const_ids.get(name) {
                    return Ok(id);
                }
                let id = self.emit_const(t, name, Owner::Server)?;
                self.const_ids.insert(name.to_string(), id);
                Ok(id)
            }
        }
    }

    /// `v` as an IR value; a constant is emitted as a new IR constant named after
    /// the node's output with suffix `suffix`.
    pub fn act(&mut self, v: &Value, suffix: &str) -> Result<ValueId> {
        match v {
            Value::Act(id) => Ok(*id),
            Value::Const(t) => {
                let t = t.clone();
                let name = format!("{}.{suffix}", self.base_name());
                self.emit_const(&t, &name, Owner::Server)
            }
        }
    }

    /// Emits a public constant (part of the model's structure, such as the 6 of
    /// ReLU6, rather than a weight), named after the node's output with `suffix`.
    pub fn public_const(&mut self, t: &Tensor, suffix: &str) -> Result<ValueId> {
        let name = format!("{}.{suffix}", self.base_name());
        self.emit_const(t, &name, Owner::Public)
    }

    /// Emits a `Real` constant holding `t` (converted to f32): `Server`-owned for
    /// weights, `Public` for structural constants.
    fn emit_const(&mut self, t: &Tensor, name: &str, owner: Owner) -> Result<ValueId> {
        let shape = t.shape().to_vec();
        let data = sci_ir::Tensor::real(shape.clone(), t.to_f32())
            .map_err(|e| self.error(format!("constant '{name}': {e}")))?;
        let ty =
            Type::real(shape, owner).map_err(|e| self.error(format!("constant '{name}': {e}")))?;
        let name = self.builder.fresh_name(&crate::note::ir_name(name));
        self.builder
            .constant(&name, ty, data)
            .map_err(|e| FrontendError::Ir(e.to_string()))
    }

    /// The base for names of IR values this node defines: its first output's name.
    fn base_name(&self) -> String {
        let first = self.node.outputs.first().map_or("", String::as_str);
        if first.is_empty() {
            format!("node{}", self.node.desc.index)
        } else {
            first.to_string()
        }
    }

    /// Emits an IR op; its value is named after the node's first output (with a
    /// numeric suffix when several IR ops lower one node). Type errors of the IR
    /// are reported against this node.
    pub fn emit(&mut self, op: Op) -> Result<ValueId> {
        let name = self
            .builder
            .fresh_name(&crate::note::ir_name(&self.base_name()));
        self.builder
            .push(&name, op)
            .map_err(|e| self.node.error(format!("cannot lower to the IR: {e}")))
    }

    /// The IR op that defines `v` (in the program being built).
    pub fn ir_op(&self, v: ValueId) -> &Op {
        &self.builder.instrs()[v.index()].op
    }

    /// Emits an IR op and wraps it as a [`Value`].
    pub fn emit_value(&mut self, op: Op) -> Result<Value> {
        self.emit(op).map(Value::Act)
    }
}
