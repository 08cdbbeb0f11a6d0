//! Local evaluation of one instruction with the reference interpreter.
//!
//! A party computes locally (i) values it knows in the clear (public values at both
//! parties, server-owned values at the server) and (ii) the *linear* ops on shares:
//! data movement (`reshape`, `flatten`, `transpose`, `concat`, `pad`), `add`, `sub`,
//! `mul_public`, `scale_up`, and products by a *public* factor. For a linear map `f`,
//! `f(x₀) + f(x₁) = f(x₀ + x₁)` in `Z_{2^ℓ}`, so each party applying `f` to its share
//! yields shares of `f(x)`; additive terms known in the clear (a constant addend, a bias,
//! a pad value) are added by the server only (the client uses zero), see
//! [`super::executor`].
//!
//! Rather than re-implementing these kernels, this module runs the op through
//! [`sci_ir::interp`] on a one-instruction program whose operands are the given tensors
//! as public constants. The arithmetic is therefore the oracle's own, and a secure run
//! agrees with the cleartext run by construction on every local step.

use sci_ir::interp::{self, InterpError};
use sci_ir::{Builder, CheckError, Op, Owner, ParamsError, Program, Tensor, ValueId};
use std::collections::HashMap;

/// Why a local evaluation failed.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The interpreter rejected the computation (e.g. a `trunc nonneg` on a negative
    /// value).
    #[error(transparent)]
    Interp(#[from] InterpError),
    /// The one-instruction program did not type-check: the operand data do not match
    /// the plan's types (an internal error).
    #[error("internal error: {0}")]
    Check(#[from] CheckError),
    /// Internal error building the one-instruction program.
    #[error("internal error: {0}")]
    Params(#[from] ParamsError),
    /// An operand was not supplied (an internal error).
    #[error("internal error: operand %{0} not supplied")]
    Missing(String),
}

/// Evaluates `op` (whose operands are values of `program`) on `operands`: one tensor per
/// distinct operand value, of that value's encoding and shape. Returns the result tensor.
pub fn eval(
    program: &Program,
    op: &Op,
    operands: Vec<(ValueId, Tensor)>,
) -> Result<Tensor, LocalError> {
    let mut b = Builder::with_params(*program.params());
    let mut ids = HashMap::new();
    for (v, t) in operands {
        if ids.contains_key(&v) {
            continue;
        }
        let ty = program.ty(v).with_owner(Owner::Public);
        let id = b.constant(&format!("v{}", v.index()), ty, t)?;
        ids.insert(v, id);
    }
    let op = op.try_map_operands(|v| {
        ids.get(v)
            .copied()
            .ok_or_else(|| LocalError::Missing(program.name(*v).to_string()))
    })?;
    let y = b.push("y", op)?;
    b.output("out", y)?;
    let p = b.finish()?;
    let mut outs = interp::run(&p, &[])?;
    Ok(outs
        .pop()
        .expect("a program with one output has one output"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sci_ir::Encoding;

    #[test]
    fn evaluates_one_instruction_on_given_data() {
        let p = Program::parse(
            "params mill_radix=4 threads=1\n\
             %x: client i8.0[2,3] = input \"x\"\n\
             %t: client i8.0[3,2] = transpose %x perm=[1,0]\n\
             %s: client i8.0[3,2] = add %t, %t\n\
             %out: client i8.0[3,2] = output %s \"out\"\n",
        )
        .unwrap();
        let r8 = Encoding::ring(8).unwrap();
        let (x, t, s) = (
            p.lookup("x").unwrap(),
            p.lookup("t").unwrap(),
            p.lookup("s").unwrap(),
        );
        let xt = Tensor::signed(r8, vec![2, 3], &[1, 2, 3, 4, 5, 127]).unwrap();
        let y = eval(&p, &p.instr(t).op, vec![(x, xt)]).unwrap();
        assert_eq!(y.to_signed().unwrap(), vec![1, 4, 2, 5, 3, 127]);
        // The same value twice as operand is supplied once; the sum wraps in Z_2^8.
        let y = eval(&p, &p.instr(s).op, vec![(t, y.clone()), (t, y)]).unwrap();
        assert_eq!(y.to_signed().unwrap(), vec![2, 8, 4, 10, 6, -2]);
        assert!(matches!(
            eval(&p, &p.instr(s).op, vec![]),
            Err(LocalError::Missing(_))
        ));
    }
}
