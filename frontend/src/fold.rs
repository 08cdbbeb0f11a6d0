//! Constant-folding kernels: ONNX ops evaluated on constant tensors.
//!
//! Exporters compute shapes (`Shape → Gather → Unsqueeze → Concat → Reshape`) and
//! some weights (`ConstantOfShape`, `Unsqueeze`d scale vectors) inside the graph;
//! every node whose inputs are all constant is evaluated here at load time, with
//! ONNX semantics (numpy broadcasting, integer division truncating toward zero,
//! results rounded to the element type). Errors are plain messages; the caller
//! names the node.

use crate::shape::{self, ShapeResult, SliceAxis};
use crate::tensor::{DType, Data, Tensor};

/// Elementwise binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `a · b`.
    Mul,
    /// `a / b` (integers: truncated toward zero; division by zero is an error).
    Div,
    /// `a == b` (boolean result).
    Equal,
    /// `a < b` (boolean result).
    Less,
    /// `a > b` (boolean result).
    Greater,
    /// `max(a, b)`.
    Max,
    /// `min(a, b)`.
    Min,
    /// `a mod b` with the sign of the divisor (Python's `%`; ONNX `Mod` with `fmod = 0`;
    /// integers: modulo zero is an error).
    Mod,
    /// `a mod b` with the sign of the dividend (C's `fmod`; ONNX `Mod` with `fmod = 1`;
    /// integers: modulo zero is an error).
    Fmod,
}

impl BinOp {
    fn is_comparison(self) -> bool {
        matches!(self, BinOp::Equal | BinOp::Less | BinOp::Greater)
    }
}

/// Elementwise unary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `−x`.
    Neg,
    /// `√x` (floats only).
    Sqrt,
    /// `1/x` (floats only).
    Reciprocal,
    /// `max(x, 0)`.
    Relu,
    /// `|x|`.
    Abs,
    /// `⌊x⌋`.
    Floor,
    /// `⌈x⌉`.
    Ceil,
    /// Logical not (booleans only).
    Not,
}

/// Selects elements of `data` by flat index.
fn pick(data: &Data, idx: &[usize]) -> Data {
    match data {
        Data::Float(v) => Data::Float(idx.iter().map(|&i| v[i]).collect()),
        Data::Int(v) => Data::Int(idx.iter().map(|&i| v[i]).collect()),
    }
}

fn make(dtype: DType, shape: Vec<usize>, data: Data) -> ShapeResult<Tensor> {
    Tensor::new(dtype, shape, data)
}

/// `a op b` with numpy broadcasting. Both operands must have the same type.
pub fn binary(a: &Tensor, b: &Tensor, op: BinOp) -> ShapeResult<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(format!(
            "operand types differ ({} and {})",
            a.dtype(),
            b.dtype()
        ));
    }
    let out = shape::broadcast(a.shape(), b.shape())?;
    shape::fold_numel(&out)?;
    let ia = shape::broadcast_indices(a.shape(), &out);
    let ib = shape::broadcast_indices(b.shape(), &out);
    let dtype = if op.is_comparison() {
        DType::Bool
    } else {
        a.dtype()
    };
    let data = match (a.data(), b.data()) {
        (Data::Float(x), Data::Float(y)) => {
            let f = |p: f64, q: f64| match op {
                BinOp::Add => p + q,
                BinOp::Sub => p - q,
                BinOp::Mul => p * q,
                BinOp::Div => p / q,
                BinOp::Equal => f64::from(u8::from(p == q)),
                BinOp::Less => f64::from(u8::from(p < q)),
                BinOp::Greater => f64::from(u8::from(p > q)),
                BinOp::Max => p.max(q),
                BinOp::Min => p.min(q),
                BinOp::Fmod => p % q,
                BinOp::Mod => {
                    let r = p % q;
                    if r != 0.0 && (r < 0.0) != (q < 0.0) {
                        r + q
                    } else {
                        r
                    }
                }
            };
            let v: Vec<f64> = ia.iter().zip(&ib).map(|(&i, &j)| f(x[i], y[j])).collect();
            if op.is_comparison() {
                Data::Int(v.iter().map(|&z| z as i64).collect())
            } else {
                Data::Float(v)
            }
        }
        (Data::Int(x), Data::Int(y)) => {
            let f = |p: i64, q: i64| -> ShapeResult<i64> {
                Ok(match op {
                    BinOp::Add => p.wrapping_add(q),
                    BinOp::Sub => p.wrapping_sub(q),
                    BinOp::Mul => p.wrapping_mul(q),
                    BinOp::Div => p.checked_div(q).ok_or("integer division by zero")?,
                    BinOp::Equal => i64::from(p == q),
                    BinOp::Less => i64::from(p < q),
                    BinOp::Greater => i64::from(p > q),
                    BinOp::Max => p.max(q),
                    BinOp::Min => p.min(q),
                    BinOp::Fmod | BinOp::Mod => {
                        let r = p.checked_rem(q).ok_or("integer modulo by zero")?;
                        if op == BinOp::Mod && r != 0 && (r < 0) != (q < 0) {
                            r + q
                        } else {
                            r
                        }
                    }
                })
            };
            Data::Int(
                ia.iter()
                    .zip(&ib)
                    .map(|(&i, &j)| f(x[i], y[j]))
                    .collect::<ShapeResult<_>>()?,
            )
        }
        _ => return Err("operand storage classes differ".into()),
    };
    make(dtype, out, data)
}

