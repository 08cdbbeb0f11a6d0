//! Type-checker tests: every op's inferred type, and errors naming the value, the op and
//! expected vs found.

use sci_ir::{
    Builder, CheckErrorKind as K, Encoding, Op, Owner, Pool2d, Scalar, SecureError, Tensor, Type,
    ValueId,
};

fn ring(bits: u32) -> Encoding {
    Encoding::ring(bits).unwrap()
}

fn t(enc: Encoding, scale: u32, shape: &[usize], owner: Owner) -> Type {
    Type::new(enc, scale, shape.to_vec(), owner).unwrap()
}

/// A builder with a client input `x` and a server constant `w` of the given types.
fn with_input(ty: Type) -> (Builder, ValueId) {
    let mut b = Builder::new();
    let x = b.input("x", ty).unwrap();
    (b, x)
}

fn konst(b: &mut Builder, name: &str, ty: Type) -> ValueId {
    let data = Tensor::zeros(ty.encoding(), ty.shape().to_vec()).unwrap();
    b.constant(name, ty, data).unwrap()
}

#[test]
fn conv_types_and_errors() {
    let r = ring(32);
    let (mut b, x) = with_input(t(r, 8, &[1, 4, 7, 9], Owner::Client));
    let w = konst(&mut b, "w", t(r, 8, &[6, 2, 3, 3], Owner::Server));
    let bias = konst(&mut b, "bias", t(r, 16, &[6], Owner::Server));
    let conv = |bias, strides, pads, dilations, groups| Op::Conv2d {
        x,
        w,
        bias,
        conv: sci_ir::Conv2d {
            strides,
            pads,
            dilations,
            groups,
        },
    };
    let y = b
        .push("y", conv(Some(bias), [2, 1], [1, 0, 1, 2], [1, 2], 2))
        .unwrap();
    // H: (7 + 2 − 3) / 2 + 1 = 4; W: (9 + 2 − 5) / 1 + 1 = 7.
    assert_eq!(b.ty(y), &t(r, 16, &[1, 6, 4, 7], Owner::Shared));
    let e = b
        .push("y2", conv(Some(bias), [1, 1], [0; 4], [1, 1], 1))
        .unwrap_err();
    assert_eq!(e.value, "y2");
    assert_eq!(e.op, "conv2d");
    assert!(
        matches!(e.kind, K::Shape { ref operand, .. } if operand == "w"),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "%y2 = conv2d: operand `w` has shape [6,2,3,3], expected [6, 4, kH ≥ 1, kW ≥ 1]"
    );
    let e = b
        .push("y3", conv(Some(bias), [1, 1], [0; 4], [1, 1], 3))
        .unwrap_err();
    assert!(matches!(e.kind, K::Attribute { attr: "groups", .. }), "{e}");
    let e = b
        .push("y4", conv(None, [0, 1], [0; 4], [1, 1], 2))
        .unwrap_err();
    assert!(
        matches!(
            e.kind,
            K::Attribute {
                attr: "strides",
                ..
            }
        ),
        "{e}"
    );
    let e = b
        .push("y5", conv(None, [1, 1], [0; 4], [4, 1], 2))
        .unwrap_err();
    assert!(matches!(e.kind, K::Attribute { attr: "pads", .. }), "{e}");
    let bad_bias = konst(&mut b, "bad_bias", t(r, 8, &[6], Owner::Server));
    let e = b
        .push("y6", conv(Some(bad_bias), [1, 1], [0; 4], [1, 1], 2))
        .unwrap_err();
    assert_eq!(
        e.kind,
        K::Scale {
            operand: "bias".into(),
            expected: 16,
            found: 8
        }
    );
    // Scales that overflow the ring are rejected.
    let (mut b, x) = with_input(t(ring(16), 8, &[1, 1, 3, 3], Owner::Client));
    let w = konst(&mut b, "w", t(ring(16), 8, &[1, 1, 1, 1], Owner::Server));
    let e = b
        .push(
            "y",
            Op::Conv2d {
                x,
                w,
                bias: None,
                conv: sci_ir::Conv2d {
                    strides: [1, 1],
                    pads: [0; 4],
                    dilations: [1, 1],
                    groups: 1,
                },
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Result(_)), "{e}");
}

