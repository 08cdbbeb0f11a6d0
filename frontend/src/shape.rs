//! Shape inference helpers shared by constant folding and lowering: numpy
//! broadcasting, axis normalisation, and the output shapes of `Reshape`,
//! `Flatten`, `Squeeze`, `Unsqueeze`, `Transpose`, `Concat`, `Gather`, `Slice`,
//! and the `auto_pad` pads of convolution and pooling, as defined in the ONNX
//! operator specification (`docs/Operators.md`). Errors are plain messages; the
//! caller names the node.

/// Result of a shape computation: an error message on invalid shapes.
pub type ShapeResult<T> = std::result::Result<T, String>;

/// Normalises a possibly negative axis of a tensor of rank `rank` into `0..rank`.
pub fn axis(a: i64, rank: usize) -> ShapeResult<usize> {
    let r = i64::try_from(rank).map_err(|_| "rank too large".to_string())?;
    let n = if a < 0 { a + r } else { a };
    if (0..r).contains(&n) {
        Ok(n as usize)
    } else {
        Err(format!("axis {a} is out of range for rank {rank}"))
    }
}

/// Multidirectional (numpy) broadcasting of two shapes: the IR's rule
/// ([`sci_ir::check::broadcast`]), with its error as a message.
pub fn broadcast(a: &[usize], b: &[usize]) -> ShapeResult<Vec<usize>> {
    sci_ir::check::broadcast(a, b).map_err(|e| e.to_string())
}

