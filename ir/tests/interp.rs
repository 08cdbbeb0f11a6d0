//! Reference-interpreter tests: hand-computed results for every op, including negative
//! values, wrap-around, ℓ = 1 and ℓ = 64, fields, odd shapes, padding, strides,
//! dilations, groups, ceil_mode, count_include_pad and ties; plus a comparison of the
//! convolution and pooling kernels against naive definitions on random cases.

use proptest::prelude::*;
use sci_ir::interp::{self, InterpError, Magnitude, Options};
use sci_ir::{Builder, Encoding, Op, Owner, Pool2d, Scalar, Tensor, Type, ValueId};

fn ring(bits: u32) -> Encoding {
    Encoding::ring(bits).unwrap()
}

fn field(n: u64) -> Encoding {
    Encoding::field(n).unwrap()
}

/// A small program under construction: one client input `x` plus constants.
struct P {
    b: Builder,
    enc: Encoding,
    inputs: Vec<Tensor>,
}

impl P {
    fn new(enc: Encoding) -> P {
        P {
            b: Builder::new(),
            enc,
            inputs: vec![],
        }
    }

    fn tensor(&self, shape: &[usize], data: &[i64]) -> Tensor {
        Tensor::signed(self.enc, shape.to_vec(), data).unwrap()
    }

    fn input(&mut self, scale: u32, shape: &[usize], data: &[i64]) -> ValueId {
        let name = format!("in{}", self.inputs.len());
        let ty = Type::new(self.enc, scale, shape.to_vec(), Owner::Client).unwrap();
        self.inputs.push(self.tensor(shape, data));
        self.b.input(&name, ty).unwrap()
    }

    fn konst(&mut self, scale: u32, shape: &[usize], data: &[i64]) -> ValueId {
        let name = self.b.fresh_name("c");
        let ty = Type::new(self.enc, scale, shape.to_vec(), Owner::Server).unwrap();
        let t = self.tensor(shape, data);
        self.b.constant(&name, ty, t).unwrap()
    }

    /// Pushes `op`, outputs it, runs, and returns (shape, signed data).
    fn run(self, op: Op) -> (Vec<usize>, Vec<i64>) {
        let t = self.run_tensor(op).unwrap();
        (t.shape().to_vec(), t.to_signed().unwrap())
    }

    fn run_tensor(mut self, op: Op) -> Result<Tensor, InterpError> {
        let y = self.b.push("y", op).unwrap();
        self.b.output("out", y).unwrap();
        let p = self.b.finish().unwrap();
        interp::run(&p, &self.inputs).map(|mut v| v.remove(0))
    }
}

fn conv(
    x: ValueId,
    w: ValueId,
    bias: Option<ValueId>,
    strides: [usize; 2],
    pads: [usize; 4],
    dilations: [usize; 2],
    groups: usize,
) -> Op {
    Op::Conv2d {
        x,
        w,
        bias,
        conv: sci_ir::Conv2d {
            strides,
            pads,
            dilations,
            groups,
        },
    }
}

#[test]
fn conv2d_hand_computed() {
    // Valid convolution: y[i,j] = x[i,j] − x[i+1,j+1].
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 1, 3, 3], &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let w = p.konst(0, &[1, 1, 2, 2], &[1, 0, 0, -1]);
    assert_eq!(
        p.run(conv(x, w, None, [1, 1], [0; 4], [1, 1], 1)),
        (vec![1, 1, 2, 2], vec![-4, -4, -4, -4])
    );
    // Padding 1 on every side, stride 2: windows at (−1,−1), (−1,1), (1,−1), (1,1).
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 1, 3, 3], &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let w = p.konst(0, &[1, 1, 2, 2], &[1, 0, 0, -1]);
    assert_eq!(
        p.run(conv(x, w, None, [2, 2], [1, 1, 1, 1], [1, 1], 1)),
        (vec![1, 1, 2, 2], vec![-1, -3, -7, -4])
    );
    // Asymmetric padding (top 0, left 2, bottom 1, right 0), kernel 1×1 of weight 2.
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 1, 1, 2], &[3, -4]);
    let w = p.konst(0, &[1, 1, 1, 1], &[2]);
    assert_eq!(
        p.run(conv(x, w, None, [1, 1], [0, 2, 1, 0], [1, 1], 1)),
        (vec![1, 1, 2, 4], vec![0, 0, 6, -8, 0, 0, 0, 0])
    );
    // Dilation 2 along W: y[j] = x[j] + x[j+2].
    let mut p = P::new(ring(16));
    let x = p.input(0, &[1, 1, 1, 5], &[1, 2, 3, 4, 5]);
    let w = p.konst(0, &[1, 1, 1, 2], &[1, 1]);
    assert_eq!(
        p.run(conv(x, w, None, [1, 1], [0; 4], [1, 2], 1)),
        (vec![1, 1, 1, 3], vec![4, 6, 8])
    );
    // Groups (depthwise) with a bias, two images.
    let mut p = P::new(ring(16));
    let x = p.input(2, &[2, 2, 1, 1], &[3, 5, -1, 2]);
    let w = p.konst(1, &[2, 1, 1, 1], &[2, 7]);
    let b = p.konst(3, &[2], &[1, -1]);
    assert_eq!(
        p.run(conv(x, w, Some(b), [1, 1], [0; 4], [1, 1], 2)),
        (vec![2, 2, 1, 1], vec![7, 34, -1, 13])
    );
    // Wrap-around in Z_2^8: 100 + 100 = 200 ≡ −56.
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 2, 1, 1], &[100, 100]);
    let w = p.konst(0, &[1, 2, 1, 1], &[1, 1]);
    assert_eq!(
        p.run(conv(x, w, None, [1, 1], [0; 4], [1, 1], 1)).1,
        vec![-56]
    );
    // Field Z_11: 4·3 + 5·2 = 22 ≡ 0; 4·(−3) = −12 ≡ −1.
    let mut p = P::new(field(11));
    let x = p.input(0, &[1, 2, 1, 1], &[4, 5]);
    let w = p.konst(0, &[2, 2, 1, 1], &[3, 2, -3, 0]);
    assert_eq!(
        p.run(conv(x, w, None, [1, 1], [0; 4], [1, 1], 1)).1,
        vec![0, -1]
    );
}

