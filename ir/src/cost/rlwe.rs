//! The RLWE products over `Z_{2^ℓ}` shares (Cheetah's coefficient encoding, no
//! rotations; [`crate::rlwe`]), as sci-runtime's `cheetah` module runs them: the
//! bytes of a product each way and of the client's key set-up.
//!
//! # A product
//! One exchange on lane 0 (the server is role `P0`): the client sends its encrypted
//! share ([`Layout::bytes_up`]: a header, then per ciphertext a 16-byte seed and `c_0`
//! at the primes' widths), the server answers ([`Layout::bytes_down`]: a header, then
//! per output ciphertext `c_1` and the coefficients of `c_0` that carry outputs, at the
//! reply modulus' width). One round for each party. Independent products of one wave
//! run as one exchange ([`wave`]).
//!
//! # Key set-up
//! Once per session, from the client on lane 0, before the first product: the public
//! key of every parameter set the program's RLWE products use, in the sets' order
//! ([`ParamSet::key_bytes`] each). One flight; the server then answers the first
//! product, so the keys add no round of their own to a session whose next message on
//! lane 0 is the client's.

use super::{Role, Transcript};
use crate::rlwe::{Layout, PARAM_SETS, ParamSet, Product, RlweError};
use crate::{Backend, Program, ValueId};

/// The layout of instruction `v` of `program` if RLWE runs it
/// ([`Program::product_backend`] is RLWE), at the program's ring width; `None`
/// otherwise. An error for a product that RLWE cannot run (a kind
/// [`Product::of`] refuses, or no layout floods it).
pub fn layout(program: &Program, v: ValueId) -> Option<Result<Layout, RlweError>> {
    (program.product_backend(v) == Some(Backend::Rlwe)).then(|| runnable(program, v))
}

/// The layout RLWE would run product `v` of `program` with, whatever its recorded
/// backend: an error if RLWE cannot run it ([`Product::of`], [`Product::layout`]).
pub fn runnable(program: &Program, v: ValueId) -> Result<Layout, RlweError> {
    let bits = match program.encoding() {
        Some(crate::Encoding::Ring { bits }) => bits,
        e => {
            return Err(RlweError::Shape(format!(
                "the program's encoding {e:?} is not a ring"
            )));
        }
    };
    let name = program.name(v);
    Product::of(program, v)
        .ok_or_else(|| {
            RlweError::Shape(format!(
                "%{name} is no product RLWE runs (a conv2d, a 2-D matmul, or a mul by weights along one axis)"
            ))
        })?
        .layout(bits)
}

/// The exchange of one product of layout `l`.
pub fn layer(l: &Layout) -> Transcript {
    wave([l])
}

/// The exchange of independent products run together (the runtime's
/// `cheetah::run_all`, a wave of the schedule): every layer's ciphertexts in one
/// flight from the client, every reply in one from the server.
pub fn wave<'a>(layouts: impl IntoIterator<Item = &'a Layout>) -> Transcript {
    let (up, down) = layouts
        .into_iter()
        .fold((0, 0), |(u, d), l| (u + l.bytes_up(), d + l.bytes_down()));
    Transcript::new().send(Role::P1, up).send(Role::P0, down)
}

/// The parameter sets `layouts` use, in the order of [`PARAM_SETS`] (each once).
pub fn sets<'a>(layouts: impl IntoIterator<Item = &'a Layout>) -> Vec<&'static ParamSet> {
    let mut used = [false; PARAM_SETS.len()];
    for l in layouts {
        used[usize::from(l.set.id)] = true;
    }
    PARAM_SETS
        .iter()
        .zip(used)
        .filter_map(|(s, u)| u.then_some(s))
        .collect()
}

/// The parameter sets of `program`'s RLWE products ([`sets`] of their layouts; a
/// product without one is left out: the runtime refuses it).
pub fn program_sets(program: &Program) -> Vec<&'static ParamSet> {
    let layouts: Vec<Layout> = program
        .ids()
        .filter_map(|v| layout(program, v)?.ok())
        .collect();
    sets(&layouts)
}