#[test]
fn matmul_add_mul() {
    let r = ring(40);
    let (mut b, x) = with_input(t(r, 10, &[3, 5], Owner::Client));
    let w = konst(&mut b, "w", t(r, 10, &[5, 2], Owner::Server));
    let bias = konst(&mut b, "bias", t(r, 20, &[2], Owner::Public));
    let y = b
        .push(
            "y",
            Op::MatMul {
                a: x,
                b: w,
                bias: Some(bias),
            },
        )
        .unwrap();
    assert_eq!(b.ty(y), &t(r, 20, &[3, 2], Owner::Shared));
    let e = b
        .push(
            "z",
            Op::MatMul {
                a: w,
                b: x,
                bias: None,
            },
        )
        .unwrap_err();
    assert!(
        matches!(e.kind, K::Shape { ref operand, .. } if operand == "b"),
        "{e}"
    );
    // Broadcasting: [3,2] + [2] → [3,2]; public + client = client.
    let c = konst(&mut b, "c", t(r, 20, &[2], Owner::Public));
    let s = b.push("s", Op::Add { a: y, b: c }).unwrap();
    assert_eq!(b.ty(s).shape(), &[3, 2]);
    let c1 = konst(&mut b, "c1", t(r, 20, &[4, 1, 1], Owner::Public));
    let s = b.push("s1", Op::Sub { a: c1, b: y }).unwrap();
    assert_eq!(b.ty(s), &t(r, 20, &[4, 3, 2], Owner::Shared));
    let e = b.push("s2", Op::Add { a: x, b: y }).unwrap_err();
    assert_eq!(
        e.kind,
        K::Scale {
            operand: "b".into(),
            expected: 10,
            found: 20
        }
    );
    let c3 = konst(&mut b, "c3", t(r, 10, &[3], Owner::Public));
    let e = b.push("s3", Op::Add { a: x, b: c3 }).unwrap_err();
    assert!(matches!(e.kind, K::Broadcast { .. }), "{e}");
    let m = konst(&mut b, "m", t(r, 5, &[5], Owner::Server));
    let p = b.push("p", Op::Mul { a: x, b: m }).unwrap();
    assert_eq!(b.ty(p), &t(r, 15, &[3, 5], Owner::Shared));
    let other = konst(&mut b, "other", t(ring(41), 10, &[3, 5], Owner::Public));
    let e = b.push("q", Op::Add { a: x, b: other }).unwrap_err();
    assert!(matches!(e.kind, K::Encoding { .. }), "{e}");
}

#[test]
fn scale_ops() {
    let r = ring(16);
    let (mut b, x) = with_input(t(r, 6, &[2], Owner::Client));
    let y = b.push("y", Op::ScaleUp { x, k: 3 }).unwrap();
    assert_eq!(b.ty(y).scale(), 9);
    assert!(b.push("y1", Op::ScaleUp { x, k: 10 }).is_err());
    assert!(b.push("y2", Op::ScaleUp { x, k: 0 }).is_err());
    let z = b
        .push(
            "z",
            Op::Trunc {
                x: y,
                s: 9,
                nonneg: false,
            },
        )
        .unwrap();
    assert_eq!(b.ty(z).scale(), 0);
    let e = b
        .push(
            "z1",
            Op::Trunc {
                x,
                s: 7,
                nonneg: true,
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Attribute { attr: "s", .. }), "{e}");
    assert!(
        b.push(
            "z2",
            Op::Trunc {
                x,
                s: 0,
                nonneg: true
            }
        )
        .is_err()
    );
    let d = b.push("d", Op::DivPublic { x, d: 65535 }).unwrap();
    assert_eq!(b.ty(d), b.ty(x));
    assert!(b.push("d1", Op::DivPublic { x, d: 0 }).is_err());
    assert!(b.push("d2", Op::DivPublic { x, d: 65536 }).is_err());
    let m = b.push("m", Op::MulPublic { x, k: -7 }).unwrap();
    assert_eq!(b.ty(m), b.ty(x));
    // Real programs have no truncation or scale_up.
    let (mut b, x) = with_input(Type::real(vec![2], Owner::Client).unwrap());
    let e = b
        .push(
            "t",
            Op::Trunc {
                x,
                s: 1,
                nonneg: false,
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Encoding { .. }), "{e}");
    assert!(b.push("u", Op::ScaleUp { x, k: 1 }).is_err());
    assert!(b.push("v", Op::DivPublic { x, d: 3 }).is_ok());
}