#[test]
fn matmul_hand_computed() {
    let mut p = P::new(ring(32));
    let a = p.input(0, &[2, 3], &[1, -2, 3, 0, 4, -1]);
    let b = p.konst(0, &[3, 2], &[1, 2, 3, 4, 5, 6]);
    let bias = p.konst(0, &[2], &[10, -10]);
    // [1−6+15, 2−8+18] = [10, 12]; [12−5, 16−6] = [7, 10].
    assert_eq!(
        p.run(Op::MatMul {
            a,
            b,
            bias: Some(bias)
        }),
        (vec![2, 2], vec![20, 2, 17, 0])
    );
    // ℓ = 64 wraps: (2^62)·4 ≡ 0; i64::MAX·2 + 2 ≡ 0.
    let mut p = P::new(ring(64));
    let a = p.input(0, &[1, 2], &[1 << 62, i64::MAX]);
    let b = p.konst(0, &[2, 2], &[4, 0, 0, 2]);
    let bias = p.konst(0, &[2], &[0, 2]);
    assert_eq!(
        p.run(Op::MatMul {
            a,
            b,
            bias: Some(bias)
        })
        .1,
        vec![0, 0]
    );
    // Field Z_7: 3·3 = 9 ≡ 2; 3·(−3) ≡ −2.
    let mut p = P::new(field(7));
    let a = p.input(0, &[1, 1], &[3]);
    let b = p.konst(0, &[1, 2], &[3, -3]);
    assert_eq!(p.run(Op::MatMul { a, b, bias: None }).1, vec![2, -2]);
}

#[test]
fn elementwise_hand_computed() {
    // Broadcasting [2,1] + [3] → [2,3].
    let mut p = P::new(ring(8));
    let a = p.input(0, &[2, 1], &[10, -20]);
    let b = p.konst(0, &[3], &[1, 2, 3]);
    assert_eq!(
        p.run(Op::Add { a, b }),
        (vec![2, 3], vec![11, 12, 13, -19, -18, -17])
    );
    let mut p = P::new(ring(8));
    let a = p.input(0, &[3], &[1, 2, 3]);
    let b = p.konst(0, &[2, 1], &[10, -128]);
    // −128 − 1 wraps to 127.
    assert_eq!(
        p.run(Op::Sub { a: b, b: a }),
        (vec![2, 3], vec![9, 8, 7, 127, 126, 125])
    );
    // ℓ = 1: 1 ≡ −1; −1 + −1 = −2 ≡ 0; (−1)·(−1) = 1 ≡ −1.
    let mut p = P::new(ring(1));
    let a = p.input(0, &[2], &[-1, 0]);
    let b = p.konst(0, &[2], &[-1, -1]);
    assert_eq!(p.run(Op::Add { a, b }).1, vec![0, -1]);
    let mut p = P::new(ring(1));
    let a = p.input(0, &[2], &[-1, 0]);
    let b = p.konst(0, &[2], &[-1, -1]);
    assert_eq!(p.run(Op::Mul { a, b }).1, vec![-1, 0]);
    // ℓ = 64: i64::MAX + 1 = i64::MIN.
    let mut p = P::new(ring(64));
    let a = p.input(0, &[1], &[i64::MAX]);
    let b = p.konst(0, &[1], &[1]);
    assert_eq!(p.run(Op::Add { a, b }).1, vec![i64::MIN]);
    // Mul with a scalar-shaped constant, scales add.
    let mut p = P::new(ring(16));
    let a = p.input(1, &[2, 2], &[1, -2, 3, -4]);
    let b = p.konst(2, &[], &[-3]);
    assert_eq!(p.run(Op::Mul { a, b }), (vec![2, 2], vec![-3, 6, -9, 12]));
    // Field subtraction wraps into the signed range.
    let mut p = P::new(field(11));
    let a = p.input(0, &[2], &[-5, 5]);
    let b = p.konst(0, &[2], &[1, -1]);
    assert_eq!(p.run(Op::Sub { a, b }).1, vec![5, -5]);
}

