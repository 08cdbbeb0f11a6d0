//! The client's side of the plan boundary: float32 or float64 `.npy` inputs encoded at
//! the plan's input scale (float64 ones directly, not through float32), ring outputs
//! decoded back to float32 `.npy`, and the predicted class.
//!
//! Encoding and decoding are [`sci_ir::fixed::encode_values`] and
//! [`sci_ir::fixed::decode_tensor`], the same functions the compiler and the reference
//! interpreter use, so a secure run and a cleartext run of the same plan write
//! byte-identical output files.

use sci_ir::npy::{Array, NpyError};
use sci_ir::types::ShapeDisplay;
use sci_ir::{Op, Program, Tensor};
use std::path::{Path, PathBuf};

/// An input or output file named on the command line: `FILE.npy` or `NAME=FILE.npy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileArg {
    /// The external name of the plan's input or output, if given.
    pub name: Option<String>,
    /// The `.npy` file.
    pub path: PathBuf,
}

impl FileArg {
    /// Parses `NAME=FILE` or `FILE`. A `=` is read as the separator only if what precedes
    /// it is non-empty and contains no path separator, so `dir/a=b.npy` is a file.
    pub fn parse(s: &str) -> FileArg {
        if let Some((name, path)) = s.split_once('=')
            && !name.is_empty()
            && !name.contains('/')
            && !name.contains(std::path::MAIN_SEPARATOR)
        {
            return FileArg {
                name: Some(name.to_string()),
                path: PathBuf::from(path),
            };
        }
        FileArg {
            name: None,
            path: PathBuf::from(s),
        }
    }
}

/// Why inputs or outputs could not be read, matched or written.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// A file could not be read or written, or is not a valid `.npy`.
    #[error("{path}: {error}")]
    Npy {
        /// The file.
        path: PathBuf,
        /// The error.
        error: NpyError,
    },
    /// The files given do not match the plan's inputs or outputs.
    #[error("{0}")]
    Match(String),
    /// A directory of inputs or outputs could not be read or created.
    #[error("{path}: {error}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// An input file has the wrong element type.
    #[error(
        "input {name} ({path}): element type {dtype} where float32 ('<f4') or float64 ('<f8') is expected; convert it with x.astype(numpy.float32)"
    )]
    DType {
        /// The plan's input name.
        name: String,
        /// The file.
        path: PathBuf,
        /// Its dtype.
        dtype: String,
    },
    /// An input file has the wrong shape.
    #[error("input {name} ({path}): shape {found} where the plan expects {expected}")]
    Shape {
        /// The plan's input name.
        name: String,
        /// The file.
        path: PathBuf,
        /// The plan's shape.
        expected: String,
        /// The file's shape.
        found: String,
    },
    /// An input value cannot be encoded at the plan's scale and bit width.
    #[error("input {name} ({path}): {reason}")]
    Encode {
        /// The plan's input name.
        name: String,
        /// The file.
        path: PathBuf,
        /// The encoding error.
        reason: String,
    },
}

/// External names of the program's [`Op::Input`]s or [`Op::Output`]s, in program order.
fn external_names(program: &Program, outputs: bool) -> Vec<String> {
    let ids = if outputs {
        program.outputs()
    } else {
        program.inputs()
    };
    ids.into_iter()
        .map(|v| match &program.instr(v).op {
            Op::Input { name, .. } | Op::Output { name, .. } => name.clone(),
            _ => program.name(v).to_string(),
        })
        .collect()
}

