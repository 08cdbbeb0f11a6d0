//! numpy in and out: a call's inputs (one array, a dict of arrays by input name, each
//! optionally with a leading batch axis) as the plan's encoded input sets, and the
//! outputs of those sets as float32 arrays (stacked alike).

use crate::errors::InputError;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use sci_ir::npy::{Array, Elements};
use sci_ir::{Program, Tensor};
use sci_runtime::exec::io;

/// A call's input sets, one per inference.
pub struct Inputs {
    /// The encoded input sets, in order.
    pub sets: Vec<Vec<Tensor>>,
    /// Whether the arrays had a leading batch axis (the outputs get one too).
    pub stacked: bool,
}

/// A float array's shape, element type (`f4` or `f8`) and elements widened to f64.
fn float_array(x: &Bound<'_, PyAny>, name: &str) -> PyResult<(Vec<usize>, &'static str, Vec<f64>)> {
    let np = x.py().import("numpy")?;
    let arr = np.call_method1("asarray", (x,))?;
    let dtype = arr.getattr("dtype")?;
    let (kind, size): (String, usize) = (
        dtype.getattr("kind")?.extract()?,
        dtype.getattr("itemsize")?.extract()?,
    );
    let tag = match (kind.as_str(), size) {
        ("f", 4) => "f4",
        ("f", 8) => "f8",
        _ => {
            return Err(InputError::new_err(format!(
                "input {name}: element type {} where float32 or float64 is expected; \
                 convert it with x.astype(numpy.float32)",
                dtype.str()?
            )));
        }
    };
    let wide = arr.call_method1("astype", ("float64",))?;
    let ro: PyReadonlyArrayDyn<'_, f64> = wide.extract()?;
    let view = ro.as_array();
    Ok((view.shape().to_vec(), tag, view.iter().copied().collect()))
}

/// The input sets of `x` for `program`: one array (a single-input plan) or a dict of
/// arrays by input name, each of the input's shape (one inference) or with one more
/// leading axis of the same length `N` for all (`N` inferences, one after another).
pub fn input_sets(program: &Program, x: &Bound<'_, PyAny>) -> PyResult<Inputs> {
    let names = io::input_names(program);
    let shapes: Vec<Vec<usize>> = program
        .inputs()
        .into_iter()
        .map(|v| program.ty(v).shape().to_vec())
        .collect();
    let given: Vec<Bound<'_, PyAny>> = if let Ok(d) = x.cast::<PyDict>() {
        if let Some(k) = d.keys().iter().find(|k| {
            !names
                .iter()
                .any(|n| k.cast::<PyString>().is_ok_and(|s| s == n.as_str()))
        }) {
            return Err(InputError::new_err(format!(
                "the plan has no input called {k} (its inputs: {})",
                names.join(", ")
            )));
        }
        names
            .iter()
            .map(|n| {
                d.get_item(n)?.ok_or_else(|| {
                    InputError::new_err(format!("no array for the plan's input {n}"))
                })
            })
            .collect::<PyResult<_>>()?
    } else if names.len() == 1 {
        vec![x.clone()]
    } else {
        return Err(InputError::new_err(format!(
            "the plan has {} inputs ({}): give a dict of arrays by name",
            names.len(),
            names.join(", ")
        )));
    };
    let arrays: Vec<_> = given
        .iter()
        .zip(&names)
        .map(|(a, n)| float_array(a, n))
        .collect::<PyResult<_>>()?;
    // A leading batch axis: every array one dimension more than its input, same length.
    let batch = arrays
        .iter()
        .zip(&shapes)
        .map(|((shape, _, _), want)| {
            (shape.len() == want.len() + 1 && shape[1..] == want[..]).then(|| shape[0])
        })
        .collect::<Option<Vec<usize>>>()
        .filter(|ns| ns.windows(2).all(|w| w[0] == w[1]))
        .and_then(|ns| ns.first().copied());
    let encode = |set: Vec<Array>| {
        io::encode_inputs(program, &set, "array").map_err(|e| InputError::new_err(e.to_string()))
    };
    let array = |shape: Vec<usize>, tag: &str, data: Vec<f64>| Array {
        shape,
        dtype: tag.to_string(),
        elements: Elements::Float(data),
    };
    match batch {
        Some(n) => {
            let sets = (0..n)
                .map(|k| {
                    let set = arrays
                        .iter()
                        .zip(&shapes)
                        .map(|((_, tag, data), shape)| {
                            let per: usize = shape.iter().product();
                            array(shape.clone(), tag, data[k * per..(k + 1) * per].to_vec())
                        })
                        .collect();
                    encode(set)
                })
                .collect::<PyResult<_>>()?;
            Ok(Inputs {
                sets,
                stacked: true,
            })
        }
        None => {
            let set = arrays
                .into_iter()
                .map(|(shape, tag, data)| array(shape, tag, data))
                .collect();
            Ok(Inputs {
                sets: vec![encode(set)?],
                stacked: false,
            })
        }
    }
}

/// The decoded outputs of `sets` (one per inference) as float32 arrays, stacked along a
/// new leading axis if `stacked`: the array of a single-output plan, else a dict of
/// arrays by output name.
pub fn outputs(
    py: Python<'_>,
    program: &Program,
    sets: &[Vec<Tensor>],
    stacked: bool,
) -> PyResult<Py<PyAny>> {
    let decoded: Vec<Vec<Array>> = sets
        .iter()
        .map(|o| io::decode_outputs(program, o))
        .collect();
    let names = io::output_names(program);
    let mut arrays = Vec::with_capacity(names.len());
    for j in 0..names.len() {
        let items: Vec<&Array> = decoded.iter().filter_map(|set| set.get(j)).collect();
        let Some(first) = items.first() else {
            return Err(InputError::new_err("no inference was run"));
        };
        let mut shape = first.shape.clone();
        if stacked {
            shape.insert(0, items.len());
        }
        let data: Vec<f32> = items.iter().flat_map(|a| a.to_f32()).collect();
        let arr = PyArray1::from_vec(py, data).reshape(shape)?;
        arrays.push(arr.into_any());
    }
    if let [one] = arrays.as_slice() {
        return Ok(one.clone().unbind());
    }
    let d = PyDict::new(py);
    for (n, a) in names.iter().zip(arrays) {
        d.set_item(n, a)?;
    }
    Ok(d.into_any().unbind())
}
