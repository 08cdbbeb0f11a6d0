//! Test support over the rings of [`Modulus`] (the `testing` feature, and this
//! crate's own tests): additive sharing and opening, and the reference
//! interpreter on one op over a modulus' encoding — the oracle every two-party
//! test of sci's protocols and backends compares with.

use crate::Modulus;
use sci_net::crypto::Prg;

/// Random additive shares of `x` (reduced) mod `md` (`Z_{2^ℓ}` for an ℓ),
/// as (role P0's, role P1's).
pub fn share(g: &mut Prg, x: &[u64], md: impl Into<Modulus>) -> (Vec<u64>, Vec<u64>) {
    let md = md.into();
    let r = md.random(g, x.len());
    let other = x.iter().zip(&r).map(|(&x, &r)| md.sub(x, r)).collect();
    (r, other)
}

/// `x_0 + x_1 mod md`; panics on an unreduced share.
pub fn open(x0: &[u64], x1: &[u64], md: impl Into<Modulus>) -> Vec<u64> {
    let md = md.into();
    assert_eq!(x0.len(), x1.len());
    x0.iter()
        .zip(x1)
        .map(|(&a, &b)| {
            assert!(
                u128::from(a) < md.value() && u128::from(b) < md.value(),
                "share not reduced mod {md}"
            );
            md.add(a, b)
        })
        .collect()
}

/// The encoding of values mod `md` (a ring or a prime field).
pub fn encoding(md: Modulus) -> sci_ir::Encoding {
    match md {
        Modulus::Pow2(ell) => sci_ir::Encoding::ring(ell),
        Modulus::Odd(n) => sci_ir::Encoding::field(n),
    }
    .expect("a ring width or a prime")
}

/// The reference interpreter on one op: `inputs` are client inputs (or
/// server constants, with `Owner::Server`) of the given shapes mod `md`
/// (`Z_{2^ℓ}` for an ℓ) at scale 0. Returns the output data and shape.
pub fn reference(
    md: impl Into<Modulus>,
    inputs: &[(&[u64], &[usize], sci_ir::Owner)],
    op: impl Fn(&[sci_ir::ValueId]) -> sci_ir::Op,
) -> (Vec<u64>, Vec<usize>) {
    use sci_ir::{Builder, Data, Owner, Tensor, Type, interp};
    let enc = encoding(md.into());
    let tensor = |x: &[u64], s: &[usize]| {
        Tensor::new(enc, s.to_vec(), Data::U64(x.to_vec())).expect("tensor")
    };
    let mut b = Builder::new();
    let mut feed = Vec::new();
    let ids: Vec<sci_ir::ValueId> = inputs
        .iter()
        .enumerate()
        .map(|(i, &(x, s, owner))| {
            let ty = Type::new(enc, 0, s.to_vec(), owner).expect("type");
            if owner == Owner::Server {
                b.constant(&format!("w{i}"), ty, tensor(x, s))
                    .expect("const")
            } else {
                feed.push(tensor(x, s));
                b.input(&format!("x{i}"), ty).expect("input")
            }
        })
        .collect();
    let r = b.push("r", op(&ids)).expect("op");
    b.output("y", r).expect("output");
    let p = b.finish().expect("program");
    let out = interp::run(&p, &feed).expect("interp");
    (
        out[0].as_u64().expect("ring").to_vec(),
        out[0].shape().to_vec(),
    )
}