/// `sigmoid`/`tanh` keep the operand's type; over a ring they need `s ≥ 1` and `ℓ ≥ 2s +
/// 7`; any scale in `f32` and over a field (which `check_secure` refuses).
#[test]
fn smooth_activations() {
    for op in [|x| Op::Sigmoid { x }, |x| Op::Tanh { x }] {
        let (mut b, x) = with_input(t(ring(16), 4, &[2, 3], Owner::Client));
        let y = b.push("y", op(x)).unwrap();
        assert_eq!(b.ty(y), &t(ring(16), 4, &[2, 3], Owner::Client));
        for (bits, scale) in [(16, 5), (32, 0), (32, 13)] {
            let (mut b, x) = with_input(t(ring(bits), scale, &[2], Owner::Client));
            let e = b.push("y", op(x)).unwrap_err();
            assert!(matches!(e.kind, K::Encoding { .. }), "{e}");
            assert!(e.to_string().contains("2s + 7"), "{e}");
        }
        let (mut b, x) = with_input(Type::real(vec![2], Owner::Client).unwrap());
        assert!(b.push("y", op(x)).is_ok());
    }
}

/// `rsqrt` keeps the operand's type; over a ring it needs `10 ≤ ℓ` and `ℓ ≥ s + ⌈s/2⌉ +
/// 3`; any scale in `f32`.
#[test]
fn rsqrt_type() {
    let (mut b, x) = with_input(t(ring(32), 12, &[2, 3], Owner::Client));
    let y = b.push("y", Op::Rsqrt { x }).unwrap();
    assert_eq!(b.ty(y), &t(ring(32), 12, &[2, 3], Owner::Client));
    for (bits, scale) in [(9, 2), (32, 20)] {
        let (mut b, x) = with_input(t(ring(bits), scale, &[2], Owner::Client));
        let e = b.push("y", Op::Rsqrt { x }).unwrap_err();
        assert!(matches!(e.kind, K::Encoding { .. }), "{e}");
        assert!(e.to_string().contains("⌈s/2⌉"), "{e}");
    }
    let (mut b, x) = with_input(Type::real(vec![2], Owner::Client).unwrap());
    assert!(b.push("y", Op::Rsqrt { x }).is_ok());
}

/// `softmax` keeps the operand's type; the axis must exist and be non-empty, and over a
/// ring `ℓ ≥ 2s + 4` and the line short enough for the reciprocal; any scale in `f32`.
#[test]
fn softmax_type() {
    let (mut b, x) = with_input(t(ring(32), 12, &[2, 3], Owner::Client));
    let y = b.push("y", Op::Softmax { x, axis: 1 }).unwrap();
    assert_eq!(b.ty(y), &t(ring(32), 12, &[2, 3], Owner::Client));
    let e = b.push("z", Op::Softmax { x, axis: 2 }).unwrap_err();
    assert!(matches!(e.kind, K::Attribute { attr: "axis", .. }), "{e}");
    for (bits, scale, shape) in [(16, 7, &[2usize][..]), (32, 12, &[1 << 16][..])] {
        let (mut b, x) = with_input(t(ring(bits), scale, shape, Owner::Client));
        let e = b.push("y", Op::Softmax { x, axis: 0 }).unwrap_err();
        assert!(matches!(e.kind, K::Encoding { .. }), "{e}");
        assert!(e.to_string().contains("2s + 4"), "{e}");
    }
    let (mut b, x) = with_input(t(ring(32), 12, &[2, 0], Owner::Client));
    let e = b.push("y", Op::Softmax { x, axis: 1 }).unwrap_err();
    assert!(matches!(e.kind, K::Shape { .. }), "{e}");
    let (mut b, x) = with_input(Type::real(vec![2], Owner::Client).unwrap());
    assert!(b.push("y", Op::Softmax { x, axis: 0 }).is_ok());
}

