//! The protocols' bytes and rounds on the silent engine against the cost model:
//! each protocol runs twice on [`OtKind::Silent`] with the small LPN set
//! [`TEST_FERRET`] (a warm-up, then the measured call), large enough that the
//! measured call straddles Ferret iterations; the model prices both calls'
//! transcripts from the COTs the set-up leaves ([`Sources::price`]), so the
//! measured call pays for the iterations it triggers exactly where the runtime
//! runs them. Whatever `SCI_TEST_OT` says: these runs are silent.

use super::maxpool::{Compare, Windows, argmax, maxpool};
use super::testutil::{Run, measured, prg, share};
use super::{Ctx, Modulus, ProtoError, Role};
use crate::ot::OtKind;
use crate::ot::ferret::TEST_FERRET;
use sci_ir::cost::ferret::Sources;
use sci_ir::cost::{self, Transcript};

/// Runs `f(ctx, warm)` on the silent engine ([`measured`]) and checks the
/// measured call's bytes per role and role `P1`'s rounds against `t` (its
/// transcript) priced after the warm-up's `warm`, both from the set-up.
fn pinned<R: Send>(
    m: u32,
    (warm, t): (Transcript, Transcript),
    what: &str,
    f: impl Fn(&mut Ctx<'_>, bool) -> Result<R, ProtoError> + Sync,
) -> Run<R> {
    let r = measured(m, |ctx, w| {
        ctx.ot.set_kind(OtKind::Silent);
        f(ctx, w)
    });
    let mut src = Sources::after_setup(TEST_FERRET);
    src.price(&warm, Role::P0);
    let want = src.price(&t, Role::P0);
    let got = [r.stats[0].bytes_sent, r.stats[1].bytes_sent];
    assert_eq!(
        got,
        [want.sent(Role::P0), want.sent(Role::P1)],
        "{what}: bytes"
    );
    assert_eq!(r.stats[1].rounds, want.rounds(Role::P1), "{what}: rounds");
    assert!(
        src.dirs.iter().any(|d| d.iterations > 0),
        "{what}: the calls straddle iterations"
    );
    r
}

#[test]
fn relu_trunc_and_division() {
    use super::{rdiv, relu, trunc};
    for (md, m, n) in [
        (Modulus::Pow2(32), 2u32, 3000usize),
        (Modulus::Pow2(37), 3, 1500),
        (Modulus::Odd(4_293_918_721), 2, 1500),
    ] {
        let x = md.random(&mut prg(3), n);
        let (a0, a1) = share(&mut prg(4), &x, md);
        let a = |ctx: &Ctx<'_>, warm: bool| {
            let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
            if warm { &a[..8] } else { &a[..] }
        };
        let cm = md.into();
        let what = format!("relu {md} m={m}");
        let model = |n| cost::select::relu(cm, m, n);
        pinned(m, (model(8), model(n)), &what, |ctx, w| {
            relu::relu(ctx, md, a(ctx, w))
        });
        for d in [vec![49u64], vec![1 << 12]] {
            let what = format!("rdiv {md} m={m} d={d:?}");
            let model = |n| cost::div::rdiv(cm, &d, m, n);
            pinned(m, (model(8), model(n)), &what, |ctx, w| {
                rdiv::rdiv(ctx, md, a(ctx, w), &d)
            });
            let what = format!("rdiv_nonneg {md} m={m} d={d:?}");
            let model = |n| cost::div::rdiv_nonneg(cm, &d, m, n);
            pinned(m, (model(8), model(n)), &what, |ctx, w| {
                let a: Vec<u64> = a(ctx, w).iter().map(|v| v >> 2).collect();
                rdiv::rdiv_nonneg(ctx, md, &a, &d)
            });
        }
        if let Modulus::Pow2(ell) = md {
            let model = |n| cost::div::trunc(ell, 12, m, n);
            pinned(m, (model(8), model(n)), "trunc", |ctx, w| {
                trunc::trunc(ctx, ell, 12, a(ctx, w))
            });
            let model = |n| cost::div::trunc_nonneg(ell, 12, m, n);
            pinned(m, (model(8), model(n)), "trunc_nonneg", |ctx, w| {
                let a: Vec<u64> = a(ctx, w).iter().map(|v| v >> 2).collect();
                trunc::trunc_nonneg(ctx, ell, 12, &a)
            });
        }
    }
}

