//! The package's exceptions: each carries the Rust error's message (its whole chain of
//! causes), so a bad model, a plan mismatch or a vanished peer reads as on the command
//! line, and nothing is a crash of the interpreter.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use sci_runtime::exec::ExecError;
use std::error::Error;

create_exception!(
    _sci,
    SciError,
    PyException,
    "Base class of every error sci raises."
);
create_exception!(
    _sci,
    CompileError,
    SciError,
    "The model could not be compiled (unreadable, an unsupported op, a bad option)."
);
create_exception!(
    _sci,
    PlanError,
    SciError,
    "A plan could not be loaded, saved or run (corrupt file, no weights where needed)."
);
create_exception!(
    _sci,
    InputError,
    SciError,
    "An input does not fit the plan (element type, shape, names, values)."
);
create_exception!(
    _sci,
    PeerError,
    SciError,
    "The session with the peer failed: no peer, TLS authentication, a mismatched plan or \
     version, the peer stopped or vanished, a protocol step failed."
);

/// `e` with its causes, `a: b: c`.
pub fn chain(e: &dyn Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

/// An executor's error as the exception its kind calls for.
pub fn exec_err(e: &ExecError) -> PyErr {
    match e {
        ExecError::NotSecure(_) | ExecError::Encoding(_) | ExecError::NoWeights => {
            PlanError::new_err(chain(e))
        }
        ExecError::Inputs(_) => InputError::new_err(chain(e)),
        _ => PeerError::new_err(chain(e)),
    }
}

/// Registers the exceptions in `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SciError", py.get_type::<SciError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("PeerError", py.get_type::<PeerError>())?;
    Ok(())
}