/// `op x` elementwise.
pub fn unary(x: &Tensor, op: UnOp) -> ShapeResult<Tensor> {
    if matches!(
        (x.data(), op),
        (Data::Float(_), UnOp::Not) | (Data::Int(_), UnOp::Sqrt | UnOp::Reciprocal)
    ) {
        return Err(format!("{op:?} is not defined for {}", x.dtype()));
    }
    let data = match (x.data(), op) {
        (Data::Float(v), _) => Data::Float(
            v.iter()
                .map(|&p| match op {
                    UnOp::Neg => -p,
                    UnOp::Sqrt => p.sqrt(),
                    UnOp::Reciprocal => 1.0 / p,
                    UnOp::Relu => p.max(0.0),
                    UnOp::Abs => p.abs(),
                    UnOp::Floor => p.floor(),
                    UnOp::Ceil => p.ceil(),
                    UnOp::Not => p,
                })
                .collect(),
        ),
        (Data::Int(v), _) => Data::Int(
            v.iter()
                .map(|&p| match op {
                    UnOp::Neg => p.wrapping_neg(),
                    UnOp::Relu => p.max(0),
                    UnOp::Abs => p.wrapping_abs(),
                    UnOp::Not => i64::from(p == 0),
                    _ => p,
                })
                .collect(),
        ),
    };
    make(x.dtype(), x.shape().to_vec(), data)
}

/// `Where(cond, x, y)`: `x` where `cond` is non-zero, else `y`, broadcasting all three.
pub fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> ShapeResult<Tensor> {
    let c = cond.as_ints().ok_or("Where condition must be boolean")?;
    if x.dtype() != y.dtype() {
        return Err(format!(
            "Where branches differ in type ({} and {})",
            x.dtype(),
            y.dtype()
        ));
    }
    let out = shape::broadcast(&shape::broadcast(cond.shape(), x.shape())?, y.shape())?;
    shape::fold_numel(&out)?;
    let ic = shape::broadcast_indices(cond.shape(), &out);
    let ix = shape::broadcast_indices(x.shape(), &out);
    let iy = shape::broadcast_indices(y.shape(), &out);
    let data = match (x.data(), y.data()) {
        (Data::Float(a), Data::Float(b)) => Data::Float(
            (0..ic.len())
                .map(|k| if c[ic[k]] != 0 { a[ix[k]] } else { b[iy[k]] })
                .collect(),
        ),
        (Data::Int(a), Data::Int(b)) => Data::Int(
            (0..ic.len())
                .map(|k| if c[ic[k]] != 0 { a[ix[k]] } else { b[iy[k]] })
                .collect(),
        ),
        _ => return Err("Where branches differ in storage class".into()),
    };
    make(x.dtype(), out, data)
}

