//! Exactness of the fixed-point stage, by property testing: random small programs
//! (products followed by truncations, then chains of ReLU, MaxPool, residual adds and
//! subs in both orders, data movement, with values that sometimes have extra uses) on
//! random inputs give bit-identical interpreter outputs before and after
//! [`place_truncs`] and after the whole fixed-point stage (truncation placement,
//! constant folding, non-negativity marking, DCE). `mark_nonneg` is checked too: the
//! interpreter fails on a `trunc nonneg` that meets a negative value.

use proptest::prelude::*;
use sci_ir::{Builder, Encoding, Op, Owner, Pool2d, Program, Tensor, Type, ValueId, interp};
use sci_passes::{Pipeline, place_truncs};
use sci_testkit::Lcg;

/// One step of a random program.
#[derive(Clone, Copy, Debug)]
enum Step {
    Relu,
    MaxPool,
    AddInput,
    AddInputFirst,
    SubInput,
    InputMinus,
    AddPrevious,
    Conv,
    Reshape,
    MulConst,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::Relu),
        Just(Step::MaxPool),
        Just(Step::AddInput),
        Just(Step::AddInputFirst),
        Just(Step::SubInput),
        Just(Step::InputMinus),
        Just(Step::AddPrevious),
        Just(Step::Conv),
        Just(Step::Reshape),
        Just(Step::MulConst),
    ]
}

/// Builds the program: `x → conv → trunc → steps…`, every value `[1, c, h, w]`, ring
/// `Z_{2^bits}` at scale `s`; `extra[i]` also outputs the value after step `i`.
fn build(
    s: u32,
    c: usize,
    h: usize,
    w: usize,
    steps: &[Step],
    extra: &[bool],
    seed: u64,
) -> Program {
    let enc = Encoding::ring(64).unwrap();
    let mut rng = Lcg(seed);
    let mut b = Builder::new();
    let shape = vec![1, c, h, w];
    let x = b
        .input(
            "x",
            Type::new(enc, s, shape.clone(), Owner::Client).unwrap(),
        )
        .unwrap();
    let n = std::cell::Cell::new(0);
    let fresh = |base: &str| {
        n.set(n.get() + 1);
        format!("{base}{}", n.get())
    };
    // A product at scale 2s followed by trunc(s): a 1×1 or 3×3 (pad 1) conv.
    let conv = |b: &mut Builder, rng: &mut Lcg, x: ValueId, k: usize| -> ValueId {
        let wv: Vec<i64> = (0..c * c * k * k).map(|_| rng.int(1 << s)).collect();
        let wt = Type::new(enc, s, vec![c, c, k, k], Owner::Server).unwrap();
        let wn = fresh("w");
        let wid = b
            .constant(&wn, wt, Tensor::signed(enc, vec![c, c, k, k], &wv).unwrap())
            .unwrap();
        let bv: Vec<i64> = (0..c).map(|_| rng.int(1 << (2 * s))).collect();
        let bt = Type::new(enc, 2 * s, vec![c], Owner::Server).unwrap();
        let bn = fresh("b");
        let bid = b
            .constant(&bn, bt, Tensor::signed(enc, vec![c], &bv).unwrap())
            .unwrap();
        let p = k / 2;
        let cn = fresh("conv");
        let y = b
            .push(
                &cn,
                Op::Conv2d {
                    x,
                    w: wid,
                    bias: Some(bid),
                    conv: sci_ir::Conv2d {
                        strides: [1, 1],
                        pads: [p, p, p, p],
                        dilations: [1, 1],
                        groups: 1,
                    },
                },
            )
            .unwrap();
        b.push(
            &format!("{cn}.trunc"),
            Op::Trunc {
                x: y,
                s,
                nonneg: false,
            },
        )
        .unwrap()
    };
    let mut cur = conv(&mut b, &mut rng, x, 1);
    let mut prev = x;
    for (i, st) in steps.iter().enumerate() {
        let before = cur;
        cur = match st {
            Step::Relu => b.push(&fresh("relu"), Op::Relu { x: cur }).unwrap(),
            // Shape-preserving max pool: 2×2 window, stride 1, padding at the end.
            Step::MaxPool => b
                .push(
                    &fresh("pool"),
                    Op::MaxPool {
                        x: cur,
                        pool: Pool2d {
                            kernel: [2, 2],
                            strides: [1, 1],
                            pads: [0, 0, 1, 1],
                            ceil_mode: false,
                        },
                    },
                )
                .unwrap(),
            Step::AddInput => b.push(&fresh("add"), Op::Add { a: cur, b: x }).unwrap(),
            Step::AddInputFirst => b.push(&fresh("add"), Op::Add { a: x, b: cur }).unwrap(),
            Step::SubInput => b.push(&fresh("sub"), Op::Sub { a: cur, b: x }).unwrap(),
            Step::InputMinus => b.push(&fresh("sub"), Op::Sub { a: x, b: cur }).unwrap(),
            Step::AddPrevious => b.push(&fresh("add"), Op::Add { a: cur, b: prev }).unwrap(),
            Step::Conv => conv(&mut b, &mut rng, cur, 3),
            Step::Reshape => {
                let r = b
                    .push(
                        &fresh("reshape"),
                        Op::Reshape {
                            x: cur,
                            shape: vec![c, h * w],
                        },
                    )
                    .unwrap();
                b.push(
                    &fresh("reshape"),
                    Op::Reshape {
                        x: r,
                        shape: shape.clone(),
                    },
                )
                .unwrap()
            }
            Step::MulConst => {
                let kv: Vec<i64> = (0..c).map(|_| rng.int(1 << s)).collect();
                let kt = Type::new(enc, s, vec![c, 1, 1], Owner::Server).unwrap();
                let kn = fresh("k");
                let k = b
                    .constant(&kn, kt, Tensor::signed(enc, vec![c, 1, 1], &kv).unwrap())
                    .unwrap();
                let m = b.push(&fresh("mul"), Op::Mul { a: cur, b: k }).unwrap();
                b.push(
                    &fresh("mul.trunc"),
                    Op::Trunc {
                        x: m,
                        s,
                        nonneg: false,
                    },
                )
                .unwrap()
            }
        };
        prev = before;
        if extra.get(i).copied().unwrap_or(false) {
            b.output(&fresh("extra"), cur).unwrap();
        }
    }
    b.output("out", cur).unwrap();
    b.finish().unwrap()
}

