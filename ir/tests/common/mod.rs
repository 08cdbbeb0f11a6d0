//! Programs shared by the tests and the speed example: a LeNet-shaped CNN and a
//! SqueezeNet 1.1-shaped one, with deterministic pseudo-random weights.
#![allow(dead_code)]

use sci_ir::fixed::encode;
use sci_ir::spline::SplineFn;
use sci_ir::{Builder, Encoding, Op, Owner, Pool2d, Program, Tensor, Type, ValueId};

/// Deterministic pseudo-random numbers (the workspace's test generator).
pub use sci_testkit::Lcg;

/// Builds a fixed-point (or, for `Encoding::Real`, float) CNN layer by layer: products
/// are followed by a truncation back to `scale`.
pub struct Net {
    pub b: Builder,
    pub enc: Encoding,
    pub scale: u32,
    pub rng: Lcg,
}

impl Net {
    pub fn new(enc: Encoding, scale: u32) -> Net {
        Net {
            b: Builder::new(),
            enc,
            scale: if enc.is_real() { 0 } else { scale },
            rng: Lcg(7),
        }
    }

    pub fn input(&mut self, shape: &[usize]) -> ValueId {
        let ty = Type::new(self.enc, self.scale, shape.to_vec(), Owner::Client).unwrap();
        self.b.input("x", ty).unwrap()
    }

    /// Weights (or biases, at `scale`) with values in [-1, 1) scaled by `gain`.
    pub fn weights(&mut self, name: &str, shape: &[usize], scale: u32, gain: f32) -> ValueId {
        let n = shape.iter().product();
        let vals: Vec<f32> = self.rng.f32s(n).into_iter().map(|v| v * gain).collect();
        let t = if self.enc.is_real() {
            Tensor::real(shape.to_vec(), vals).unwrap()
        } else {
            let data = vals
                .iter()
                .map(|&v| encode(v, scale, self.enc).unwrap())
                .collect();
            Tensor::canonical(self.enc, shape.to_vec(), data).unwrap()
        };
        let ty = Type::new(
            self.enc,
            if self.enc.is_real() { 0 } else { scale },
            shape.to_vec(),
            Owner::Server,
        )
        .unwrap();
        self.b.constant(name, ty, t).unwrap()
    }

    /// Truncates a product back to `self.scale` (no-op for floats).
    pub fn rescale(&mut self, name: &str, x: ValueId) -> ValueId {
        if self.enc.is_real() {
            return x;
        }
        let s = self.b.ty(x).scale() - self.scale;
        self.b
            .push(
                &format!("{name}.trunc"),
                Op::Trunc {
                    x,
                    s,
                    nonneg: false,
                },
            )
            .unwrap()
    }

    pub fn conv(
        &mut self,
        name: &str,
        x: ValueId,
        cout: usize,
        k: usize,
        stride: usize,
        pad: usize,
    ) -> ValueId {
        let cin = self.b.ty(x).shape()[1];
        let s = self.scale;
        let w = self.weights(&format!("{name}.w"), &[cout, cin, k, k], s, 0.5);
        let bias = self.weights(&format!("{name}.b"), &[cout], 2 * s, 0.1);
        let y = self
            .b
            .push(
                name,
                Op::Conv2d {
                    x,
                    w,
                    bias: Some(bias),
                    conv: sci_ir::Conv2d {
                        strides: [stride, stride],
                        pads: [pad; 4],
                        dilations: [1, 1],
                        groups: 1,
                    },
                },
            )
            .unwrap();
        self.rescale(name, y)
    }

    pub fn relu(&mut self, name: &str, x: ValueId) -> ValueId {
        self.b.push(name, Op::Relu { x }).unwrap()
    }

    pub fn maxpool(
        &mut self,
        name: &str,
        x: ValueId,
        k: usize,
        s: usize,
        ceil_mode: bool,
    ) -> ValueId {
        let pool = Pool2d {
            kernel: [k, k],
            strides: [s, s],
            pads: [0; 4],
            ceil_mode,
        };
        self.b.push(name, Op::MaxPool { x, pool }).unwrap()
    }

