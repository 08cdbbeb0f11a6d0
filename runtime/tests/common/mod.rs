//! Programs and inputs shared by the executor and CLI tests.
#![allow(dead_code)]

use sci_ir::{Builder, Encoding, Op, Owner, Pool2d, Program, Scalar, Tensor, Type, ValueId};

pub const BITS: u32 = 16;

pub fn ring() -> Encoding {
    Encoding::ring(BITS).unwrap()
}

/// Deterministic pseudo-random signed values in `[-r, r]`.
pub fn values(n: usize, seed: u64, r: i64) -> Vec<i64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % (2 * r as u64 + 1)) as i64 - r
        })
        .collect()
}

pub fn ty(scale: u32, shape: &[usize], owner: Owner) -> Type {
    Type::new(ring(), scale, shape.to_vec(), owner).unwrap()
}

pub fn constant(
    b: &mut Builder,
    name: &str,
    scale: u32,
    shape: &[usize],
    owner: Owner,
    seed: u64,
) -> ValueId {
    let n = shape.iter().product();
    let t = Tensor::signed(ring(), shape.to_vec(), &values(n, seed, 40)).unwrap();
    b.constant(name, ty(scale, shape, owner), t).unwrap()
}

/// A program of every op the executor computes without a protocol: data movement,
/// additions with public and server addends, public products, public and server values
/// computed in the clear, and outputs of every owner.
pub fn local_program() -> Program {
    let mut b = Builder::new();
    let x = b.input("x", ty(4, &[1, 2, 3, 3], Owner::Client)).unwrap();
    let y = b.input("y", ty(4, &[1, 3], Owner::Client)).unwrap();
    let c = constant(&mut b, "c", 4, &[1, 2, 1, 1], Owner::Public, 1);
    let w = constant(&mut b, "w", 4, &[1, 2, 3, 3], Owner::Server, 2);
    let p = constant(&mut b, "p", 4, &[1, 3], Owner::Public, 3);
    let k = constant(&mut b, "k", 4, &[3, 2, 2, 2], Owner::Public, 4);
    let kb = constant(&mut b, "kb", 8, &[3], Owner::Server, 5);
    let m = constant(&mut b, "m", 4, &[3, 5], Owner::Public, 6);
    let pp = b.push("pp", Op::Add { a: p, b: p }).unwrap();
    let ws = b.push("ws", Op::Sub { a: w, b: c }).unwrap();
    let t = b
        .push(
            "t",
            Op::Transpose {
                x,
                perm: vec![0, 2, 3, 1],
            },
        )
        .unwrap();
    let a = b.push("a", Op::Add { a: x, b: c }).unwrap();
    let s = b.push("s", Op::Sub { a, b: ws }).unwrap();
    let pads = vec![0, 0, 1, 0, 0, 0, 1, 1];
    let pd = b
        .push(
            "pd",
            Op::Pad {
                x: s,
                pads,
                value: Scalar::Int(5),
            },
        )
        .unwrap();
    let mp = b.push("mp", Op::MulPublic { x: pd, k: -3 }).unwrap();
    let su = b.push("su", Op::ScaleUp { x: mp, k: 4 }).unwrap();
    let f = b.push("f", Op::Flatten { x: su, axis: 1 }).unwrap();
    let r = b
        .push(
            "r",
            Op::Reshape {
                x: f,
                shape: vec![2, 20],
            },
        )
        .unwrap();
    let cv = b
        .push(
            "cv",
            Op::Conv2d {
                x: s,
                w: k,
                bias: Some(kb),
                conv: sci_ir::Conv2d {
                    strides: [1, 1],
                    pads: [1, 0, 0, 1],
                    dilations: [1, 1],
                    groups: 1,
                },
            },
        )
        .unwrap();
    let g = b
        .push(
            "g",
            Op::Gather {
                x: t,
                axis: 3,
                indices: vec![1, 0],
            },
        )
        .unwrap();
    let cc = b
        .push(
            "cc",
            Op::Concat {
                xs: vec![t, g],
                axis: 3,
            },
        )
        .unwrap();
    let yy = b.push("yy", Op::Add { a: y, b: pp }).unwrap();
    let q = b.push("q", Op::Mul { a: yy, b: p }).unwrap();
    let mm = b
        .push(
            "mm",
            Op::MatMul {
                a: yy,
                b: m,
                bias: None,
            },
        )
        .unwrap();
    for (name, v) in [
        ("r", r),
        ("cv", cv),
        ("cc", cc),
        ("q", q),
        ("mm", mm),
        ("pp", pp),
        ("ws", ws),
    ] {
        b.output(&format!("out_{name}"), v).unwrap();
    }
    b.finish().unwrap()
}

