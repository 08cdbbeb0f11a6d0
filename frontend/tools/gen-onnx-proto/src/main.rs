//! Regenerates `frontend/src/pb/onnx.rs` from the vendored `proto/onnx-ml.proto`
//! (ONNX 1.17.0, from the `onnx` pip wheel; Apache-2.0, see `proto/LICENSE-onnx`).
//!
//! Run from this directory: `cargo run --release`. The `.proto` is parsed by the
//! pure-Rust `protox` compiler (no system `protoc`), and `prost-build` writes the
//! Rust types. The output is checked in, so building `sci-frontend` needs neither.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let proto_dir = here.join("proto");
    let out_dir = here.join("../../src/pb");
    std::fs::create_dir_all(&out_dir)?;
    let fds = protox::compile([proto_dir.join("onnx-ml.proto")], [&proto_dir])?;
    prost_build::Config::new()
        .out_dir(&out_dir)
        // The proto's comments contain indented text that rustdoc would run as doctests.
        .disable_comments(["."])
        .compile_fds(fds)?;
    println!("wrote {}", out_dir.join("onnx.rs").display());
    Ok(())
}
