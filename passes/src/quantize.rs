//! Quantization: from the float stage to fixed point at (ℓ, s).
//!
//! **Rewrites:** every value gets a ring type `Z_{2^ℓ}`; client inputs are at scale `s`.
//! Constants are encoded with [`sci_ir::fixed::encode`] (round to nearest) at the scale
//! their use needs: `s` for weights and for operands of additive ops next to scale-`s`
//! activations, `2s` for the bias of a `conv2d`/`matmul` (the scale of the product it is
//! added to); a constant used at two scales is emitted twice. Every product —
//! `conv2d`, `matmul`, `mul` (by a constant tensor; ONNX `Div` by a non-integer constant
//! arrives as `mul` by its reciprocal) — has scale `2s` and is followed by `trunc(s)`, so
//! that every activation is back at scale `s`, with one exception, a **sum of
//! products** (below); `pad` values are encoded at the operand's scale; `argmax` yields
//! scale-0 indices. Operands whose scale differs from what an op needs (only possible
//! after `argmax`) are converted with `scale_up`/`trunc`.
//!
//! **Sums of products are truncated once.** An `add`/`sub` of two distinct operands that
//! are both products (or, recursively, such sums), each used by that `add`/`sub` only, is
//! computed at scale `2s` and truncated once, after the sum: `⌊(p + q) / 2^s⌋` instead of
//! `⌊p / 2^s⌋ + ⌊q / 2^s⌋`. This is the residual block with a projection shortcut
//! (ResNet's `relu(bn(conv3(…)) + bn(downsample(x)))`): one rounding instead of two, and
//! one truncation of the block's output instead of two, which [`crate::place_truncs`]
//! then moves past the ReLU, where it skips the DReLU of CrypTFlow2's Algorithm 5.
//! Without it, one product's truncation moves past the add and the ReLU but the other's
//! cannot (the add is on the other truncation's chain), so that product is truncated by
//! the general protocol and scaled back up. The fusion lives here and not in
//! [`crate::place_truncs`] because it changes the result: the two expressions differ by
//! the carry of the two fractional parts (0 or 1 in the last place), so it is a choice of
//! where the fixed-point program rounds — quantization's job — while every later pass
//! stays exact (bit-identical to the program quantization produced). Both roundings are
//! floors of exact sums: the fused one is within one unit in the last place of the real
//! sum, the unfused one within two. A product with other uses keeps its own truncation
//! (those uses need it at scale `s`).
//!
//! **Why it is well-typed and faithful:** the type checker accepts exactly these scales
//! (products add scales, additive ops need equal ones); each op then computes the
//! fixed-point version of the float op (CrypTFlow2 Appendix E): `trunc` is the floor
//! shift of Corollary 4.2 and `div_public`/pooling divisions are the paper's `rdiv`. A
//! constant that does not fit the ring at its scale is reported by name
//! ([`PassError::DoesNotFit`]). Whether intermediate values fit ℓ bits is data-dependent:
//! [`crate::autotune`] measures it on a validation set, on the final pipeline, so it sees
//! a fused sum at scale `2s` (one bit wider than either product; the unfused pipeline
//! computed the same sum at `2s` too, after [`crate::place_truncs`] moved the other
//! product's truncation past the add) with the magnitudes it really reaches.

use crate::error::PassError;
use crate::pass::Pass;
use crate::rewrite::Rewriter;
use sci_ir::fixed::encode_tensor;
use sci_ir::{Encoding, Op, Owner, Program, Scalar, Type, ValueId};
use std::collections::HashMap;

/// Whether `op` is a product (scale `2s` after quantization).
fn is_product(op: &Op) -> bool {
    matches!(op, Op::Conv2d { .. } | Op::MatMul { .. } | Op::Mul { .. })
}

/// The sums of products of `p` (see the module docs), per old value: `fused[v]` if `v` is
/// an `add`/`sub` computed at scale `2s`, `deferred[v]` if `v` (a product or such a sum)
/// is left at `2s` for its only user, a fused sum, to truncate.
struct Sums {
    fused: Vec<bool>,
    deferred: Vec<bool>,
}

