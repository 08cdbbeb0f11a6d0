//! `sci-frontend`: ONNX loading, constant folding, shape inference and lowering
//! to the sci IR.
//!
//! ONNX models are decoded with `prost` from the official `onnx.proto` (see
//! [`proto`]); tensors are decoded by [`tensor`] (raw, typed and external data).

#![warn(missing_docs)]

mod attr;
pub mod error;
pub mod fold;
pub mod lower;
pub mod model;
mod ops;
pub mod proto;
pub mod shape;
pub mod tensor;

pub use error::{FrontendError, NodeDesc, Result};
pub use model::Model;
pub use tensor::{DType, Tensor};