/// Row-major strides of `shape`.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// For each element of the broadcast shape `out`, the flat index of the
/// corresponding element of an operand of shape `inp` (which broadcasts to `out`).
pub fn broadcast_indices(inp: &[usize], out: &[usize]) -> Vec<usize> {
    let off = out.len() - inp.len();
    let in_strides = strides(inp);
    let numel: usize = out.iter().product();
    let mut idx = vec![0usize; out.len()];
    let mut result = Vec::with_capacity(numel);
    for _ in 0..numel {
        let flat = (0..inp.len())
            .map(|i| {
                if inp[i] == 1 {
                    0
                } else {
                    idx[i + off] * in_strides[i]
                }
            })
            .sum();
        result.push(flat);
        for d in (0..out.len()).rev() {
            idx[d] += 1;
            if idx[d] < out[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    result
}

/// Element count of a shape, with overflow checking.
pub fn numel(shape: &[usize]) -> ShapeResult<usize> {
    crate::tensor::checked_numel(shape).ok_or_else(|| format!("shape {shape:?} is too large"))
}

/// The memory one tensor created by constant folding may take: 4 GiB, a sixth of
/// the 24 GiB machines sci is built and tested on. Folding computes weights (e.g.
/// `ConstantOfShape` → fully connected weights: AlexNet's 4096×9216 = 37.7 M
/// elements, VGG's 25088×4096 = 102.8 M); a model asking for more is rejected
/// rather than allowed to exhaust memory.
pub const FOLD_BUDGET_BYTES: usize = 4 << 30;

/// The largest tensor constant folding may create: [`FOLD_BUDGET_BYTES`] over the
/// 8 bytes a folded element takes (floats are folded in f64, integers in i64),
/// 2^29 = 536,870,912 elements.
pub const MAX_FOLD_ELEMENTS: usize = FOLD_BUDGET_BYTES / 8;

/// Element count of a tensor constant folding is about to create, checked
/// against [`MAX_FOLD_ELEMENTS`].
pub fn fold_numel(shape: &[usize]) -> ShapeResult<usize> {
    let n = numel(shape)?;
    if n > MAX_FOLD_ELEMENTS {
        return Err(format!(
            "constant folding would create a tensor of shape {shape:?} ({n} elements; the limit is \
             {MAX_FOLD_ELEMENTS} elements, a {} GiB budget)",
            FOLD_BUDGET_BYTES >> 30
        ));
    }
    Ok(n)
}

/// Output shape of `Reshape` (`0` copies the input dimension unless `allowzero`,
/// one `-1` is inferred).
pub fn reshape(input: &[usize], target: &[i64], allowzero: bool) -> ShapeResult<Vec<usize>> {
    let total = numel(input)?;
    let mut out = Vec::with_capacity(target.len());
    let mut infer = None;
    for (i, &t) in target.iter().enumerate() {
        match t {
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            -1 => return Err(format!("reshape target {target:?} has more than one -1")),
            0 if !allowzero => out.push(*input.get(i).ok_or_else(|| {
                format!("reshape target {target:?}: 0 at position {i} has no input dimension")
            })?),
            t if t >= 0 => {
                out.push(usize::try_from(t).map_err(|_| "dimension too large".to_string())?)
            }
            t => {
                return Err(format!(
                    "reshape target {target:?} has invalid dimension {t}"
                ));
            }
        }
    }
    let known = numel(&out)?;
    if let Some(i) = infer {
        if known == 0 || total % known != 0 {
            return Err(format!("cannot reshape {input:?} to {target:?}"));
        }
        out[i] = total / known;
    } else if known != total {
        return Err(format!(
            "cannot reshape {input:?} ({total} elements) to {out:?}"
        ));
    }
    Ok(out)
}

/// Output shape of `Flatten` at `axis` (in `-rank..=rank`).
pub fn flatten(input: &[usize], axis: i64) -> ShapeResult<Vec<usize>> {
    let r = input.len() as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if !(0..=r).contains(&a) {
        return Err(format!(
            "flatten axis {axis} is out of range for rank {}",
            input.len()
        ));
    }
    let a = a as usize;
    Ok(vec![numel(&input[..a])?, numel(&input[a..])?])
}

/// Output shape of `Squeeze` (no axes: every size-1 dimension).
pub fn squeeze(input: &[usize], axes: Option<&[i64]>) -> ShapeResult<Vec<usize>> {
    match axes {
        None => Ok(input.iter().copied().filter(|&d| d != 1).collect()),
        Some(axes) => {
            let axes = axes
                .iter()
                .map(|&a| axis(a, input.len()))
                .collect::<ShapeResult<Vec<_>>>()?;
            for &a in &axes {
                if input[a] != 1 {
                    return Err(format!(
                        "cannot squeeze axis {a} of size {} in {input:?}",
                        input[a]
                    ));
                }
            }
            Ok(input
                .iter()
                .enumerate()
                .filter(|(i, _)| !axes.contains(i))
                .map(|(_, &d)| d)
                .collect())
        }
    }
}

/// Output shape of `Unsqueeze` (axes refer to the output's rank).
pub fn unsqueeze(input: &[usize], axes: &[i64]) -> ShapeResult<Vec<usize>> {
    let rank = input.len() + axes.len();
    let mut axes = axes
        .iter()
        .map(|&a| axis(a, rank))
        .collect::<ShapeResult<Vec<_>>>()?;
    axes.sort_unstable();
    if axes.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!("unsqueeze axes {axes:?} repeat"));
    }
    let mut rest = input.iter();
    Ok((0..rank)
        .map(|i| {
            if axes.contains(&i) {
                1
            } else {
                rest.next().copied().unwrap_or(1)
            }
        })
        .collect())
}

/// Normalises a `Transpose` permutation (default: reverse) and returns it with the
/// output shape.
pub fn transpose(input: &[usize], perm: Option<&[i64]>) -> ShapeResult<(Vec<usize>, Vec<usize>)> {
    let rank = input.len();
    let perm: Vec<usize> = match perm {
        None => (0..rank).rev().collect(),
        Some(p) => p
            .iter()
            .map(|&a| axis(a, rank))
            .collect::<ShapeResult<_>>()?,
    };
    let mut seen = vec![false; rank];
    if perm.len() != rank || perm.iter().any(|&p| std::mem::replace(&mut seen[p], true)) {
        return Err(format!("{perm:?} is not a permutation of the {rank} axes"));
    }
    let out = perm.iter().map(|&p| input[p]).collect();
    Ok((perm, out))
}

/// Output shape of `Concat` along `axis` (already normalised).
pub fn concat(shapes: &[&[usize]], axis: usize) -> ShapeResult<Vec<usize>> {
    let first = shapes.first().ok_or("concat of no tensors")?;
    let mut out = first.to_vec();
    out[axis] = 0;
    for s in shapes {
        if s.len() != first.len()
            || s.iter()
                .zip(first.iter())
                .enumerate()
                .any(|(i, (a, b))| i != axis && a != b)
        {
            return Err(format!(
                "cannot concatenate shapes {shapes:?} along axis {axis}"
            ));
        }
        out[axis] += s[axis];
    }
    Ok(out)
}

/// Resolved `Slice` parameters along one axis: first index, step, and count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceAxis {
    /// The sliced axis.
    pub axis: usize,
    /// First index taken.
    pub start: i64,
    /// Step (non-zero).
    pub step: i64,
    /// Number of elements taken.
    pub len: usize,
}

