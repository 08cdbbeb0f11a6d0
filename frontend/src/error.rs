//! The frontend's typed errors.
//!
//! Every error that concerns one ONNX node names it (by name, or by its index in
//! the graph when it is unnamed) and its op type; errors about an unsupported op,
//! attribute value or data type also list what is supported.

use std::fmt;
use std::path::PathBuf;

/// Identifies one ONNX node in error messages: its name, or its index in the
/// graph's node list when the name is empty, plus its op type and domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDesc {
    /// The node's `name` field, if not empty.
    pub name: Option<String>,
    /// Position of the node in `GraphProto.node`.
    pub index: usize,
    /// The node's `op_type`.
    pub op_type: String,
    /// The node's domain (`""` for the default ONNX domain).
    pub domain: String,
}

impl fmt::Display for NodeDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "node '{name}'")?,
            None => write!(f, "node #{} (unnamed)", self.index)?,
        }
        if self.domain.is_empty() || self.domain == "ai.onnx" {
            write!(f, " (op {})", self.op_type)
        } else {
            write!(f, " (op {}.{})", self.domain, self.op_type)
        }
    }
}

/// Errors of loading and lowering an ONNX model.
#[derive(Debug, thiserror::Error)]
pub enum FrontendError {
    /// The model file (or an external-data file) could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The bytes are not a valid ONNX protobuf, or violate the ONNX format.
    #[error("malformed ONNX model: {0}")]
    Malformed(String),
    /// The model's IR version or default-domain opset is outside the supported range.
    #[error("unsupported model version: {0}")]
    UnsupportedVersion(String),
    /// A tensor (initializer, `Constant` attribute) cannot be decoded.
    #[error("tensor '{tensor}': {msg}")]
    Tensor {
        /// The tensor's name.
        tensor: String,
        /// What is wrong.
        msg: String,
    },
    /// A tensor has an element type the frontend does not handle.
    #[error(
        "tensor '{tensor}' has data type {dtype}, which is not supported (supported: {supported})"
    )]
    UnsupportedDType {
        /// The tensor's name.
        tensor: String,
        /// The ONNX data type's name.
        dtype: String,
        /// The supported data types, comma-separated.
        supported: String,
    },
    /// A graph input cannot become a client input (unknown dimension, non-float type...).
    #[error("graph input '{input}': {msg}")]
    Input {
        /// The input's name.
        input: String,
        /// What is wrong.
        msg: String,
    },
    /// A requested output is not produced by the graph.
    #[error("output '{name}' is not a tensor of the graph (graph outputs: {graph_outputs})")]
    UnknownOutput {
        /// The requested name.
        name: String,
        /// The graph's declared outputs, comma-separated.
        graph_outputs: String,
    },
    /// A node needed for the requested outputs has an op type the frontend cannot lower.
    #[error("{node}: unsupported op{hint} (supported ops: {supported})")]
    UnsupportedOp {
        /// The node.
        node: Box<NodeDesc>,
        /// The supported ops of the default domain, comma-separated.
        supported: String,
        /// An optional hint, starting with `"; "` (e.g. to use `--output`).
        hint: String,
    },
    /// A node's attribute is missing, has the wrong type, or an unsupported value.
    #[error("{node}: attribute '{attr}': {msg}")]
    Attribute {
        /// The node.
        node: Box<NodeDesc>,
        /// The attribute's name.
        attr: String,
        /// What is wrong, including the supported values when relevant.
        msg: String,
    },
    /// Any other problem with one node (its inputs' shapes or types, a non-constant
    /// operand where a constant is required, ...).
    #[error("{node}: {msg}")]
    Node {
        /// The node.
        node: Box<NodeDesc>,
        /// What is wrong.
        msg: String,
    },
    /// The lowered program was rejected by the IR (a frontend bug if it happens).
    #[error("the lowered IR program is invalid: {0}")]
    Ir(String),
}

/// The frontend's result type.
pub type Result<T, E = FrontendError> = std::result::Result<T, E>;
