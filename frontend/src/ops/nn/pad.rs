//! `Pad`: mode `constant` → IR `pad`; modes `reflect`, `edge` and `wrap` (19+)
//! read every padded element from the input, so they are data movement: one IR
//! `gather` per padded axis.

use sci_ir::{Op, Scalar};

use crate::error::Result;
use crate::ops::select::gather_axis;
use crate::ops::{Ctx, Value};
use crate::shape;

/// The input index of each output index along an axis of size `n` padded by
/// `begin` and `end` in a non-constant `mode`.
fn source_indices(mode: &str, n: usize, begin: usize, end: usize) -> Result<Vec<usize>, String> {
    let len = n as i64;
    let (b, e) = (begin as i64, end as i64);
    if mode == "reflect" && (b >= len || e >= len) {
        return Err(format!(
            "reflect pads ({begin}, {end}) must be smaller than the dimension {n}"
        ));
    }
    Ok((-b..len + e)
        .map(|k| match mode {
            // Mirrored on the first and last elements: -1 -> 1, n -> n - 2.
            "reflect" if k < 0 => -k,
            "reflect" if k >= len => 2 * (len - 1) - k,
            "edge" => k.clamp(0, len - 1),
            "wrap" => k.rem_euclid(len),
            _ => k,
        } as usize)
        .collect())
}

pub(super) fn pad(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    let x_shape = cx.input_shape(0)?;
    let rank = x_shape.len();
    let mode = node
        .attr_string("mode")?
        .unwrap_or_else(|| "constant".into());
    let modes: &[&str] = if cx.opset >= 19 {
        &["constant", "reflect", "edge", "wrap"]
    } else {
        &["constant", "reflect", "edge"]
    };
    if !modes.contains(&mode.as_str()) {
        return Err(node.attr_error(
            "mode",
            format!(
                "value '{mode}' is not supported (supported: {})",
                modes.join(", ")
            ),
        ));
    }
    // Opset 11 moved pads and the fill value from attributes to inputs; 18 added axes.
    let (raw_pads, value) = if cx.opset < 11 {
        // Opset 2 renamed `paddings` to `pads`.
        let name = if cx.opset < 2 { "paddings" } else { "pads" };
        let pads = node
            .attr_ints(name)?
            .ok_or_else(|| node.attr_error(name, "missing"))?;
        (pads, node.attr_float_or("value", 0.0)?)
    } else {
        let pads = cx.const_ints(1, "pads")?;
        let value = match cx.opt_const_input(2, "constant_value")? {
            None => 0.0,
            Some(t) => match t.to_f64().as_slice() {
                [v] => *v as f32,
                _ => return Err(cx.error("constant_value must be a scalar")),
            },
        };
        (pads, value)
    };
    let axes: Vec<usize> = match if cx.opset >= 18 {
        cx.opt_const_ints(3, "axes")?
    } else {
        None
    } {
        None => (0..rank).collect(),
        Some(a) => a
            .iter()
            .map(|&v| shape::axis(v, rank))
            .collect::<Result<_, _>>()
            .map_err(|e| cx.error(e))?,
    };
    if raw_pads.len() != 2 * axes.len() {
        return Err(cx.error(format!(
            "pads {raw_pads:?} must have {} entries",
            2 * axes.len()
        )));
    }
    if raw_pads.iter().any(|&p| p < 0) {
        return Err(cx.error(format!(
            "negative pads {raw_pads:?} (cropping) are not supported"
        )));
    }
    let mut pads = vec![0usize; 2 * rank];
    for (i, &ax) in axes.iter().enumerate() {
        pads[ax] = raw_pads[i] as usize;
        pads[rank + ax] = raw_pads[axes.len() + i] as usize;
    }
    if mode != "constant" {
        let mut v = cx.input(0)?.clone();
        for ax in 0..rank {
            let (b, e) = (pads[ax], pads[rank + ax]);
            if b + e > 0 {
                let n = x_shape[ax];
                let indices = source_indices(&mode, n, b, e)
                    .map_err(|m| cx.error(format!("axis {ax}: {m}")))?;
                v = gather_axis(cx, &v, ax, indices)?;
            }
        }
        return Ok(vec![v]);
    }
    let x = cx.input_act(0)?;
    Ok(vec![cx.emit_value(Op::Pad {
        x,
        pads,
        value: Scalar::F32(value),
    })?])
}