/// Resolves `Slice` starts/ends/axes/steps against `input` (ONNX clamping rules).
pub fn slice(
    input: &[usize],
    starts: &[i64],
    ends: &[i64],
    axes: Option<&[i64]>,
    steps: Option<&[i64]>,
) -> ShapeResult<Vec<SliceAxis>> {
    let rank = input.len();
    let default_axes: Vec<i64> = (0..starts.len() as i64).collect();
    let axes = axes.unwrap_or(&default_axes);
    if starts.len() != ends.len()
        || axes.len() != starts.len()
        || steps.is_some_and(|s| s.len() != starts.len())
    {
        return Err("slice starts, ends, axes and steps differ in length".into());
    }
    let mut result = Vec::new();
    for (i, &a) in axes.iter().enumerate() {
        let ax = axis(a, rank)?;
        let dim = input[ax] as i64;
        let step = steps.map_or(1, |s| s[i]);
        if step == 0 {
            return Err("slice step 0".into());
        }
        if dim == 0 {
            result.push(SliceAxis {
                axis: ax,
                start: 0,
                step,
                len: 0,
            });
            continue;
        }
        let clamp = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi);
        let norm = |v: i64| if v < 0 { v.saturating_add(dim) } else { v };
        let (start, end) = if step > 0 {
            (clamp(norm(starts[i]), 0, dim), clamp(norm(ends[i]), 0, dim))
        } else {
            (
                clamp(norm(starts[i]), 0, dim - 1),
                clamp(norm(ends[i]), -1, dim - 1),
            )
        };
        // ⌈distance / |step|⌉ in i128: |step| may be as large as i64::MIN's magnitude.
        let (dist, mag) = if step > 0 {
            (i128::from(end) - i128::from(start), i128::from(step))
        } else {
            (i128::from(start) - i128::from(end), -i128::from(step))
        };
        let len = if dist > 0 { (dist + mag - 1) / mag } else { 0 };
        result.push(SliceAxis {
            axis: ax,
            start,
            step,
            len: len as usize,
        });
    }
    Ok(result)
}

