//! Entry point of the `onnx` fuzz target in `fuzz/` (cargo-fuzz, libFuzzer): what an
//! ONNX file can feed the compiler's first step. The fuzz target and the stable-Rust
//! test `tests/fuzz_corpus.rs` call the same function, so the committed corpus
//! (`fuzz/corpus/onnx`) is replayed by `cargo test`.

use sci_frontend::Model;

/// Decodes `data` as an ONNX model (without external data) and, if it decodes, lowers
/// it to the float-stage IR as [`crate::driver::load`] does; a lowered program is
/// printed in the text format. Accepts any bytes; a panic is the bug a fuzzer finds.
/// Cost: linear in the model plus the constant folding of its initializers.
pub fn onnx(data: &[u8]) {
    if let Ok(model) = Model::from_bytes(data, None)
        && let Ok((program, _notes)) = model.lower(None)
    {
        let _ = program.to_text();
    }
}