    pub fn matmul(&mut self, name: &str, x: ValueId, n: usize) -> ValueId {
        let k = self.b.ty(x).shape()[1];
        let s = self.scale;
        let w = self.weights(&format!("{name}.w"), &[k, n], s, 0.5);
        let bias = self.weights(&format!("{name}.b"), &[n], 2 * s, 0.1);
        let y = self
            .b
            .push(
                name,
                Op::MatMul {
                    a: x,
                    b: w,
                    bias: Some(bias),
                },
            )
            .unwrap();
        self.rescale(name, y)
    }

    pub fn finish(self) -> Program {
        self.b.finish().unwrap()
    }
}

/// A LeNet-shaped CNN on a 1×1×8×8 image: conv-relu-maxpool-conv-relu-avgpool-matmul,
/// with the logits and their argmax as outputs.
pub fn lenet(enc: Encoding, scale: u32) -> Program {
    let mut n = Net::new(enc, scale);
    let x = n.input(&[1, 1, 8, 8]);
    let c1 = n.conv("conv1", x, 2, 3, 1, 0);
    let r1 = n.relu("relu1", c1);
    let p1 = n.maxpool("pool1", r1, 2, 2, false);
    let c2 = n.conv("conv2", p1, 3, 2, 1, 0);
    let r2 = n.relu("relu2", c2);
    let pool = Pool2d {
        kernel: [2, 2],
        strides: [2, 2],
        pads: [0; 4],
        ceil_mode: false,
    };
    let p2 =
        n.b.push(
            "pool2",
            Op::AvgPool {
                x: r2,
                pool,
                count_include_pad: true,
            },
        )
        .unwrap();
    let f = n.b.push("flat", Op::Flatten { x: p2, axis: 1 }).unwrap();
    let fc = n.matmul("fc", f, 4);
    n.b.output("logits", fc).unwrap();
    let am =
        n.b.push(
            "label",
            Op::ArgMax {
                x: fc,
                axis: 1,
                keepdims: false,
            },
        )
        .unwrap();
    n.b.output("class", am).unwrap();
    n.finish()
}

/// SqueezeNet 1.1's layer structure (conv1, 8 fire modules, conv10, global average pool)
/// with random weights, on a 1×3×`hw`×`hw` input.
pub fn squeezenet(enc: Encoding, scale: u32, hw: usize) -> Program {
    let mut n = Net::new(enc, scale);
    let x = n.input(&[1, 3, hw, hw]);
    let c = n.conv("conv1", x, 64, 3, 2, 0);
    let mut y = n.relu("relu1", c);
    y = n.maxpool("pool1", y, 3, 2, true);
    let fires = [
        (16, 64),
        (16, 64),
        (32, 128),
        (32, 128),
        (48, 192),
        (48, 192),
        (64, 256),
        (64, 256),
    ];
    for (i, &(s, e)) in fires.iter().enumerate() {
        let f = format!("fire{}", i + 2);
        let sq = n.conv(&format!("{f}.squeeze"), y, s, 1, 1, 0);
        let sq = n.relu(&format!("{f}.squeeze.relu"), sq);
        let e1 = n.conv(&format!("{f}.expand1"), sq, e, 1, 1, 0);
        let e1 = n.relu(&format!("{f}.expand1.relu"), e1);
        let e3 = n.conv(&format!("{f}.expand3"), sq, e, 3, 1, 1);
        let e3 = n.relu(&format!("{f}.expand3.relu"), e3);
        y =
            n.b.push(
                &f,
                Op::Concat {
                    xs: vec![e1, e3],
                    axis: 1,
                },
            )
            .unwrap();
        if i == 1 || i == 3 {
            y = n.maxpool(&format!("pool{}", i + 2), y, 3, 2, true);
        }
    }
    let c10 = n.conv("conv10", y, 1000, 1, 1, 0);
    let r10 = n.relu("relu10", c10);
    let g = n.b.push("gap", Op::GlobalAvgPool { x: r10 }).unwrap();
    let f = n.b.push("flat", Op::Flatten { x: g, axis: 1 }).unwrap();
    n.b.output("logits", f).unwrap();
    n.finish()
}