#[test]
fn maxpool_and_argmax() {
    let md = Modulus::Pow2(32);
    let shape = [1usize, 3, 30, 30];
    let pool = sci_ir::Pool2d {
        kernel: [3, 3],
        strides: [2, 2],
        pads: [1, 1, 1, 1],
        ceil_mode: false,
    };
    let w = Windows::pool2d(shape, &pool).expect("windows");
    let few = Windows::axis(&[2, 4], 1).expect("windows");
    let x = md.random(&mut prg(7), w.input_len());
    let (x0, x1) = share(&mut prg(8), &x, md);
    for (cmp, index) in [
        (Compare::Exact, false),
        (Compare::Narrow, false),
        (Compare::Exact, true),
    ] {
        let exact = cmp == Compare::Exact;
        let model =
            |w: &Windows| cost::pool::maxpool(md.into(), 2, w.input_len(), &w.lens(), exact, index);
        let what = format!("{cmp:?} index={index}");
        pinned(2, (model(&few), model(&w)), &what, |ctx, warm| {
            let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
            let (x, w) = if warm { (&x[..8], &few) } else { (&x[..], &w) };
            if index {
                argmax(ctx, md, x, w, cmp)
            } else {
                maxpool(ctx, md, x, w, cmp)
            }
        });
    }
}

/// A matrix product `X·W` of `dims` (rows, columns, outputs) at `ell` bits after a
/// warm-up product of its first row, pinned ([`pinned`]); `seed` draws the operands.
fn pinned_matmul(ell: u32, dims: (usize, usize, usize), seed: u128) {
    let (rows, cols, outs) = dims;
    let x = Modulus::Pow2(ell).random(&mut prg(seed), rows * cols);
    let wt = Modulus::Pow2(ell).random(&mut prg(seed + 1), cols * outs);
    let (x0, x1) = share(&mut prg(seed + 2), &x, ell);
    let model = |d| cost::linear::matmul(ell, d, true);
    let warm = (1, cols, outs);
    pinned(2, (model(warm), model(dims)), "matmul", |ctx, w| {
        let (x, weights) = match ctx.role {
            Role::P0 => (&x0, Some(&wt[..])),
            Role::P1 => (&x1, None),
        };
        let (d, x) = if w {
            (warm, &x[..cols])
        } else {
            (dims, &x[..])
        };
        super::matmul::matmul(ctx, ell, d, x, weights)
    });
}

#[test]
fn streamed_products() {
    // Two OT batches (64·64·32·40 words > BATCH_WORDS), 131,072 COTs: over
    // two iterations.
    pinned_matmul(32, (64, 64, 40), 9);
}

#[test]
fn a_streamed_product_that_starts_an_iteration() {
    // The warm-up (1 row of 128 at ℓ = 27: 3,456 COTs) takes exactly the COTs the
    // set-up leaves, announcing nothing; the measured product (two streamed batches)
    // then starts by running the next iteration, whose message the receiver needs
    // before its first request.
    let (ell, cols) = (27, 128);
    assert_eq!(cols * ell as usize, TEST_FERRET.first_available());
    let mut src = Sources::after_setup(TEST_FERRET);
    src.price(&cost::linear::matmul(ell, (1, cols, 40), true), Role::P0);
    assert!(
        src.dirs
            .iter()
            .any(|d| d.available == 0 && d.iterations == 0),
        "{src:?}"
    );
    pinned_matmul(ell, (64, cols, 40), 12);
}

#[test]
fn secret_products() {
    // An elementwise product of 3000 elements at ℓ = 32 (96,000 COTs each way) and
    // a matrix product at ℓ = 37: each way one call, straddling iterations.
    for (ell, dims) in [(32u32, (3000usize, 1usize, 1usize)), (37, (40, 30, 8))] {
        let (rows, cols, outs) = dims;
        let x = Modulus::Pow2(ell).random(&mut prg(21), rows * cols);
        let elementwise = cols == 1 && outs == 1;
        let ylen = if elementwise { rows } else { cols * outs };
        let y = Modulus::Pow2(ell).random(&mut prg(22), ylen);
        let (x0, x1) = share(&mut prg(23), &x, ell);
        let (y0, y1) = share(&mut prg(24), &y, ell);
        let warm = (1, cols, outs);
        let model = |d| cost::secmul::matmul(ell, d, true);
        pinned(2, (model(warm), model(dims)), "secmul", |ctx, w| {
            let (x, y) = match ctx.role {
                Role::P0 => (&x0, &y0),
                Role::P1 => (&x1, &y1),
            };
            let d = if w { warm } else { dims };
            let x = &x[..d.0 * d.1];
            if elementwise {
                super::secmul::mul(ctx, ell, x, &y[..d.0])
            } else {
                super::secmul::matmul(ctx, ell, d, x, y)
            }
        });
    }
}
