//! [`Step`]: the protocol that runs one instruction, decided by one rule per op
//! ([`Step::of`]) from the public program alone, so both parties, the cost model and the
//! compiler's report agree on it without a message.

use crate::math::Smooth;
use crate::spline::SplineFn;
use crate::{Backend, Op, Owner, Program, ValueId};

/// How the runtime runs one instruction: locally, or by which protocol with which public
/// parameters. Two steps that are equal and [`Step::batches`] run as one call when they
/// are independent ([`super::waves`]).
///
/// Adding a protocol: a variant here, its rule in [`Step::of`], its arm in the
/// executor (`sci-runtime`'s `exec::executor`), its price in
/// [`crate::cost::predict`] and its count in the compiler's report
/// (`sci-compiler`'s `cost::calls`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// No communication: each party computes the value alone — values known in the
    /// clear to a party (public, the server's), the client's input, data movement,
    /// additions and products by public factors on each share — or an output of a
    /// public value.
    Local,
    /// `relu`: `Π_ReLU` (Algorithm 8).
    Relu,
    /// `trunc s`: over `Z_{2^ℓ}` `Π_Trunc^{int,ℓ,s}` (Algorithm 5), over `Z_n` a
    /// division by `2^s` (§4.2.3); without the sign test where `nonneg`.
    Trunc {
        /// The shift.
        s: u32,
        /// The operand is marked non-negative (`trunc … nonneg`).
        nonneg: bool,
    },
    /// `relu_trunc s`: `proto::trunc::relu_trunc` — the ReLU's and the non-negative
    /// truncation's millionaires' as one call, then the truncation's OT batch, then the
    /// ReLU's multiplexer ([`crate::cost::div::relu_trunc`]); over `Z_{2^ℓ}` only.
    ReluTrunc {
        /// The shift.
        s: u32,
    },
    /// `div_public d`: division by a public integer (Theorem 4.1).
    Div {
        /// The divisor.
        d: u64,
        /// The operand is provably non-negative ([`crate::analysis::nonneg`]): the
        /// variant without the sign test.
        nonneg: bool,
    },
    /// `avgpool`, `global_avgpool`: window sums locally, then a division of each output
    /// by its window's count (§5.1.2).
    AvgPool,
    /// `maxpool`: `MaxPool_d` over the windows (§5.2.2).
    MaxPool {
        /// Exact comparisons of any two signed values (one more `DReLU` per input and an
        /// AND per comparison); `false`: the paper's comparison of the difference, exact
        /// for a provably non-negative operand.
        exact: bool,
    },
    /// `argmax`: `ArgMax_d` along the axis (§5.2.2).
    ArgMax {
        /// Exact comparisons, as for [`Step::MaxPool`].
        exact: bool,
    },
    /// A product of a secret operand by the server's weights (`conv2d`, `matmul`,
    /// `mul`), run by `backend`'s protocol: SCI_OT's correlated-OT linear layer
    /// (§5.1.1), SCI_HE's BFV layer (App. F).
    Product {
        /// The backend that runs it: the plan's per-instruction record,
        /// [`Program::product_backend`].
        backend: Backend,
    },
    /// A product of two secret operands (`mul`, `matmul` with neither operand known to
    /// the server: activations, the client's values) over `Z_{2^ℓ}`, exact, run by
    /// `backend`: OT, `proto::secmul`'s two OT-based products `X·Y_0 + X·Y_1`
    /// ([`crate::cost::secmul`]); RLWE (a `matmul` only), the local terms `X_b·Y_b` and
    /// the cross terms `X_0·Y_1`, `X_1·Y_0` as two RLWE products by the server's shares
    /// (`cheetah::secret`, [`crate::rlwe::secret_matmul`]).
    SecretProduct {
        /// The backend that runs it: the plan's per-instruction record,
        /// [`Program::secret_product_backend`].
        backend: Backend,
    },
    /// `sigmoid`, `tanh` of a secret operand at scale `s`: `proto::sigmoid` (SIRNN's
    /// exp by digit tables, the reciprocal by Goldschmidt's iteration, the sign), over
    /// `Z_{2^ℓ}`, exact ([`crate::cost::math::smooth`]).
    Smooth {
        /// The function.
        kind: Smooth,
        /// The operand's (and the result's) scale.
        s: u32,
    },
    /// `rsqrt` of a secret operand at scale `s`: `proto::rsqrt` (range reduction, Newton's
    /// iteration), over `Z_{2^ℓ}`, exact ([`crate::cost::math::rsqrt`]).
    Rsqrt {
        /// The operand's (and the result's) scale.
        s: u32,
    },
    /// `spline` of a secret operand at scale `s`: `proto::spline` (the knots' comparisons
    /// on `|x|`, two rounded secret products for the powers, one multiplexer per knot),
    /// over `Z_{2^ℓ}`, exact ([`crate::cost::math::spline`]).
    Spline {
        /// The function.
        func: SplineFn,
        /// The operand's (and the result's) scale.
        s: u32,
    },
    /// `softmax` of a secret operand at scale `s` along an axis: `proto::softmax` (the
    /// lines' maxima by MaxPool's tournament, exp, the sums' range-reduced reciprocal, one
    /// rounded secret product), over `Z_{2^ℓ}`, exact ([`crate::cost::math::softmax`]).
    Softmax {
        /// The operand's (and the result's) scale.
        s: u32,
        /// Exact comparisons in the maxima, as for [`Step::MaxPool`].
        exact: bool,
    },
    /// `output` of a secret value: the server sends its share, the client adds it.
    Reveal,
}

