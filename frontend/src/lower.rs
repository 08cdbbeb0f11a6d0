//! Lowering a loaded ONNX graph to a float-stage (`Encoding::Real`) IR program.
//!
//! 1. The requested outputs (default: the graph outputs) select the nodes they
//!    depend on; nodes of other domains or unsupported ops elsewhere are ignored.
//!    The first unsupported op among the selected nodes is the error, before
//!    anything is folded.
//! 2. Those nodes are ordered topologically (file order is not trusted).
//! 3. Client inputs get their declared shape; a symbolic first (batch) dimension
//!    is set to 1 and reported in a [`Note`]; any other unknown dimension is an error.
//! 4. Each node is lowered by its registered op function (module `ops`, listed by [`crate::supported_ops`]): nodes
//!    whose inputs are all constant are folded, the others emit IR ops whose types
//!    (and so shapes) the IR's builder checks as they are pushed.
//! 5. Each requested output becomes an IR `output` named after the ONNX tensor.

use std::collections::{HashMap, HashSet, VecDeque};

use sci_ir::{Builder, Op, Owner, Program, Type, ValueId};

use crate::error::{FrontendError, Result};
use crate::model::{Dim, Model, Node};
use crate::note::{Note, ir_name};
use crate::ops::{self, Ctx, Value};

impl Model {
    /// Lowers the graph up to `outputs` (ONNX tensor names; `None`: the graph's
    /// outputs) to a float-stage IR program, with notes for the user.
    ///
    /// The program's client inputs are the graph inputs the outputs depend on,
    /// its server constants the (folded) weights, its outputs named after the
    /// requested tensors. Errors name the offending node, op and attribute.
    pub fn lower(&self, outputs: Option<&[String]>) -> Result<(Program, Vec<Note>)> {
        let needed = self.needed(outputs)?;
        let mut st = State {
            builder: Builder::new(),
            values: HashMap::new(),
            const_ids: HashMap::new(),
            notes: Vec::new(),
        };
        // An unsupported op is the first thing to report: before any folding (whose
        // size limit or shape errors would otherwise hide it) and before the inputs.
        if let Some(&i) = needed
            .order
            .iter()
            .find(|&&i| !is_supported(&self.nodes[i]))
        {
            return Err(self.unsupported(i, &needed.readers));
        }
        self.declare_sources(&needed, &mut st)?;
        for &i in &needed.order {
            self.lower_node(i, &needed, &mut st)?;
        }
        for r in &needed.requested {
            self.emit_output(r, &needed, &mut st)?;
        }
        let program = st.builder.finish().map_err(ir_error)?;
        Ok((program, st.notes))
    }