/// Flat source index of every output element of a transpose by `perm` (normalised).
pub fn transpose_indices(input: &[usize], perm: &[usize]) -> Vec<usize> {
    let in_strides = shape::strides(input);
    let out_shape: Vec<usize> = perm.iter().map(|&p| input[p]).collect();
    let numel: usize = out_shape.iter().product();
    let mut idx = vec![0usize; out_shape.len()];
    let mut result = Vec::with_capacity(numel);
    for _ in 0..numel {
        result.push(idx.iter().zip(perm).map(|(&i, &p)| i * in_strides[p]).sum());
        for d in (0..out_shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < out_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    result
}

/// `Transpose` with an optional permutation (default: reverse the axes).
pub fn transpose(x: &Tensor, perm: Option<&[i64]>) -> ShapeResult<Tensor> {
    let (perm, out) = shape::transpose(x.shape(), perm)?;
    let idx = transpose_indices(x.shape(), &perm);
    make(x.dtype(), out, pick(x.data(), &idx))
}

/// `Gather(data, indices, axis)`: negative indices count from the end.
pub fn gather(data: &Tensor, indices: &Tensor, axis: i64) -> ShapeResult<Tensor> {
    let ax = shape::axis(axis, data.shape().len())?;
    let ind = indices.as_ints().ok_or("Gather indices must be integers")?;
    let dim = data.shape()[ax];
    let outer: usize = data.shape()[..ax].iter().product();
    let inner: usize = data.shape()[ax + 1..].iter().product();
    let ind = ind
        .iter()
        .map(|&i| {
            let j = if i < 0 { i + dim as i64 } else { i };
            if (0..dim as i64).contains(&j) {
                Ok(j as usize)
            } else {
                Err(format!(
                    "Gather index {i} is out of range for dimension {dim}"
                ))
            }
        })
        .collect::<ShapeResult<Vec<usize>>>()?;
    let mut out_shape = data.shape()[..ax].to_vec();
    out_shape.extend_from_slice(indices.shape());
    out_shape.extend_from_slice(&data.shape()[ax + 1..]);
    shape::fold_numel(&out_shape)?;
    let mut idx = Vec::new();
    for o in 0..outer {
        for &i in &ind {
            idx.extend((0..inner).map(|k| (o * dim + i) * inner + k));
        }
    }
    make(data.dtype(), out_shape, pick(data.data(), &idx))
}

/// `Slice` with resolved per-axis parameters.
pub fn slice(x: &Tensor, axes: &[SliceAxis]) -> ShapeResult<Tensor> {
    let in_shape = x.shape();
    let mut out_shape = in_shape.to_vec();
    let mut start = vec![0i64; in_shape.len()];
    let mut step = vec![1i64; in_shape.len()];
    for a in axes {
        out_shape[a.axis] = a.len;
        start[a.axis] = a.start;
        step[a.axis] = a.step;
    }
    let in_strides = shape::strides(in_shape);
    let numel = shape::fold_numel(&out_shape)?;
    let mut idx = vec![0usize; out_shape.len()];
    let mut flat = Vec::with_capacity(numel);
    for _ in 0..numel {
        let f: i64 = (0..idx.len())
            .map(|d| (start[d] + idx[d] as i64 * step[d]) * in_strides[d] as i64)
            .sum();
        flat.push(f as usize);
        for d in (0..out_shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < out_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    make(x.dtype(), out_shape, pick(x.data(), &flat))
}

/// `Concat` along `axis` (possibly negative) of tensors of one type.
pub fn concat(xs: &[&Tensor], axis: i64) -> ShapeResult<Tensor> {
    let first = xs.first().ok_or("Concat of no tensors")?;
    let ax = shape::axis(axis, first.shape().len())?;
    if xs.iter().any(|t| t.dtype() != first.dtype()) {
        return Err("Concat operands differ in type".into());
    }
    let shapes: Vec<&[usize]> = xs.iter().map(|t| t.shape()).collect();
    let out = shape::concat(&shapes, ax)?;
    let outer: usize = out[..ax].iter().product();
    let mut data = match first.data() {
        Data::Float(_) => Data::Float(Vec::new()),
        Data::Int(_) => Data::Int(Vec::new()),
    };
    for o in 0..outer {
        for t in xs {
            let chunk: usize = t.shape()[ax..].iter().product();
            match (&mut data, t.data()) {
                (Data::Float(d), Data::Float(s)) => {
                    d.extend_from_slice(&s[o * chunk..(o + 1) * chunk])
                }
                (Data::Int(d), Data::Int(s)) => d.extend_from_slice(&s[o * chunk..(o + 1) * chunk]),
                _ => return Err("Concat operands differ in storage class".into()),
            }
        }
    }
    make(first.dtype(), out, data)
}

/// `Range(start, limit, delta)` of scalar tensors: element i is start + i·delta,
/// computed in f64 (in f32 for float16/bfloat16 operands) and rounded to the type.
pub fn range(start: &Tensor, limit: &Tensor, delta: &Tensor) -> ShapeResult<Tensor> {
    let scalar = |t: &Tensor| match t.to_f64().as_slice() {
        [v] => Ok(*v),
        _ => Err("Range operands must be scalars".to_string()),
    };
    let (s, l, d) = (scalar(start)?, scalar(limit)?, scalar(delta)?);
    if d == 0.0 {
        return Err("Range delta is 0".into());
    }
    let n = ((l - s) / d).ceil().max(0.0);
    if n > shape::MAX_FOLD_ELEMENTS as f64 {
        return Err(format!("Range of {n} elements is too large"));
    }
    let n = n as usize;
    let data = match start.data() {
        // Half-precision operands are computed in float and rounded once to
        // the output type (Range-27, `stash_type` = FLOAT).
        Data::Float(_) if matches!(start.dtype(), DType::F16 | DType::BF16) => {
            let (s, d) = (s as f32, d as f32);
            Data::Float((0..n).map(|i| f64::from(s + i as f32 * d)).collect())
        }
        Data::Float(_) => Data::Float((0..n).map(|i| s + i as f64 * d).collect()),
        Data::Int(_) => {
            let (s, d) = (s as i64, d as i64);
            Data::Int(
                (0..n as i64)
                    .map(|i| s.wrapping_add(i.wrapping_mul(d)))
                    .collect(),
            )
        }
    };
    make(start.dtype(), vec![n], data)
}

/// `ConstantOfShape(shape)`: a tensor of the given shape filled with `value`'s
/// single element (default: float 0).
pub fn constant_of_shape(shape_t: &Tensor, value: Option<&Tensor>) -> ShapeResult<Tensor> {
    let dims = shape_t
        .as_ints()
        .ok_or("ConstantOfShape input must be INT64")?;
    let shape = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("negative dimension {d}")))
        .collect::<ShapeResult<Vec<usize>>>()?;
    let n = shape::fold_numel(&shape)?;
    match value {
        None => make(DType::F32, shape, Data::Float(vec![0.0; n])),
        Some(v) => {
            let data = match v.data() {
                Data::Float(x) if x.len() == 1 => Data::Float(vec![x[0]; n]),
                Data::Int(x) if x.len() == 1 => Data::Int(vec![x[0]; n]),
                _ => return Err("ConstantOfShape value must have one element".into()),
            };
            make(v.dtype(), shape, data)
        }
    }
}

/// How `ScatterND` combines an update with the element it lands on (`reduction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scatter {
    /// The update replaces the element (`none`).
    Replace,
    /// `element + update` (`add`).
    Add,
    /// `element · update` (`mul`).
    Mul,
    /// `max(element, update)` (`max`).
    Max,
    /// `min(element, update)` (`min`).
    Min,
}

/// `ScatterND(data, indices, updates)`: a copy of `data` where each index tuple
/// `indices[j…, :]` (length `k` ≤ rank, negative entries counting from the end)
/// addresses the slice `data[i_1, …, i_k, :]`, combined with `updates[j…]` by
/// `how`; updates apply in row-major order of `j`. `updates` must have shape
/// `indices.shape[..-1] ++ data.shape[k..]` and the same type as `data`.
pub fn scatter_nd(
    data: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    how: Scatter,
) -> ShapeResult<Tensor> {
    let ind = indices
        .as_ints()
        .ok_or("ScatterND indices must be integers")?;
    let (d_shape, i_shape) = (data.shape(), indices.shape());
    let k = *i_shape
        .last()
        .ok_or("ScatterND indices must have rank at least 1")?;
    if k > d_shape.len() {
        return Err(format!(
            "ScatterND index tuples have {k} entries but data has rank {}",
            d_shape.len()
        ));
    }
    let expected: Vec<usize> = i_shape[..i_shape.len() - 1]
        .iter()
        .chain(&d_shape[k..])
        .copied()
        .collect();
    if updates.shape() != expected.as_slice() {
        return Err(format!(
            "ScatterND updates have shape {:?}, expected {expected:?} (indices {i_shape:?}, data {d_shape:?})",
            updates.shape()
        ));
    }
    if updates.dtype() != data.dtype() {
        return Err(format!(
            "ScatterND updates are {} but data is {}",
            updates.dtype(),
            data.dtype()
        ));
    }
    let slice: usize = d_shape[k..].iter().product();
    let strides = shape::strides(d_shape);
    // The flat offset of every index tuple's slice.
    let tuples: usize = i_shape[..i_shape.len() - 1].iter().product();
    let offsets = (0..tuples)
        .map(|j| {
            ind[j * k..(j + 1) * k]
                .iter()
                .enumerate()
                .try_fold(0usize, |acc, (axis, &i)| {
                    let dim = d_shape[axis] as i64;
                    let at = if i < 0 { i + dim } else { i };
                    if !(0..dim).contains(&at) {
                        return Err(format!(
                            "ScatterND index {i} is out of range for axis {axis} of size {dim}"
                        ));
                    }
                    Ok(acc + at as usize * strides[axis])
                })
        })
        .collect::<ShapeResult<Vec<usize>>>()?;
    fn apply<T: Copy>(
        out: &mut [T],
        upd: &[T],
        offsets: &[usize],
        slice: usize,
        f: impl Fn(T, T) -> T,
    ) {
        for (j, &o) in offsets.iter().enumerate() {
            let src = &upd[j * slice..(j + 1) * slice];
            for (e, &u) in out[o..o + slice].iter_mut().zip(src) {
                *e = f(*e, u);
            }
        }
    }
    let out = match (data.data().clone(), updates.data()) {
        (Data::Float(mut v), Data::Float(u)) => {
            apply(&mut v, u, &offsets, slice, |e, u| match how {
                Scatter::Replace => u,
                Scatter::Add => e + u,
                Scatter::Mul => e * u,
                Scatter::Max => e.max(u),
                Scatter::Min => e.min(u),
            });
            Data::Float(v)
        }
        (Data::Int(mut v), Data::Int(u)) => {
            apply(&mut v, u, &offsets, slice, |e, u| match how {
                Scatter::Replace => u,
                Scatter::Add => e.wrapping_add(u),
                Scatter::Mul => e.wrapping_mul(u),
                Scatter::Max => e.max(u),
                Scatter::Min => e.min(u),
            });
            Data::Int(v)
        }
        _ => return Err("ScatterND data and updates differ in storage class".into()),
    };
    let mut t = make(data.dtype(), d_shape.to_vec(), out)?;
    t.round_to_dtype();
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(shape: Vec<usize>, v: &[f32]) -> Tensor {
        Tensor::from_f32(shape, v).unwrap()
    }
    fn i(shape: Vec<usize>, v: Vec<i64>) -> Tensor {
        Tensor::from_i64(shape, v).unwrap()
    }

    #[test]
    fn binary_broadcast() {
        let a = f(vec![2, 1], &[1.0, 2.0]);
        let b = f(vec![3], &[10.0, 20.0, 30.0]);
        let c = binary(&a, &b, BinOp::Add).unwrap();
        assert_eq!(c.shape(), &[2, 3]);
        assert_eq!(c.to_f32(), vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
        assert_eq!(
            binary(&i(vec![2], vec![7, -7]), &i(vec![], vec![2]), BinOp::Div)
                .unwrap()
                .as_ints()
                .unwrap(),
            &[3, -3]
        );
        assert!(binary(&i(vec![1], vec![1]), &i(vec![1], vec![0]), BinOp::Div).is_err());
        assert!(binary(&a, &i(vec![1], vec![1]), BinOp::Add).is_err());
        let e = binary(
            &i(vec![2], vec![1, 2]),
            &i(vec![2], vec![1, 3]),
            BinOp::Equal,
        )
        .unwrap();
        assert_eq!(
            (e.dtype(), e.as_ints().unwrap()),
            (DType::Bool, &[1, 0][..])
        );
    }

    /// ONNX `Mod`: the sign of the divisor (`fmod = 0`) or of the dividend (`fmod = 1`),
    /// as numpy's `mod` and `fmod`.
    #[test]
    fn modulo_signs() {
        let a = i(vec![4], vec![7, -7, 7, -7]);
        let b = i(vec![4], vec![3, 3, -3, -3]);
        let ints = |op| binary(&a, &b, op).unwrap().as_ints().unwrap().to_vec();
        assert_eq!(ints(BinOp::Mod), [1, 2, -2, -1]);
        assert_eq!(ints(BinOp::Fmod), [1, -1, 1, -1]);
        let zero = i(vec![1], vec![0]);
        assert!(binary(&a, &zero, BinOp::Mod).is_err());
        assert!(binary(&a, &zero, BinOp::Fmod).is_err());
        let x = f(vec![3], &[5.5, -5.5, 6.0]);
        let y = f(vec![3], &[-2.0, 2.0, 3.0]);
        let floats = |op| binary(&x, &y, op).unwrap().to_f32();
        assert_eq!(floats(BinOp::Mod), [-0.5, 0.5, 0.0]);
        assert_eq!(floats(BinOp::Fmod), [1.5, -1.5, 0.0]);
    }

    #[test]
    fn unary_ops() {
        let x = f(vec![2], &[4.0, -1.0]);
        assert_eq!(unary(&x, UnOp::Relu).unwrap().to_f32(), vec![4.0, 0.0]);
        assert_eq!(
            unary(&f(vec![1], &[4.0]), UnOp::Sqrt).unwrap().to_f32(),
            vec![2.0]
        );
        assert!(unary(&i(vec![1], vec![4]), UnOp::Sqrt).is_err());
        assert!(unary(&x, UnOp::Not).is_err());
    }

    #[test]
    fn gather_slice_concat_transpose() {
        let shape = i(vec![4], vec![1, 3, 28, 28]);
        assert_eq!(
            gather(&shape, &i(vec![], vec![0]), 0)
                .unwrap()
                .as_ints()
                .unwrap(),
            &[1]
        );
        assert_eq!(
            gather(&shape, &i(vec![], vec![-1]), 0).unwrap().shape(),
            &[] as &[usize]
        );
        assert!(gather(&shape, &i(vec![1], vec![4]), 0).is_err());
        let m = i(vec![2, 3], vec![0, 1, 2, 3, 4, 5]);
        let g = gather(&m, &i(vec![2], vec![2, 0]), 1).unwrap();
        assert_eq!(
            (g.shape(), g.as_ints().unwrap()),
            (&[2, 2][..], &[2, 0, 5, 3][..])
        );
        let s = crate::shape::slice(m.shape(), &[1], &[3], Some(&[1]), None).unwrap();
        assert_eq!(slice(&m, &s).unwrap().as_ints().unwrap(), &[1, 2, 4, 5]);
        let c = concat(&[&m, &i(vec![2, 1], vec![9, 9])], 1).unwrap();
        assert_eq!(c.as_ints().unwrap(), &[0, 1, 2, 9, 3, 4, 5, 9]);
        let t = transpose(&m, None).unwrap();
        assert_eq!(
            (t.shape(), t.as_ints().unwrap()),
            (&[3, 2][..], &[0, 3, 1, 4, 2, 5][..])
        );
    }

    #[test]
    fn generators() {
        let r = range(
            &i(vec![], vec![0]),
            &i(vec![], vec![5]),
            &i(vec![], vec![2]),
        )
        .unwrap();
        assert_eq!(r.as_ints().unwrap(), &[0, 2, 4]);
        let c = constant_of_shape(&i(vec![2], vec![2, 3]), None).unwrap();
        assert_eq!((c.shape(), c.dtype()), (&[2, 3][..], DType::F32));
        assert!(constant_of_shape(&i(vec![1], vec![-2]), None).is_err());
        let w = where_(
            &Tensor::new(DType::Bool, vec![2], Data::Int(vec![1, 0])).unwrap(),
            &i(vec![1], vec![5]),
            &i(vec![2], vec![6, 7]),
        )
        .unwrap();
        assert_eq!(w.as_ints().unwrap(), &[5, 7]);
    }
}
