//! The server's rotations: hybrid key switching with the client's Galois keys
//! (special prime `P = q_4`), with the decomposition of a ciphertext hoisted out
//! of its rotations (Halevi–Shoup 2018, "Faster homomorphic linear
//! transformations in HElib", §5: one decomposition for many rotations).
//!
//! A rotation `σ_g` of `(c_0, c_1)` at `Q = q_0···q_3` needs `c_1`'s digits
//! `d_i = [c_1]_{q_i}` (`i < 4`) at the five primes of `PQ`, and the key pairs
//! `K_{g,i} = (b_i, a_i)` with `b_i + a_i·s = P·(Q/q_i)·[(Q/q_i)^{-1}]_{q_i}·
//! σ_g(s) + e_i`. The server keeps `σ_g^{-1}(K_{g,i})` (a permutation of the
//! NTT-form values, once per session), so that
//!
//! `σ_g(c) = σ_g((c_0, 0) + ⌊Σ_i d_i·σ_g^{-1}(K_{g,i}) / P⌉)`:
//!
//! the digits do not depend on `g`, and the automorphism acts once, on the
//! result. [`GaloisKeys::hoist`] computes the digits (4 inverse NTTs and 12
//! NTTs: the digit `i` at `q_i` is `c_1`'s own NTT row); each
//! [`GaloisKeys::switch`] then costs the 40 products, the division by `P` (two
//! inverse NTTs mod `P`, eight NTTs) and the permutation. `fhe`'s rotation
//! redoes the digits for every key and converts the whole result (42 NTTs).
//!
//! The noise is that of `fhe`'s key switching ([`super::noise::key_switch`]):
//! the digits lie in `[0, q_i)`, the automorphism permutes the noise, and the
//! division rounds to the nearest integer.

use std::collections::HashMap;
use std::sync::Arc;

use fhe::bfv::{BfvParameters, Ciphertext};
use fhe_math::ntt::NttOperator;
use fhe_math::rq::traits::TryConvertFrom;
use fhe_math::rq::{Context, Poly, Representation, SubstitutionExponent};
use fhe_math::zq::Modulus;

use super::params::{CT_LEVEL, DEGREE, MODULI};
use super::{HeError, check};

/// Ciphertext primes (and digits).
const DIGITS: usize = MODULI.len() - CT_LEVEL;

/// The key of one Galois element.
struct Key {
    /// `σ_g` on an NTT-form row: `out[m] = in[perm[m]]`.
    perm: Box<[u32]>,
    /// `σ_g^{-1}(b_i)` and `σ_g^{-1}(a_i)`, `i < 4`: `[i][prime][coefficient]`
    /// flattened, NTT form at the five primes.
    b: Box<[u64]>,
    a: Box<[u64]>,
}

/// The client's Galois keys in the server's form ([module documentation](self)).
pub struct GaloisKeys {
    keys: HashMap<usize, Key>,
    /// The five primes and their NTTs.
    q: Vec<Modulus>,
    ntt: Vec<NttOperator>,
    /// `P^{-1} mod q_i`, `i < 4`.
    p_inv: Vec<u64>,
    /// The ciphertexts' context and parameters.
    ctx: Arc<Context>,
    bfv: Arc<BfvParameters>,
}

impl std::fmt::Debug for GaloisKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GaloisKeys({} elements)", self.keys.len())
    }
}

/// A ciphertext's digits, ready for any number of key switches.
pub struct Hoisted<'c> {
    /// The ciphertext.
    ct: &'c Ciphertext,
    /// `d_i` at the five primes, NTT form: `[i][prime][coefficient]` flattened.
    digits: Vec<u64>,
}

impl Hoisted<'_> {
    /// The ciphertext.
    pub fn ciphertext(&self) -> &Ciphertext {
        self.ct
    }
}

