//! Products by the server's weights as coefficient-encoded polynomials
//! (Cheetah §3–§4, HomConv and HomFC): every product is a convolution in a
//! [`Layout`] (a matrix product is a 1×1 one), the input share cut into
//! polynomials with the kernel's halo, the kernels placed in reversed order so
//! that chosen coefficients of each product are the outputs.
//!
//! With input polynomial `X = Σ_{c,u,v} x[c,u,v]·X^{c·hp·wp + u·wp + v}` and,
//! for output `j` of a group, `K_j = Σ w[j,c,r,s]·X^{j·cp·hp·wp + O − (c·hp·wp
//! + r·wp + s)}`, coefficient `j·cp·hp·wp + O + y·wp + x` of `X·Σ_j K_j` is
//! `Σ_{c,r,s} x[c, y+r, x+s]·w[j,c,r,s]` for `y < ny`, `x < nx`: no other pair
//! of terms meets there (the row and column offsets stay within one period)
//! and nothing wraps onto it (`mp·cp·hp·wp ≤ N`).

use sci_ir::ConvGeom;
use sci_ir::rlwe::{self, Layout};

use super::CheetahError;

/// How a product's tensors map onto its convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Orient {
    /// A convolution `[N, C, H, W]` by `[C_out, C/groups, kH, kW]`.
    Conv,
    /// `X·W`: `X [rows, inner]`, `W [inner, outs]`, `Y [rows, outs]`.
    Right {
        rows: usize,
        inner: usize,
        outs: usize,
    },
    /// `W·X`: `W [outs, inner]`, `X [inner, cols]`, `Y [outs, cols]`.
    Left,
}

/// A product by the server's weights: its name, layout and (at the server)
/// weights in the convolution's layout.
#[derive(Debug)]
pub struct Layer {
    /// The name errors give.
    pub name: String,
    /// The layout (parameter set, partition, costs).
    pub layout: Layout,
    weights: Option<Vec<u64>>,
    orient: Orient,
}

/// The signed value of an ℓ-bit element.
fn signed(v: u64, ell: u32) -> i64 {
    ((v << (64 - ell)) as i64) >> (64 - ell)
}

/// Checks that `v` has `len` elements `< 2^ℓ` (`what` names it).
pub(crate) fn check_elems(v: &[u64], len: usize, ell: u32, what: &str) -> Result<(), CheetahError> {
    if v.len() != len {
        return Err(CheetahError::InvalidArgument(format!(
            "{} {what} for {len} expected",
            v.len()
        )));
    }
    if v.iter().any(|&e| e >> (ell - 1) >> 1 != 0) {
        return Err(CheetahError::InvalidArgument(format!(
            "{what} must be reduced mod 2^{ell}"
        )));
    }
    Ok(())
}

impl Layer {
    fn new(
        name: &str,
        geom: &ConvGeom,
        ell: u32,
        w: Option<Vec<u64>>,
        orient: Orient,
    ) -> Result<Layer, CheetahError> {
        let layout = rlwe::conv_layout(geom, ell)?;
        if let Some(w) = &w {
            let [kh, kw] = geom.kernel;
            let len = geom.c_out * geom.input[1] / geom.conv.groups * kh * kw;
            check_elems(w, len, ell, "weights")?;
        }
        Ok(Layer {
            name: name.to_string(),
            layout,
            weights: w,
            orient,
        })
    }

    /// A convolution of geometry `geom` at width `ell`; `w` (`[C_out,
    /// C/groups, kH, kW]`, mod `2^ℓ`) at the server.
    pub fn conv(
        name: &str,
        geom: &ConvGeom,
        ell: u32,
        w: Option<&[u64]>,
    ) -> Result<Layer, CheetahError> {
        Layer::new(name, geom, ell, w.map(<[u64]>::to_vec), Orient::Conv)
    }

    /// `X·W` with `X` shared `[rows, inner]` and `W` the server's `[inner,
    /// outs]`.
    pub fn matmul(
        name: &str,
        (rows, inner, outs): (usize, usize, usize),
        ell: u32,
        w: Option<&[u64]>,
    ) -> Result<Layer, CheetahError> {
        // Kernel [outs, inner, 1, 1] = Wᵀ.
        let wt = w.map(|w| transpose(w, inner, outs));
        let geom = rlwe::matmul_geom(rows, inner, outs);
        Layer::new(name, &geom, ell, wt, Orient::Right { rows, inner, outs })
    }

    /// `W·X` with `W` the server's `[outs, inner]` and `X` shared `[inner,
    /// cols]`.
    pub fn matmul_left(
        name: &str,
        (outs, inner, cols): (usize, usize, usize),
        ell: u32,
        w: Option<&[u64]>,
    ) -> Result<Layer, CheetahError> {
        let geom = rlwe::matmul_geom(cols, inner, outs);
        Layer::new(name, &geom, ell, w.map(<[u64]>::to_vec), Orient::Left)
    }