impl Sums {
    fn of(p: &Program) -> Sums {
        let users = p.users();
        let n = p.instrs().len();
        let mut fused = vec![false; n];
        // Products and fused sums: values at scale 2s before their truncation.
        let mut wide = vec![false; n];
        for v in p.ids() {
            let op = &p.instr(v).op;
            wide[v.index()] = is_product(op)
                || match op {
                    Op::Add { a, b } | Op::Sub { a, b } if a != b => {
                        let only_here = |o: &ValueId| wide[o.index()] && users[o.index()] == [v];
                        fused[v.index()] = only_here(a) && only_here(b);
                        fused[v.index()]
                    }
                    _ => false,
                };
        }
        let deferred = p
            .ids()
            .map(|v| wide[v.index()] && matches!(users[v.index()][..], [u] if fused[u.index()]))
            .collect();
        Sums { fused, deferred }
    }
}

/// Quantization at bit width `bits` (ℓ) and scale `scale` (s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Quantize {
    /// ℓ: values live in `Z_{2^ℓ}`, 1 ≤ ℓ ≤ 64.
    pub bits: u32,
    /// s: fraction bits of activations; products have `2s < ℓ`.
    pub scale: u32,
}

impl Quantize {
    /// Checks `1 ≤ s` and `2s < ℓ ≤ 64` (products have scale `2s`, which must fit).
    pub fn validate(&self) -> Result<(), PassError> {
        if self.bits == 0 || self.bits > 64 {
            return Err(PassError::Quant(format!(
                "bit width ℓ = {} is outside 1..=64",
                self.bits
            )));
        }
        if self.scale == 0 || 2 * self.scale >= self.bits {
            return Err(PassError::Quant(format!(
                "scale s = {} needs 1 ≤ s and 2s < ℓ = {} (products have scale 2s)",
                self.scale, self.bits
            )));
        }
        Ok(())
    }
}

impl Pass for Quantize {
    fn name(&self) -> &'static str {
        "quantize"
    }

    fn run(&self, p: &Program) -> Result<Program, PassError> {
        self.validate()?;
        match p.encoding() {
            Some(Encoding::Real) | None => {}
            Some(found) => {
                return Err(PassError::Stage {
                    expected: "float (f32)",
                    found,
                });
            }
        }
        let enc = Encoding::ring(self.bits).map_err(|e| PassError::Quant(e.to_string()))?;
        let mut q = Quantizer {
            rw: Rewriter::new(p),
            enc,
            s: self.scale,
            consts: HashMap::new(),
            sums: Sums::of(p),
        };
        for v in p.ids() {
            q.instr(v)?;
        }
        q.rw.finish()
    }
}

struct Quantizer<'a> {
    rw: Rewriter<'a>,
    enc: Encoding,
    s: u32,
    /// Encoded constants: (old constant, scale) → new value.
    consts: HashMap<(ValueId, u32), ValueId>,
    /// The sums of products, truncated once.
    sums: Sums,
}