impl GaloisKeys {
    /// Builds the server's form of the keys from `(element, b_i, a_i)` triples
    /// (polynomials at level 0 in NTT form, four of each).
    pub(crate) fn new(
        bfv: &Arc<BfvParameters>,
        keys: Vec<(usize, Vec<Poly>, Vec<Poly>)>,
    ) -> Result<GaloisKeys, HeError> {
        let ctx = bfv.context_at_level(CT_LEVEL)?.clone();
        let q = MODULI
            .iter()
            .map(|&p| Modulus::new(p))
            .collect::<Result<Vec<_>, _>>()?;
        let ntt = q
            .iter()
            .map(|m| {
                NttOperator::new(m, DEGREE)
                    .ok_or_else(|| HeError::InvalidArgument("no NTT for a ciphertext prime".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let special = MODULI[DIGITS];
        let p_inv = q[..DIGITS]
            .iter()
            .map(|m| {
                m.inv(m.reduce(special))
                    .ok_or_else(|| HeError::InvalidArgument("P not invertible".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // The permutation of σ_g in NTT form, read off `fhe`'s substitution of
        // the row 0, 1, …, N − 1.
        let index: Vec<u64> = (0..DEGREE as u64).cycle().take(DIGITS * DEGREE).collect();
        let index = Poly::try_convert_from(index, &ctx, false, Representation::Ntt)?;
        let mut map = HashMap::new();
        for (g, b, a) in keys {
            check(b.len() == DIGITS && a.len() == DIGITS, || {
                format!("the key of Galois element {g} has the wrong number of polynomials")
            })?;
            let sub = SubstitutionExponent::new(&ctx, g)?;
            let perm: Box<[u32]> = index
                .substitute(&sub)?
                .coefficients()
                .row(0)
                .iter()
                .map(|&v| v as u32)
                .collect();
            let unpermute = |polys: &[Poly]| -> Result<Box<[u64]>, HeError> {
                let mut out = vec![0u64; DIGITS * MODULI.len() * DEGREE];
                for (i, p) in polys.iter().enumerate() {
                    let c = p.coefficients();
                    check(c.nrows() == MODULI.len() && c.ncols() == DEGREE, || {
                        "a key polynomial at the wrong level".into()
                    })?;
                    for (r, row) in c.outer_iter().enumerate() {
                        let dst = &mut out[(i * MODULI.len() + r) * DEGREE..][..DEGREE];
                        // σ^{-1}: σ(out) = row, i.e. out[perm[m]] = row[m].
                        for (m, &v) in row.iter().enumerate() {
                            dst[perm[m] as usize] = v;
                        }
                    }
                }
                Ok(out.into())
            };
            let key = Key {
                b: unpermute(&b)?,
                a: unpermute(&a)?,
                perm,
            };
            map.insert(g, key);
        }
        Ok(GaloisKeys {
            keys: map,
            q,
            ntt,
            p_inv,
            ctx,
            bfv: bfv.clone(),
        })
    }

    /// Whether there is a key for the Galois element `g`.
    pub(crate) fn supports(&self, g: usize) -> bool {
        self.keys.contains_key(&g)
    }

    /// The digits of `ct` (a ciphertext of two polynomials at level
    /// [`CT_LEVEL`], NTT form): 4 inverse NTTs and 12 NTTs.
    pub fn hoist<'c>(&self, ct: &'c Ciphertext) -> Result<Hoisted<'c>, HeError> {
        check(
            ct.len() == 2
                && ct.iter().all(|c| {
                    c.ctx().moduli() == self.ctx.moduli()
                        && *c.representation() == Representation::Ntt
                }),
            || "a rotation of a ciphertext at another level or form".into(),
        )?;
        let c1 = ct[1].coefficients();
        let primes = MODULI.len();
        let mut digits = vec![0u64; DIGITS * primes * DEGREE];
        for (i, row) in c1.outer_iter().enumerate() {
            let row = row.as_slice().ok_or_else(|| {
                HeError::InvalidArgument("a polynomial not in row-major layout".into())
            })?;
            let mut d = row.to_vec();
            self.ntt[i].backward(&mut d);
            for r in 0..primes {
                let dst = &mut digits[(i * primes + r) * DEGREE..][..DEGREE];
                if r == i {
                    dst.copy_from_slice(row);
                } else {
                    dst.copy_from_slice(&d);
                    self.q[r].reduce_vec(dst);
                    self.ntt[r].forward(dst);
                }
            }
        }
        Ok(Hoisted { ct, digits })
    }

    /// `σ_g` of the hoisted ciphertext: the key switch of the [module
    /// documentation](self). Noise: that of the ciphertext plus
    /// [`super::noise::key_switch`].
    pub fn switch(&self, h: &Hoisted<'_>, g: usize) -> Result<Ciphertext, HeError> {
        let key = self
            .keys
            .get(&g)
            .ok_or_else(|| HeError::InvalidArgument(format!("no Galois key for element {g}")))?;
        let primes = MODULI.len();
        let special = &self.q[DIGITS];
        let half = **special / 2;
        let mut out = Vec::with_capacity(2);
        for (comp, k) in [&key.b, &key.a].into_iter().enumerate() {
            // Σ_i d_i·σ^{-1}(K_i) at the five primes (128-bit accumulation:
            // four products below 2^88 each).
            let mut x = vec![0u64; primes * DEGREE];
            for (r, xr) in x.chunks_exact_mut(DEGREE).enumerate() {
                let mut acc = vec![0u128; DEGREE];
                for i in 0..DIGITS {
                    let off = (i * primes + r) * DEGREE;
                    let (d, kk) = (&h.digits[off..off + DEGREE], &k[off..off + DEGREE]);
                    for ((a, &u), &v) in acc.iter_mut().zip(d).zip(kk) {
                        *a += u128::from(u) * u128::from(v);
                    }
                }
                for (o, &a) in xr.iter_mut().zip(acc.iter()) {
                    *o = self.q[r].reduce_u128(a);
                }
            }
            // ⌊x/P⌉ at q_0…q_3: (x + P/2 − [x + P/2]_P)·P^{-1}, the correction
            // (P/2 − [x + P/2]_P) computed in the power basis and NTT'd.
            let (low, xp) = x.split_at_mut(DIGITS * DEGREE);
            self.ntt[DIGITS].backward(xp);
            let mut rows = vec![0u64; DIGITS * DEGREE];
            let c0 = h.ct[0].coefficients();
            for (i, row) in rows.chunks_exact_mut(DEGREE).enumerate() {
                let qi = &self.q[i];
                let half_i = qi.reduce(half);
                for (c, &v) in row.iter_mut().zip(xp.iter()) {
                    let v = special.add(v, half);
                    *c = qi.sub(half_i, qi.reduce(v));
                }
                self.ntt[i].forward(row);
                let xi = &low[i * DEGREE..][..DEGREE];
                let pinv = self.p_inv[i];
                for (c, &v) in row.iter_mut().zip(xi) {
                    *c = qi.mul(qi.add(*c, v), pinv);
                }
                if comp == 0 {
                    let c0 = c0.row(i);
                    for (c, &v) in row.iter_mut().zip(c0.iter()) {
                        *c = qi.add(*c, v);
                    }
                }
                // σ_g.
                let pre = row.to_vec();
                for (c, &p) in row.iter_mut().zip(key.perm.iter()) {
                    *c = pre[p as usize];
                }
            }
            out.push(Poly::try_convert_from(
                rows,
                &self.ctx,
                false,
                Representation::Ntt,
            )?);
        }
        Ok(Ciphertext::new(out, &self.bfv)?)
    }
}