/// Assigns files to the program's inputs (or outputs): a single unnamed file serves a
/// single-input program; otherwise every name must be given exactly once.
fn assign(program: &Program, files: &[FileArg], outputs: bool) -> Result<Vec<PathBuf>, IoError> {
    let kind = if outputs { "output" } else { "input" };
    let names = external_names(program, outputs);
    let list = names.join(", ");
    if let [FileArg { name: None, path }] = files
        && names.len() == 1
    {
        return Ok(vec![path.clone()]);
    }
    if files.iter().any(|f| f.name.is_none()) {
        return Err(IoError::Match(format!(
            "the plan has {} {kind}s ({list}): give each as --{kind} NAME=FILE.npy",
            names.len()
        )));
    }
    let mut paths = Vec::with_capacity(names.len());
    for n in &names {
        let mut given = files
            .iter()
            .filter(|f| f.name.as_deref() == Some(n.as_str()));
        match (given.next(), given.next()) {
            (Some(f), None) => paths.push(f.path.clone()),
            (None, _) => {
                return Err(IoError::Match(format!(
                    "no file for the plan's {kind} {n} (the plan's {kind}s: {list})"
                )));
            }
            (Some(_), Some(_)) => {
                return Err(IoError::Match(format!("{kind} {n} is given twice")));
            }
        }
    }
    if let Some(f) = files
        .iter()
        .find(|f| !names.iter().any(|n| Some(n.as_str()) == f.name.as_deref()))
    {
        return Err(IoError::Match(format!(
            "the plan has no {kind} called {} (its {kind}s: {list})",
            f.name.as_deref().unwrap_or_default()
        )));
    }
    Ok(paths)
}

/// Reads the client's input files, checks each against the plan's declared input (float32,
/// exactly the declared shape) and encodes it at the input's scale in the plan's ring.
/// Returns the encoded tensors in the order of [`Program::inputs`].
pub fn load_inputs(program: &Program, files: &[FileArg]) -> Result<Vec<Tensor>, IoError> {
    let paths = assign(program, files, false)?;
    let names = external_names(program, false);
    program
        .inputs()
        .into_iter()
        .zip(paths)
        .zip(names)
        .map(|((v, path), name)| {
            let arr = Array::read(&path).map_err(|error| IoError::Npy {
                path: path.clone(),
                error,
            })?;
            encode_input(program, v, &name, &path, &arr)
        })
        .collect()
}

/// Checks and encodes one input array (see [`load_inputs`]).
fn encode_input(
    program: &Program,
    v: sci_ir::ValueId,
    name: &str,
    path: &Path,
    arr: &Array,
) -> Result<Tensor, IoError> {
    let ty = program.ty(v);
    if arr.dtype != "f4" && arr.dtype != "f8" {
        return Err(IoError::DType {
            name: name.to_string(),
            path: path.to_path_buf(),
            dtype: arr.dtype.clone(),
        });
    }
    if arr.shape != ty.shape() {
        return Err(IoError::Shape {
            name: name.to_string(),
            path: path.to_path_buf(),
            expected: ShapeDisplay(ty.shape()).to_string(),
            found: ShapeDisplay(&arr.shape).to_string(),
        });
    }
    let encode_err = |reason: String| IoError::Encode {
        name: name.to_string(),
        path: path.to_path_buf(),
        reason,
    };
    if ty.encoding().is_real() {
        return arr.to_real_tensor().map_err(|e| encode_err(e.to_string()));
    }
    // Encoded from f64: exact for a float32 file, no detour through f32 for float64.
    sci_ir::fixed::encode_values(&arr.shape, arr.to_f64(), ty.scale(), ty.encoding())
        .map_err(|e| encode_err(e.to_string()))
}

/// A client's inputs for one session: one input set per inference.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The encoded input sets, in order.
    pub inputs: Vec<Vec<Tensor>>,
    /// How the batch was given, so the outputs can be written alike.
    pub form: BatchForm,
    /// Items of zeros appended to the last input set to fill the batch of a plan
    /// compiled with `sci-compile --batch B` (0 unless the items given are not a
    /// multiple of B); their outputs are dropped.
    pub padding: usize,
}

/// How a [`Batch`] was given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchForm {
    /// One file per input, of the plan's shapes: one inference.
    Single,
    /// One `.npy` with a leading batch dimension (single-input plans): of shape
    /// `[N] ++ shape` (`new_axis`), or `[N, ...]` for a plan input of shape `[B, ...]`
    /// (N items, B per inference, B = 1 unless compiled with `--batch B`). The outputs
    /// are written as one `.npy` per output, stacked alike.
    Stacked {
        /// The batch dimension is a new leading axis (else it replaces the plan's
        /// leading dimension B).
        new_axis: bool,
    },
    /// A directory of `.npy` files, these names in this order (single-input plans); the
    /// outputs are written into a directory under the same names.
    Directory {
        /// The input files' names.
        names: Vec<std::ffi::OsString>,
        /// Files per inference: 1 for files of the plan's input shape, B for files of
        /// one item (`[1, ...]`) given to a plan compiled with `--batch B`.
        per_inference: usize,
    },
}

