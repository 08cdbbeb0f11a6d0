//! `Resize` and `Upsample` in `nearest` mode: each output index along an axis
//! reads one input index, so the op is one IR `gather` per resized axis (data
//! movement: local on shares, exact, free). `linear`/`cubic` modes, `roi`
//! cropping (`tf_crop_and_resize`), `axes` and antialiasing are rejected with
//! an error naming the attribute.

use super::select::gather_axis;
use super::{Ctx, Registry, Value};
use crate::error::Result;

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

/// The input index that output index `o` reads along an axis of input size `d`,
/// output size `out` and scale `s` (computed in f32, as onnxruntime does).
fn source_index(o: usize, d: usize, out: usize, s: f32, coord: Coord, round: Round) -> usize {
    let o = o as f32;
    let x = match coord {
        Coord::HalfPixel => (o + 0.5) / s - 0.5,
        Coord::PytorchHalfPixel if out > 1 => (o + 0.5) / s - 0.5,
        Coord::PytorchHalfPixel => 0.0,
        Coord::Asymmetric => o / s,
        Coord::AlignCorners if out > 1 => o * (d - 1) as f32 / (out - 1) as f32,
        Coord::AlignCorners => 0.0,
        Coord::TfHalfPixelForNn => (o + 0.5) / s,
    };
    let r = match round {
        Round::PreferFloor if x.fract() == 0.5 => x.floor(),
        Round::PreferFloor | Round::PreferCeil => x.round(),
        Round::Floor => x.floor(),
        Round::Ceil => x.ceil(),
    };
    r.clamp(0.0, (d - 1) as f32) as usize
}

/// Resizes `x` along every axis by `scales` (or to `sizes`), nearest neighbour.
fn nearest(
    cx: &mut Ctx<'_>,
    scales: Option<Vec<f32>>,
    sizes: Option<Vec<i64>>,
    coord: Coord,
    round: Round,
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
        let indices = (0..o)
            .map(|i| source_index(i, d, o, scales[axis], coord, round))
            .collect();
        v = gather_axis(cx, &v, axis, indices)?;
    }
    Ok(vec![v])
}

/// The `mode` attribute, which must be `nearest`.
fn check_nearest(cx: &Ctx<'_>) -> Result<()> {
    let mode = cx.node.attr_string("mode")?.unwrap_or("nearest".into());
    if mode != "nearest" {
        return Err(cx.node.attr_error(
            "mode",
            format!("'{mode}' is not supported (supported: nearest)"),
        ));
    }
    Ok(())
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
    check_nearest(cx)?;
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
        return nearest(cx, Some(scales), None, Coord::Asymmetric, Round::Floor);
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
    nearest(cx, scales, sizes, coord, round)
}

/// `Upsample` (deprecated in opset 10): `scales` as an attribute (< 9) or a
/// constant input; nearest index `⌊o / s⌋`.
fn upsample(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&["mode", "scales"])?;
    check_nearest(cx)?;
    let scales = if cx.opset < 9 {
        cx.node
            .attr_floats("scales")?
            .ok_or_else(|| cx.node.attr_error("scales", "missing"))?
    } else {
        cx.const_input(1, "scales")?.to_f32()
    };
    nearest(cx, Some(scales), None, Coord::Asymmetric, Round::Floor)
}