impl Step {
    /// The step of instruction `v` of `program`: the one rule per op. `nonneg` is
    /// [`crate::analysis::nonneg::nonneg`] of `program`. Cost: constant.
    pub fn of(program: &Program, nonneg: &[bool], v: ValueId) -> Step {
        let instr = program.instr(v);
        let proven = |x: &ValueId| nonneg.get(x.index()).copied().unwrap_or(false);
        if let Op::Output { x, .. } = &instr.op {
            return if program.ty(*x).owner() == Owner::Public {
                Step::Local
            } else {
                Step::Reveal
            };
        }
        if matches!(instr.ty.owner(), Owner::Public | Owner::Server) {
            return Step::Local;
        }
        if let Some(backend) = program.product_backend(v) {
            return Step::Product { backend };
        }
        if let Some(backend) = program.secret_product_backend(v) {
            return Step::SecretProduct { backend };
        }
        if let Some((kind, _)) = instr.op.smooth() {
            return Step::Smooth {
                kind,
                s: instr.ty.scale(),
            };
        }
        match &instr.op {
            Op::Relu { .. } => Step::Relu,
            Op::ReluTrunc { s, .. } => Step::ReluTrunc { s: *s },
            Op::Rsqrt { .. } => Step::Rsqrt {
                s: instr.ty.scale(),
            },
            Op::Spline { func, .. } => Step::Spline {
                func: *func,
                s: instr.ty.scale(),
            },
            Op::Trunc { s, nonneg, .. } => Step::Trunc {
                s: *s,
                nonneg: *nonneg,
            },
            Op::DivPublic { x, d } => Step::Div {
                d: *d,
                nonneg: proven(x),
            },
            Op::AvgPool { .. } | Op::GlobalAvgPool { .. } => Step::AvgPool,
            Op::MaxPool { x, .. } => Step::MaxPool { exact: !proven(x) },
            Op::ArgMax { x, .. } => Step::ArgMax { exact: !proven(x) },
            Op::Softmax { x, .. } => Step::Softmax {
                s: instr.ty.scale(),
                exact: !proven(x),
            },
            _ => Step::Local,
        }
    }

    /// Whether the step sends anything (everything but [`Step::Local`]).
    pub fn communicates(self) -> bool {
        self != Step::Local
    }