/// Begin and end pads of one axis for ONNX `auto_pad` `SAME_UPPER`/`SAME_LOWER`:
/// the output size is `⌈n / stride⌉` and the total pad is split with the extra
/// element at the end (`SAME_UPPER`) or the beginning (`SAME_LOWER`).
pub fn same_pads(
    n: usize,
    k: usize,
    stride: usize,
    dilation: usize,
    upper: bool,
) -> ShapeResult<(usize, usize)> {
    if stride == 0 {
        return Err("stride must be at least 1".into());
    }
    let out = n.div_ceil(stride);
    let eff = dilation.saturating_mul(k.saturating_sub(1)) + 1;
    let needed = (out.saturating_sub(1))
        .saturating_mul(stride)
        .saturating_add(eff);
    let total = needed.saturating_sub(n);
    let small = total / 2;
    Ok(if upper {
        (small, total - small)
    } else {
        (total - small, small)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast(&[2, 1, 3], &[4, 1]).unwrap(), vec![2, 4, 3]);
        assert!(broadcast(&[2, 3], &[3, 2]).is_err());
        assert_eq!(broadcast_indices(&[3, 1], &[3, 2]), vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(broadcast_indices(&[2], &[3, 2]), vec![0, 1, 0, 1, 0, 1]);
        assert_eq!(broadcast_indices(&[], &[2]), vec![0, 0]);
    }

    #[test]
    fn reshape_rules() {
        assert_eq!(reshape(&[2, 3, 4], &[0, -1], false).unwrap(), vec![2, 12]);
        assert_eq!(reshape(&[2, 3, 4], &[-1], false).unwrap(), vec![24]);
        assert!(reshape(&[2, 3, 4], &[-1, -1], false).is_err());
        assert!(reshape(&[2, 3, 4], &[5, -1], false).is_err());
        assert!(reshape(&[2, 3], &[0, 0, 0], false).is_err());
        assert_eq!(reshape(&[0, 3], &[0, 3], true).unwrap(), vec![0, 3]);
        assert_eq!(flatten(&[2, 3, 4], 0).unwrap(), vec![1, 24]);
        assert_eq!(flatten(&[2, 3, 4], -1).unwrap(), vec![6, 4]);
        assert!(flatten(&[2, 3], 3).is_err());
    }

    #[test]
    fn squeeze_unsqueeze_transpose() {
        assert_eq!(squeeze(&[1, 3, 1], None).unwrap(), vec![3]);
        assert_eq!(squeeze(&[1, 3, 1], Some(&[-1])).unwrap(), vec![1, 3]);
        assert!(squeeze(&[1, 3], Some(&[1])).is_err());
        assert_eq!(unsqueeze(&[3, 4], &[0, -1]).unwrap(), vec![1, 3, 4, 1]);
        assert!(unsqueeze(&[3], &[0, 0]).is_err());
        assert_eq!(transpose(&[2, 3, 4], None).unwrap().1, vec![4, 3, 2]);
        assert!(transpose(&[2, 3], Some(&[0, 0])).is_err());
        assert!(transpose(&[2, 3], Some(&[0])).is_err());
    }

    #[test]
    fn slicing() {
        let s = slice(&[10], &[2], &[i64::MAX], None, None).unwrap();
        assert_eq!(
            s[0],
            SliceAxis {
                axis: 0,
                start: 2,
                step: 1,
                len: 8
            }
        );
        let s = slice(&[10], &[-1], &[i64::MIN], None, Some(&[-3])).unwrap();
        assert_eq!(
            s[0],
            SliceAxis {
                axis: 0,
                start: 9,
                step: -3,
                len: 4
            }
        );
        let s = slice(&[10], &[0], &[10], None, Some(&[i64::MAX])).unwrap();
        assert_eq!(s[0].len, 1);
        let s = slice(&[10], &[9], &[-20], None, Some(&[i64::MIN])).unwrap();
        assert_eq!(s[0].len, 1);
        let s = slice(&[4, 5], &[1], &[-1], Some(&[1]), None).unwrap();
        assert_eq!(
            s[0],
            SliceAxis {
                axis: 1,
                start: 1,
                step: 1,
                len: 3
            }
        );
    }

    #[test]
    fn same_padding() {
        assert_eq!(same_pads(7, 3, 2, 1, true).unwrap(), (1, 1));
        assert_eq!(same_pads(6, 3, 2, 1, true).unwrap(), (0, 1));
        assert_eq!(same_pads(6, 3, 2, 1, false).unwrap(), (1, 0));
    }
}