fn inputs(p: &Program, s: u32, seed: u64) -> Vec<Tensor> {
    let mut rng = Lcg(seed);
    let ty = p.ty(p.inputs()[0]);
    let v: Vec<i64> = (0..ty.numel()).map(|_| rng.int(1 << (s + 2))).collect();
    vec![Tensor::signed(ty.encoding(), ty.shape().to_vec(), &v).unwrap()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fixed_stage_is_bit_exact(
        s in 1u32..=10,
        c in 1usize..=3,
        h in 1usize..=4,
        w in 1usize..=4,
        steps in prop::collection::vec(step(), 1..8),
        extra in prop::collection::vec(any::<bool>(), 0..8),
        seed in any::<u64>(),
    ) {
        let p = build(s, c, h, w, &steps, &extra, seed);
        let moved = place_truncs::run(&p).unwrap();
        let full = Pipeline::fixed_stage(None).run(&p).unwrap();
        for k in 0..4 {
            let x = inputs(&p, s, seed ^ k);
            let y = interp::run(&p, &x).unwrap();
            prop_assert_eq!(&interp::run(&moved, &x).unwrap(), &y);
            // The full stage also checks every `nonneg` flag it set.
            prop_assert_eq!(&interp::run(&full, &x).unwrap(), &y);
        }
    }
}

#[test]
fn truncations_do_move() {
    // The property above would hold trivially if nothing moved: check that typical
    // chains are rewritten, and that nonneg flags appear.
    let p = build(
        6,
        2,
        4,
        4,
        &[
            Step::MaxPool,
            Step::Relu,
            Step::Conv,
            Step::AddInput,
            Step::Relu,
        ],
        &[],
        7,
    );
    let full = Pipeline::fixed_stage(None).run(&p).unwrap();
    let truncs: Vec<(String, bool, String)> = full
        .ids()
        .filter_map(|v| match &full.instr(v).op {
            Op::Trunc { x, nonneg, .. } => {
                Some((full.name(v).to_string(), *nonneg, full.name(*x).to_string()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        truncs,
        vec![
            ("conv3.trunc".to_string(), true, "relu5".to_string()),
            ("conv8.trunc".to_string(), true, "relu10".to_string()),
        ]
    );
}
