//! The short run of the fuzz targets `plan`, `ir_text`, `npy` and `npz` (see the
//! docs/fuzzing.md): their committed corpus and seeded mutants of it through
//! the same entry functions as the cargo-fuzz targets, which must not panic.

use sci_ir::fuzz_entry;
use sci_testkit::fuzz::replay;

#[test]
fn plan_corpus() {
    assert!(replay("plan", 1, 200, fuzz_entry::plan) > 1000);
}

#[test]
fn ir_text_corpus() {
    assert!(replay("ir_text", 2, 200, fuzz_entry::text) > 1000);
}

#[test]
fn npy_corpus() {
    assert!(replay("npy", 3, 200, fuzz_entry::npy) > 1000);
}

#[test]
fn npz_corpus() {
    assert!(replay("npz", 4, 200, fuzz_entry::npz) > 500);
}