/// Reads the client's inputs as a batch ([`BatchForm`]): files of the plan's input
/// shapes are one inference ([`load_inputs`]); for a single-input plan, a directory is
/// one inference per `.npy` file in it (sorted by name), and one `.npy` of shape
/// `[N] ++ shape` is `N` inferences.
///
/// A plan whose input has a leading dimension B (B = 1 unless compiled with
/// `sci-compile --batch B`) also takes items of shape `[1, ...]`, B per inference: one
/// `.npy` of shape `[N, ...]` (N ≠ B) is `⌈N/B⌉` inferences, and so is a directory of
/// N files of one item each. If N is not a multiple of B, the last inference is padded
/// with items of zeros ([`Batch::padding`]) whose outputs are dropped, so every item's
/// output is exactly its output alone.
pub fn load_batch(program: &Program, files: &[FileArg]) -> Result<Batch, IoError> {
    let single = || {
        Ok(Batch {
            inputs: vec![load_inputs(program, files)?],
            form: BatchForm::Single,
            padding: 0,
        })
    };
    let ins = program.inputs();
    let ([file], &[v]) = (files, ins.as_slice()) else {
        return single();
    };
    let name = external_names(program, false).pop().unwrap_or_default();
    let shape = program.ty(v).shape();
    let b = shape.first().copied().unwrap_or(1).max(1);
    let item_shape: Vec<usize> = [&[1][..], shape.get(1..).unwrap_or(&[])].concat();
    let read = |path: &Path| {
        Array::read(path).map_err(|error| IoError::Npy {
            path: path.to_path_buf(),
            error,
        })
    };
    // Encodes items of `item_shape` (their f32 data, concatenated), B per input set.
    let grouped = |data: &[f32], items: usize, path: &Path| -> Result<_, IoError> {
        let per: usize = item_shape.iter().product();
        let sets = items.div_ceil(b);
        let mut padded = data[..items * per].to_vec();
        padded.resize(sets * b * per, 0.0);
        let inputs = padded
            .chunks(b * per)
            .map(|chunk| {
                let one = Array::from_f32(shape.to_vec(), chunk).map_err(|error| IoError::Npy {
                    path: path.to_path_buf(),
                    error,
                })?;
                Ok(vec![encode_input(program, v, &name, path, &one)?])
            })
            .collect::<Result<Vec<_>, IoError>>()?;
        Ok((inputs, sets * b - items))
    };
    if file.path.is_dir() {
        let dir_err = |error| IoError::Dir {
            path: file.path.clone(),
            error,
        };
        let mut names: Vec<_> = std::fs::read_dir(&file.path)
            .map_err(dir_err)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(dir_err)?;
        names.retain(|n| Path::new(n).extension().is_some_and(|e| e == "npy"));
        names.sort();
        let Some(first) = names.first() else {
            return Err(IoError::Match(format!(
                "{}: no .npy files in the directory",
                file.path.display()
            )));
        };
        if b > 1 && read(&file.path.join(first))?.shape == item_shape {
            let mut data = Vec::new();
            for n in &names {
                let path = file.path.join(n);
                let arr = read(&path)?;
                if arr.dtype != "f4" || arr.shape != item_shape {
                    // The same checks and message as for one input.
                    encode_input(program, v, &name, &path, &arr)?;
                }
                data.extend(arr.to_f32());
            }
            let (inputs, padding) = grouped(&data, names.len(), &file.path)?;
            return Ok(Batch {
                inputs,
                form: BatchForm::Directory {
                    names,
                    per_inference: b,
                },
                padding,
            });
        }
        let inputs = names
            .iter()
            .map(|n| {
                let one = FileArg {
                    name: file.name.clone(),
                    path: file.path.join(n),
                };
                load_inputs(program, std::slice::from_ref(&one))
            })
            .collect::<Result<_, _>>()?;
        return Ok(Batch {
            inputs,
            form: BatchForm::Directory {
                names,
                per_inference: 1,
            },
            padding: 0,
        });
    }
    let arr = read(&file.path)?;
    let new_axis = arr.shape.len() == shape.len() + 1 && arr.shape[1..] == *shape;
    let replaced = arr.shape.len() == shape.len()
        && !shape.is_empty()
        && arr.shape[0] != b
        && arr.shape[1..] == shape[1..];
    if arr.dtype != "f4" || !(new_axis || replaced) {
        return single();
    }
    let data = arr.to_f32();
    let (inputs, padding) = if new_axis {
        let per: usize = shape.iter().product();
        let inputs = data
            .chunks(per.max(1))
            .take(arr.shape[0])
            .map(|chunk| {
                let one = Array::from_f32(shape.to_vec(), chunk).map_err(|error| IoError::Npy {
                    path: file.path.clone(),
                    error,
                })?;
                Ok(vec![encode_input(program, v, &name, &file.path, &one)?])
            })
            .collect::<Result<_, IoError>>()?;
        (inputs, 0)
    } else {
        grouped(&data, arr.shape[0], &file.path)?
    };
    Ok(Batch {
        inputs,
        form: BatchForm::Stacked { new_axis },
        padding,
    })
}

