//! Entry points of the fuzz targets in `fuzz/` (cargo-fuzz, libFuzzer) for what a file
//! can feed this crate: plan files, the text format, `.npy` arrays and `.npz`
//! archives. The fuzz targets and the stable-Rust test `tests/fuzz_corpus.rs` call the
//! same functions, so the committed corpus (`fuzz/corpus/<target>`) is replayed by
//! `cargo test`.
//!
//! Each function accepts any bytes. It returns normally whether or not they decode;
//! a panic (including a failed round-trip assertion below) is the bug a fuzzer finds.
//! Cost: linear in the input plus, for what decodes, type-checking and re-encoding it.

use sha2::{Digest, Sha256};

use crate::dataset::npz_members;
use crate::npy::Array;
use crate::plan::Plan;
use crate::program::Program;

/// Decodes `data` as a plan file, and `data ‖ SHA-256(data)` too: random mutations
/// almost never keep the checksum valid, so the second form is what lets the fuzzer
/// reach the protobuf decoder and the program rebuild (the corpus holds plan files
/// without their last 32 bytes). A plan that decodes must re-encode to bytes that
/// decode to the same program, and its client view must encode and hash.
pub fn plan(data: &[u8]) {
    let _ = Plan::from_bytes(data);
    let mut sealed = data.to_vec();
    sealed.extend_from_slice(&Sha256::digest(data));
    if let Ok(p) = Plan::from_bytes(&sealed) {
        let again = Plan::from_bytes(&p.to_bytes());
        assert_eq!(again.as_ref().ok(), Some(&p), "plan re-encoding differs");
        let view = p.client_view();
        assert_eq!(view.hash(), p.hash(), "the client view hashes differently");
        let _ = Plan::from_bytes(&view.to_bytes());
    }
}

/// Parses `data` (if UTF-8) as the IR text format. A program that parses must print
/// to text that parses back to the same program.
pub fn text(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = Program::parse(src) {
        let printed = p.to_text();
        let q = Program::parse(&printed)
            .unwrap_or_else(|e| panic!("printed program does not parse: {e}\n{printed}"));
        assert_eq!(q, p, "parse ∘ print changed the program:\n{printed}");
    }
}

/// Reads `data` as an `.npy` array and, if it is one, converts it the ways the tools
/// do (floats, integers, a tensor) and writes it back as `.npy`, which must read back
/// with the same shape.
pub fn npy(data: &[u8]) {
    if let Ok(a) = Array::from_bytes(data) {
        convert(&a);
    }
}

/// Reads `data` as an `.npz` archive and every member as an `.npy` array (as
/// [`crate::dataset::Dataset::load`] does).
pub fn npz(data: &[u8]) {
    if let Ok(members) = npz_members(data) {
        for (_, bytes) in members {
            npy(&bytes);
        }
    }
}

fn convert(a: &Array) {
    let _ = a.to_f64();
    let _ = a.to_i64();
    let _ = a.to_real_tensor();
    let mut out = Vec::new();
    a.write_to(&mut out)
        .expect("writing an array that was read succeeds");
    let b = Array::from_bytes(&out).expect("a written array reads back");
    assert_eq!(b.shape, a.shape, "shape changed by write → read");
}