/// Bytes of the key set-up of `sets`: their public keys.
pub fn key_setup_bytes(sets: &[&ParamSet]) -> u64 {
    sets.iter().map(|s| s.key_bytes()).sum()
}

/// The key set-up of `sets` (nothing when empty).
pub fn key_setup(sets: &[&ParamSet]) -> Transcript {
    Transcript::new().send(Role::P1, key_setup_bytes(sets))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rlwe::PARAM_SETS;

    #[test]
    fn keys_and_layers_price_the_layouts() {
        let l = crate::rlwe::matmul_layout(1, 512, 10, 37).unwrap();
        let t = layer(&l);
        assert_eq!(
            (t.sent(Role::P1), t.sent(Role::P0)),
            (l.bytes_up(), l.bytes_down())
        );
        assert_eq!((t.rounds(Role::P0), t.rounds(Role::P1)), (1, 1));
        let s = sets([&l, &l]);
        assert_eq!(s, vec![&PARAM_SETS[usize::from(l.set.id)]]);
        assert_eq!(key_setup(&s).sent(Role::P1), l.set.key_bytes());
        assert_eq!(key_setup(&[]).sent(Role::P1), 0);
        // Set 1 (N = 8192, three primes): a seed and 8192 coefficients of 163 bits.
        assert_eq!(PARAM_SETS[1].key_bytes(), 6 + 16 + 8192 * 163 / 8);
    }

    #[test]
    fn products_map_onto_convolutions() {
        let p = Program::parse(
            "params mill_radix=4 threads=1 linear=rlwe
%x: client i16.2[1,2,4,4] = input \"x\"
%w: server i16.2[3,2,3,3] = const withheld
%c: shared i16.4[1,3,2,2] = conv2d %x, %w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%k: server i16.2[3,1,1] = const withheld
%s: shared i16.6[1,3,2,2] = mul %c, %k
%f: server i16.2[1,3,2,2] = const withheld
%e: shared i16.8[1,3,2,2] = mul %f, %s linear=ot
%v: shared i16.8[3,4] = reshape %e shape=[3,4]
%a: server i16.2[4,5] = const withheld
%r: shared i16.10[3,5] = matmul %v, %a
%b: server i16.2[2,3] = const withheld
%l: shared i16.12[2,5] = matmul %b, %r
%out: client i16.12[2,5] = output %l \"y\"
",
        )
        .unwrap();
        let at = |n: &str| p.lookup(n).unwrap();
        let of = |n: &str| Product::of(&p, at(n));
        assert!(matches!(of("c"), Some(Product::Conv(_))));
        assert_eq!(
            of("s"),
            Some(Product::Scale {
                pre: 1,
                c: 3,
                post: 4
            })
        );
        assert_eq!(of("e"), None, "a full elementwise product");
        assert_eq!(
            of("r"),
            Some(Product::Right {
                rows: 3,
                inner: 4,
                outs: 5
            })
        );
        assert_eq!(
            of("l"),
            Some(Product::Left {
                outs: 2,
                inner: 3,
                cols: 5
            })
        );
        assert_eq!(of("x"), None);
        assert!(layout(&p, at("e")).is_none(), "recorded as OT");
        assert!(runnable(&p, at("e")).is_err());
        for n in ["c", "s", "r", "l"] {
            let l = layout(&p, at(n)).unwrap().unwrap();
            assert_eq!(l.set.id, 0, "ℓ = 16 fits the first set");
        }
        assert_eq!(program_sets(&p), vec![&PARAM_SETS[0]]);
        let g = of("s").unwrap().geom();
        assert_eq!((g.input, g.c_out, g.conv.groups), ([1, 3, 4, 1], 3, 3));
    }
}
