//! Helpers shared by the tests that compare compiled testdata models with onnxruntime
//! (`exporters.rs`, `zoo.rs`).

use sci_ir::npy::Array;
use sci_ir::{Program, Tensor, fixed, interp};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The repository's `testdata/`.
pub fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// Writes to the test's stderr directly, past libtest's capture.
pub fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// The decoded outputs of the fixed-point program `p` on case directory `dir`
/// (`input_<i>.npy`, float32 or float64, encoded as `sci-run` encodes them), run by
/// the reference interpreter.
pub fn run_case(p: &Program, dir: &Path) -> Result<Vec<Vec<f64>>, String> {
    let inputs = p
        .inputs()
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let a = Array::read(dir.join(format!("input_{i}.npy"))).map_err(|e| e.to_string())?;
            let ty = p.ty(v);
            fixed::encode_values(ty.shape(), a.to_f64(), ty.scale(), ty.encoding())
                .map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<Tensor>, String>>()?;
    let outs = interp::run(p, &inputs).map_err(|e| e.to_string())?;
    Ok(outs
        .iter()
        .zip(p.outputs())
        .map(|(o, v)| {
            let d = fixed::decode_tensor(o, p.ty(v).scale());
            d.as_f32()
                .map(|x| x.iter().map(|&x| f64::from(x)).collect())
                .unwrap_or_default()
        })
        .collect())
}

/// Index of the first maximum.
pub fn argmax(x: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if v > x[best] {
            best = i;
        }
    }
    best
}