impl Quantizer<'_> {
    fn unsupported(&self, v: ValueId, reason: &str) -> PassError {
        let i = self.rw.old.instr(v);
        PassError::Unsupported {
            value: i.name.clone(),
            op: i.op.mnemonic(),
            reason: reason.into(),
        }
    }

    /// The old value `v` as a new value at scale `target`: a constant is encoded at that
    /// scale; an activation at another scale is converted with `scale_up`/`trunc`.
    fn at(&mut self, v: ValueId, target: u32) -> Result<ValueId, PassError> {
        let p = self.rw.old;
        let instr = p.instr(v);
        if let Op::Const { id, ty } = &instr.op {
            if let Some(&n) = self.consts.get(&(v, target)) {
                return Ok(n);
            }
            let data = p.const_data(*id).ok_or_else(|| PassError::Unsupported {
                value: instr.name.clone(),
                op: "const",
                reason: "the constant's data is withheld (a client view cannot be quantized)"
                    .into(),
            })?;
            let t =
                encode_tensor(data, target, self.enc).map_err(|error| PassError::DoesNotFit {
                    value: instr.name.clone(),
                    error,
                })?;
            let nty = self.ring_type(ty, target)?;
            let n = self.rw.constant(&instr.name, nty, t)?;
            self.consts.insert((v, target), n);
            return Ok(n);
        }
        let n = self.rw.get(v)?;
        self.rescale(n, &instr.name, target)
    }

    /// The old value `v` at whatever scale it has (constants at `s`).
    fn as_is(&mut self, v: ValueId) -> Result<ValueId, PassError> {
        if matches!(self.rw.old.instr(v).op, Op::Const { .. }) {
            self.at(v, self.s)
        } else {
            self.rw.get(v)
        }
    }

    /// Converts the new value `n` to scale `target`.
    fn rescale(&mut self, n: ValueId, name: &str, target: u32) -> Result<ValueId, PassError> {
        let cur = self.rw.ty(n).scale();
        if cur < target {
            self.rw.push(
                &format!("{name}.up"),
                Op::ScaleUp {
                    x: n,
                    k: target - cur,
                },
            )
        } else if cur > target {
            self.rw.push(
                &format!("{name}.trunc"),
                Op::Trunc {
                    x: n,
                    s: cur - target,
                    nonneg: false,
                },
            )
        } else {
            Ok(n)
        }
    }

    fn ring_type(&self, ty: &Type, scale: u32) -> Result<Type, PassError> {
        ty.with_encoding(self.enc, scale)
            .map_err(|e| PassError::Quant(e.to_string()))
    }

    fn instr(&mut self, v: ValueId) -> Result<(), PassError> {
        let p = self.rw.old;
        let instr = p.instr(v);
        let s = self.s;
        let name = instr.name.as_str();
        // The result `y` of `v` at scale 2s (a product or a fused sum): truncated back to
        // s unless its only user, a fused sum, truncates it.
        let wide = |q: &mut Self, y: ValueId| -> Result<(), PassError> {
            let t = if q.sums.deferred[v.index()] {
                y
            } else {
                q.rescale(y, name, s)?
            };
            q.rw.set(v, t);
            Ok(())
        };
        // A product: operands at s, the op at 2s.
        let product = |q: &mut Self, op: Op| -> Result<(), PassError> {
            let y = q.rw.push(name, op)?;
            wide(q, y)
        };
        match &instr.op {
            Op::Const { .. } => Ok(()),
            Op::Input { name: ext, ty } => {
                if ty.owner() != Owner::Client {
                    return Err(self.unsupported(v, "inputs must be client-owned"));
                }
                let n = self.rw.push(
                    name,
                    Op::Input {
                        name: ext.clone(),
                        ty: self.ring_type(ty, s)?,
                    },
                )?;
                self.rw.set(v, n);
                Ok(())
            }
            Op::Conv2d { x, w, bias, conv } => {
                let op = Op::Conv2d {
                    x: self.at(*x, s)?,
                    w: self.at(*w, s)?,
                    bias: bias.map(|b| self.at(b, 2 * s)).transpose()?,
                    conv: *conv,
                };
                product(self, op)
            }
            Op::MatMul { a, b, bias } => {
                let op = Op::MatMul {
                    a: self.at(*a, s)?,
                    b: self.at(*b, s)?,
                    bias: bias.map(|c| self.at(c, 2 * s)).transpose()?,
                };
                product(self, op)
            }
            Op::Mul { a, b } => {
                let op = Op::Mul {
                    a: self.at(*a, s)?,
                    b: self.at(*b, s)?,
                };
                product(self, op)
            }
            Op::Add { a, b } | Op::Sub { a, b } => {
                let fused = self.sums.fused[v.index()];
                let at = if fused { 2 * s } else { s };
                let (a, b) = (self.at(*a, at)?, self.at(*b, at)?);
                let op = if matches!(instr.op, Op::Add { .. }) {
                    Op::Add { a, b }
                } else {
                    Op::Sub { a, b }
                };
                let n = self.rw.push(name, op)?;
                if fused {
                    wide(self, n)
                } else {
                    self.rw.set(v, n);
                    Ok(())
                }
            }
            Op::Concat { xs, axis } => {
                let xs = xs
                    .iter()
                    .map(|x| self.at(*x, s))
                    .collect::<Result<Vec<_>, _>>()?;
                let n = self.rw.push(name, Op::Concat { xs, axis: *axis })?;
                self.rw.set(v, n);
                Ok(())
            }
            Op::Pad { x, pads, value } => {
                let xn = self.as_is(*x)?;
                let xs = self.rw.ty(xn).scale();
                let value = match value {
                    Scalar::F32(f) => {
                        let e = sci_ir::fixed::encode(*f, xs, self.enc).map_err(|error| {
                            PassError::DoesNotFit {
                                value: format!("{name} (pad value)"),
                                error,
                            }
                        })?;
                        Scalar::Int(self.enc.signed(e))
                    }
                    Scalar::Int(i) => Scalar::Int(*i),
                };
                let n = self.rw.push(
                    name,
                    Op::Pad {
                        x: xn,
                        pads: pads.clone(),
                        value,
                    },
                )?;
                self.rw.set(v, n);
                Ok(())
            }
            Op::BatchNorm { .. } | Op::Identity { .. } => Err(self.unsupported(
                v,
                "float-stage op: run fold_batchnorm / remove_identity before quantization",
            )),
            Op::ScaleUp { .. } | Op::Trunc { .. } => {
                Err(self.unsupported(v, "fixed-point op in a float program"))
            }
            // Ops that keep their operand's scale.
            op => {
                let op = op.try_map_operands(|o| self.as_is(*o))?;
                let n = self.rw.push(name, op)?;
                self.rw.set(v, n);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x → relu → out` plus the given float instructions over `[1, 4]` values; `%k1`,
    /// `%k2`, `%k3` are constants and `%r` a non-product activation.
    fn program(body: &str) -> Program {
        let mut src = String::from(
            "%x: client f32[1,4] = input \"x\"\n\
             %r: client f32[1,4] = relu %x\n\
             %k1: server f32[4] = const [0.5, -1.0, 2.0, 0.25]\n\
             %k2: server f32[4] = const [1.5, 0.5, -0.5, 1.0]\n\
             %k3: server f32[4] = const [-0.25, 0.75, 1.0, -2.0]\n",
        );
        src.push_str(body);
        Program::parse(&src).expect("valid IR")
    }

    /// The names of the fused sums and of the deferred values.
    fn sums(p: &Program) -> (Vec<&str>, Vec<&str>) {
        let s = Sums::of(p);
        let names = |flags: &[bool]| {
            p.ids()
                .filter(|v| flags[v.index()])
                .map(|v| p.name(v))
                .collect::<Vec<_>>()
        };
        (names(&s.fused), names(&s.deferred))
    }

    /// The number of truncations after quantization at ℓ = 24, s = 6.
    fn truncs(p: &Program) -> usize {
        let q = Quantize { bits: 24, scale: 6 }.run(p).expect("quantizes");
        q.ids()
            .filter(|&v| matches!(q.instr(v).op, Op::Trunc { .. }))
            .count()
    }

    #[test]
    fn a_sum_of_two_single_use_products_is_truncated_once() {
        let p = program(
            "%m1: shared f32[1,4] = mul %r, %k1\n\
             %m2: shared f32[1,4] = mul %x, %k2\n\
             %s: shared f32[1,4] = sub %m1, %m2\n\
             %y: client f32[1,4] = output %s \"y\"\n",
        );
        assert_eq!(sums(&p), (vec!["s"], vec!["m1", "m2"]));
        assert_eq!(truncs(&p), 1);
    }

    #[test]
    fn nested_sums_are_truncated_once_at_the_outermost() {
        let p = program(
            "%m1: shared f32[1,4] = mul %r, %k1\n\
             %m2: shared f32[1,4] = mul %x, %k2\n\
             %m3: shared f32[1,4] = mul %x, %k3\n\
             %s: shared f32[1,4] = add %m1, %m2\n\
             %t: shared f32[1,4] = add %m3, %s\n\
             %y: client f32[1,4] = output %t \"y\"\n",
        );
        assert_eq!(sums(&p), (vec!["s", "t"], vec!["m1", "m2", "m3", "s"]));
        assert_eq!(truncs(&p), 1);
    }

    #[test]
    fn products_with_other_uses_or_other_partners_keep_their_truncation() {
        // %m1 is also an output; %m3 + %m3 adds one value to itself; %m4 + %r and
        // %m5 + %k3 have a partner that is no product (place_truncs handles those).
        let p = program(
            "%m1: shared f32[1,4] = mul %r, %k1\n\
             %m2: shared f32[1,4] = mul %x, %k2\n\
             %s: shared f32[1,4] = add %m1, %m2\n\
             %y: client f32[1,4] = output %s \"y\"\n\
             %y1: client f32[1,4] = output %m1 \"m1\"\n\
             %m3: shared f32[1,4] = mul %x, %k3\n\
             %d: shared f32[1,4] = add %m3, %m3\n\
             %yd: client f32[1,4] = output %d \"d\"\n\
             %m4: shared f32[1,4] = mul %x, %k1\n\
             %a: shared f32[1,4] = add %m4, %r\n\
             %ya: client f32[1,4] = output %a \"a\"\n\
             %m5: shared f32[1,4] = mul %x, %k2\n\
             %b: shared f32[1,4] = add %m5, %k3\n\
             %yb: client f32[1,4] = output %b \"b\"\n",
        );
        assert_eq!(sums(&p), (vec![], vec![]));
        assert_eq!(truncs(&p), 5);
    }
}