#[test]
fn scalar_ops_hand_computed() {
    let mut p = P::new(ring(8));
    let x = p.input(0, &[3], &[5, -2, 100]);
    // 100·(−3) = −300 ≡ −300 + 512 = 212 ≡ −44.
    assert_eq!(p.run(Op::MulPublic { x, k: -3 }).1, vec![-15, 6, -44]);
    let mut p = P::new(field(7));
    let x = p.input(0, &[2], &[2, -3]);
    assert_eq!(p.run(Op::MulPublic { x, k: -1 << 40 }).1, {
        // 2^40 mod 7 = 2 (2^3 ≡ 1), so −2^40 ≡ −2: 2·−2 = −4 ≡ 3; −3·−2 = 6 ≡ −1.
        vec![3, -1]
    });
    // scale_up: ×4, wrapping in Z_2^4: 3·4 = 12 ≡ −4.
    let mut p = P::new(ring(4));
    let x = p.input(0, &[3], &[3, -1, 1]);
    assert_eq!(p.run(Op::ScaleUp { x, k: 2 }), (vec![3], vec![-4, -4, 4]));
    let mut p = P::new(ring(64));
    let x = p.input(0, &[2], &[-1, 1]);
    assert_eq!(p.run(Op::ScaleUp { x, k: 63 }).1, vec![i64::MIN, i64::MIN]);
    let mut p = P::new(field(11));
    let x = p.input(0, &[2], &[3, -2]);
    // 3·4 = 12 ≡ 1; −2·4 = −8 ≡ 3.
    assert_eq!(p.run(Op::ScaleUp { x, k: 2 }).1, vec![1, 3]);
}

#[test]
fn trunc_and_div_hand_computed() {
    let mut p = P::new(ring(8));
    let x = p.input(3, &[5], &[7, -7, -1, 8, -128]);
    assert_eq!(
        p.run(Op::Trunc {
            x,
            s: 1,
            nonneg: false
        }),
        (vec![5], vec![3, -4, -1, 4, -64])
    );
    let mut p = P::new(ring(64));
    let x = p.input(63, &[3], &[i64::MIN, i64::MAX, -1]);
    assert_eq!(
        p.run(Op::Trunc {
            x,
            s: 63,
            nonneg: false
        })
        .1,
        vec![-1, 0, -1]
    );
    // nonneg is checked.
    let mut p = P::new(ring(8));
    let x = p.input(2, &[3], &[4, 0, -3]);
    assert_eq!(
        p.run_tensor(Op::Trunc {
            x,
            s: 2,
            nonneg: true
        }),
        Err(InterpError::NonNegViolated {
            name: "y".into(),
            index: 2,
            value: -3
        })
    );
    let mut p = P::new(ring(8));
    let x = p.input(2, &[2], &[4, 7]);
    assert_eq!(
        p.run(Op::Trunc {
            x,
            s: 2,
            nonneg: true
        })
        .1,
        vec![1, 1]
    );
    // Field truncation floors the signed value.
    let mut p = P::new(field(11));
    let x = p.input(2, &[4], &[-5, 5, -1, 3]);
    assert_eq!(
        p.run(Op::Trunc {
            x,
            s: 1,
            nonneg: false
        })
        .1,
        vec![-3, 2, -1, 1]
    );
    // rdiv floors.
    let mut p = P::new(ring(8));
    let x = p.input(0, &[5], &[7, -7, -6, 6, -128]);
    assert_eq!(p.run(Op::DivPublic { x, d: 3 }).1, vec![2, -3, -2, 2, -43]);
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2], &[-128, 127]);
    assert_eq!(p.run(Op::DivPublic { x, d: 255 }).1, vec![-1, 0]);
    let mut p = P::new(field(11));
    let x = p.input(0, &[3], &[-5, 5, -4]);
    assert_eq!(p.run(Op::DivPublic { x, d: 2 }).1, vec![-3, 2, -2]);
    let mut p = P::new(ring(1));
    let x = p.input(0, &[2], &[-1, 0]);
    assert_eq!(p.run(Op::DivPublic { x, d: 1 }).1, vec![-1, 0]);
}

#[test]
fn relu_hand_computed() {
    let mut p = P::new(ring(8));
    let x = p.input(0, &[4], &[-1, 0, 3, -128]);
    assert_eq!(p.run(Op::Relu { x }).1, vec![0, 0, 3, 0]);
    let mut p = P::new(ring(1));
    let x = p.input(0, &[2], &[-1, 0]);
    assert_eq!(p.run(Op::Relu { x }).1, vec![0, 0]);
    let mut p = P::new(ring(64));
    let x = p.input(0, &[2], &[i64::MIN, i64::MAX]);
    assert_eq!(p.run(Op::Relu { x }).1, vec![0, i64::MAX]);
    let mut p = P::new(field(11));
    let x = p.input(0, &[3], &[-5, 5, 0]);
    assert_eq!(p.run(Op::Relu { x }).1, vec![0, 5, 0]);
}

/// `sigmoid` and `tanh` at ℓ = 16, s = 4 (the smallest ring for that scale, 2s + 7 ≤ ℓ):
/// σ(0) = ½, σ(±1) = 0.731/0.269 → 12/16 and 4/16, σ(2) = 0.881 → 14/16, tanh(±1) =
/// ±0.762 → ±12/16, tanh(2) = 0.964 → 16/16 (15.42: within the stated 3 ULPs), and the
/// saturated extremes.
#[test]
fn sigmoid_and_tanh_hand_computed() {
    let xs = [0, 16, -16, 32, i64::from(i16::MAX), i64::from(i16::MIN)];
    let mut p = P::new(ring(16));
    let x = p.input(4, &[6], &xs);
    assert_eq!(p.run(Op::Sigmoid { x }).1, vec![8, 12, 4, 14, 16, 0]);
    let mut p = P::new(ring(16));
    let x = p.input(4, &[6], &xs);
    assert_eq!(p.run(Op::Tanh { x }).1, vec![0, 12, -12, 16, 16, -16]);
}

