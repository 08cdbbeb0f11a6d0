//! Pooling attributes and window geometry ([`Pool2d`]): the one definition of pooling
//! windows, read by the type checker, the interpreter, the runtime's pooling protocols
//! and the compiler's cost model.

use crate::error::{CheckErrorKind, positive};
use std::ops::Range;

type K = CheckErrorKind;

/// Window geometry shared by [`crate::Op::MaxPool`] and [`crate::Op::AvgPool`] (NCHW, 2-D).
///
/// Output size along an axis of input size `H` (pads `p_b`, `p_e`, kernel `k`, stride
/// `t`): `⌊(H + p_b + p_e − k) / t⌋ + 1`, or with `ceil_mode` `⌈(H + p_b + p_e − k) / t⌉ + 1`
/// minus one if the last window would start at or after `H + p_b` (so every window starts
/// inside the input or its leading padding, as in ONNX and PyTorch). Each pad must be
/// smaller than the kernel, so that every window holds at least one input element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pool2d {
    /// Window height and width (≥ 1).
    pub kernel: [usize; 2],
    /// Vertical and horizontal strides (≥ 1).
    pub strides: [usize; 2],
    /// Padding: top, left, bottom, right.
    pub pads: [usize; 4],
    /// Round the output size up instead of down.
    pub ceil_mode: bool,
}

/// The input positions one output of a 2-D pooling covers ([`Pool2d::window`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolWindow {
    /// Input rows covered, clipped to the input.
    pub rows: Range<usize>,
    /// Input columns covered, clipped to the input.
    pub cols: Range<usize>,
    /// Positions of the window inside the *padded* input (the divisor of an average
    /// pooling with `count_include_pad`).
    pub padded: usize,
}

impl PoolWindow {
    /// Input positions covered (the divisor of an average pooling without
    /// `count_include_pad`, and one more than the comparisons of a max pooling).
    pub fn len(&self) -> usize {
        self.rows.len() * self.cols.len()
    }

    /// Whether the window covers no input position (never, for a valid [`Pool2d`]:
    /// pads are smaller than the kernel).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The divisor of average pooling: [`Self::padded`] with `count_include_pad`, else
    /// [`Self::len`]; at least 1.
    pub fn count(&self, count_include_pad: bool) -> u64 {
        let c = if count_include_pad {
            self.padded
        } else {
            self.len()
        };
        c.max(1) as u64
    }
}

impl Pool2d {
    /// The single window covering a whole `[h, w]` plane (global pooling).
    pub fn global([h, w]: [usize; 2]) -> Pool2d {
        Pool2d {
            kernel: [h, w],
            strides: [1, 1],
            pads: [0; 4],
            ceil_mode: false,
        }
    }

    /// The window of output position `[oy, ox]` over an `[h, w]` input. This is the one
    /// definition of pooling geometry: the interpreter, the runtime's pooling protocols
    /// and the compiler's cost model all read windows from here.
    pub fn window(&self, [oy, ox]: [usize; 2], [h, w]: [usize; 2]) -> PoolWindow {
        // Along one axis: the clipped range and the extent inside the padded input.
        let span = |a: usize, o: usize, size: usize| {
            let start = (o as i64).saturating_mul(self.strides[a] as i64) - self.pads[a] as i64;
            let end = start.saturating_add(self.kernel[a] as i64);
            let padded_end = end.min(size as i64 + self.pads[a + 2] as i64);
            let padded = (padded_end - start).max(0) as usize;
            let clip = |v: i64| v.clamp(0, size as i64) as usize;
            (clip(start)..clip(end), padded)
        };
        let (rows, ph) = span(0, oy, h);
        let (cols, pw) = span(1, ox, w);
        PoolWindow {
            rows,
            cols,
            padded: ph * pw,
        }
    }

    /// The average-pooling divisor ([`PoolWindow::count`]) of every output of one
    /// `[h, w]` plane, row-major over the output plane; an error if the geometry is
    /// invalid ([`Pool2d::output`]).
    pub fn window_counts(
        &self,
        [h, w]: [usize; 2],
        count_include_pad: bool,
    ) -> Result<Vec<u64>, CheckErrorKind> {
        let [oh, ow] = self.output([h, w])?;
        Ok((0..oh)
            .flat_map(|oy| (0..ow).map(move |ox| [oy, ox]))
            .map(|o| self.window(o, [h, w]).count(count_include_pad))
            .collect())
    }

    /// Output height and width over an `[h, w]` input (the rule is documented on
    /// [`Pool2d`]); errors on invalid attributes (a zero kernel or stride, a pad not
    /// smaller than the kernel, a kernel larger than the padded input). Cost `O(1)`.
    pub fn output(&self, [h, w]: [usize; 2]) -> Result<[usize; 2], CheckErrorKind> {
        positive("kernel", &self.kernel)?;
        positive("strides", &self.strides)?;
        let mut out = [0; 2];
        for (a, size) in [h, w].into_iter().enumerate() {
            let (k, s) = (self.kernel[a], self.strides[a]);
            let (pb, pe) = (self.pads[a], self.pads[a + 2]);
            if pb >= k || pe >= k {
                return Err(K::Attribute {
                    attr: "pads",
                    reason: format!(
                        "{:?} must be smaller than the kernel {:?}",
                        self.pads, self.kernel
                    ),
                });
            }
            // Saturation only happens for absurd attributes, whose output shape the result
            // type then rejects.
            let padded = size.saturating_add(pb).saturating_add(pe);
            if padded < k {
                return Err(K::Attribute {
                    attr: "kernel",
                    reason: format!(
                        "{:?} is larger than the padded input (size {size} along axis {a} with pads {:?})",
                        self.kernel, self.pads
                    ),
                });
            }
            let span = padded - k;
            let mut n = if self.ceil_mode {
                span.div_ceil(s) + 1
            } else {
                span / s + 1
            };
            if self.ceil_mode && (n - 1).saturating_mul(s) >= size.saturating_add(pb) {
                n -= 1;
            }
            out[a] = n;
        }
        Ok(out)
    }
}
