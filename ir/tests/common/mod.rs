//! Programs shared by the tests and the speed example: a LeNet-shaped CNN and a
//! SqueezeNet 1.1-shaped one, with deterministic pseudo-random weights.
#![allow(dead_code)]

use sci_ir::fixed::encode;
use sci_ir::{Builder, Encoding, Op, Owner, Pool2d, Program, Tensor, Type, ValueId};

/// Deterministic pseudo-random numbers in [-1, 1) (a 64-bit LCG).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_f32(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    pub fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next_f32()).collect()
    }
}

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
        let vals: Vec<f32> = self.rng.vec(n).into_iter().map(|v| v * gain).collect();
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
                    strides: [stride, stride],
                    pads: [pad; 4],
                    dilations: [1, 1],
                    groups: 1,
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
    let vals = Lcg(seed).vec(ty.numel());
    let t = Tensor::real(ty.shape().to_vec(), vals).unwrap();
    if ty.encoding().is_real() {
        t
    } else {
        sci_ir::fixed::encode_tensor(&t, ty.scale(), ty.encoding()).unwrap()
    }
}
