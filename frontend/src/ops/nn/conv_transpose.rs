//! `ConvTranspose` (2-D) → a zero-stuffed input and an IR `conv2d`.
//!
//! The transposed convolution with strides `s`, dilations `d`, pads `p_b, p_e`,
//! `output_padding` `q` and kernel `k` equals a stride-1 convolution, dilation
//! `d`, of the input with `s − 1` zeros stuffed between neighbours, padded by
//! `d·(k−1) − p_b` before and `d·(k−1) − p_e + q` after (a negative pad crops),
//! with the kernel flipped spatially and its two channel axes swapped per group.
//! The stuffing is a `reshape`, a `pad` with zeros, a `reshape` and a `gather`
//! (data movement, free); the weights are rearranged at compile time; the cost
//! is that of the `conv2d` over the stuffed input.

use sci_ir::{Op, Scalar};

use super::super::select::gather_axis;
use crate::error::Result;
use crate::ops::shape_ops::reshape_value;
use crate::ops::{Ctx, Value};
use crate::tensor::Tensor;

/// The integer-list attribute `name` with `n` entries, each at least `min`
/// (`default` when absent).
fn ints_attr(cx: &Ctx<'_>, name: &str, n: usize, min: i64, default: i64) -> Result<Vec<usize>> {
    let v = cx.node.attr_ints(name)?.unwrap_or(vec![default; n]);
    if v.len() != n || v.iter().any(|&x| x < min) {
        return Err(cx.node.attr_error(
            name,
            format!("{v:?} must have {n} entries, each at least {min}"),
        ));
    }
    Ok(v.iter().map(|&x| x as usize).collect())
}

pub(super) fn conv_transpose(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    node.check_known_attrs(&[
        "auto_pad",
        "dilations",
        "group",
        "kernel_shape",
        "output_padding",
        "pads",
        "strides",
    ])?;
    let auto_pad = node.attr_string("auto_pad")?.unwrap_or("NOTSET".into());
    if auto_pad != "NOTSET" {
        return Err(node.attr_error(
            "auto_pad",
            format!("'{auto_pad}' is not supported (supported: NOTSET, explicit pads)"),
        ));
    }
    let x_shape = cx.input_shape(0)?;
    let w = cx.const_input(1, "weights")?;
    let ws = w.shape().to_vec();
    if x_shape.len() != 4 || ws.len() != 4 || ws[0] != x_shape[1] {
        return Err(cx.error(format!(
            "only 2-D transposed convolutions are supported: input {x_shape:?} and weights \
             {ws:?} must be [N, C, H, W] and [C, C_out/group, kH, kW]"
        )));
    }
    let kernel = [ws[2], ws[3]];
    if let Some(k) = node.attr_ints("kernel_shape")?
        && k.iter().map(|&v| v as usize).ne(kernel.iter().copied())
    {
        return Err(node.attr_error(
            "kernel_shape",
            format!("{k:?} differs from the weight's {kernel:?}"),
        ));
    }
    let groups = node.attr_int_or("group", 1)?;
    let g = usize::try_from(groups)
        .ok()
        .filter(|&g| g >= 1 && ws[0] % g == 0)
        .ok_or_else(|| {
            node.attr_error(
                "group",
                format!(
                    "{groups} must be at least 1 and divide the {} input channels",
                    ws[0]
                ),
            )
        })?;
    let strides = ints_attr(cx, "strides", 2, 1, 1)?;
    let dil = ints_attr(cx, "dilations", 2, 1, 1)?;
    let pads = ints_attr(cx, "pads", 4, 0, 0)?;
    let out_pad = ints_attr(cx, "output_padding", 2, 0, 0)?;
    for a in 0..2 {
        if out_pad[a] >= strides[a].max(dil[a]) {
            return Err(node.attr_error(
                "output_padding",
                format!("{out_pad:?} must be below the stride or the dilation on each axis"),
            ));
        }
    }
    // Zero-stuffing: [N, C, H, 1, W, 1] padded to [N, C, H, s_h, W, s_w], then the
    // trailing zeros of each axis dropped.
    let (n, c, h, wd) = (x_shape[0], x_shape[1], x_shape[2], x_shape[3]);
    let mut v = cx.input(0)?.clone();
    if strides != [1, 1] {
        v = reshape_value(cx, &v, vec![n, c, h, 1, wd, 1])?;
        let x6 = cx.act(&v, "x")?;
        let mut p = vec![0; 12];
        p[6 + 3] = strides[0] - 1;
        p[6 + 5] = strides[1] - 1;
        v = cx.emit_value(Op::Pad {
            x: x6,
            pads: p,
            value: Scalar::F32(0.0),
        })?;
        v = reshape_value(cx, &v, vec![n, c, h * strides[0], wd * strides[1]])?;
        v = gather_axis(cx, &v, 2, (0..(h - 1) * strides[0] + 1).collect())?;
        v = gather_axis(cx, &v, 3, (0..(wd - 1) * strides[1] + 1).collect())?;
    }
    // Border pads of the equivalent convolution; negative ones crop.
    let mut conv_pads = [0usize; 4];
    for a in 0..2 {
        let reach = (dil[a] * (kernel[a] - 1)) as i64;
        let begin = reach - pads[a] as i64;
        let end = reach - pads[a + 2] as i64 + out_pad[a] as i64;
        let len = cx.shape_of(&v)[2 + a] as i64;
        if begin < 0 || end < 0 {
            let from = (-begin).max(0);
            let to = len - (-end).max(0);
            if from >= to {
                return Err(node.attr_error("pads", format!("{pads:?} leave an empty output")));
            }
            v = gather_axis(cx, &v, 2 + a, (from as usize..to as usize).collect())?;
        }
        conv_pads[a] = begin.max(0) as usize;
        conv_pads[a + 2] = end.max(0) as usize;
    }
    // Weights [C, C_out/g, kH, kW] → [C_out, C/g, kH, kW], flipped spatially.
    let (cin_g, cout_g, kh, kw) = (ws[0] / g, ws[1], ws[2], ws[3]);
    let src = w.to_f32();
    let mut dst = vec![0f32; src.len()];
    for gi in 0..g {
        for o in 0..cout_g {
            for ci in 0..cin_g {
                for a in 0..kh {
                    for b in 0..kw {
                        let from =
                            (((gi * cin_g + ci) * cout_g + o) * kh + kh - 1 - a) * kw + kw - 1 - b;
                        let to = (((gi * cout_g + o) * cin_g + ci) * kh + a) * kw + b;
                        dst[to] = src[from];
                    }
                }
            }
        }
    }
    let wt = Tensor::from_f32(vec![g * cout_g, cin_g, kh, kw], &dst).map_err(|e| cx.error(e))?;
    let wa = cx.act(&Value::constant(wt), "W")?;
    let xa = cx.act(&v, "x")?;
    let bias = match cx.opt_input(2) {
        Some(_) => Some(cx.input_act(2)?),
        None => None,
    };
    let y = cx.emit_value(Op::Conv2d {
        x: xa,
        w: wa,
        bias,
        conv: sci_ir::Conv2d {
            strides: [1, 1],
            pads: conv_pads,
            dilations: [dil[0], dil[1]],
            groups: g,
        },
    })?;
    Ok(vec![y])
}