#[test]
fn pooling_shapes() {
    let r = ring(32);
    let (mut b, x) = with_input(t(r, 8, &[1, 2, 5, 5], Owner::Client));
    let pool = |k, s, pads, ceil_mode| Pool2d {
        kernel: [k, k],
        strides: [s, s],
        pads,
        ceil_mode,
    };
    let y = b
        .push(
            "y",
            Op::MaxPool {
                x,
                pool: pool(2, 2, [0; 4], false),
            },
        )
        .unwrap();
    assert_eq!(b.ty(y).shape(), &[1, 2, 2, 2]);
    let y = b
        .push(
            "y1",
            Op::MaxPool {
                x,
                pool: pool(2, 2, [0; 4], true),
            },
        )
        .unwrap();
    assert_eq!(b.ty(y).shape(), &[1, 2, 3, 3]);
    // ceil_mode: (5 + 1 + 1 − 3) / 2 = 2 → ceil 2 + 1 = 3; the last window starts at
    // 4 < 5 + 1.
    let y = b
        .push(
            "y2",
            Op::AvgPool {
                x,
                pool: pool(3, 2, [1, 1, 1, 1], true),
                count_include_pad: true,
            },
        )
        .unwrap();
    assert_eq!(b.ty(y).shape(), &[1, 2, 3, 3]);
    // ceil_mode where the last window would start in the end padding: H=4, k=2, s=2,
    // pads 1/1: span 4 → ceil(4/2)+1 = 3 windows starting at −1, 1, 3; 3 < 4+1 keeps it.
    // With H = 3, k = 2, s = 2, pad_b = 1: span 2 → ceil(2/2)+1 = 2, starts 0 and 2 < 3.
    let e = b
        .push(
            "y3",
            Op::MaxPool {
                x,
                pool: pool(2, 2, [2, 0, 0, 0], false),
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Attribute { attr: "pads", .. }), "{e}");
    let e = b
        .push(
            "y4",
            Op::MaxPool {
                x,
                pool: pool(6, 1, [0; 4], false),
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Attribute { attr: "kernel", .. }), "{e}");
    let g = b.push("g", Op::GlobalAvgPool { x }).unwrap();
    assert_eq!(b.ty(g).shape(), &[1, 2, 1, 1]);
    // 25 positions do not fit a 4-bit ring's divisor range.
    let (mut b, x) = with_input(t(ring(4), 0, &[1, 1, 5, 5], Owner::Client));
    assert!(b.push("g", Op::GlobalAvgPool { x }).is_err());
    assert!(
        b.push(
            "a",
            Op::AvgPool {
                x,
                pool: pool(4, 1, [0; 4], false),
                count_include_pad: false
            }
        )
        .is_err()
    );
}