/// `rsqrt` at ℓ = 16, s = 4: 1/√1 = 1 → 16, 1/√4 = ½ → 8, 1/√0.25 = 2 → 32, 1/√2 =
/// 0.707 → 11.3 (11), a non-positive input read as 1/16 (1/√(1/16) = 4 → 64).
#[test]
fn rsqrt_hand_computed() {
    let mut p = P::new(ring(16));
    let x = p.input(4, &[6], &[16, 64, 4, 32, 0, -5]);
    assert_eq!(p.run(Op::Rsqrt { x }).1, vec![16, 8, 32, 11, 64, 64]);
}

/// `softmax` at ℓ = 16, s = 4 along either axis of `[[0, 4], [0, −4]]`: two equal
/// values give ½ each (8), a spread of 4 gives `e^4/(1 + e^4) = 0.982` (15.7 → 16) and
/// `0.018` (0.29 → 0); four equal values ¼ each (4).
#[test]
fn softmax_hand_computed() {
    for (axis, want) in [(0, vec![8, 16, 8, 0]), (1, vec![0, 16, 16, 0])] {
        let mut p = P::new(ring(16));
        let x = p.input(4, &[2, 2], &[0, 64, 0, -64]);
        assert_eq!(p.run(Op::Softmax { x, axis }).1, want, "axis {axis}");
    }
    let mut p = P::new(ring(16));
    let x = p.input(4, &[1, 4], &[-3, -3, -3, -3]);
    assert_eq!(p.run(Op::Softmax { x, axis: 1 }).1, vec![4; 4]);
}

fn pool(k: [usize; 2], s: [usize; 2], pads: [usize; 4], ceil_mode: bool) -> Pool2d {
    Pool2d {
        kernel: k,
        strides: s,
        pads,
        ceil_mode,
    }
}

#[test]
fn maxpool_hand_computed() {
    // 4×4, kernel 2, stride 2.
    let xs: Vec<i64> = vec![1, 5, 2, 0, -3, 4, 9, 9, 0, 0, -1, -2, 7, 0, -3, -4];
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 1, 4, 4], &xs);
    assert_eq!(
        p.run(Op::MaxPool {
            x,
            pool: pool([2, 2], [2, 2], [0; 4], false)
        }),
        (vec![1, 1, 2, 2], vec![5, 9, 7, -1])
    );
    // Padding is ignored, never compared: all-negative input keeps negative maxima.
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 1, 2, 2], &[-5, -6, -7, -8]);
    assert_eq!(
        p.run(Op::MaxPool {
            x,
            pool: pool([2, 2], [1, 1], [1, 1, 1, 1], false)
        }),
        (vec![1, 1, 3, 3], vec![-5, -5, -6, -5, -5, -6, -7, -7, -8])
    );
    // ceil_mode on a 3×3 input, kernel 2 stride 2: the last window is clipped.
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 1, 3, 3], &[1, 2, 3, 4, 5, 6, 7, 8, -9]);
    assert_eq!(
        p.run(Op::MaxPool {
            x,
            pool: pool([2, 2], [2, 2], [0; 4], true)
        }),
        (vec![1, 1, 2, 2], vec![5, 6, 8, -9])
    );
    // Ties and ℓ = 1; two channels.
    let mut p = P::new(ring(1));
    let x = p.input(0, &[1, 2, 1, 3], &[0, -1, 0, -1, -1, -1]);
    assert_eq!(
        p.run(Op::MaxPool {
            x,
            pool: pool([1, 2], [1, 1], [0; 4], false)
        })
        .1,
        vec![0, 0, -1, -1]
    );
    // ℓ = 64 extremes; field.
    let mut p = P::new(ring(64));
    let x = p.input(0, &[1, 1, 1, 2], &[i64::MIN, i64::MAX]);
    assert_eq!(
        p.run(Op::MaxPool {
            x,
            pool: pool([1, 2], [1, 1], [0; 4], false)
        })
        .1,
        vec![i64::MAX]
    );
    let mut p = P::new(field(11));
    let x = p.input(0, &[1, 1, 1, 3], &[-5, 5, 4]);
    assert_eq!(
        p.run(Op::MaxPool {
            x,
            pool: pool([1, 2], [1, 1], [0; 4], false)
        })
        .1,
        vec![5, 5]
    );
}

