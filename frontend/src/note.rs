//! What the lowering reports to the user ([`Note`]) and how ONNX tensor names
//! become IR value names ([`ir_name`]); shared by the driver (`lower`) and the
//! op functions (`ops`).

use std::fmt;

use crate::error::NodeDesc;

/// Something the compiler should tell the user about the lowering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// A symbolic batch dimension of a graph input was set to 1.
    BatchSetToOne {
        /// The graph input.
        input: String,
        /// The symbolic name of the dimension, if any.
        dim: Option<String>,
    },
    /// A trailing monotone op (`Softmax`, `LogSoftmax`) was dropped: the output
    /// carries its input (e.g. logits instead of probabilities); the argmax is the same.
    DroppedMonotone {
        /// The dropped node.
        node: NodeDesc,
        /// The output tensor that now carries the op's input.
        output: String,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::BatchSetToOne { input, dim } => match dim {
                Some(d) => write!(
                    f,
                    "graph input '{input}': dynamic batch dimension '{d}' set to 1"
                ),
                None => write!(f, "graph input '{input}': dynamic batch dimension set to 1"),
            },
            Note::DroppedMonotone { node, output } => write!(
                f,
                "{node} dropped: it is monotone, so the argmax is unchanged; output '{output}' carries its input"
            ),
        }
    }
}

/// The IR value name for an ONNX tensor name: the same name (the IR's text
/// format quotes names that are not plain), or `_` for an empty one.
pub fn ir_name(onnx: &str) -> String {
    if onnx.is_empty() {
        "_".to_string()
    } else {
        onnx.to_string()
    }
}