#[test]
fn data_movement() {
    let r = ring(8);
    let (mut b, x) = with_input(t(r, 2, &[2, 3, 4], Owner::Client));
    let y = b
        .push(
            "r",
            Op::Reshape {
                x,
                shape: vec![6, 4],
            },
        )
        .unwrap();
    assert_eq!(b.ty(y).shape(), &[6, 4]);
    assert!(
        b.push(
            "r1",
            Op::Reshape {
                x,
                shape: vec![5, 4]
            }
        )
        .is_err()
    );
    let f = b.push("f", Op::Flatten { x, axis: 1 }).unwrap();
    assert_eq!(b.ty(f).shape(), &[2, 12]);
    let f = b.push("f0", Op::Flatten { x, axis: 0 }).unwrap();
    assert_eq!(b.ty(f).shape(), &[1, 24]);
    let f = b.push("f3", Op::Flatten { x, axis: 3 }).unwrap();
    assert_eq!(b.ty(f).shape(), &[24, 1]);
    assert!(b.push("f4", Op::Flatten { x, axis: 4 }).is_err());
    let p = b
        .push(
            "t",
            Op::Transpose {
                x,
                perm: vec![2, 0, 1],
            },
        )
        .unwrap();
    assert_eq!(b.ty(p).shape(), &[4, 2, 3]);
    assert!(
        b.push(
            "t1",
            Op::Transpose {
                x,
                perm: vec![0, 0, 1]
            }
        )
        .is_err()
    );
    assert!(
        b.push(
            "t2",
            Op::Transpose {
                x,
                perm: vec![0, 1]
            }
        )
        .is_err()
    );
    let g = b
        .push(
            "g",
            Op::Gather {
                x,
                axis: 2,
                indices: vec![3, 3, 0],
            },
        )
        .unwrap();
    assert_eq!(b.ty(g).shape(), &[2, 3, 3]);
    for (name, axis, indices) in [("g1", 3, vec![0]), ("g2", 2, vec![4]), ("g3", 1, vec![])] {
        let e = b.push(name, Op::Gather { x, axis, indices }).unwrap_err();
        assert!(e.to_string().contains("gather"), "{e}");
    }
    let c = konst(&mut b, "c", t(r, 2, &[2, 1, 4], Owner::Server));
    let cat = b
        .push(
            "cat",
            Op::Concat {
                xs: vec![x, c, x],
                axis: 1,
            },
        )
        .unwrap();
    assert_eq!(b.ty(cat), &t(r, 2, &[2, 7, 4], Owner::Shared));
    let e = b
        .push(
            "cat1",
            Op::Concat {
                xs: vec![x, c],
                axis: 2,
            },
        )
        .unwrap_err();
    assert!(
        matches!(e.kind, K::Shape { ref operand, .. } if operand == "xs[1]"),
        "{e}"
    );
    assert!(
        b.push(
            "cat2",
            Op::Concat {
                xs: vec![],
                axis: 0
            }
        )
        .is_err()
    );
    let pad = b
        .push(
            "pad",
            Op::Pad {
                x,
                pads: vec![0, 1, 2, 1, 0, 0],
                value: Scalar::Int(-128),
            },
        )
        .unwrap();
    assert_eq!(b.ty(pad).shape(), &[3, 4, 6]);
    for value in [Scalar::Int(128), Scalar::F32(0.0)] {
        assert!(
            b.push(
                "pad1",
                Op::Pad {
                    x,
                    pads: vec![0; 6],
                    value
                }
            )
            .is_err()
        );
    }
    assert!(
        b.push(
            "pad2",
            Op::Pad {
                x,
                pads: vec![0; 4],
                value: Scalar::Int(0)
            }
        )
        .is_err()
    );
    let a = b
        .push(
            "am",
            Op::ArgMax {
                x,
                axis: 1,
                keepdims: false,
            },
        )
        .unwrap();
    assert_eq!(b.ty(a), &t(r, 0, &[2, 4], Owner::Client));
    let a = b
        .push(
            "am1",
            Op::ArgMax {
                x,
                axis: 2,
                keepdims: true,
            },
        )
        .unwrap();
    assert_eq!(b.ty(a).shape(), &[2, 3, 1]);
    assert!(
        b.push(
            "am2",
            Op::ArgMax {
                x,
                axis: 3,
                keepdims: true
            }
        )
        .is_err()
    );
    let o = b.output("o", x).unwrap();
    assert_eq!(b.ty(o).owner(), Owner::Client);
    assert!(b.output("o", x).is_err());
    // Two outputs may not share an external name, even under different value names.
    let e = b
        .push(
            "o2",
            Op::Output {
                x,
                name: "o".into(),
                logits: false,
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::DuplicateExternal { .. }), "{e}");
    // ArgMax over 3 positions does not fit a 2-bit ring (indices up to 1 only).
    let (mut b, x) = with_input(t(ring(2), 0, &[3], Owner::Client));
    assert!(
        b.push(
            "am",
            Op::ArgMax {
                x,
                axis: 0,
                keepdims: false
            }
        )
        .is_err()
    );
    let (mut b, x) = with_input(t(ring(1), 0, &[1], Owner::Client));
    assert!(
        b.push(
            "am",
            Op::ArgMax {
                x,
                axis: 0,
                keepdims: false
            }
        )
        .is_ok()
    );
}