#[test]
fn avgpool_hand_computed() {
    // 3×3 input, kernel 2, stride 1, pad 1 (top/left only), with and without counting
    // the padding. Window sums at the 3×3 outputs:
    //   (−1,−1): x00 = 1          count_in 4 / count_ex 1
    //   (−1, 0): x00+x01 = 3      4 / 2
    //   (−1, 1): x01+x02 = −1     4 / 2
    //   ( 0,−1): x00+x10 = 5      4 / 2
    //   ( 0, 0): 1+2+4+5 = 12     4 / 4
    //   ( 0, 1): 2−3+5−6 = −2     4 / 4
    //   ( 1,−1): 4+7 = 11         4 / 2
    //   ( 1, 0): 4+5+7+8 = 24     4 / 4
    //   ( 1, 1): 5−6+8+9 = 16     4 / 4
    let xs = [1, 2, -3, 4, 5, -6, 7, 8, 9];
    let pl = pool([2, 2], [1, 1], [1, 1, 0, 0], false);
    let mut p = P::new(ring(16));
    let x = p.input(0, &[1, 1, 3, 3], &xs);
    assert_eq!(
        p.run(Op::AvgPool {
            x,
            pool: pl,
            count_include_pad: true
        })
        .1,
        // floor(s/4): 0, 0, −1, 1, 3, −1, 2, 6, 4
        vec![0, 0, -1, 1, 3, -1, 2, 6, 4]
    );
    let mut p = P::new(ring(16));
    let x = p.input(0, &[1, 1, 3, 3], &xs);
    assert_eq!(
        p.run(Op::AvgPool {
            x,
            pool: pl,
            count_include_pad: false
        })
        .1,
        // 1/1, 3/2, −1/2, 5/2, 12/4, −2/4, 11/2, 24/4, 16/4
        vec![1, 1, -1, 2, 3, -1, 5, 6, 4]
    );
    // ceil_mode: the last window extends past the padded input; count_include_pad counts
    // only positions inside the padded input. Input 1×3, kernel 1×2, stride 2, pad right 1:
    // span 3+1−2 = 2 → 2 windows: [0,1] and [2,3] (3 is the pad). With ceil_mode and no
    // pad: span 1 → ceil(1/2)+1 = 2 windows, the second [2,3] where 3 is outside the
    // padded input: count 1 whether or not padding counts.
    let mut p = P::new(ring(16));
    let x = p.input(0, &[1, 1, 1, 3], &[4, 6, -7]);
    assert_eq!(
        p.run(Op::AvgPool {
            x,
            pool: pool([1, 2], [1, 2], [0, 0, 0, 1], false),
            count_include_pad: true
        })
        .1,
        vec![5, -4]
    );
    let mut p = P::new(ring(16));
    let x = p.input(0, &[1, 1, 1, 3], &[4, 6, -7]);
    assert_eq!(
        p.run(Op::AvgPool {
            x,
            pool: pool([1, 2], [1, 2], [0; 4], true),
            count_include_pad: true
        })
        .1,
        vec![5, -7]
    );
    // Field.
    let mut p = P::new(field(101));
    let x = p.input(0, &[1, 1, 1, 2], &[-50, 49]);
    assert_eq!(
        p.run(Op::AvgPool {
            x,
            pool: pool([1, 2], [1, 1], [0; 4], false),
            count_include_pad: false
        })
        .1,
        vec![-1]
    );
}

#[test]
fn global_avgpool_and_argmax() {
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 2, 2, 2], &[1, 2, 3, -7, 4, 4, 4, 5]);
    // sums −1 and 17 → floor(−1/4) = −1, floor(17/4) = 4.
    assert_eq!(
        p.run(Op::GlobalAvgPool { x }),
        (vec![1, 2, 1, 1], vec![-1, 4])
    );
    // ArgMax with ties: first index wins; signed comparison.
    let xs = [3, -1, 3, 7, 7, -128];
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2, 3], &xs);
    assert_eq!(
        p.run(Op::ArgMax {
            x,
            axis: 1,
            keepdims: false
        }),
        (vec![2], vec![0, 0])
    );
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2, 3], &xs);
    assert_eq!(
        p.run(Op::ArgMax {
            x,
            axis: 0,
            keepdims: true
        }),
        (vec![1, 3], vec![1, 1, 0])
    );
    let mut p = P::new(field(11));
    let x = p.input(3, &[4], &[-5, 4, 5, 5]);
    assert_eq!(
        p.run(Op::ArgMax {
            x,
            axis: 0,
            keepdims: false
        }),
        (vec![], vec![2])
    );
    let mut p = P::new(ring(64));
    let x = p.input(0, &[3], &[i64::MIN, -1, i64::MIN]);
    assert_eq!(
        p.run(Op::ArgMax {
            x,
            axis: 0,
            keepdims: false
        })
        .1,
        vec![1]
    );
}

