//! `sci._sci`: the Rust extension of the Python package `sci` (PyO3, abi3 for CPython ≥
//! 3.9). It exposes the same crates as the command-line tools — the compiler driver,
//! plans, the reference interpreter, the runtime's session and serve loops — with numpy
//! arrays in and out; the pure-Python part of the package (`python/sci`) adds
//! `sci.compile` for ONNX bytes and PyTorch modules. No second implementation: every
//! computation is the crates'.

mod arrays;
mod errors;
mod party;
mod plan;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _sci(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<plan::Plan>()?;
    m.add_class::<party::Server>()?;
    m.add_class::<party::Client>()?;
    m.add_function(wrap_pyfunction!(plan::compile_file, m)?)?;
    m.add_function(wrap_pyfunction!(plan::load, m)?)?;
    m.add_function(wrap_pyfunction!(party::keygen, m)?)?;
    m.add("WIRE_VERSION", sci_runtime::exec::handshake::WIRE_VERSION)?;
    errors::register(m)
}
