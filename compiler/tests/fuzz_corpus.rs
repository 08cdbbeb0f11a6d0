//! The short run of the fuzz target `onnx` (see docs/fuzzing.md): its
//! committed corpus and seeded mutants of it through the same entry function as the
//! cargo-fuzz target, which must not panic.

use sci_compiler::fuzz_entry;
use sci_testkit::fuzz::replay;

#[test]
fn onnx_corpus() {
    assert!(replay("onnx", 5, 100, fuzz_entry::onnx) > 1000);
}