#[test]
fn data_movement_hand_computed() {
    let xs: Vec<i64> = (0..6).map(|v| v - 3).collect(); // [[−3,−2,−1],[0,1,2]]
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2, 3], &xs);
    assert_eq!(
        p.run(Op::Transpose {
            x,
            perm: vec![1, 0]
        }),
        (vec![3, 2], vec![-3, 0, -2, 1, -1, 2])
    );
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2, 3], &xs);
    assert_eq!(
        p.run(Op::Reshape {
            x,
            shape: vec![3, 1, 2]
        }),
        (vec![3, 1, 2], xs.clone())
    );
    let mut p = P::new(ring(8));
    let x = p.input(0, &[1, 2, 3], &xs);
    assert_eq!(p.run(Op::Flatten { x, axis: 2 }), (vec![2, 3], xs.clone()));
    // 3-D transpose.
    let ys: Vec<i64> = (0..24).collect();
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2, 3, 4], &ys);
    let (shape, out) = p.run(Op::Transpose {
        x,
        perm: vec![2, 0, 1],
    });
    assert_eq!(shape, vec![4, 2, 3]);
    // out[k][i][j] = x[i][j][k] = 12i + 4j + k.
    let expect: Vec<i64> = (0..4)
        .flat_map(|k| (0..2).flat_map(move |i| (0..3).map(move |j| 12 * i + 4 * j + k)))
        .collect();
    assert_eq!(out, expect);
    // Gather along axis 1 of [2, 3, 4]: rows 2, 0, 2 of each block.
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2, 3, 4], &ys);
    let (shape, out) = p.run(Op::Gather {
        x,
        axis: 1,
        indices: vec![2, 0, 2],
    });
    assert_eq!(shape, vec![2, 3, 4]);
    let expect: Vec<i64> = (0..2)
        .flat_map(|i| {
            [2, 0, 2]
                .into_iter()
                .flat_map(move |j| (0..4).map(move |k| 12 * i + 4 * j + k))
        })
        .collect();
    assert_eq!(out, expect);
    // Concat along axis 1 of [2,1] and [2,2] (a constant).
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2, 1], &[1, 2]);
    let c = p.konst(0, &[2, 2], &[-1, -2, -3, -4]);
    assert_eq!(
        p.run(Op::Concat {
            xs: vec![c, x, c],
            axis: 1
        }),
        (vec![2, 5], vec![-1, -2, 1, -1, -2, -3, -4, 2, -3, -4])
    );
    // Pad [2,2] by (1,0) before and (0,2) after with −5.
    let mut p = P::new(ring(8));
    let x = p.input(0, &[2, 2], &[1, 2, 3, 4]);
    assert_eq!(
        p.run(Op::Pad {
            x,
            pads: vec![1, 0, 0, 2],
            value: Scalar::Int(-5)
        }),
        (vec![3, 4], vec![-5, -5, -5, -5, 1, 2, -5, -5, 3, 4, -5, -5])
    );
}

#[test]
fn real_programs() {
    let rt = |s: &[usize], o| Type::real(s.to_vec(), o).unwrap();
    let mut b = Builder::new();
    let x = b.input("x", rt(&[1, 2, 1, 2], Owner::Client)).unwrap();
    let cst = |b: &mut Builder, n: &str, v: Vec<f32>| {
        let t = Tensor::real(vec![v.len()], v).unwrap();
        b.constant(n, rt(t.shape(), Owner::Server), t).unwrap()
    };
    let g = cst(&mut b, "g", vec![2.0, 1.0]);
    let be = cst(&mut b, "be", vec![0.5, -1.0]);
    let mu = cst(&mut b, "mu", vec![1.0, 0.0]);
    let var = cst(&mut b, "var", vec![4.0, 0.25]);
    let bn = b
        .push(
            "bn",
            Op::BatchNorm {
                x,
                scale: g,
                bias: be,
                mean: mu,
                var,
                epsilon: 0.0,
            },
        )
        .unwrap();
    let id = b.push("id", Op::Identity { x: bn }).unwrap();
    let r = b.push("r", Op::Relu { x: id }).unwrap();
    let a = b
        .push(
            "a",
            Op::AvgPool {
                x: r,
                pool: pool([1, 2], [1, 1], [0; 4], false),
                count_include_pad: false,
            },
        )
        .unwrap();
    let d = b.push("d", Op::DivPublic { x: a, d: 4 }).unwrap();
    let m = b.push("m", Op::MulPublic { x: d, k: -2 }).unwrap();
    b.output("out", m).unwrap();
    b.output("bn_out", bn).unwrap();
    let p = b.finish().unwrap();
    let input = Tensor::real(vec![1, 2, 1, 2], vec![3.0, -1.0, 0.5, 1.0]).unwrap();
    let out = interp::run(&p, &[input]).unwrap();
    // bn: ch0 (x−1)/2·2+0.5 → 2.5, −1.5; ch1 (x−0)/0.5·1 − 1 → 0, 1.
    assert_eq!(out[1].as_f32().unwrap(), &[2.5, -1.5, 0.0, 1.0]);
    // relu → 2.5, 0, 0, 1; avg pairs → 1.25, 0.5; /4 → 0.3125, 0.125; ·−2.
    assert_eq!(out[0].as_f32().unwrap(), &[-0.625, -0.25]);
}

#[test]
fn range_tracking_and_errors() {
    let mut p = P::new(ring(64));
    let x = p.input(0, &[3], &[5, -1000, 7]);
    let y = p.b.push("y", Op::MulPublic { x, k: 3 }).unwrap();
    p.b.output("out", y).unwrap();
    let prog = p.b.finish().unwrap();
    let e = interp::eval(
        &prog,
        &p.inputs,
        Options {
            keep_values: true,
            track_ranges: true,
        },
    )
    .unwrap();
    let ranges = e.ranges.unwrap();
    assert_eq!(
        ranges,
        vec![
            Magnitude::Int(1000),
            Magnitude::Int(3000),
            Magnitude::Int(3000)
        ]
    );
    assert_eq!(ranges[1].ring_bits(), Some(13)); // 3000 < 2^12
    assert_eq!(Magnitude::Int(0).ring_bits(), Some(1));
    assert_eq!(Magnitude::Int(1 << 63).ring_bits(), Some(65));
    assert_eq!(
        e.values.unwrap()[1].to_signed().unwrap(),
        vec![15, -3000, 21]
    );
    // Wrong inputs.
    assert!(matches!(
        interp::run(&prog, &[]),
        Err(InterpError::InputCount {
            expected: 1,
            found: 0
        })
    ));
    let bad = Tensor::signed(ring(63), vec![3], &[0, 0, 0]).unwrap();
    assert!(matches!(
        interp::run(&prog, &[bad]),
        Err(InterpError::InputType { .. })
    ));
    // A client view cannot be run: its weights are withheld.
    let mut p = P::new(ring(16));
    let x = p.input(0, &[1], &[1]);
    let w = p.konst(0, &[1], &[2]);
    let y = p.b.push("y", Op::Mul { a: x, b: w }).unwrap();
    p.b.output("out", y).unwrap();
    let prog = p.b.finish().unwrap();
    assert_eq!(
        interp::run(&prog, &p.inputs).unwrap()[0]
            .to_signed()
            .unwrap(),
        vec![2]
    );
    assert!(matches!(
        interp::run(&prog.client_view(), &p.inputs),
        Err(InterpError::Withheld { .. })
    ));
}