/// A deterministic input for `p`'s single input.
pub fn input_for(p: &Program, seed: u64) -> Tensor {
    let ty = p.ty(p.inputs()[0]).clone();
    let vals = Lcg(seed).f32s(ty.numel());
    let t = Tensor::real(ty.shape().to_vec(), vals).unwrap();
    if ty.encoding().is_real() {
        t
    } else {
        sci_ir::fixed::encode_tensor(&t, ty.scale(), ty.encoding()).unwrap()
    }
}

/// A random generator of well-typed programs: random ops with random attributes over
/// random earlier values, kept when the builder's type checker accepts them. Covers
/// every op kind, every encoding family (ℓ = 1..64, several primes, f32), withheld
/// constants, names that need quoting, and float specials in constant data.
pub fn random_program(seed: u64, steps: usize) -> Program {
    use sci_ir::{Params, Scalar};
    let mut r = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
    let enc = match r.below(4) {
        0 => Encoding::Real,
        1 => Encoding::ring(1 + r.below(64) as u32).unwrap(),
        2 => Encoding::ring([1, 8, 32, 37, 64][r.below(5) as usize]).unwrap(),
        _ => Encoding::field(
            [2, 3, 7, 65537, 4_294_475_777, 2_305_843_009_213_693_951][r.below(6) as usize],
        )
        .unwrap(),
    };
    let max_scale = (0..64)
        .take_while(|&s| enc.scale_fits(s))
        .last()
        .unwrap_or(0);
    let mut b = Builder::with_params(Params {
        mill_radix: 1 + r.below(8) as u32,
        threads: 1 + r.below(4) as u32,
        backend: if sci_ir::Backend::He.accepts(enc) {
            sci_ir::Backend::He
        } else if r.below(2) == 0 {
            sci_ir::Backend::Rlwe
        } else {
            sci_ir::Backend::Ot
        },
        ot: if r.below(2) == 0 {
            sci_ir::OtKind::Iknp
        } else {
            sci_ir::OtKind::Silent
        },
    });
    let names = ["x", "conv1.w", "a/b", "q:0", "sp ace", "é\"\\\n", "t\u{1}"];
    let fresh = |b: &Builder, r: &mut Rng| {
        let base = names[r.below(names.len() as u64) as usize];
        b.fresh_name(base)
    };
    let rand_shape =
        |r: &mut Rng| -> Vec<usize> { (0..r.below(5)).map(|_| 1 + r.below(4) as usize).collect() };
    let scale = |r: &mut Rng| r.below(u64::from(max_scale) + 1) as u32;
    let shape = rand_shape(&mut r);
    let s0 = scale(&mut r);
    let n = fresh(&b, &mut r);
    let _ = b.input(&n, Type::new(enc, s0, shape, Owner::Client).unwrap());
    for _ in 0..steps {
        let len = b.instrs().len() as u64;
        let ids: Vec<sci_ir::ValueId> = b.ids().collect();
        let pick = |r: &mut Rng| ids[r.below(len) as usize];
        let u = |r: &mut Rng, n: u64| r.below(n) as usize;
        let kind = r.below(32);
        let op = match kind {
            0 | 1 => {
                // A constant of a random shape, owner and scale; sometimes withheld.
                let shape = if r.below(2) == 0 {
                    b.ty(pick(&mut r)).shape().to_vec()
                } else {
                    rand_shape(&mut r)
                };
                let owner = if r.below(2) == 0 {
                    Owner::Server
                } else {
                    Owner::Public
                };
                let ty = Type::new(enc, scale(&mut r), shape.clone(), owner).unwrap();
                let numel: usize = shape.iter().product();
                let data = if owner == Owner::Server && r.below(4) == 0 {
                    None
                } else if enc.is_real() {
                    let specials = [
                        0.0,
                        -0.0,
                        1.0,
                        -1.5,
                        1e-7,
                        3.4e38,
                        f32::INFINITY,
                        f32::NEG_INFINITY,
                        1e-45,
                    ];
                    let v = (0..numel)
                        .map(|_| {
                            if r.below(3) == 0 {
                                specials[r.below(specials.len() as u64) as usize]
                            } else {
                                f32::from_bits(r.next() as u32 & 0xbfff_ffff)
                            }
                        })
                        .collect();
                    Some(Tensor::real(shape, v).unwrap())
                } else {
                    let m = enc.modulus().unwrap();
                    let v = (0..numel)
                        .map(|_| (u128::from(r.next()) % m) as u64)
                        .collect();
                    Some(Tensor::canonical(enc, shape, v).unwrap())
                };
                let id = b.add_const(data);
                sci_ir::Op::Const { id, ty }
            }
            2 => Op::Conv2d {
                x: pick(&mut r),
                w: pick(&mut r),
                bias: if r.below(2) == 0 {
                    Some(pick(&mut r))
                } else {
                    None
                },
                conv: sci_ir::Conv2d {
                    strides: [1 + u(&mut r, 2), 1 + u(&mut r, 2)],
                    pads: [u(&mut r, 2), u(&mut r, 2), u(&mut r, 2), u(&mut r, 2)],
                    dilations: [1 + u(&mut r, 2), 1 + u(&mut r, 2)],
                    groups: 1 + u(&mut r, 2),
                },
            },
            3 => Op::MatMul {
                a: pick(&mut r),
                b: pick(&mut r),
                bias: if r.below(2) == 0 {
                    Some(pick(&mut r))
                } else {
                    None
                },
            },
            4 => Op::Add {
                a: pick(&mut r),
                b: pick(&mut r),
            },
            5 => Op::Sub {
                a: pick(&mut r),
                b: pick(&mut r),
            },
            6 => Op::Mul {
                a: pick(&mut r),
                b: pick(&mut r),
            },
            7 => Op::MulPublic {
                x: pick(&mut r),
                k: r.next() as i64 >> r.below(64),
            },
            8 => Op::ScaleUp {
                x: pick(&mut r),
                k: 1 + r.below(4) as u32,
            },
            9 => Op::Trunc {
                x: pick(&mut r),
                s: 1 + r.below(4) as u32,
                nonneg: r.below(2) == 0,
            },
            10 => Op::DivPublic {
                x: pick(&mut r),
                d: 1 + r.below(9),
            },
            11 => Op::Relu { x: pick(&mut r) },
            12 | 13 => {
                let k = [1 + u(&mut r, 3), 1 + u(&mut r, 3)];
                let pool = Pool2d {
                    kernel: k,
                    strides: [1 + u(&mut r, 2), 1 + u(&mut r, 2)],
                    pads: [0, 1, 0, 1].map(|a| u(&mut r, k[a] as u64)),
                    ceil_mode: r.below(2) == 0,
                };
                let x = pick(&mut r);
                if kind == 12 {
                    Op::MaxPool { x, pool }
                } else {
                    Op::AvgPool {
                        x,
                        pool,
                        count_include_pad: r.below(2) == 0,
                    }
                }
            }
            14 => Op::GlobalAvgPool { x: pick(&mut r) },
            15 => Op::ArgMax {
                x: pick(&mut r),
                axis: u(&mut r, 4),
                keepdims: r.below(2) == 0,
            },
            16 => {
                let x = pick(&mut r);
                let mut shape = b.ty(x).shape().to_vec();
                shape.reverse();
                if r.below(2) == 0 {
                    shape.push(1);
                }
                Op::Reshape { x, shape }
            }
            17 => Op::Flatten {
                x: pick(&mut r),
                axis: u(&mut r, 4),
            },
            18 => {
                let x = pick(&mut r);
                let mut perm: Vec<usize> = (0..b.ty(x).rank()).collect();
                for i in (1..perm.len()).rev() {
                    perm.swap(i, u(&mut r, i as u64 + 1));
                }
                Op::Transpose { x, perm }
            }
            19 => {
                let x = pick(&mut r);
                let xs = (0..1 + u(&mut r, 3))
                    .map(|_| if r.below(2) == 0 { x } else { pick(&mut r) })
                    .collect();
                Op::Concat {
                    xs,
                    axis: u(&mut r, 3),
                }
            }
            20 => {
                let x = pick(&mut r);
                let rank = b.ty(x).rank();
                let value = if enc.is_real() {
                    Scalar::F32(f32::from_bits(r.next() as u32 & 0xbfff_ffff))
                } else {
                    let (lo, hi) = enc.signed_range().unwrap();
                    Scalar::Int((lo + (r.next() as i128).rem_euclid(hi - lo + 1)) as i64)
                };
                Op::Pad {
                    x,
                    pads: (0..2 * rank).map(|_| u(&mut r, 2)).collect(),
                    value,
                }
            }
            21 => {
                let name = fresh(&b, &mut r);
                Op::Output {
                    x: pick(&mut r),
                    logits: name.len() % 2 == 0,
                    name,
                }
            }
            22 => {
                let x = pick(&mut r);
                let xt = b.ty(x).clone();
                let mut ps = vec![x; 4];
                if xt.encoding().is_real() && xt.rank() >= 2 {
                    // Per-channel parameters, so that the op type-checks.
                    let c = xt.shape()[1];
                    for p in &mut ps {
                        let v = (0..c).map(|_| r.below(100) as f32 / 8.0).collect();
                        let n = fresh(&b, &mut r);
                        let ty = Type::real(vec![c], Owner::Server).unwrap();
                        *p = b
                            .constant(&n, ty, Tensor::real(vec![c], v).unwrap())
                            .unwrap();
                    }
                }
                Op::BatchNorm {
                    x,
                    scale: ps[0],
                    bias: ps[1],
                    mean: ps[2],
                    var: ps[3],
                    epsilon: 1e-5,
                }
            }
            23 => Op::Identity { x: pick(&mut r) },
            24 => {
                // Mostly valid indices (repeats, any order), sometimes one out of range.
                let x = pick(&mut r);
                let shape = b.ty(x).shape().to_vec();
                let axis = u(&mut r, shape.len() as u64 + 1);
                let dim = shape
                    .get(axis)
                    .map_or(1, |&d| d as u64 + u64::from(r.below(8) == 0));
                let indices = (0..1 + u(&mut r, 4))
                    .map(|_| u(&mut r, dim.max(1)))
                    .collect();
                Op::Gather { x, axis, indices }
            }
            25 => Op::Sigmoid { x: pick(&mut r) },
            26 => Op::Tanh { x: pick(&mut r) },
            27 => Op::Rsqrt { x: pick(&mut r) },
            29 => Op::Spline {
                x: pick(&mut r),
                func: SplineFn::ALL[u(&mut r, 3)],
            },
            28 => {
                // Mostly a valid axis, sometimes one out of range.
                let x = pick(&mut r);
                let axis = u(&mut r, b.ty(x).shape().len() as u64 + 1);
                Op::Softmax { x, axis }
            }
            _ => {
                let shape = rand_shape(&mut r);
                let ty = Type::new(enc, scale(&mut r), shape, Owner::Client).unwrap();
                let name = fresh(&b, &mut r);
                Op::Input { name, ty }
            }
        };
        let name = fresh(&b, &mut r);
        let _ = b.push(&name, op);
    }
    let mut p = b.finish().unwrap();
    // On the ring, some products by the other ring backend (a per-layer mix).
    let ids: Vec<_> = p.ids().filter(|&v| p.is_secure_product(v)).collect();
    for v in ids {
        if p.params().backend.on_ring() && r.below(2) == 0 {
            let other = match p.params().backend {
                sci_ir::Backend::Ot => sci_ir::Backend::Rlwe,
                _ => sci_ir::Backend::Ot,
            };
            p.set_product_backend(v, other).unwrap();
        }
    }
    // Likewise some matmuls of two secret operands.
    let secret: Vec<_> = p
        .ids()
        .filter(|&v| p.is_secret_product(v) && matches!(p.instr(v).op, Op::MatMul { .. }))
        .collect();
    for v in secret {
        if p.params().backend.on_ring() && r.below(2) == 0 {
            let other = match p.secret_product_backend(v) {
                Some(sci_ir::Backend::Ot) => sci_ir::Backend::Rlwe,
                _ => sci_ir::Backend::Ot,
            };
            p.set_product_backend(v, other).unwrap();
        }
    }
    p
}

/// A small deterministic generator (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n` (`n ≥ 1`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
