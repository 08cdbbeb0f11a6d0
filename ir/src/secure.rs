//! Whether a well-typed program can be executed securely by the runtime.
//!
//! The runtime shares every secret value over one ring `Z_{2^ℓ}` (SCI_OT) or one prime
//! field `Z_n` (SCI_HE), and implements linear layers where one operand is known to the
//! server (the weights) and the other is secret to it (CrypTFlow2 §5.1.1: OT-based or
//! HE-based products of a server matrix with a shared one). So, on top of type
//! correctness, a program is securely executable when:
//!
//! * it is quantized: every value has the same ring or field encoding (no `f32`), the one
//!   of its [`crate::Backend`]: a ring for OT, an HE field for HE
//!   ([`crate::Backend::accepts`]);
//! * every product (`Conv2d`, `MatMul`, `Mul`) has an operand the server knows in the
//!   clear (`Server` or `Public`): a linear layer, or a local product by a public factor
//!   — or it is a **secret product** ([`Program::is_secret_product`]): a `mul` or
//!   `matmul` of two tensors secret from the server (client × shared, shared × shared,
//!   client × client), which the runtime runs by `proto::secmul` (a `matmul` of an
//!   RLWE plan by RLWE, [`Program::secret_product_backend`]) over a ring `Z_{2^ℓ}`
//!   only. A `conv2d` of two secret tensors, and a secret product over an HE
//!   field, are not supported;
//! * a `sigmoid` or `tanh` runs over a ring only: its protocol multiplies secret
//!   functions of its operand (`proto::secmul` inside exp and the reciprocal), so it is
//!   refused over an HE field exactly as a secret product is (as is an `rsqrt`: its
//!   range reduction and Newton's iteration multiply secret values, and a `softmax`:
//!   its exponentials times the sum's reciprocal)
//!   ([`Program::needs_ring`]: the one predicate for both).

use crate::ops::Op;
use crate::program::{Program, ValueId};
use crate::types::{Encoding, Owner};
use thiserror::Error;

/// Why a program cannot be executed securely.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum SecureError {
    /// A value is not fixed-point.
    #[error(
        "%{value} = {op} has encoding f32: the program must be quantized before secure execution"
    )]
    NotQuantized {
        /// The value.
        value: String,
        /// Its op.
        op: &'static str,
    },
    /// Two encodings in one program.
    #[error(
        "%{value} = {op} has encoding {found}, but the program's secret values use {expected}: the runtime shares everything over one ring or field"
    )]
    MixedEncodings {
        /// The value.
        value: String,
        /// Its op.
        op: &'static str,
        /// The first encoding of the program.
        expected: Encoding,
        /// This value's encoding.
        found: Encoding,
    },
    /// The encoding does not suit the backend.
    #[error(
        "%{value} = {op} has encoding {encoding}, which the {backend} backend does not run: OT needs a ring i<ℓ>, HE the field of an HE width (sci_ir::backend::he_prime)"
    )]
    Backend {
        /// The value.
        value: String,
        /// Its op.
        op: &'static str,
        /// The program's backend.
        backend: crate::Backend,
        /// The value's encoding.
        encoding: Encoding,
    },
    /// An op whose protocol exists over a ring only (`relu_trunc`) over an HE field.
    #[error(
        "%{value} = {op} runs only over a ring i<ℓ> (SCI_OT or RLWE backends), not over {encoding}: for SCI_HE write the ReLU and the truncation apart (the compiler fuses them only for the ring backends)"
    )]
    RingOnly {
        /// The value.
        value: String,
        /// Its op.
        op: &'static str,
        /// The value's encoding.
        encoding: Encoding,
    },
    /// A product of two values secret from the server that the runtime does not run: a
    /// `conv2d`, or any over an HE field (a `sigmoid`/`tanh` there: its operand twice).
    #[error(
        "%{value} = {op} multiplies two tensors secret from the server ({a} × {b}), which is not supported here: a product of two secret tensors (also inside `sigmoid`, `tanh`, `rsqrt` and `softmax`) runs only as `mul`, `matmul`, `sigmoid`, `tanh`, `rsqrt` or `softmax` over a ring i<ℓ> (SCI_OT or RLWE backends); otherwise one operand must be known to the server (server or public), e.g. the weights"
    )]
    SecretProduct {
        /// The value.
        value: String,
        /// Its op.
        op: &'static str,
        /// Owner of the first factor.
        a: Owner,
        /// Owner of the second factor.
        b: Owner,
    },
}

/// Whether a product of operands owned by `a` and `b` is supported: one operand public,
/// both owned by the same single party, or one owned by the server.
pub fn product_supported(a: Owner, b: Owner) -> bool {
    a == Owner::Public
        || b == Owner::Public
        || (a == b && a != Owner::Shared)
        || a == Owner::Server
        || b == Owner::Server
}