/// A program of every non-linear op, over `Z_{2^bits}`.
pub fn protocol_program(bits: u32) -> Program {
    let enc = Encoding::ring(bits).unwrap();
    let mut b = Builder::new();
    let ty = Type::new(enc, 8, vec![2, 3, 6, 5], Owner::Client).unwrap();
    let x = b.input("x", ty).unwrap();
    let pool = |kernel, strides, pads, ceil_mode| Pool2d {
        kernel,
        strides,
        pads,
        ceil_mode,
    };
    let ops = vec![
        ("relu", Op::Relu { x }),
        (
            "trunc",
            Op::Trunc {
                x,
                s: 5,
                nonneg: false,
            },
        ),
        ("div", Op::DivPublic { x, d: 7 }),
        (
            "maxpool",
            Op::MaxPool {
                x,
                pool: pool([3, 3], [2, 2], [1, 1, 1, 1], true),
            },
        ),
        (
            "maxpool2",
            Op::MaxPool {
                x,
                pool: pool([2, 2], [2, 2], [0; 4], false),
            },
        ),
        (
            "avgpool",
            Op::AvgPool {
                x,
                pool: pool([3, 2], [2, 1], [1, 0, 2, 1], true),
                count_include_pad: false,
            },
        ),
        (
            "avgpool_pad",
            Op::AvgPool {
                x,
                pool: pool([3, 3], [2, 2], [1, 1, 1, 1], false),
                count_include_pad: true,
            },
        ),
        (
            "avgpool_wide",
            Op::AvgPool {
                x,
                pool: pool([5, 5], [1, 1], [2, 2, 2, 2], false),
                count_include_pad: false,
            },
        ),
        ("gap", Op::GlobalAvgPool { x }),
        (
            "argmax",
            Op::ArgMax {
                x,
                axis: 1,
                keepdims: false,
            },
        ),
    ];
    for (name, op) in ops {
        let v = b.push(name, op).unwrap();
        b.output(&format!("out_{name}"), v).unwrap();
    }
    let r = b.lookup("relu").unwrap();
    let t = b
        .push(
            "trunc_nonneg",
            Op::Trunc {
                x: r,
                s: 3,
                nonneg: true,
            },
        )
        .unwrap();
    b.output("out_trunc_nonneg", t).unwrap();
    b.finish().unwrap()
}

/// Inputs over the whole signed range, with ties and the extremes.
pub fn wide_inputs(p: &Program, seed: u64) -> Vec<Tensor> {
    p.inputs()
        .iter()
        .map(|&v| {
            let ty = p.ty(v);
            let enc = ty.encoding();
            let (lo, hi) = enc.signed_range().unwrap();
            let mut vals = values(ty.numel(), seed, i64::MAX >> 1);
            let bits = 64 - (hi as u64).leading_zeros();
            for (i, x) in vals.iter_mut().enumerate() {
                *x = match i % 7 {
                    0 => lo as i64,
                    1 => hi as i64,
                    2 => 0,
                    3 => -1,
                    4 => 5,
                    _ => *x >> (63 - bits),
                };
            }
            Tensor::signed(enc, ty.shape().to_vec(), &vals).unwrap()
        })
        .collect()
}

pub fn inputs(p: &Program, seed: u64) -> Vec<Tensor> {
    p.inputs()
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let ty = p.ty(v);
            Tensor::signed(
                ty.encoding(),
                ty.shape().to_vec(),
                &values(ty.numel(), seed + i as u64, 100),
            )
            .unwrap()
        })
        .collect()
}

/// A program of every product of a secret tensor with the server's weights (OT-based):
/// convolutions (strides, padding, groups, dilation, bias), `X·W` and `W·X` with bias,
/// and a broadcast elementwise product, over `Z_{2^32}`.
pub fn linear_program() -> Program {
    let enc = Encoding::ring(32).unwrap();
    let t = |s: u32, shape: &[usize], o: Owner| Type::new(enc, s, shape.to_vec(), o).unwrap();
    let mut b = Builder::new();
    let weight = |b: &mut Builder, name: &str, s: u32, shape: &[usize], seed: u64| {
        let n = shape.iter().product();
        let data = Tensor::signed(enc, shape.to_vec(), &values(n, seed, 9)).unwrap();
        b.constant(name, t(s, shape, Owner::Server), data).unwrap()
    };
    let x = b.input("x", t(2, &[1, 3, 5, 5], Owner::Client)).unwrap();
    let y = b.input("y", t(2, &[3, 4], Owner::Client)).unwrap();
    let w = weight(&mut b, "w", 2, &[4, 3, 3, 3], 1);
    let wb = weight(&mut b, "wb", 4, &[4], 2);
    let g = weight(&mut b, "g", 2, &[3, 1, 2, 2], 3);
    let m = weight(&mut b, "m", 2, &[36, 5], 4);
    let mb = weight(&mut b, "mb", 4, &[5], 5);
    let l = weight(&mut b, "l", 2, &[2, 3], 6);
    let lb = weight(&mut b, "lb", 4, &[4], 7);
    let k = weight(&mut b, "k", 2, &[1, 3, 1, 1], 8);
    let conv = |x, w, bias, strides, pads, dilations, groups| Op::Conv2d {
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
    let c1 = b
        .push("c1", conv(x, w, Some(wb), [2, 2], [1, 1, 1, 1], [1, 1], 1))
        .unwrap();
    let c2 = b
        .push("c2", conv(x, g, None, [1, 1], [0, 1, 1, 0], [2, 2], 3))
        .unwrap();
    let r = b.push("r", Op::Relu { x: c1 }).unwrap();
    let t1 = b
        .push(
            "t1",
            Op::Trunc {
                x: r,
                s: 2,
                nonneg: true,
            },
        )
        .unwrap();
    let f = b.push("f", Op::Flatten { x: t1, axis: 1 }).unwrap();
    let mm = b
        .push(
            "mm",
            Op::MatMul {
                a: f,
                b: m,
                bias: Some(mb),
            },
        )
        .unwrap();
    let wx = b
        .push(
            "wx",
            Op::MatMul {
                a: l,
                b: y,
                bias: Some(lb),
            },
        )
        .unwrap();
    let mu = b.push("mu", Op::Mul { a: k, b: x }).unwrap();
    for (name, v) in [("c2", c2), ("mm", mm), ("wx", wx), ("mu", mu)] {
        b.output(&format!("out_{name}"), v).unwrap();
    }
    b.finish().unwrap()
}
