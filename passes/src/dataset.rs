//! Validation data for autotuning: inputs and integer labels, from a directory holding
//! `x.npy` and `y.npy` or from an `.npz` archive with entries `x` and `y` (as written by
//! `numpy.savez(path, x=..., y=...)`, stored or deflated).
//!
//! `x` has shape `[N, ...]`: sample `i` is `x[i]`, reshaped to the program's input shape
//! (which must have the same number of elements, e.g. `[1, 1, 8, 8]` or `[1, 64]` for
//! 8×8 images). `y` has `N` integer labels (class indices).

use sci_ir::Tensor;
use sci_ir::npy::{Array, NpyError};
use sci_ir::types::numel;
use std::io::Read;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why validation data cannot be loaded.
#[derive(Debug, Error)]
pub enum DatasetError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// An `.npy` array is malformed or of the wrong kind.
    #[error("{path}: {source}")]
    Npy {
        /// The file (or `archive.npz:entry`).
        path: String,
        /// The error.
        source: NpyError,
    },
    /// The `.npz` archive is malformed or lacks an entry.
    #[error("{path}: {reason}")]
    Npz {
        /// The archive.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The arrays do not fit together or the program.
    #[error("{0}")]
    Shape(String),
}

/// A labelled validation set: one `f32` tensor (of the program's input shape) per sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// The inputs.
    pub inputs: Vec<Tensor>,
    /// The labels (class indices), one per input.
    pub labels: Vec<i64>,
}

impl Dataset {
    /// Loads `path` (a directory with `x.npy`/`y.npy`, or an `.npz` file) and reshapes
    /// each sample to `input_shape`.
    pub fn load(path: &Path, input_shape: &[usize]) -> Result<Dataset, DatasetError> {
        let (x, y) = if path.is_dir() {
            (
                read_npy(&path.join("x.npy"))?,
                read_npy(&path.join("y.npy"))?,
            )
        } else {
            read_npz(path)?
        };
        Dataset::from_arrays(&x, &y, input_shape)
    }

    /// Splits `x` (`[N, ...]`) into `N` samples of shape `input_shape` and takes the `N`
    /// labels of `y`.
    pub fn from_arrays(
        x: &Array,
        y: &Array,
        input_shape: &[usize],
    ) -> Result<Dataset, DatasetError> {
        let n = *x
            .shape
            .first()
            .ok_or_else(|| DatasetError::Shape("x is a scalar; expected [N, ...]".into()))?;
        let per = numel(&x.shape[1..]);
        if per != numel(input_shape) {
            return Err(DatasetError::Shape(format!(
                "a sample of x has shape {:?} ({per} elements) but the program's input has shape {input_shape:?} ({} elements)",
                &x.shape[1..],
                numel(input_shape)
            )));
        }
        let labels = y.to_i64().map_err(|source| DatasetError::Npy {
            path: "y".into(),
            source,
        })?;
        if labels.len() != n || y.shape.len() > 2 || (y.shape.len() == 2 && y.shape[1] != 1) {
            return Err(DatasetError::Shape(format!(
                "y has shape {:?}; expected [{n}] labels (one per sample of x)",
                y.shape
            )));
        }
        let data = x.to_f32();
        let inputs = if per == 0 {
            Vec::new()
        } else {
            data.chunks(per)
                .map(|c| Tensor::real(input_shape.to_vec(), c.to_vec()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| DatasetError::Shape(e.to_string()))?
        };
        if inputs.is_empty() {
            return Err(DatasetError::Shape("the validation set is empty".into()));
        }
        Ok(Dataset { inputs, labels })
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }
}

fn read_npy(path: &Path) -> Result<Array, DatasetError> {
    let bytes = std::fs::read(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Array::from_bytes(&bytes).map_err(|source| DatasetError::Npy {
        path: path.display().to_string(),
        source,
    })
}

/// Largest `.npz` entry read (4 GiB).
const MAX_ENTRY: u64 = 1 << 32;

/// Reads entries `x` and `y` (`x.npy`, `y.npy`) of an `.npz` archive.
fn read_npz(path: &Path) -> Result<(Array, Array), DatasetError> {
    let file = std::fs::File::open(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let npz_err = |reason: String| DatasetError::Npz {
        path: path.to_path_buf(),
        reason,
    };
    let mut zip = zip::ZipArchive::new(file).map_err(|e| {
        npz_err(format!(
            "not a directory with x.npy/y.npy nor a readable .npz archive ({e})"
        ))
    })?;
    let mut entry = |name: &str| -> Result<Array, DatasetError> {
        let mut f = zip
            .by_name(&format!("{name}.npy"))
            .map_err(|e| npz_err(format!("entry '{name}.npy': {e}")))?;
        // Bounded, so that a corrupt or malicious archive cannot exhaust memory.
        let mut bytes = Vec::new();
        (&mut f)
            .take(MAX_ENTRY + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| npz_err(format!("entry '{name}.npy': {e}")))?;
        if bytes.len() as u64 > MAX_ENTRY {
            return Err(npz_err(format!(
                "entry '{name}.npy' is larger than {MAX_ENTRY} bytes"
            )));
        }
        Array::from_bytes(&bytes).map_err(|source| DatasetError::Npy {
            path: format!("{}:{name}.npy", path.display()),
            source,
        })
    };
    Ok((entry("x")?, entry("y")?))
}