// ---- Kernels against naive definitions ------------------------------------------------

/// Naive convolution over i128 (then reduced), straight from the definition in the docs.
#[allow(clippy::too_many_arguments)]
fn naive_conv(
    x: &[i64],
    [n, c, h, w]: [usize; 4],
    wt: &[i64],
    [co, cg, kh, kw]: [usize; 4],
    s: [usize; 2],
    pads: [usize; 4],
    dil: [usize; 2],
    groups: usize,
) -> Vec<i128> {
    let oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) / s[0] + 1;
    let ow = (w + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) / s[1] + 1;
    let mut out = vec![];
    for b in 0..n {
        for o in 0..co {
            let g = o / (co / groups);
            for i in 0..oh {
                for j in 0..ow {
                    let mut acc = 0i128;
                    for ci in 0..cg {
                        for a in 0..kh {
                            for bb in 0..kw {
                                let y = (i * s[0] + a * dil[0]) as i64 - pads[0] as i64;
                                let xx = (j * s[1] + bb * dil[1]) as i64 - pads[1] as i64;
                                if y < 0 || xx < 0 || y >= h as i64 || xx >= w as i64 {
                                    continue;
                                }
                                let cin = g * cg + ci;
                                let xv = x[((b * c + cin) * h + y as usize) * w + xx as usize];
                                let wv = wt[((o * cg + ci) * kh + a) * kw + bb];
                                acc += i128::from(xv) * i128::from(wv);
                            }
                        }
                    }
                    out.push(acc);
                }
            }
        }
    }
    out
}

/// Input shape, weight shape, strides, pads, dilations, groups, ring bits.
type ConvCase = (
    Vec<usize>,
    [usize; 4],
    [usize; 2],
    [usize; 4],
    [usize; 2],
    usize,
    u32,
);

