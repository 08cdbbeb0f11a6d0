//! `sci-frontend`: ONNX loading, shape inference and lowering to the IR.