    /// Whether independent instructions of this same step run as one call of its
    /// protocol: the elementwise protocols over their operands concatenated, the
    /// products as one call of the backend (or, for secret products, of `secmul`).
    /// Pooling and reveals run alone.
    pub fn batches(self) -> bool {
        matches!(
            self,
            Step::Relu
                | Step::ReluTrunc { .. }
                | Step::Trunc { .. }
                | Step::Div { .. }
                | Step::Product { .. }
                | Step::SecretProduct { .. }
                | Step::Smooth { .. }
                | Step::Rsqrt { .. }
                | Step::Spline { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::nonneg::nonneg;

    #[test]
    fn one_step_per_instruction() {
        let p = Program::parse(
            "
%x: client i32.12[1,1,2,2] = input \"x\"
%w: server i32.12[1,1,1,1] = const [3]
%k: public i32.12[1,1,1,1] = const [2]
%c: shared i32.24[1,1,2,2] = conv2d %x, %w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%l: client i32.24[1,1,2,2] = conv2d %x, %k strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%r: shared i32.24[1,1,2,2] = relu %c
%t: shared i32.12[1,1,2,2] = trunc %r s=12 nonneg
%d: shared i32.24[1,1,2,2] = div_public %c d=3
%m: shared i32.12[1,1,1,1] = maxpool %t kernel=[2,2] strides=[2,2] pads=[0,0,0,0]
%n: shared i32.24[1,1,1,1] = maxpool %d kernel=[2,2] strides=[2,2] pads=[0,0,0,0]
%q: shared i32.24[1,1,1,1] = mul %m, %m
%u: client i32.24[1,1,2,2] = mul %x, %x
%g: shared i32.12[1,1,1,1] = sigmoid %m
%h: shared i32.12[1,1,1,1] = tanh %m
%i: shared i32.12[1,1,1,1] = rsqrt %m
%ts: shared i32.12[1,1,2,2] = trunc %c s=12
%j: shared i32.12[1,1,2,2] = softmax %ts axis=3
%k2: shared i32.12[1,1,1,1] = softmax %m axis=1
%y: client i32.12[1,1,1,1] = output %m \"y\"
%z: public i32.12[1,1,1,1] = output %k \"z\"
%o: client i32.24[1,1,1,1] = output %q \"o\"
",
        )
        .expect("parses");
        let nn = nonneg(&p);
        let step = |name: &str| {
            let v = p.ids().find(|&v| p.name(v) == name).expect("named");
            Step::of(&p, &nn, v)
        };
        assert_eq!(step("x"), Step::Local);
        assert_eq!(step("w"), Step::Local);
        assert_eq!(
            step("c"),
            Step::Product {
                backend: Backend::Ot
            }
        );
        assert_eq!(step("l"), Step::Local);
        assert_eq!(
            step("g"),
            Step::Smooth {
                kind: Smooth::Sigmoid,
                s: 12
            }
        );
        assert_eq!(
            step("h"),
            Step::Smooth {
                kind: Smooth::Tanh,
                s: 12
            }
        );
        assert_eq!(step("i"), Step::Rsqrt { s: 12 });
        assert_eq!(step("j"), Step::Softmax { s: 12, exact: true });
        assert_eq!(
            step("k2"),
            Step::Softmax {
                s: 12,
                exact: false
            }
        );
        assert_eq!(step("r"), Step::Relu);
        assert_eq!(
            step("t"),
            Step::Trunc {
                s: 12,
                nonneg: true
            }
        );
        assert_eq!(
            step("d"),
            Step::Div {
                d: 3,
                nonneg: false
            }
        );
        assert_eq!(step("m"), Step::MaxPool { exact: false });
        assert_eq!(step("n"), Step::MaxPool { exact: true });
        let ot = Step::SecretProduct {
            backend: Backend::Ot,
        };
        assert_eq!(step("q"), ot);
        assert_eq!(step("u"), ot);
        assert_eq!(step("y"), Step::Reveal);
        assert_eq!(step("z"), Step::Local);
    }

    #[test]
    fn secret_products_run_by_their_recorded_backend() {
        let body = "
%x: client i32.12[2,3] = input \"x\"
%y: client i32.12[3,2] = input \"y\"
%m: client i32.24[2,2] = matmul %x, %y
%e: client i32.24[2,3] = mul %x, %x
%o: client i32.24[2,2] = output %m \"m\"
%p: client i32.24[2,3] = output %e \"e\"
";
        let steps = |params: &str| {
            let p = Program::parse(&format!("{params}\n{body}")).unwrap();
            let nn = nonneg(&p);
            ["m", "e"].map(|n| {
                let v = p.ids().find(|&v| p.name(v) == n).unwrap();
                Step::of(&p, &nn, v)
            })
        };
        let on = |backend| Step::SecretProduct { backend };
        assert_eq!(
            steps("params mill_radix=4 threads=1"),
            [on(Backend::Ot), on(Backend::Ot)]
        );
        assert_eq!(
            steps("params mill_radix=4 threads=1 linear=rlwe"),
            [on(Backend::Rlwe), on(Backend::Ot)]
        );
        let mut p = Program::parse(&format!(
            "params mill_radix=4 threads=1 linear=rlwe\n{body}"
        ))
        .unwrap();
        let m = p.ids().find(|&v| p.name(v) == "m").unwrap();
        p.set_product_backend(m, Backend::Ot).unwrap();
        assert_eq!(Step::of(&p, &nonneg(&p), m), on(Backend::Ot));
    }
}