fn conv_case() -> impl Strategy<Value = ConvCase> {
    (
        1usize..=2,
        1usize..=3,
        1usize..=3,
        1usize..=7,
        1usize..=7,
        1usize..=3,
        1usize..=3,
        prop::array::uniform4(0usize..=2),
        prop::array::uniform2(1usize..=3),
        prop::array::uniform2(1usize..=2),
        prop::sample::select(vec![1u32, 7, 31, 37, 64]),
    )
        .prop_filter_map(
            "kernel must fit",
            |(n, g, cpg, h, w, kh, kw, pads, s, d, bits)| {
                let copg = 1 + (h + w) % 2; // output channels per group
                if h + pads[0] + pads[2] < d[0] * (kh - 1) + 1
                    || w + pads[1] + pads[3] < d[1] * (kw - 1) + 1
                {
                    return None;
                }
                Some((
                    vec![n, g * cpg, h, w],
                    [g * copg, cpg, kh, kw],
                    s,
                    pads,
                    d,
                    g,
                    bits,
                ))
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn conv_matches_naive_definition(
        (xs, ws, strides, pads, dil, groups, bits) in conv_case(),
        seed in any::<u64>(),
    ) {
        let enc = ring(bits);
        let (lo, hi) = enc.signed_range().unwrap();
        let mut lcg = sci_testkit::Lcg(seed);
        let mut rnd = || lcg.in_range(lo, hi) as i64;
        let xd: Vec<i64> = (0..xs.iter().product::<usize>()).map(|_| rnd()).collect();
        let wd: Vec<i64> = (0..ws.iter().product::<usize>()).map(|_| rnd()).collect();
        let mut p = P::new(enc);
        let x = p.input(0, &xs, &xd);
        let w = p.konst(0, &ws, &wd);
        let (_, got) = p.run(conv(x, w, None, strides, pads, dil, groups));
        let want: Vec<i64> = naive_conv(&xd, [xs[0], xs[1], xs[2], xs[3]], &wd, ws, strides, pads, dil, groups)
            .into_iter()
            .map(|v| enc.signed(enc.reduce(v)))
            .collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn pooling_matches_naive_definition(
        h in 1usize..=6, w in 1usize..=6,
        k in prop::array::uniform2(1usize..=3),
        s in prop::array::uniform2(1usize..=3),
        raw_pads in prop::array::uniform4(0usize..=2),
        ceil_mode in any::<bool>(), include in any::<bool>(),
        data in prop::collection::vec(-50i64..50, 36),
    ) {
        // Pads are smaller than the kernel (a type-checker rule).
        let pads = [0, 1, 2, 3].map(|i| raw_pads[i] % k[i % 2]);
        prop_assume!(h + pads[0] + pads[2] >= k[0] && w + pads[1] + pads[3] >= k[1]);
        let pl = pool(k, s, pads, ceil_mode);
        let xd = &data[..h * w];
        let mut p = P::new(ring(16));
        let x = p.input(0, &[1, 1, h, w], xd);
        let (shape, mx) = p.run(Op::MaxPool { x, pool: pl });
        let mut p = P::new(ring(16));
        let x = p.input(0, &[1, 1, h, w], xd);
        let (_, avg) = p.run(Op::AvgPool { x, pool: pl, count_include_pad: include });
        let (oh, ow) = (shape[2], shape[3]);
        for i in 0..oh {
            for j in 0..ow {
                let (y0, x0) = ((i * s[0]) as i64 - pads[0] as i64, (j * s[1]) as i64 - pads[1] as i64);
                let mut vals = vec![];
                let mut padded = 0i64;
                for a in 0..k[0] as i64 {
                    for b in 0..k[1] as i64 {
                        let (y, xx) = (y0 + a, x0 + b);
                        if y < (h + pads[2]) as i64 && xx < (w + pads[3]) as i64 {
                            padded += 1;
                        }
                        if y >= 0 && xx >= 0 && y < h as i64 && xx < w as i64 {
                            vals.push(xd[y as usize * w + xx as usize]);
                        }
                    }
                }
                prop_assert!(!vals.is_empty());
                prop_assert_eq!(mx[i * ow + j], *vals.iter().max().unwrap());
                let count = if include { padded } else { vals.len() as i64 };
                prop_assert_eq!(avg[i * ow + j], vals.iter().sum::<i64>().div_euclid(count));
            }
        }
        // The last window starts inside the input or its leading padding.
        let last = ((oh - 1) * s[0]) as i64 - pads[0] as i64;
        prop_assert!(last < h as i64);
    }
}

/// `eval_op` evaluates one op of a program on given tensors exactly as `run` does, and
/// checks what it is given instead of trusting it.
#[test]
fn eval_op_on_given_tensors() {
    let p = sci_ir::Program::parse(
        "params mill_radix=4 threads=1\n\
         %x: client i8.0[2,3] = input \"x\"\n\
         %k: public i8.0[3] = const [1, -2, 3]\n\
         %t: client i8.0[3,2] = transpose %x perm=[1,0]\n\
         %s: client i8.0[2,3] = add %x, %k\n\
         %q: client i8.0[2,3] = pad %x pads=[0,0,0,0] value=0\n\
         %out: client i8.0[3,2] = output %t \"out\"\n\
         %out2: client i8.0[2,3] = output %s \"out2\"\n\
         %out3: client i8.0[2,3] = output %q \"out3\"\n",
    )
    .unwrap();
    let id = |n: &str| p.lookup(n).unwrap();
    let xt = Tensor::signed(ring(8), vec![2, 3], &[1, 2, 3, 4, 5, 127]).unwrap();
    let want = interp::eval(
        &p,
        std::slice::from_ref(&xt),
        Options {
            keep_values: true,
            ..Options::default()
        },
    )
    .unwrap()
    .values
    .unwrap();
    let k = interp::eval_op(&p, &p.instr(id("k")).op, &|_| None).unwrap();
    for name in ["t", "s", "out2"] {
        let op = &p.instr(id(name)).op;
        let y = interp::eval_op(&p, op, &|v| {
            if v == id("x") {
                Some(&xt)
            } else if v == id("k") {
                Some(&k)
            } else {
                want.get(v.index())
            }
        })
        .unwrap();
        assert_eq!(y, want[id(name).index()], "{name}");
    }
    // A variant of an instruction (another pad value) is type-checked against the program.
    let pad = |value| Op::Pad {
        x: id("x"),
        pads: vec![0, 1, 0, 0],
        value,
    };
    let y = interp::eval_op(&p, &pad(Scalar::Int(-1)), &|_| Some(&xt)).unwrap();
    assert_eq!(y.shape(), &[2, 4]);
    assert_eq!(y.to_signed().unwrap(), vec![-1, 1, 2, 3, -1, 4, 5, 127]);
    assert!(matches!(
        interp::eval_op(&p, &pad(Scalar::Int(300)), &|_| Some(&xt)),
        Err(InterpError::Op(_))
    ));
    // Missing or mistyped operands, and inputs, are errors.
    let add = &p.instr(id("s")).op;
    assert!(matches!(
        interp::eval_op(&p, add, &|_| None),
        Err(InterpError::Operand { .. })
    ));
    let wrong = Tensor::signed(ring(16), vec![2, 3], &[0; 6]).unwrap();
    assert!(matches!(
        interp::eval_op(&p, add, &|_| Some(&wrong)),
        Err(InterpError::Operand { .. })
    ));
    let short = Tensor::signed(ring(8), vec![3], &[0; 3]).unwrap();
    assert!(matches!(
        interp::eval_op(&p, &Op::Relu { x: id("x") }, &|_| Some(&short)),
        Err(InterpError::Operand { .. })
    ));
    assert!(matches!(
        interp::eval_op(&p, &p.instr(id("x")).op, &|_| None),
        Err(InterpError::NotComputed)
    ));
}