/// The rows of `a` along its leading dimension, which must be `rows`: arrays of shape
/// `[1, ...]` (`name` is the output's, for the error).
fn split_rows(a: &Array, rows: usize, name: &str) -> Result<Vec<Array>, IoError> {
    if a.shape.first() != Some(&rows) {
        return Err(IoError::Match(format!(
            "output {name} has shape {} without the plan's leading batch dimension {rows}: write it to one file (give the inputs as one stacked .npy of {rows} items)",
            ShapeDisplay(&a.shape)
        )));
    }
    let shape: Vec<usize> = [&[1][..], &a.shape[1..]].concat();
    let data = a.to_f32();
    let per = data.len() / rows.max(1);
    data.chunks(per.max(1))
        .take(rows)
        .map(|row| {
            Array::from_f32(shape.clone(), row).map_err(|error| IoError::Npy {
                path: PathBuf::new(),
                error,
            })
        })
        .collect()
}

/// Writes the outputs of a batch as it was given ([`BatchForm`]): to the files named
/// (one inference), stacked along the leading dimension (a stacked batch; the outputs
/// of padding items dropped), or into the directory named, one file per input under
/// the input's name.
pub fn write_batch(
    program: &Program,
    files: &[FileArg],
    batch: &Batch,
    outputs: &[Vec<Tensor>],
) -> Result<(), IoError> {
    let names = output_names(program);
    let b = program
        .inputs()
        .first()
        .and_then(|&v| program.ty(v).shape().first().copied())
        .unwrap_or(1)
        .max(1);
    match &batch.form {
        BatchForm::Single => outputs
            .iter()
            .try_for_each(|o| write_outputs(program, files, &decode_outputs(program, o))),
        BatchForm::Stacked { new_axis } => {
            let per: Vec<Vec<Array>> = outputs.iter().map(|o| decode_outputs(program, o)).collect();
            let stacked = (0..program.outputs().len())
                .map(|k| {
                    let one = per.first().map_or(&[][..], |a| &a[k].shape[..]);
                    let mut data: Vec<f32> = per.iter().flat_map(|a| a[k].to_f32()).collect();
                    let shape = match (new_axis, one.split_first()) {
                        (false, Some((&first, rest))) => {
                            let mut rows = first * per.len();
                            if batch.padding > 0 {
                                split_rows(&per[0][k], b, &names[k])?;
                                rows -= batch.padding;
                                data.truncate(rows * rest.iter().product::<usize>());
                            }
                            [&[rows][..], rest].concat()
                        }
                        _ => [&[per.len()][..], one].concat(),
                    };
                    Array::from_f32(shape, &data).map_err(|error| IoError::Npy {
                        path: PathBuf::new(),
                        error,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            write_outputs(program, files, &stacked)
        }
        BatchForm::Directory {
            names: inputs,
            per_inference,
        } => {
            let [dir] = files else {
                return Err(IoError::Match(
                    "a directory of inputs needs one --output DIRECTORY".into(),
                ));
            };
            std::fs::create_dir_all(&dir.path).map_err(|error| IoError::Dir {
                path: dir.path.clone(),
                error,
            })?;
            let mut items = Vec::new();
            for o in outputs {
                let arrays = decode_outputs(program, o);
                if *per_inference == 1 {
                    items.push(arrays);
                    continue;
                }
                let rows = arrays
                    .iter()
                    .zip(&names)
                    .map(|(a, n)| split_rows(a, *per_inference, n))
                    .collect::<Result<Vec<_>, _>>()?;
                items.extend(
                    (0..*per_inference).map(|r| rows.iter().map(|o| o[r].clone()).collect()),
                );
            }
            inputs.iter().zip(items).try_for_each(|(n, arrays)| {
                let one = FileArg {
                    name: dir.name.clone(),
                    path: dir.path.join(n),
                };
                write_outputs(program, &[one], &arrays)
            })
        }
    }
}

/// The program's outputs decoded to float32 arrays (ring/field values at their scale;
/// ArgMax indices, at scale 0, become their float value), in the order of
/// [`Program::outputs`].
pub fn decode_outputs(program: &Program, outputs: &[Tensor]) -> Vec<Array> {
    program
        .outputs()
        .into_iter()
        .zip(outputs)
        .map(|(v, t)| {
            let real = sci_ir::fixed::decode_tensor(t, program.ty(v).scale());
            let data = real.as_f32().unwrap_or_default();
            Array::from_f32(real.shape().to_vec(), data)
                .expect("a decoded tensor has as many elements as its shape")
        })
        .collect()
}

/// Writes the decoded outputs to the files named on the command line (a single unnamed
/// file serves a single-output program).
pub fn write_outputs(
    program: &Program,
    files: &[FileArg],
    arrays: &[Array],
) -> Result<(), IoError> {
    let paths = assign(program, files, true)?;
    for (path, arr) in paths.iter().zip(arrays) {
        arr.write(path).map_err(|error| IoError::Npy {
            path: path.clone(),
            error,
        })?;
    }
    Ok(())
}

/// The predicted class of each row of an output: the index of the first maximum along the
/// last axis (of the signed ring values, so it does not depend on decoding). A
/// one-element-per-row output (e.g. the result of an ArgMax) is returned as its value.
pub fn predicted_classes(t: &Tensor) -> Vec<i64> {
    let Some(vals) = t.to_signed() else {
        return Vec::new();
    };
    let last = t.shape().last().copied().unwrap_or(1).max(1);
    if last == 1 {
        return vals;
    }
    vals.chunks(last)
        .map(|row| {
            let mut best = 0;
            for (i, &x) in row.iter().enumerate() {
                if x > row[best] {
                    best = i;
                }
            }
            best as i64
        })
        .collect()
}

/// External names of the program's outputs, in order.
pub fn output_names(program: &Program) -> Vec<String> {
    external_names(program, true)
}

/// External names of the program's inputs, in the order of [`Program::inputs`].
pub fn input_names(program: &Program) -> Vec<String> {
    external_names(program, false)
}

/// Checks and encodes one input set given as arrays in memory (one per input, in the
/// order of [`Program::inputs`]) as [`load_inputs`] does files: float32 or float64,
/// exactly the declared shape. `origin` stands for the file in error messages.
pub fn encode_inputs(
    program: &Program,
    arrays: &[Array],
    origin: &str,
) -> Result<Vec<Tensor>, IoError> {
    let ins = program.inputs();
    if arrays.len() != ins.len() {
        return Err(IoError::Match(format!(
            "{} input arrays for a plan with {} inputs ({})",
            arrays.len(),
            ins.len(),
            input_names(program).join(", ")
        )));
    }
    ins.into_iter()
        .zip(arrays)
        .zip(input_names(program))
        .map(|((v, arr), name)| encode_input(program, v, &name, Path::new(origin), arr))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sci_ir::Encoding;

    fn prog() -> Program {
        Program::parse(
            "params mill_radix=4 threads=1\n\
             %x: client i16.4[1,3] = input \"x\"\n\
             %y: client i16.4[1,3] = relu %x\n\
             %out: client i16.4[1,3] = output %y \"out\"\n",
        )
        .unwrap()
    }

    #[test]
    fn file_args() {
        assert_eq!(
            FileArg::parse("x=a.npy"),
            FileArg {
                name: Some("x".into()),
                path: "a.npy".into()
            }
        );
        assert_eq!(FileArg::parse("a.npy").name, None);
        assert_eq!(FileArg::parse("dir/a=b.npy").name, None);
        assert_eq!(FileArg::parse("=b.npy").name, None);
    }

    #[test]
    fn inputs_are_checked_and_encoded() {
        let p = prog();
        let dir = std::env::temp_dir().join(format!("sci-exec-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.npy");
        Array::from_f32(vec![1, 3], &[0.5, -1.0, 2.0])
            .unwrap()
            .write(&good)
            .unwrap();
        let t = load_inputs(&p, &[FileArg::parse(good.to_str().unwrap())]).unwrap();
        assert_eq!(t[0].to_signed().unwrap(), vec![8, -16, 32]);
        let named = FileArg::parse(&format!("x={}", good.display()));
        assert!(load_inputs(&p, &[named]).is_ok());
        let wrong = FileArg::parse(&format!("y={}", good.display()));
        assert!(matches!(load_inputs(&p, &[wrong]), Err(IoError::Match(_))));
        let shape = dir.join("shape.npy");
        Array::from_f32(vec![3], &[0.5, -1.0, 2.0])
            .unwrap()
            .write(&shape)
            .unwrap();
        let e = load_inputs(&p, &[FileArg::parse(shape.to_str().unwrap())]).unwrap_err();
        assert!(
            e.to_string()
                .contains("shape [3] where the plan expects [1,3]"),
            "{e}"
        );
        // float64 is encoded from float64: 0.53125 − 1e-12 at scale 4 is 8.4999… → 8,
        // where a detour through float32 (0.53125 → 8.5) would round to 9.
        let f64s = dir.join("f64.npy");
        let below = 0.53125 - 1e-12;
        Array {
            shape: vec![1, 3],
            dtype: "f8".into(),
            elements: sci_ir::npy::Elements::Float(vec![below, -below, 2.0]),
        }
        .write(&f64s)
        .unwrap();
        let t = load_inputs(&p, &[FileArg::parse(f64s.to_str().unwrap())]).unwrap();
        assert_eq!(t[0].to_signed().unwrap(), vec![8, -8, 32]);
        let ints = dir.join("ints.npy");
        Array::from_i64(vec![1, 3], vec![1, 2, 3])
            .unwrap()
            .write(&ints)
            .unwrap();
        let e = load_inputs(&p, &[FileArg::parse(ints.to_str().unwrap())]).unwrap_err();
        assert!(matches!(e, IoError::DType { .. }), "{e}");
        let big = dir.join("big.npy");
        Array::from_f32(vec![1, 3], &[1e6, 0.0, 0.0])
            .unwrap()
            .write(&big)
            .unwrap();
        let e = load_inputs(&p, &[FileArg::parse(big.to_str().unwrap())]).unwrap_err();
        assert!(matches!(e, IoError::Encode { .. }), "{e}");
        let missing = dir.join("missing.npy");
        let e = load_inputs(&p, &[FileArg::parse(missing.to_str().unwrap())]).unwrap_err();
        assert!(matches!(e, IoError::Npy { .. }), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_decode_and_classes() {
        let p = prog();
        let r = Encoding::ring(16).unwrap();
        let t = Tensor::signed(r, vec![1, 3], &[8, -16, 32]).unwrap();
        let a = decode_outputs(&p, std::slice::from_ref(&t));
        assert_eq!(a[0].to_f32(), vec![0.5, -1.0, 2.0]);
        assert_eq!(predicted_classes(&t), vec![2]);
        let ties = Tensor::signed(r, vec![2, 2], &[5, 5, -1, 3]).unwrap();
        assert_eq!(predicted_classes(&ties), vec![0, 1]);
        let idx = Tensor::signed(r, vec![2], &[7, 1]).unwrap();
        assert_eq!(
            predicted_classes(&idx.reshaped(vec![2, 1]).unwrap()),
            vec![7, 1]
        );
    }
}
