//! The two ReLU/MaxPool orders that `sci-passes`' `swap_relu_maxpool` chooses between
//! per pool with the cost model (ReLU first, then a MaxPool over non-negative values
//! with the narrow comparison; or an exact MaxPool, then ReLU on the smaller output),
//! with the protocols' cost functions: ReLU first sends less and takes fewer rounds on
//! the pools that networks use; a large non-overlapping pool is about even. `cargo test --release -p sci-runtime --test relu_maxpool_order --
//! --nocapture` prints the figures quoted in the pass's documentation.

use sci_ir::Pool2d;
use sci_runtime::proto::maxpool::{self, Compare, Windows};
use sci_runtime::proto::relu;

/// Bits (both directions) and rounds of (ReLU then narrow MaxPool, exact MaxPool then
/// ReLU) over an input of `shape`.
fn orders(shape: [usize; 4], pool: &Pool2d, ell: u32, m: u32) -> ((u64, u64), (u64, u64)) {
    let w = Windows::pool2d(shape, pool).expect("pooling geometry");
    let n_in: usize = shape.iter().product();
    let relu_first = (
        relu::cost_bits(ell, m, n_in)
            + maxpool::cost_bits(ell, m, n_in, &w, Compare::Narrow, false),
        relu::rounds(ell, m) + maxpool::rounds(ell, m, &w, Compare::Narrow),
    );
    let pool_first = (
        maxpool::cost_bits(ell, m, n_in, &w, Compare::Exact, false)
            + relu::cost_bits(ell, m, w.len()),
        maxpool::rounds(ell, m, &w, Compare::Exact) + relu::rounds(ell, m),
    );
    (relu_first, pool_first)
}

fn pool(k: usize, s: usize, ceil_mode: bool) -> Pool2d {
    Pool2d {
        kernel: [k, k],
        strides: [s, s],
        pads: [0; 4],
        ceil_mode,
    }
}

#[test]
fn relu_before_maxpool_is_cheaper() {
    let mib = |b: u64| b as f64 / 8.0 / f64::from(1 << 20);
    for (name, shape, pl) in [
        (
            "SqueezeNet's first, 3×3/2",
            [1usize, 64, 111, 111],
            pool(3, 2, true),
        ),
        ("2×2/2", [1, 64, 56, 56], pool(2, 2, false)),
        ("3×3/1", [1, 64, 56, 56], pool(3, 1, false)),
        ("4×4/4", [1, 64, 56, 56], pool(4, 4, false)),
    ] {
        for (ell, m) in [(32u32, 4u32), (41, 4), (32, 7)] {
            let (a, b) = orders(shape, &pl, ell, m);
            eprintln!(
                "{name} over {shape:?}, ℓ = {ell}, m = {m}: ReLU first {:.1} MiB, {} rounds; \
                 MaxPool first {:.1} MiB, {} rounds",
                mib(a.0),
                a.1,
                mib(b.0),
                b.1
            );
            assert!(a.0 < b.0 && a.1 < b.1, "{name}, ℓ = {ell}, m = {m}");
        }
    }
    // Large non-overlapping pools are about even in bytes (ReLU first still has fewer
    // rounds).
    let (a, b) = orders([1, 64, 55, 55], &pool(5, 5, false), 32, 4);
    eprintln!(
        "5×5/5: ReLU first {:.1} MiB, MaxPool first {:.1} MiB",
        mib(a.0),
        mib(b.0)
    );
    assert!(a.0.abs_diff(b.0) * 50 < b.0 && a.1 < b.1);
}
