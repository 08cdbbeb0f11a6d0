//! Window geometry shared by convolution and pooling (`kernel_shape`,
//! `strides`, `dilations`, `pads`, `auto_pad`), and the 1-D ↔ 2-D reshapes:
//! the IR's convolution and pooling are 2-D (NCHW), so a 1-D layer (`[N, C, W]`)
//! runs as a 2-D layer over `[N, C, 1, W]` between two reshapes.

use sci_ir::ValueId;

use crate::error::Result;
use crate::ops::shape_ops::reshape_value;
use crate::ops::{Ctx, Value};
use crate::shape;

/// Window geometry of a convolution or pooling node, per spatial axis.
pub(super) struct Window {
    kernel: Vec<usize>,
    strides: Vec<usize>,
    pub(super) dilations: Vec<usize>,
    pads_begin: Vec<usize>,
    pads_end: Vec<usize>,
}

/// A list attribute of `n` positive entries (default all ones).
fn positive_ints(cx: &Ctx<'_>, name: &str, n: usize) -> Result<Vec<usize>> {
    match cx.node.attr_ints(name)? {
        None => Ok(vec![1; n]),
        Some(v) if v.len() == n && v.iter().all(|&x| x >= 1) => {
            Ok(v.iter().map(|&x| x as usize).collect())
        }
        Some(v) => Err(cx
            .node
            .attr_error(name, format!("expected {n} positive values, found {v:?}"))),
    }
}

/// Reads `strides`, `dilations`, `pads` and `auto_pad` for a window of `kernel`
/// over the spatial dims `spatial` of the input.
pub(super) fn window(
    cx: &Ctx<'_>,
    spatial: &[usize],
    kernel: Vec<usize>,
    dilations: bool,
) -> Result<Window> {
    let n = spatial.len();
    let node = cx.node;
    let strides = positive_ints(cx, "strides", n)?;
    let dilations = if dilations {
        positive_ints(cx, "dilations", n)?
    } else {
        vec![1; n]
    };
    let auto_pad = node
        .attr_string("auto_pad")?
        .unwrap_or_else(|| "NOTSET".into());
    let (pads_begin, pads_end) = match auto_pad.as_str() {
        "NOTSET" => match node.attr_ints("pads")? {
            None => (vec![0; n], vec![0; n]),
            Some(p) if p.len() == 2 * n && p.iter().all(|&x| x >= 0) => {
                let p: Vec<usize> = p.iter().map(|&x| x as usize).collect();
                (p[..n].to_vec(), p[n..].to_vec())
            }
            Some(p) => {
                return Err(node.attr_error(
                    "pads",
                    format!("expected {} non-negative values, found {p:?}", 2 * n),
                ));
            }
        },
        "VALID" => (vec![0; n], vec![0; n]),
        "SAME_UPPER" | "SAME_LOWER" => {
            let upper = auto_pad == "SAME_UPPER";
            let mut b = Vec::with_capacity(n);
            let mut e = Vec::with_capacity(n);
            for i in 0..n {
                let (pb, pe) =
                    shape::same_pads(spatial[i], kernel[i], strides[i], dilations[i], upper)
                        .map_err(|m| node.attr_error("auto_pad", m))?;
                b.push(pb);
                e.push(pe);
            }
            (b, e)
        }
        other => {
            return Err(node.attr_error(
                "auto_pad",
                format!("value '{other}' is not supported (supported: NOTSET, VALID, SAME_UPPER, SAME_LOWER)"),
            ));
        }
    };
    Ok(Window {
        kernel,
        strides,
        dilations,
        pads_begin,
        pads_end,
    })
}

impl Window {
    /// The 2-D form (a 1-D window gets a leading axis of size 1, no padding).
    pub(super) fn to_2d(&self) -> ([usize; 2], [usize; 2], [usize; 2], [usize; 4]) {
        let two = |v: &[usize], fill: usize| {
            if v.len() == 1 {
                [fill, v[0]]
            } else {
                [v[0], v[1]]
            }
        };
        let (k, s, d) = (
            two(&self.kernel, 1),
            two(&self.strides, 1),
            two(&self.dilations, 1),
        );
        let b = two(&self.pads_begin, 0);
        let e = two(&self.pads_end, 0);
        (k, s, d, [b[0], b[1], e[0], e[1]])
    }
}

/// The spatial dims of an NCHW/NCW input, checking the rank is 3 or 4.
pub(super) fn spatial_dims(cx: &Ctx<'_>, x_shape: &[usize]) -> Result<Vec<usize>> {
    match x_shape.len() {
        3 | 4 => Ok(x_shape[2..].to_vec()),
        r => Err(cx.error(format!(
            "input of rank {r} (shape {x_shape:?}) is not supported (supported: 1-D [N, C, W] and 2-D [N, C, H, W])"
        ))),
    }
}

/// Reshapes a 1-D layer's input `[N, C, W]` to `[N, C, 1, W]` (2-D inputs unchanged).
pub(super) fn to_4d(cx: &mut Ctx<'_>, x: &Value) -> Result<ValueId> {
    let s = cx.shape_of(x);
    let v = if s.len() == 3 {
        reshape_value(cx, x, vec![s[0], s[1], 1, s[2]])?
    } else {
        x.clone()
    };
    cx.act(&v, "x")
}

/// Undoes [`to_4d`] on the output when the input was 1-D.
pub(super) fn from_4d(cx: &mut Ctx<'_>, y: ValueId, rank: usize) -> Result<Value> {
    let y = Value::Act(y);
    if rank == 3 {
        let s = cx.shape_of(&y);
        reshape_value(cx, &y, vec![s[0], s[1], s[3]])
    } else {
        Ok(y)
    }
}