#[test]
fn inputs_constants_and_float_ops() {
    let r = ring(8);
    let mut b = Builder::new();
    let e = b.input("x", t(r, 0, &[1], Owner::Server)).unwrap_err();
    assert!(matches!(e.kind, K::Owner { .. }), "{e}");
    let e = b
        .constant(
            "c",
            t(r, 0, &[2], Owner::Public),
            Tensor::zeros(r, vec![3]).unwrap(),
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Const { .. }), "{e}");
    let e = b
        .constant(
            "c",
            t(r, 0, &[2], Owner::Shared),
            Tensor::zeros(r, vec![2]).unwrap(),
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Owner { .. }), "{e}");
    let e = b
        .constant(
            "c",
            Type::real(vec![1], Owner::Public).unwrap(),
            Tensor::real(vec![1], vec![f32::NAN]).unwrap(),
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Const { .. }), "{e}");
    let id = b.add_const(None);
    let e = b
        .push(
            "c",
            Op::Const {
                id,
                ty: t(r, 0, &[2], Owner::Public),
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Const { .. }), "{e}");
    let id = b.add_const(None);
    let c = b
        .push(
            "c",
            Op::Const {
                id,
                ty: t(r, 0, &[2], Owner::Server),
            },
        )
        .unwrap();
    let e = b
        .push(
            "c2",
            Op::Const {
                id,
                ty: t(r, 0, &[2], Owner::Server),
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::Const { .. }), "{e}");
    let e = b.push("i", Op::Identity { x: c }).unwrap_err();
    assert!(
        e.to_string().contains("identity elimination"),
        "message names the pass: {e}"
    );
    // Float programs accept BatchNorm and Identity.
    let rt = |s: &[usize], o| Type::real(s.to_vec(), o).unwrap();
    let mut b = Builder::new();
    let x = b.input("x", rt(&[1, 3, 2, 2], Owner::Client)).unwrap();
    let ps: Vec<_> = ["g", "be", "mu", "var"]
        .iter()
        .map(|n| konst(&mut b, n, rt(&[3], Owner::Server)))
        .collect();
    let bn = Op::BatchNorm {
        x,
        scale: ps[0],
        bias: ps[1],
        mean: ps[2],
        var: ps[3],
        epsilon: 1e-5,
    };
    let y = b.push("bn", bn).unwrap();
    assert_eq!(b.ty(y), &rt(&[1, 3, 2, 2], Owner::Shared));
    let i = b.push("id", Op::Identity { x: y }).unwrap();
    assert_eq!(b.ty(i), b.ty(y));
    let e = b
        .push(
            "bn2",
            Op::BatchNorm {
                x,
                scale: ps[0],
                bias: ps[1],
                mean: ps[2],
                var: x,
                epsilon: 1e-5,
            },
        )
        .unwrap_err();
    assert!(
        matches!(e.kind, K::Shape { ref operand, .. } if operand == "var"),
        "{e}"
    );
    // BatchNorm in a ring program names the folding pass.
    let (mut b, x) = with_input(t(r, 0, &[1, 3], Owner::Client));
    let p = konst(&mut b, "p", t(r, 0, &[3], Owner::Server));
    let e = b
        .push(
            "bn",
            Op::BatchNorm {
                x,
                scale: p,
                bias: p,
                mean: p,
                var: p,
                epsilon: 0.0,
            },
        )
        .unwrap_err();
    assert!(matches!(e.kind, K::FloatOnly { .. }), "{e}");
    assert!(e.to_string().contains("BatchNorm folding"), "{e}");
}