    /// The product `p` of a program ([`rlwe::Product::of`]) at width `ell`, `w`
    /// the weights as the instruction holds them (server): a convolution's
    /// `[C_out, C/groups, kH, kW]`, `X·W`'s `W [inner, outs]`, `W·X`'s `W [outs,
    /// inner]`, a scale's `c` weights along its axis. The input share is the
    /// instruction's shared operand as it is (row-major), the output the
    /// instruction's result.
    pub fn product(
        name: &str,
        p: &rlwe::Product,
        ell: u32,
        w: Option<&[u64]>,
    ) -> Result<Layer, CheetahError> {
        match *p {
            rlwe::Product::Conv(geom) => Layer::conv(name, &geom, ell, w),
            rlwe::Product::Right { rows, inner, outs } => {
                Layer::matmul(name, (rows, inner, outs), ell, w)
            }
            rlwe::Product::Left { outs, inner, cols } => {
                Layer::matmul_left(name, (outs, inner, cols), ell, w)
            }
            // `[pre, c, post, 1]` by `[c, 1, 1, 1]` in groups of one channel.
            rlwe::Product::Scale { .. } => Layer::conv(name, &p.geom(), ell, w),
        }
    }

    /// Elements of the input share.
    pub fn in_len(&self) -> usize {
        self.layout.conv.geom.input.iter().product()
    }

    /// Elements of the output share.
    pub fn out_len(&self) -> usize {
        self.layout.conv.geom.output_shape().iter().product()
    }

    /// The input share in the convolution's `[N, C, H, W]` layout.
    pub(crate) fn conv_input(&self, x: &[u64]) -> Result<Vec<u64>, CheetahError> {
        check_elems(x, self.in_len(), self.layout.ell, "input shares")?;
        Ok(match self.orient {
            Orient::Conv | Orient::Left => x.to_vec(),
            Orient::Right { rows, inner, .. } => transpose(x, rows, inner),
        })
    }

    /// The output share in the product's layout, from the convolution's.
    pub(crate) fn product_output(&self, y: Vec<u64>) -> Vec<u64> {
        match self.orient {
            Orient::Conv | Orient::Left => y,
            Orient::Right { rows, outs, .. } => transpose(&y, outs, rows),
        }
    }

    /// The plaintext (`N` coefficients) of input ciphertext `ct` for the
    /// share `x` (convolution layout).
    pub(crate) fn pack(&self, x: &[u64], ct: usize) -> Vec<u64> {
        let l = &self.layout;
        let lc = &l.conv;
        let (blk, ci) = (ct / l.in_groups, ct % l.in_groups);
        let (bw, bh, n) = (
            blk % l.bw_count,
            blk / l.bw_count % l.bh_count,
            blk / (l.bw_count * l.bh_count),
        );
        let image = &x[n * x.len() / lc.batch..][..x.len() / lc.batch];
        let mut m = vec![0u64; l.set.degree];
        for c in 0..l.cp.min(lc.c - ci * l.cp) {
            for u in 0..l.hp.min(lc.h.saturating_sub(bh * l.ny)) {
                for v in 0..l.wp.min(lc.w.saturating_sub(bw * l.nx)) {
                    if let Some(i) = lc.source(ci * l.cp + c, bh * l.ny + u, bw * l.nx + v) {
                        m[(c * l.hp + u) * l.wp + v] = image[i];
                    }
                }
            }
        }
        m
    }

    /// Server: the kernel polynomials of output group `mo`, one per input
    /// group, as `(coefficient, signed weight)` lists (empty where the group
    /// has no weight on those channels).
    pub(crate) fn kernels(&self, mo: usize) -> Result<Vec<Vec<(usize, i64)>>, CheetahError> {
        let w = self.weights.as_ref().ok_or_else(|| {
            CheetahError::InvalidArgument("the server's layer needs its weights".into())
        })?;
        let l = &self.layout;
        let (cell, off) = (l.cp * l.hp * l.wp, l.offset());
        let (o0, count) = l.group(mo);
        let mut out = vec![Vec::new(); l.in_groups];
        for j in 0..count {
            for (pc, r, s, wi) in l.conv.taps(o0 + j) {
                let (ci, c) = (pc / l.cp, pc % l.cp);
                out[ci].push((
                    j * cell + off - (c * l.hp * l.wp + r * l.wp + s),
                    signed(w[wi], l.ell),
                ));
            }
        }
        Ok(out)
    }
}

/// The transpose of a row-major `[rows, cols]` matrix.
fn transpose(x: &[u64], rows: usize, cols: usize) -> Vec<u64> {
    let mut t = vec![0u64; x.len()];
    for r in 0..rows {
        for c in 0..cols {
            if let (Some(&v), Some(d)) = (x.get(r * cols + c), t.get_mut(c * rows + r)) {
                *d = v;
            }
        }
    }
    t
}
