//! Average pooling on shares: window sums (a linear map, so each party sums its own
//! shares) and the divisor of every window, for the division protocol.
//!
//! The windows themselves are [`crate::proto::maxpool::Windows`] (the geometry of
//! [`sci_ir::Op::MaxPool`] / [`sci_ir::Op::AvgPool`]: padding skipped, row-major within a
//! window). The divisor of an AvgPool output is its window's length, or with
//! `count_include_pad` the number of window positions inside the padded input — the
//! reference interpreter's rule, which the tests compare against.

use crate::proto::maxpool::Windows;
use sci_ir::Pool2d;

/// The sum of each window of `x`, mod `2^ℓ` (`mask = 2^ℓ − 1`).
pub fn sums(windows: &Windows, x: &[u64], mask: u64) -> Vec<u64> {
    (0..windows.len())
        .map(|i| {
            windows
                .get(i)
                .iter()
                .fold(0u64, |a, &j| a.wrapping_add(x[j]))
                & mask
        })
        .collect()
}

/// Positions of the window of output `o` along one axis inside the padded input
/// `[−p_b, size + p_e)`.
fn padded_count(
    o: usize,
    size: usize,
    k: usize,
    stride: usize,
    pad_b: usize,
    pad_e: usize,
) -> usize {
    let start = (o * stride) as i64 - pad_b as i64;
    let end = (start + k as i64).min((size + pad_e) as i64);
    (end - start).max(0) as usize
}

/// The divisors of an AvgPool of an `[n, c, h, w]` input with output `[n, c, oh, ow]`
/// (in output order): the window length, or with `count_include_pad` the window's
/// positions inside the padded input.
pub fn avg_counts(
    windows: &Windows,
    x: &[usize],
    y: &[usize],
    pool: &Pool2d,
    count_include_pad: bool,
) -> Vec<u64> {
    if !count_include_pad {
        return (0..windows.len())
            .map(|i| windows.get(i).len().max(1) as u64)
            .collect();
    }
    let dim = |s: &[usize], i: usize| s.get(i).copied().unwrap_or(1);
    let (h, w, oh, ow) = (dim(x, 2), dim(x, 3), dim(y, 2), dim(y, 3));
    let planes = dim(y, 0) * dim(y, 1);
    let mut out = Vec::with_capacity(planes * oh * ow);
    for _ in 0..planes {
        for oy in 0..oh {
            let cy = padded_count(
                oy,
                h,
                pool.kernel[0],
                pool.strides[0],
                pool.pads[0],
                pool.pads[2],
            );
            for ox in 0..ow {
                let cx = padded_count(
                    ox,
                    w,
                    pool.kernel[1],
                    pool.strides[1],
                    pool.pads[1],
                    pool.pads[3],
                );
                out.push((cy * cx).max(1) as u64);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sci_ir::interp;
    use sci_ir::{Builder, Encoding, Op, Owner, Tensor, Type};

    /// Runs one pooling op with the interpreter.
    fn oracle(x: &Tensor, op: impl Fn(sci_ir::ValueId) -> Op) -> Tensor {
        let mut b = Builder::new();
        let ty = Type::new(x.encoding(), 0, x.shape().to_vec(), Owner::Client).unwrap();
        let v = b.input("x", ty).unwrap();
        let y = b.push("y", op(v)).unwrap();
        b.output("out", y).unwrap();
        interp::run(&b.finish().unwrap(), std::slice::from_ref(x))
            .unwrap()
            .pop()
            .unwrap()
    }

    #[test]
    fn sums_and_counts_match_the_interpreter() {
        let r = Encoding::ring(16).unwrap();
        let (h, w) = (7, 6);
        let data: Vec<i64> = (0..2 * h * w)
            .map(|i| ((i * 37) % 23) as i64 - 11)
            .collect();
        let x = Tensor::signed(r, vec![1, 2, h, w], &data).unwrap();
        let xs = x.as_u64().unwrap();
        let pools = [
            Pool2d {
                kernel: [2, 2],
                strides: [2, 2],
                pads: [0; 4],
                ceil_mode: false,
            },
            Pool2d {
                kernel: [3, 3],
                strides: [2, 2],
                pads: [1, 1, 1, 1],
                ceil_mode: false,
            },
            Pool2d {
                kernel: [3, 2],
                strides: [2, 1],
                pads: [1, 0, 2, 1],
                ceil_mode: true,
            },
            Pool2d {
                kernel: [2, 3],
                strides: [3, 2],
                pads: [0, 1, 0, 0],
                ceil_mode: true,
            },
        ];
        for pool in pools {
            let win = Windows::pool2d([1, 2, h, w], &pool).unwrap();
            let maxes: Vec<i64> = (0..win.len())
                .map(|i| win.get(i).iter().map(|&j| r.signed(xs[j])).max().unwrap())
                .collect();
            let want = oracle(&x, |v| Op::MaxPool { x: v, pool });
            assert_eq!(maxes, want.to_signed().unwrap(), "{pool:?}");
            for include in [false, true] {
                let want = oracle(&x, |v| Op::AvgPool {
                    x: v,
                    pool,
                    count_include_pad: include,
                });
                let counts = avg_counts(&win, x.shape(), want.shape(), &pool, include);
                let got: Vec<i64> = sums(&win, xs, r.mask())
                    .iter()
                    .zip(counts)
                    .map(|(&s, c)| r.signed(sci_ir::fixed::rdiv(s, c, r)))
                    .collect();
                assert_eq!(got, want.to_signed().unwrap(), "{pool:?} {include}");
            }
        }
    }
}
