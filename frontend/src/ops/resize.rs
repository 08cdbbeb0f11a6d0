//! `Resize` and `Upsample` with constant scales or sizes, one axis at a time.
//! `nearest`: each output index reads one input index, one IR `gather` per
//! resized axis (data movement: local on shares, exact, free). `linear`: a
//! constant linear map per axis, `(1 − f)·x[lo] + f·x[hi]` with public weights:
//! two `gather`s, two `mul`s by public constant tensors (local on shares; the
//! fixed-point passes add the truncation) and an `add`. `cubic`, `roi` cropping
//! (`tf_crop_and_resize`), `axes` and antialiasing are rejected with an error
//! naming the attribute.

use sci_ir::Op;

use super::select::gather_axis;
use super::{Ctx, Registry, Value};
use crate::error::Result;
use crate::tensor::Tensor;

pub(crate) fn register(reg: &mut Registry) {
    reg.op("Resize", resize);
    reg.op("Upsample", upsample);
}

/// How an output index maps back to an input coordinate
/// (`coordinate_transformation_mode`).
#[derive(Clone, Copy)]
enum Coord {
    HalfPixel,
    PytorchHalfPixel,
    Asymmetric,
    AlignCorners,
    TfHalfPixelForNn,
}

/// How a fractional coordinate rounds to an index (`nearest_mode`).
#[derive(Clone, Copy)]
enum Round {
    PreferFloor,
    PreferCeil,
    Floor,
    Ceil,
}

/// The input coordinate output index `o` maps to along an axis of input size
/// `d`, output size `out` and scale `s` (computed in f32, as onnxruntime does).
fn source_coord(o: usize, d: usize, out: usize, s: f32, coord: Coord) -> f32 {
    let o = o as f32;
    match coord {
        Coord::HalfPixel => (o + 0.5) / s - 0.5,
        Coord::PytorchHalfPixel if out > 1 => (o + 0.5) / s - 0.5,
        Coord::PytorchHalfPixel => 0.0,
        Coord::Asymmetric => o / s,
        Coord::AlignCorners if out > 1 => o * (d - 1) as f32 / (out - 1) as f32,
        Coord::AlignCorners => 0.0,
        Coord::TfHalfPixelForNn => (o + 0.5) / s,
    }
}

/// The input index nearest to coordinate `x` (rounded as `round` says, clamped).
fn nearest_index(x: f32, d: usize, round: Round) -> usize {
    let r = match round {
        Round::PreferFloor if x.fract() == 0.5 => x.floor(),
        Round::PreferFloor | Round::PreferCeil => x.round(),
        Round::Floor => x.floor(),
        Round::Ceil => x.ceil(),
    };
    r.clamp(0.0, (d - 1) as f32) as usize
}

/// The interpolation of `Resize`: nearest neighbour, or linear (per axis).
#[derive(Clone, Copy)]
enum Interp {
    Nearest(Round),
    Linear,
}

/// `v` linearly interpolated along `axis` at coordinates `xs` (clamped to the
/// input): `(1 − f)·v[lo] + f·v[hi]`, two `gather`s, two products by public
/// weight tensors and an `add` (one `gather` where every coordinate is integral).
fn linear_axis(cx: &mut Ctx<'_>, v: &Value, axis: usize, xs: &[f32]) -> Result<Value> {
    let rank = cx.shape_of(v).len();
    let d = cx.shape_of(v)[axis];
    let mut lo = Vec::with_capacity(xs.len());
    let mut hi = Vec::with_capacity(xs.len());
    let mut w_lo = Vec::with_capacity(xs.len());
    let mut w_hi = Vec::with_capacity(xs.len());
    for &x in xs {
        let x = x.clamp(0.0, (d - 1) as f32);
        let l = x.floor() as usize;
        let f = x - l as f32;
        lo.push(l);
        hi.push((l + 1).min(d - 1));
        w_lo.push(1.0 - f);
        w_hi.push(f);
    }
    if w_hi.iter().all(|&f| f == 0.0) {
        return gather_axis(cx, v, axis, lo);
    }
    let mut wshape = vec![1; rank];
    wshape[axis] = xs.len();
    let term = |cx: &mut Ctx<'_>, idx: Vec<usize>, w: &[f32], name: &str| {
        let g = gather_axis(cx, v, axis, idx)?;
        let g = cx.act(&g, name)?;
        let wt = Tensor::from_f32(wshape.clone(), w).map_err(|e| cx.error(e))?;
        let wc = cx.public_const(&wt, &format!("{name}_w{axis}"))?;
        cx.emit(Op::Mul { a: g, b: wc })
    };
    let a = term(cx, lo, &w_lo, "lo")?;
    let b = term(cx, hi, &w_hi, "hi")?;
    cx.emit_value(Op::Add { a, b })
}

