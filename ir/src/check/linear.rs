//! The linear layers: `conv2d` and `matmul` (products add scales; an optional bias at
//! the product's scale).

use super::{K, bias_ok, rank_is, same_encoding};
use crate::ops::{Conv2d, ConvGeom};
use crate::types::{Owner, Type};

/// `conv2d`: `x: [N, C, H, W]`, `w: [C_out, C/groups, kH, kW]`, output shape by
/// [`ConvGeom::output`], scale `s_x + s_w`.
pub(super) fn conv2d(tys: &[&Type], conv: &Conv2d, owner: Owner) -> Result<Type, K> {
    let (x, w) = (tys[0], tys[1]);
    let enc = x.encoding();
    same_encoding("w", w, enc)?;
    let xs = rank_is("x", x, 4, "[N, C, H, W]")?;
    let ws = rank_is("w", w, 4, "[C_out, C/groups, kH, kW]")?;
    let geom = ConvGeom {
        input: [xs[0], xs[1], xs[2], xs[3]],
        c_out: ws[0],
        kernel: [ws[2], ws[3]],
        conv: *conv,
    };
    geom.check_groups()?;
    let cg = xs[1] / conv.groups;
    if ws[1] != cg || ws[2] == 0 || ws[3] == 0 {
        return Err(K::Shape {
            operand: "w".into(),
            expected: format!("[{}, {cg}, kH ≥ 1, kW ≥ 1]", ws[0]),
            found: ws.to_vec(),
        });
    }
    let out = geom.output()?;
    let scale = x.scale() + w.scale();
    if let Some(b) = tys.get(2) {
        bias_ok(b, enc, scale, ws[0])?;
    }
    Ok(Type::new(enc, scale, out.to_vec(), owner)?)
}

/// `matmul`: `[M, K] × [K, N] → [M, N]`, scale `s_a + s_b`.
pub(super) fn matmul(tys: &[&Type], owner: Owner) -> Result<Type, K> {
    let (a, b) = (tys[0], tys[1]);
    let enc = a.encoding();
    same_encoding("b", b, enc)?;
    let ash = rank_is("a", a, 2, "[M, K]")?;
    let bsh = rank_is("b", b, 2, "[K, N]")?;
    if bsh[0] != ash[1] {
        return Err(K::Shape {
            operand: "b".into(),
            expected: format!("[{}, N]", ash[1]),
            found: bsh.to_vec(),
        });
    }
    let scale = a.scale() + b.scale();
    if let Some(bias) = tys.get(2) {
        bias_ok(bias, enc, scale, bsh[1])?;
    }
    Ok(Type::new(enc, scale, vec![ash[0], bsh[1]], owner)?)
}
