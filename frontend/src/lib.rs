//! `sci-frontend`: ONNX loading, constant folding, shape inference and lowering
//! to the float stage of the sci IR.
//!
//! ```no_run
//! let model = sci_frontend::load("model.onnx")?;
//! // Lower up to the graph outputs (or `Some(&["logits".into()])`, the `--output` flag).
//! let (program, notes) = model.lower(None)?;
//! for note in &notes {
//!     eprintln!("note: {note}");
//! }
//! # Ok::<(), sci_frontend::FrontendError>(())
//! ```
//!
//! * [`pb`]: the ONNX protobuf types, generated from the official `onnx-ml.proto`
//!   by pure-Rust `protox` + `prost-build` and checked in (no `protoc`, no build script;
//!   chosen over `onnx-protobuf`, whose published crate needs a pinned `protobuf` and
//!   whose tensor helper ignores `raw_data` and panics on some types).
//! * [`model`]: decoding a model file, version checks (IR ≥ 3, opsets 1–28), graph inputs.
//! * [`tensor`]: `TensorProto` decoding (raw little-endian, typed fields, external data).
//! * [`fold`] and [`shape`]: constant folding kernels and shape inference rules.
//! * `ops`: the op registry, one function per ONNX op (see [`supported_ops`]).
//! * [`lower`]: the driver: needed nodes, topological order, client inputs, outputs.
//! * [`note`]: what the lowering tells the user ([`Note`]) and IR value names.
//!
//! The float baseline is the IR's reference interpreter (`sci_ir::interp`) run on
//! the lowered program; `tests/onnxruntime_reference.rs` checks it against
//! onnxruntime on every test-data model.

mod attr;
pub mod error;
pub mod fold;
pub mod lower;
pub mod model;
pub mod note;
mod ops;
pub mod pb;
pub mod shape;
pub mod tensor;

pub use error::{FrontendError, NodeDesc, Result};
pub use model::Model;
pub use note::{Note, ir_name};
pub use ops::supported_ops;
pub use tensor::{DType, Tensor};

/// Reads and decodes an ONNX model file (see [`Model::load`]); lower it with
/// [`Model::lower`].
pub fn load(path: impl AsRef<std::path::Path>) -> Result<Model> {
    Model::load(path)
}
