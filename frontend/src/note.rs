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
    /// A graph input is DOUBLE: the float-stage program computes in f32, and sci-run
    /// encodes the client's float64 `.npy` into fixed point directly.
    Float64Input {
        /// The graph input.
        input: String,
    },
    /// A trailing monotone op (`Softmax`, `LogSoftmax`) was dropped: the outputs
    /// carry its input (the logits, pre-softmax, instead of probabilities); the argmax
    /// along its axis is the same.
    DroppedMonotone {
        /// The dropped node.
        node: NodeDesc,
        /// The requested outputs that now carry the op's input (the op's output, or
        /// the end of an `Identity`/`Cast`/`Reshape` chain after it).
        outputs: Vec<String>,
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
            Note::Float64Input { input } => write!(
                f,
                "graph input '{input}' is float64: give it as a float64 (or float32) .npy; it is \
                 encoded into fixed point from float64 (the float baseline computes in float32)"
            ),
            Note::DroppedMonotone { node, outputs } => write!(
                f,
                "{node} dropped: it is monotone, so the argmax is unchanged; output {} holds \
                 its input, the logits (pre-softmax), not probabilities",
                outputs
                    .iter()
                    .map(|o| format!("'{o}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
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
