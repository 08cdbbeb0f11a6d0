//! Re-encoding for SCI_HE: a program quantized over the ring `Z_{2^ℓ}` becomes the same
//! program over the HE field `Z_n`, `n = `[`sci_ir::backend::he_prime`]`(ℓ)` (the
//! largest `ℓ`-bit prime `≡ 1 mod 2N`), with [`Backend::He`] in its parameters.
//!
//! **Rewrites:** every type's encoding from `Z_{2^ℓ}` to `Z_n` (same scale, shape and
//! owner); every constant to the field element of the same signed value.
//!
//! **Why it is exact:** every op of the IR is defined on the signed values of its
//! operands reduced into the encoding (sums and products wrap mod `2^ℓ` or mod `n`,
//! `trunc` and `div_public` floor the signed value, comparisons compare signed values;
//! `sci_ir::ops`). So the two programs compute the same signed values wherever no value
//! leaves the field's signed range `(−n/2, n/2)`, which lies inside the ring's
//! `[−2^{ℓ−1}, 2^{ℓ−1})`; `n > 2^{ℓ−1}`, so a program whose values need at most `ℓ − 1`
//! bits (autotuning with a margin of at least one bit guarantees it on the validation
//! set) is exact in both. A constant outside the field's range is an error naming it.
//!
//! Costs of the truncations: over the field `trunc` is the division by `2^s` of §4.2.3
//! (the runtime's `rdiv`); its `nonneg` mark (set by `mark_nonneg` before this pass,
//! after a ReLU or a MaxPool of one) is kept, and the runtime then runs the division's
//! non-negative variant (`rdiv_nonneg`: no sign test, the correction by one correlated
//! OT; 2834 bits per element instead of 9560 at 32 bits, s = 12, m = 4; the cost
//! model's `sci_ir::cost::div::rdiv_nonneg`). MaxPool and ArgMax of non-negative values
//! use the narrow comparison over the field as over the ring.

use crate::error::PassError;
use crate::pass::Pass;
use crate::rewrite::Rewriter;
use sci_ir::{Backend, Encoding, Op, Params, Program, Tensor, Type};

/// The pass (named `he_field`): see the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeField;

impl Pass for HeField {
    fn name(&self) -> &'static str {
        "he_field"
    }

    fn run(&self, p: &Program) -> Result<Program, PassError> {
        let bits = match p.encoding() {
            Some(Encoding::Ring { bits }) => bits,
            Some(Encoding::Field { .. }) if p.params().backend == Backend::He => {
                return Ok(p.clone());
            }
            found => {
                return Err(PassError::Stage {
                    expected: "ring-quantized",
                    found: found.unwrap_or(Encoding::Real),
                });
            }
        };
        let field = Backend::He
            .encoding(bits)
            .map_err(|e| PassError::Quant(e.to_string()))?;
        let params = Params {
            backend: Backend::He,
            ..*p.params()
        };
        let mut rw = Rewriter::with_params(p, params);
        for v in p.ids() {
            let instr = p.instr(v);
            let retype = |ty: &Type| Type::new(field, ty.scale(), ty.shape().to_vec(), ty.owner());
            match &instr.op {
                Op::Input { name, ty } => {
                    let ty = retype(ty).map_err(|e| PassError::Quant(e.to_string()))?;
                    let n = rw.push(
                        &instr.name,
                        Op::Input {
                            name: name.clone(),
                            ty,
                        },
                    )?;
                    rw.set(v, n);
                }
                Op::Const { id, ty } => {
                    let new_ty = retype(ty).map_err(|e| PassError::Quant(e.to_string()))?;
                    let t = p.const_data(*id).ok_or_else(|| PassError::Unsupported {
                        value: instr.name.clone(),
                        op: "const",
                        reason: "the constant's data is withheld (a client view)".into(),
                    })?;
                    rw.define_const(v, new_ty, reencode(&instr.name, t, field)?);
                }
                _ => rw.copy(v)?,
            }
        }
        rw.finish()
    }
}

/// The ring tensor `t` as the field tensor of the same signed values.
fn reencode(name: &str, t: &Tensor, field: Encoding) -> Result<Tensor, PassError> {
    let enc = t.encoding();
    let signed: Vec<i64> = t
        .as_u64()
        .ok_or_else(|| PassError::Internal(format!("%{name}: a ring constant without words")))?
        .iter()
        .map(|&w| enc.signed(w))
        .collect();
    Tensor::signed(field, t.shape().to_vec(), &signed).map_err(|e| PassError::Unsupported {
        value: name.to_string(),
        op: "const",
        reason: format!(
            "{e}: the value does not fit the HE field of the same width (choose a larger bit width)"
        ),
    })
}