    /// The part of the graph that `outputs` (default: the graph outputs) need.
    /// Errors if no output is requested, a tensor has two producers, a requested
    /// tensor does not exist or the needed nodes form a cycle.
    fn needed(&self, outputs: Option<&[String]>) -> Result<Needed<'_>> {
        let requested: Vec<String> = match outputs {
            Some(o) => o.to_vec(),
            None => self.outputs.clone(),
        };
        if requested.is_empty() {
            return Err(FrontendError::Malformed(
                "the graph declares no outputs".into(),
            ));
        }
        let mut producer: HashMap<&str, usize> = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            for o in n.outputs.iter().filter(|o| !o.is_empty()) {
                if producer.insert(o, i).is_some() {
                    return Err(FrontendError::Malformed(format!(
                        "tensor '{o}' is produced by two nodes"
                    )));
                }
            }
        }
        for r in &requested {
            if !producer.contains_key(r.as_str()) && !self.is_source(r) {
                return Err(self.unknown_output(r));
            }
        }
        let order = self.needed_nodes(&requested, &producer)?;
        let mut readers: HashMap<&str, Vec<usize>> = HashMap::new();
        for &i in &order {
            for inp in self.nodes[i].inputs.iter().filter(|s| !s.is_empty()) {
                readers.entry(inp).or_default().push(i);
            }
        }
        Ok(Needed {
            requested,
            producer,
            readers,
            order,
        })
    }

    /// Whether `name` is an initializer or a graph input.
    fn is_source(&self, name: &str) -> bool {
        self.is_initializer(name) || self.inputs.iter().any(|i| i.name == name)
    }

    /// The error for a requested output that no node produces.
    fn unknown_output(&self, name: &str) -> FrontendError {
        FrontendError::UnknownOutput {
            name: name.to_string(),
            graph_outputs: self.outputs.join(", "),
        }
    }

    /// Binds the sources the needed nodes read: client inputs first (in graph
    /// order, each declared as an IR `input`), then the initializers (constants).
    fn declare_sources(&self, needed: &Needed<'_>, st: &mut State) -> Result<()> {
        let mut sources: HashSet<&str> = needed
            .order
            .iter()
            .flat_map(|&i| self.nodes[i].inputs.iter().map(String::as_str))
            .collect();
        sources.extend(needed.requested.iter().map(String::as_str));
        sources.retain(|name| !needed.producer.contains_key(name));
        for input in self
            .inputs
            .iter()
            .filter(|i| sources.contains(i.name.as_str()))
        {
            let reader = needed
                .readers
                .get(input.name.as_str())
                .and_then(|r| r.first())
                .map(|&i| &self.nodes[i]);
            let id = self.client_input(input, reader, st)?;
            st.values.insert(input.name.clone(), Value::Act(id));
        }
        for name in &sources {
            if !st.values.contains_key(*name)
                && let Some(t) = self.initializer(name)
            {
                st.values.insert(name.to_string(), Value::constant(t?));
            }
        }
        Ok(())
    }

    /// Lowers node `i` by its registered op function and binds its outputs.
    fn lower_node(&self, i: usize, needed: &Needed<'_>, st: &mut State) -> Result<()> {
        let node = &self.nodes[i];
        let f = match ops::registry().get(node.op_type()) {
            Some(f) if node.is_default_domain() => f,
            _ => return Err(self.unsupported(i, &needed.readers)),
        };
        let inputs = node
            .inputs
            .iter()
            .enumerate()
            .map(|(k, name)| {
                if name.is_empty() {
                    return Ok(None);
                }
                st.values.get(name).cloned().map(Some).ok_or_else(|| {
                    node.error(format!(
                        "input #{k} '{name}' is not a graph input, an initializer, or an output the \
                         frontend produces (e.g. the mask of Dropout or the indices of MaxPool)"
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let final_outputs = node
            .outputs
            .iter()
            .map(|o| self.final_targets(o, needed))
            .collect();
        let mut cx = Ctx::new(
            self.opset,
            node,
            inputs,
            &mut st.builder,
            &mut st.const_ids,
            &mut st.notes,
            final_outputs,
        );
        let outs = f(&mut cx)?;
        for (name, v) in node.outputs.iter().zip(outs) {
            if !name.is_empty() {
                st.values.insert(name.clone(), v);
            }
        }
        Ok(())
    }

    /// Emits the IR `output` of the requested tensor `r` (a folded constant
    /// becomes a server constant first), marked `logits` if a dropped trailing
    /// Softmax/LogSoftmax's input reaches it.
    fn emit_output(&self, r: &str, needed: &Needed<'_>, st: &mut State) -> Result<()> {
        let v = st
            .values
            .get(r)
            .cloned()
            .ok_or_else(|| match needed.producer.get(r) {
                Some(&i) => self.nodes[i].error(format!(
                    "output '{r}' of this node is not produced by the frontend"
                )),
                None => self.unknown_output(r),
            })?;
        let x = match v {
            Value::Act(id) => id,
            Value::Const(t) => {
                let shape = t.shape().to_vec();
                let data = sci_ir::Tensor::real(shape.clone(), t.to_f32()).map_err(ir_error)?;
                let ty = Type::real(shape, Owner::Server).map_err(ir_error)?;
                let name = st.builder.fresh_name(&ir_name(r));
                st.builder.constant(&name, ty, data).map_err(ir_error)?
            }
        };
        let logits = st.notes.iter().any(
            |n| matches!(n, Note::DroppedMonotone { outputs, .. } if outputs.iter().any(|o| o == r)),
        );
        let name = st.builder.fresh_name(&format!("{}.out", ir_name(r)));
        st.builder
            .push(
                &name,
                Op::Output {
                    x,
                    name: r.to_string(),
                    logits,
                },
            )
            .map_err(ir_error)?;
        Ok(())
    }

    /// The requested outputs that tensor `t` reaches unchanged up to a reshape: `t`
    /// itself if requested, and the requested tensors after chains of `Identity`,
    /// `Cast` and `Reshape` starting at `t`. Empty if any needed node reads `t` (or a
    /// tensor of such a chain) otherwise: then `t` is not final.
    fn final_targets(&self, t: &str, needed: &Needed<'_>) -> Vec<String> {
        let mut targets = Vec::new();
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            if needed.requested.iter().any(|r| r == t) {
                targets.push(t.to_string());
            }
            for &j in needed.readers.get(t).into_iter().flatten() {
                let reader = &self.nodes[j];
                let pass_through = reader.is_default_domain()
                    && matches!(reader.op_type(), "Identity" | "Cast" | "Reshape")
                    && reader.inputs.first().is_some_and(|i| i == t);
                if !pass_through {
                    return Vec::new();
                }
                stack.extend(reader.outputs.first().map(String::as_str));
            }
        }
        targets
    }

    /// The nodes the `requested` tensors depend on, in a topological order.
    fn needed_nodes(
        &self,
        requested: &[String],
        producer: &HashMap<&str, usize>,
    ) -> Result<Vec<usize>> {
        let mut needed = vec![false; self.nodes.len()];
        let mut stack: Vec<&str> = requested.iter().map(String::as_str).collect();
        while let Some(t) = stack.pop() {
            if let Some(&i) = producer.get(t)
                && !needed[i]
            {
                needed[i] = true;
                stack.extend(
                    self.nodes[i]
                        .inputs
                        .iter()
                        .map(String::as_str)
                        .filter(|s| !s.is_empty()),
                );
            }
        }
        // Kahn's algorithm over the needed nodes, preferring file order.
        let mut deps = vec![0usize; self.nodes.len()];
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate().filter(|(i, _)| needed[*i]) {
            for inp in &n.inputs {
                if let Some(&p) = producer.get(inp.as_str()) {
                    deps[i] += 1;
                    users[p].push(i);
                }
            }
        }
        let mut ready: VecDeque<usize> = (0..self.nodes.len())
            .filter(|&i| needed[i] && deps[i] == 0)
            .collect();
        let mut order = Vec::new();
        while let Some(i) = ready.pop_front() {
            order.push(i);
            for &u in &users[i] {
                deps[u] -= 1;
                if deps[u] == 0 {
                    ready.push_back(u);
                }
            }
        }
        let total = needed.iter().filter(|&&b| b).count();
        if order.len() != total {
            return Err(FrontendError::Malformed("the graph has a cycle".into()));
        }
        Ok(order)
    }

    /// Declares a client input: float type, declared shape with a dynamic batch
    /// dimension set to 1.
    fn client_input(
        &self,
        input: &crate::model::GraphInput,
        reader: Option<&Node>,
        st: &mut State,
    ) -> Result<ValueId> {
        let read_by = reader.map_or(String::new(), |n| format!(" (read by {})", n.desc));
        let err = |msg: String| FrontendError::Input {
            input: input.name.clone(),
            msg: format!("{msg}{read_by}"),
        };
        let dtype = input.float_dtype().map_err(|e| match e {
            FrontendError::UnsupportedDType {
                dtype, supported, ..
            } => err(format!(
                "data type {dtype} is not supported (supported: {supported})"
            )),
            e => e,
        })?;
        if dtype == crate::tensor::DType::F64 {
            st.notes.push(Note::Float64Input {
                input: input.name.clone(),
            });
        }
        let dims = input.dims.as_ref().ok_or_else(|| {
            err("the model declares no shape for it; every dimension must be known".into())
        })?;
        let mut shape = Vec::with_capacity(dims.len());
        for (k, d) in dims.iter().enumerate() {
            match d {
                Dim::Known(v) => shape.push(*v),
                Dim::Unknown(name) if k == 0 => {
                    st.notes.push(Note::BatchSetToOne {
                        input: input.name.clone(),
                        dim: name.clone(),
                    });
                    shape.push(1);
                }
                Dim::Unknown(name) => {
                    return Err(err(format!(
                        "dimension {k} ({}) is unknown; only the first (batch) dimension may be dynamic",
                        name.as_deref().unwrap_or("no name")
                    )));
                }
            }
        }
        let ty = Type::real(shape, Owner::Client).map_err(|e| err(e.to_string()))?;
        let name = st.builder.fresh_name(&ir_name(&input.name));
        st.builder
            .push(
                &name,
                Op::Input {
                    name: input.name.clone(),
                    ty,
                },
            )
            .map_err(|e| err(e.to_string()))
    }
}

/// The part of the graph one lowering needs.
struct Needed<'m> {
    /// The requested output tensors.
    requested: Vec<String>,
    /// The node producing each tensor (all nodes of the graph).
    producer: HashMap<&'m str, usize>,
    /// The needed nodes reading each tensor.
    readers: HashMap<&'m str, Vec<usize>>,
    /// The needed nodes in a topological order.
    order: Vec<usize>,
}

/// An IR error met while building the program, which the frontend did not expect.
fn ir_error(e: impl std::fmt::Display) -> FrontendError {
    FrontendError::Ir(e.to_string())
}

/// Mutable state of one lowering.
struct State {
    builder: Builder,
    values: HashMap<String, Value>,
    const_ids: HashMap<String, ValueId>,
    notes: Vec<Note>,
}

/// Whether the registry has a lowering for the node's op (default domain only).
fn is_supported(node: &Node) -> bool {
    node.is_default_domain() && ops::registry().get(node.op_type()).is_some()
}

impl Model {
    /// The error for node `i`, whose op (or domain) has no lowering. When nothing
    /// the frontend supports comes after it, it is post-processing after the network
    /// (label lookup, `ZipMap`, ...) and the error suggests `--output`.
    fn unsupported(&self, i: usize, readers: &HashMap<&str, Vec<usize>>) -> FrontendError {
        let node = &self.nodes[i];
        let mut seen = HashSet::new();
        let mut stack = vec![i];
        let mut trailing = true;
        while let Some(j) = stack.pop() {
            if !seen.insert(j) {
                continue;
            }
            if j != i && is_supported(&self.nodes[j]) {
                trailing = false;
                break;
            }
            for o in &self.nodes[j].outputs {
                stack.extend(readers.get(o.as_str()).into_iter().flatten());
            }
        }
        let input = node.inputs.first().map_or("", String::as_str);
        let mut hint = String::new();
        if !node.is_default_domain() {
            hint = format!(
                "; only the default ONNX domain is supported, not '{}'",
                node.desc.domain
            );
        }
        if trailing && !input.is_empty() {
            hint.push_str(&format!(
                "; it comes after everything the frontend supports (post-processing?): \
                 compile up to its input with --output {input}"
            ));
        }
        FrontendError::UnsupportedOp {
            node: Box::new(node.desc.clone()),
            supported: ops::supported_ops(),
            hint,
        }
    }
}
