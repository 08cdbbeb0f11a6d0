//! Convolution attributes ([`Conv2d`]) and geometry ([`ConvGeom`]): the one definition
//! of a convolution's output shape, read by the type checker, the interpreter, the
//! runtime's OT-based and HE-based convolutions and the compiler's cost model.

use crate::error::{CheckErrorKind, positive};
use crate::types::ShapeDisplay;

type K = CheckErrorKind;

/// Attributes of [`crate::Op::Conv2d`] (NCHW, 2-D).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conv2d {
    /// Strides (h, w), ≥ 1.
    pub strides: [usize; 2],
    /// Padding: top, left, bottom, right.
    pub pads: [usize; 4],
    /// Dilations (h, w), ≥ 1.
    pub dilations: [usize; 2],
    /// Number of groups, ≥ 1, dividing C and C_out.
    pub groups: usize,
}

impl Default for Conv2d {
    /// Stride 1, no padding, no dilation, one group.
    fn default() -> Self {
        Conv2d {
            strides: [1, 1],
            pads: [0; 4],
            dilations: [1, 1],
            groups: 1,
        }
    }
}

/// The geometry of one convolution: its attributes and the dimensions of its input
/// (`[N, C, H, W]`) and weights (`[C_out, C/groups, kH, kW]`).
///
/// Output `[N, C_out, H_out, W_out]` with
/// `H_out = ⌊(H + p_top + p_bottom − d_h·(kH − 1) − 1) / stride_h⌋ + 1` (same for W).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeom {
    /// Input `[N, C, H, W]`.
    pub input: [usize; 4],
    /// Output channels.
    pub c_out: usize,
    /// Kernel height and width.
    pub kernel: [usize; 2],
    /// The attributes.
    pub conv: Conv2d,
}

impl ConvGeom {
    /// Errors unless the group count is ≥ 1 and divides the input and output channels.
    pub fn check_groups(&self) -> Result<(), CheckErrorKind> {
        let (g, c) = (self.conv.groups, self.input[1]);
        if g == 0 || !c.is_multiple_of(g) || !self.c_out.is_multiple_of(g) {
            return Err(K::Attribute {
                attr: "groups",
                reason: format!(
                    "{g} must be ≥ 1 and divide the input channels {c} and output channels {}",
                    self.c_out
                ),
            });
        }
        Ok(())
    }

    /// The output shape `[N, C_out, H_out, W_out]`; errors on invalid attributes (groups
    /// as in [`Self::check_groups`], a zero stride, dilation or kernel size, a dilated
    /// kernel larger than the padded input). Cost `O(1)`.
    pub fn output(&self) -> Result<[usize; 4], CheckErrorKind> {
        self.check_groups()?;
        positive("strides", &self.conv.strides)?;
        positive("dilations", &self.conv.dilations)?;
        positive("kernel", &self.kernel)?;
        let fits = |a| {
            self.axis_out(a).ok_or_else(|| K::Attribute {
                attr: "pads",
                reason: format!(
                    "dilated kernel {:?} does not fit input {} with pads {:?}",
                    self.kernel,
                    ShapeDisplay(&self.input),
                    self.conv.pads
                ),
            })
        };
        Ok([self.input[0], self.c_out, fits(0)?, fits(1)?])
    }

    /// Output height and width, 0 along an axis where the geometry is invalid
    /// ([`Self::output`] says why).
    pub fn output_hw(&self) -> [usize; 2] {
        [0, 1].map(|a| self.axis_out(a).unwrap_or(0))
    }

    /// Output shape `[N, C_out, H_out, W_out]`, with [`Self::output_hw`].
    pub fn output_shape(&self) -> [usize; 4] {
        let [oh, ow] = self.output_hw();
        [self.input[0], self.c_out, oh, ow]
    }

    /// The output size along spatial axis `a` (0: height, 1: width), `None` if the
    /// kernel or stride is 0 or the dilated kernel does not fit the padded input.
    fn axis_out(&self, a: usize) -> Option<usize> {
        let c = &self.conv;
        let span = c.dilations[a]
            .checked_mul(self.kernel[a].checked_sub(1)?)?
            .checked_add(1)?;
        let padded = self.input[2 + a]
            .checked_add(c.pads[a])?
            .checked_add(c.pads[a + 2])?;
        let span_out = padded.checked_sub(span)?;
        Some(span_out.checked_div(c.strides[a])? + 1)
    }
}