#[test]
fn secure_executability() {
    let r = ring(32);
    let (mut b, x) = with_input(t(r, 8, &[2, 2], Owner::Client));
    let w = konst(&mut b, "w", t(r, 8, &[2, 2], Owner::Server));
    let y = b
        .push(
            "y",
            Op::MatMul {
                a: x,
                b: w,
                bias: None,
            },
        )
        .unwrap();
    let y = b
        .push(
            "yt",
            Op::Trunc {
                x: y,
                s: 8,
                nonneg: false,
            },
        )
        .unwrap();
    b.output("out", y).unwrap();
    let p = b.clone().finish().unwrap();
    assert_eq!(p.check_secure(), Ok(()));
    // Shared × shared runs by the secret product protocol over a ring.
    let z = b.push("z", Op::Mul { a: y, b: y }).unwrap();
    b.output("out2", z).unwrap();
    let p = b.finish().unwrap();
    assert_eq!(p.check_secure(), Ok(()));
    let z = p.ids().find(|&v| p.name(v) == "z").unwrap();
    assert!(p.is_secret_product(z) && !p.is_secure_product(z));
    // A convolution of two secret tensors is refused with a clear message.
    let p = sci_ir::Program::parse(
        "
%x: client i32.6[1,1,2,2] = input \"x\"
%w: server i32.6[1,1,1,1] = const [3]
%c: shared i32.12[1,1,2,2] = conv2d %x, %w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%d: shared i32.24[1,1,1,1] = conv2d %c, %c strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%o: client i32.24[1,1,1,1] = output %d \"o\"
",
    )
    .unwrap();
    let e = p.check_secure().unwrap_err();
    assert!(matches!(e, SecureError::SecretProduct { .. }));
    assert!(
        e.to_string().contains(
            "runs only as `mul`, `matmul`, `sigmoid`, `tanh`, `rsqrt` or `softmax` over a ring"
        ),
        "{e}"
    );
    // So is a product of two client values over an HE field: SCI_HE has no secret
    // product protocol (its shares live in Z_n).
    let p = sci_ir::Program::parse(
        "
params mill_radix=2 threads=1 linear=he ot=silent
%x: client z4294475777.12[3,4] = input \"x\"
%y: client z4294475777.12[4,2] = input \"y\"
%m: client z4294475777.24[3,2] = matmul %x, %y
%o: client z4294475777.24[3,2] = output %m \"o\"
",
    )
    .unwrap();
    let e = p.check_secure().unwrap_err();
    assert!(matches!(e, SecureError::SecretProduct { .. }), "{e}");
    // So are sigmoid, tanh and softmax (secret products inside); over a ring they run.
    for op in ["sigmoid %x", "tanh %x", "softmax %x axis=1"] {
        let p = sci_ir::Program::parse(&format!(
            "
params mill_radix=2 threads=1 linear=he ot=silent
%x: client z4294475777.12[3,4] = input \"x\"
%s: client z4294475777.12[3,4] = {op}
%o: client z4294475777.12[3,4] = output %s \"o\"
"
        ))
        .unwrap();
        let e = p.check_secure().unwrap_err();
        assert!(matches!(e, SecureError::SecretProduct { .. }), "{op}: {e}");
        let p = sci_ir::Program::parse(&format!(
            "
%x: client i32.12[3,4] = input \"x\"
%s: client i32.12[3,4] = {op}
%o: client i32.12[3,4] = output %s \"o\"
"
        ))
        .unwrap();
        p.check_secure().unwrap();
    }
    // relu_trunc runs over a ring only: over an HE field it is refused by name.
    let p = sci_ir::Program::parse(
        "
params mill_radix=2 threads=1 linear=he ot=silent
%x: client z4294475777.12[3,4] = input \"x\"
%w: server z4294475777.12[4,2] = const [1, 2, 3, 4, 5, 6, 7, 8]
%m: shared z4294475777.24[3,2] = matmul %x, %w
%r: shared z4294475777.12[3,2] = relu_trunc %m s=12
%o: client z4294475777.12[3,2] = output %r \"o\"
",
    )
    .unwrap();
    let e = p.check_secure().unwrap_err();
    assert!(matches!(e, SecureError::RingOnly { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("%r = relu_trunc runs only over a ring"),
        "{e}"
    );
    // Unquantized programs are refused.
    let (b, _) = with_input(Type::real(vec![1], Owner::Client).unwrap());
    assert!(matches!(
        b.finish().unwrap().check_secure(),
        Err(SecureError::NotQuantized { .. })
    ));
    // Mixed encodings are refused.
    let (mut b, _) = with_input(t(r, 0, &[1], Owner::Client));
    konst(&mut b, "c", t(ring(16), 0, &[1], Owner::Public));
    assert!(matches!(
        b.finish().unwrap().check_secure(),
        Err(SecureError::MixedEncodings { .. })
    ));
}