/// Resizes `x` along every axis by `scales` (or to `sizes`).
fn resize_axes(
    cx: &mut Ctx<'_>,
    scales: Option<Vec<f32>>,
    sizes: Option<Vec<i64>>,
    coord: Coord,
    interp: Interp,
) -> Result<Vec<Value>> {
    let mut v = cx.input(0)?.clone();
    let in_shape = cx.shape_of(&v);
    let rank = in_shape.len();
    let (out, scales): (Vec<usize>, Vec<f32>) = match (scales, sizes) {
        (Some(s), _) if !s.is_empty() => {
            if s.len() != rank || s.iter().any(|&f| !(f > 0.0 && f.is_finite())) {
                return Err(cx.error(format!(
                    "scales {s:?} must be {rank} positive finite numbers (one per axis)"
                )));
            }
            let out = in_shape
                .iter()
                .zip(&s)
                .map(|(&d, &f)| (d as f32 * f).floor() as usize)
                .collect();
            (out, s)
        }
        (_, Some(z)) if z.len() == rank && z.iter().all(|&n| n > 0) => {
            let out: Vec<usize> = z.iter().map(|&n| n as usize).collect();
            let s = out
                .iter()
                .zip(&in_shape)
                .map(|(&o, &d)| o as f32 / d as f32)
                .collect();
            (out, s)
        }
        (_, z) => {
            return Err(cx.error(format!(
                "needs constant scales or sizes with {rank} positive entries, found sizes {z:?}"
            )));
        }
    };
    for axis in 0..rank {
        let (d, o) = (in_shape[axis], out[axis]);
        if d == o && scales[axis] == 1.0 {
            continue;
        }
        if o == 0 {
            return Err(cx.error(format!(
                "axis {axis} resizes to 0 entries; empty tensors are not supported"
            )));
        }
        let xs: Vec<f32> = (0..o)
            .map(|i| source_coord(i, d, o, scales[axis], coord))
            .collect();
        v = match interp {
            Interp::Nearest(round) => {
                let indices = xs.iter().map(|&x| nearest_index(x, d, round)).collect();
                gather_axis(cx, &v, axis, indices)?
            }
            Interp::Linear => linear_axis(cx, &v, axis, &xs)?,
        };
    }
    Ok(vec![v])
}

/// Whether the `mode` attribute is `linear` (`linear` or `bilinear` for
/// `Upsample`) rather than `nearest`; `cubic` is rejected.
fn is_linear(cx: &Ctx<'_>) -> Result<bool> {
    let mode = cx.node.attr_string("mode")?.unwrap_or("nearest".into());
    match mode.as_str() {
        "nearest" => Ok(false),
        "linear" => Ok(true),
        "bilinear" if cx.node.op_type() == "Upsample" => Ok(true),
        _ => Err(cx.node.attr_error(
            "mode",
            format!("'{mode}' is not supported (supported: nearest, linear)"),
        )),
    }
}

/// `Resize`: inputs `X, scales` (opset 10) or `X, roi, scales, sizes` (11+);
/// `coordinate_transformation_mode` (11+, default `half_pixel`; opset 10 is
/// `asymmetric`) and `nearest_mode` (11+, default `round_prefer_floor`; opset 10
/// floors).
fn resize(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    node.check_known_attrs(&[
        "mode",
        "coordinate_transformation_mode",
        "nearest_mode",
        "cubic_coeff_a",
        "exclude_outside",
        "extrapolation_value",
        "antialias",
        "keep_aspect_ratio_policy",
    ])?;
    let linear = is_linear(cx)?;
    if node.attr_int_or("antialias", 0)? != 0 {
        return Err(node.attr_error("antialias", "only 0 is supported"));
    }
    let policy = node
        .attr_string("keep_aspect_ratio_policy")?
        .unwrap_or("stretch".into());
    if policy != "stretch" {
        return Err(node.attr_error(
            "keep_aspect_ratio_policy",
            format!("'{policy}' is not supported (supported: stretch)"),
        ));
    }
    if cx.opset < 11 {
        let scales = cx.const_input(1, "scales")?.to_f32();
        let interp = if linear {
            Interp::Linear
        } else {
            Interp::Nearest(Round::Floor)
        };
        return resize_axes(cx, Some(scales), None, Coord::Asymmetric, interp);
    }
    let mode = node
        .attr_string("coordinate_transformation_mode")?
        .unwrap_or("half_pixel".into());
    let coord = match mode.as_str() {
        "half_pixel" => Coord::HalfPixel,
        "pytorch_half_pixel" => Coord::PytorchHalfPixel,
        "asymmetric" => Coord::Asymmetric,
        "align_corners" => Coord::AlignCorners,
        "tf_half_pixel_for_nn" => Coord::TfHalfPixelForNn,
        other => {
            return Err(node.attr_error(
                "coordinate_transformation_mode",
                format!(
                    "'{other}' is not supported (supported: half_pixel, pytorch_half_pixel, \
                     asymmetric, align_corners, tf_half_pixel_for_nn)"
                ),
            ));
        }
    };
    let nmode = node
        .attr_string("nearest_mode")?
        .unwrap_or("round_prefer_floor".into());
    let round = match nmode.as_str() {
        "round_prefer_floor" => Round::PreferFloor,
        "round_prefer_ceil" => Round::PreferCeil,
        "floor" => Round::Floor,
        "ceil" => Round::Ceil,
        other => {
            return Err(node.attr_error(
                "nearest_mode",
                format!(
                    "'{other}' is not supported (supported: round_prefer_floor, \
                     round_prefer_ceil, floor, ceil)"
                ),
            ));
        }
    };
    let scales = cx.opt_const_input(2, "scales")?.map(|t| t.to_f32());
    let sizes = cx.opt_const_ints(3, "sizes")?;
    let interp = if linear {
        Interp::Linear
    } else {
        Interp::Nearest(round)
    };
    resize_axes(cx, scales, sizes, coord, interp)
}

/// `Upsample` (deprecated in opset 10): `scales` as an attribute (< 9) or a
/// constant input; nearest index `⌊o / s⌋`.
fn upsample(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&["mode", "scales"])?;
    let interp = if is_linear(cx)? {
        Interp::Linear
    } else {
        Interp::Nearest(Round::Floor)
    };
    let scales = if cx.opset < 9 {
        cx.node
            .attr_floats("scales")?
            .ok_or_else(|| cx.node.attr_error("scales", "missing"))?
    } else {
        cx.const_input(1, "scales")?.to_f32()
    };
    resize_axes(cx, Some(scales), None, Coord::Asymmetric, interp)
}