/// Checks the conditions of the module docs; the first violation is returned.
pub fn check_secure(p: &Program) -> Result<(), SecureError> {
    let mut encoding = None;
    for v in p.ids() {
        let i = p.instr(v);
        let op = i.op.mnemonic();
        let enc = i.ty.encoding();
        if enc.is_real() {
            return Err(SecureError::NotQuantized {
                value: i.name.clone(),
                op,
            });
        }
        match encoding {
            None => encoding = Some(enc),
            Some(e) if e != enc => {
                return Err(SecureError::MixedEncodings {
                    value: i.name.clone(),
                    op,
                    expected: e,
                    found: enc,
                });
            }
            Some(_) => {}
        }
        if !p.params().backend.accepts(enc) {
            return Err(SecureError::Backend {
                value: i.name.clone(),
                op,
                backend: p.params().backend,
                encoding: enc,
            });
        }
        if matches!(i.op, Op::ReluTrunc { .. }) && !matches!(enc, Encoding::Ring { .. }) {
            return Err(SecureError::RingOnly {
                value: i.name.clone(),
                op,
                encoding: enc,
            });
        }
        let factors = match &i.op {
            Op::Conv2d { x, w, .. } => Some((*x, *w)),
            Op::MatMul { a, b, .. } | Op::Mul { a, b } => Some((*a, *b)),
            Op::Sigmoid { x }
            | Op::Tanh { x }
            | Op::Rsqrt { x }
            | Op::Softmax { x, .. }
            | Op::Spline { x, .. } => Some((*x, *x)),
            _ => None,
        };
        if let Some((a, b)) = factors {
            let (a, b) = (p.ty(a).owner(), p.ty(b).owner());
            // A secret product (or a sigmoid/tanh) runs only over a ring
            // (`proto::secmul`); any other product needs an operand the server knows.
            let supported = if p.needs_ring(v) {
                matches!(enc, Encoding::Ring { .. })
            } else {
                product_supported(a, b)
            };
            if !supported {
                return Err(SecureError::SecretProduct {
                    value: i.name.clone(),
                    op,
                    a,
                    b,
                });
            }
        }
    }
    Ok(())
}

impl Program {
    /// Whether instruction `v` multiplies a secret tensor by the server's weights: a
    /// `conv2d`, `matmul` or `mul` with an operand owned by the server and a result
    /// shared, i.e. a linear layer run by the backend's protocol (OT- or HE-based).
    pub fn is_secure_product(&self, v: ValueId) -> bool {
        let i = self.instr(v);
        let factors = match &i.op {
            Op::Conv2d { x, w, .. } => [*x, *w],
            Op::MatMul { a, b, .. } | Op::Mul { a, b } => [*a, *b],
            _ => return false,
        };
        let owners = factors.map(|f| self.ty(f).owner());
        !matches!(i.ty.owner(), Owner::Public | Owner::Server)
            && owners.contains(&Owner::Server)
            && !owners.contains(&Owner::Public)
    }

    /// Whether instruction `v` is a product of two operands secret from the server: a
    /// `mul` or `matmul` with neither operand public nor the server's (so both are held
    /// as shares: activations, the client's values), run by the secret × secret product
    /// protocol of [`Program::secret_product_backend`] (`proto::secmul`,
    /// [`crate::cost::secmul`]; or RLWE's cross terms, [`crate::rlwe::secret_matmul`]).
    /// Cost: constant.
    pub fn is_secret_product(&self, v: ValueId) -> bool {
        let i = self.instr(v);
        let secret = |f: &ValueId| !matches!(self.ty(*f).owner(), Owner::Public | Owner::Server);
        match &i.op {
            Op::MatMul { a, b, .. } | Op::Mul { a, b } => secret(a) && secret(b),
            _ => false,
        }
    }

    /// Whether instruction `v` runs only over a ring `Z_{2^ℓ}`: a secret product
    /// ([`Program::is_secret_product`]), or any `sigmoid`/`tanh`/`rsqrt`/`softmax`/`spline`
    /// (their fixed-point definitions, [`crate::math::smooth`], [`crate::math::rsqrt`],
    /// [`crate::math::softmax`] and [`crate::spline::spline`], are a ring's). [`check_secure`]
    /// refuses them over an HE field. Cost: constant.
    pub fn needs_ring(&self, v: ValueId) -> bool {
        let op = &self.instr(v).op;
        self.is_secret_product(v)
            || op.smooth().is_some()
            || matches!(
                op,
                Op::Rsqrt { .. } | Op::Softmax { .. } | Op::Spline { .. }
            )
    }

    /// Whether the runtime can execute this program securely ([`check_secure`]).
    pub fn check_secure(&self) -> Result<(), SecureError> {
        check_secure(self)
    }
}
