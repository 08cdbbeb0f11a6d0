//! The ring `R_q = Z_q[X]/(X^N + 1)` of a parameter set
//! ([`sci_ir::rlwe::PARAM_SETS`]) in RNS form, with `tfhe-ntt`'s negacyclic
//! NTT per prime, the encoding `⌊q·m/2^ℓ⌉`, modulus switching to `2^k`,
//! exact reconstruction of small values, and the samplers (uniform, ternary,
//! centered binomial) drawn from a [`Prg`].
//!
//! A polynomial is a `Vec<u64>` of `L·N` residues, prime-major (prime `i`'s
//! residues at `i·N ..`), in coefficient or NTT form as the caller tracks.
//! "NTT form" is `tfhe-ntt`'s forward transform (an evaluation map, so
//! pointwise products are products of polynomials); [`Ring::inv`] includes
//! the division by `N`.

use std::sync::OnceLock;

use sci_ir::rlwe::{ERROR_BOUND, PARAM_SETS, ParamSet};
use tfhe_ntt::prime64::Plan;

use sci_net::crypto::{Block, Prg};

/// The RNS ring of a parameter set.
pub struct Ring {
    /// The parameter set.
    pub set: &'static ParamSet,
    /// `N`.
    pub n: usize,
    plans: Vec<Plan>,
    /// `(q/q_i)^{-1} mod q_i`.
    qhat_inv: Vec<u64>,
    /// Garner: `(q_0···q_{i−1})^{-1} mod q_i`.
    garner_inv: Vec<u64>,
    /// `q_0···q_{i−1} mod 2^64`, and `q mod 2^64` last.
    prefix64: Vec<u64>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring").field("set", &self.set.id).finish()
    }
}

/// `a·b mod q`.
#[inline]
pub(crate) fn mulmod(a: u64, b: u64, q: u64) -> u64 {
    (u128::from(a) * u128::from(b) % u128::from(q)) as u64
}

/// `a^e mod q`.
fn powmod(mut a: u64, mut e: u64, q: u64) -> u64 {
    let mut r = 1 % q;
    while e > 0 {
        if e & 1 == 1 {
            r = mulmod(r, a, q);
        }
        a = mulmod(a, a, q);
        e >>= 1;
    }
    r
}

/// `a^{-1} mod q` (`q` prime).
fn invmod(a: u64, q: u64) -> u64 {
    powmod(a % q, q - 2, q)
}

/// A signed value mod `q`.
#[inline]
pub(crate) fn signed_mod(v: i64, q: u64) -> u64 {
    v.rem_euclid(q as i64) as u64
}

/// The ring of `set` (built once per process).
pub fn ring(set: &'static ParamSet) -> &'static Ring {
    static RINGS: [OnceLock<Ring>; PARAM_SETS.len()] = [const { OnceLock::new() }; 3];
    let i = PARAM_SETS
        .iter()
        .position(|s| s == set)
        .expect("sets come from PARAM_SETS");
    RINGS[i].get_or_init(|| Ring::new(&PARAM_SETS[i]))
}

impl Ring {
    fn new(set: &'static ParamSet) -> Ring {
        let q = set.moduli;
        let plans = q
            .iter()
            .map(|&qi| Plan::try_new(set.degree, qi).expect("the primes are NTT-friendly"))
            .collect();
        let qhat_inv = (0..q.len())
            .map(|i| {
                let hat = q
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .fold(1u64, |acc, (_, &qj)| mulmod(acc, qj % q[i], q[i]));
                invmod(hat, q[i])
            })
            .collect();
        let garner_inv = (0..q.len())
            .map(|i| {
                invmod(
                    q[..i]
                        .iter()
                        .fold(1u64, |a, &qj| mulmod(a, qj % q[i], q[i])),
                    q[i],
                )
            })
            .collect();
        let prefix64 = (0..=q.len())
            .map(|i| q[..i].iter().fold(1u64, |a, &qj| a.wrapping_mul(qj)))
            .collect();
        Ring {
            set,
            n: set.degree,
            plans,
            qhat_inv,
            garner_inv,
            prefix64,
        }
    }

    /// The primes.
    pub fn moduli(&self) -> &'static [u64] {
        self.set.moduli
    }

    /// `L·N`, the residues of a polynomial.
    pub fn poly_len(&self) -> usize {
        self.moduli().len() * self.n
    }

    /// The zero polynomial.
    pub fn zero(&self) -> Vec<u64> {
        vec![0; self.poly_len()]
    }

    /// Coefficient form to NTT form, in place.
    pub fn fwd(&self, p: &mut [u64]) {
        for (plan, chunk) in self.plans.iter().zip(p.chunks_mut(self.n)) {
            plan.fwd(chunk);
        }
    }

    /// NTT form to coefficient form, in place (divided by `N`).
    pub fn inv(&self, p: &mut [u64]) {
        for (plan, chunk) in self.plans.iter().zip(p.chunks_mut(self.n)) {
            plan.normalize(chunk);
            plan.inv(chunk);
        }
    }

    /// `acc += a ⊙ b` (NTT form).
    pub fn mul_acc(&self, acc: &mut [u64], a: &[u64], b: &[u64]) {
        for (i, plan) in self.plans.iter().enumerate() {
            let r = i * self.n..(i + 1) * self.n;
            plan.mul_accumulate(&mut acc[r.clone()], &a[r.clone()], &b[r]);
        }
    }

    /// The polynomial of signed coefficients `v` (length `N`).
    pub fn from_signed(&self, v: impl Fn(usize) -> i64) -> Vec<u64> {
        let mut p = self.zero();
        for (chunk, &q) in p.chunks_mut(self.n).zip(self.moduli()) {
            for (j, c) in chunk.iter_mut().enumerate() {
                *c = signed_mod(v(j), q);
            }
        }
        p
    }

    /// Uniform residues (valid in either form), from `prg`.
    pub fn uniform(&self, prg: &mut Prg) -> Vec<u64> {
        let mut blocks = vec![Block::ZERO; self.poly_len()];
        prg.fill_blocks(&mut blocks);
        blocks
            .iter()
            .enumerate()
            .map(|(k, b)| (b.0 % u128::from(self.moduli()[k / self.n])) as u64)
            .collect()
    }

    /// Coefficient `j` of `p` (coefficient form, residues mod `q`) switched to
    /// `2^k`: `⌊2^k·c/q⌉ mod 2^k` up to an error below 1 (the sum of the
    /// fractions is rounded in `f64`). With `z_i = c_i·(q/q_i)^{-1} mod q_i`,
    /// `2^k·c/q ≡ Σ z_i·2^k/q_i (mod 2^k)`.
    pub fn switch(&self, p: &[u64], j: usize, k: u32) -> u64 {
        let (mut int, mut frac) = (0u64, 0f64);
        for (i, &q) in self.moduli().iter().enumerate() {
            let z = mulmod(p[i * self.n + j], self.qhat_inv[i], q);
            let num = u128::from(z) << k;
            int = int.wrapping_add((num / u128::from(q)) as u64);
            frac += (num % u128::from(q)) as f64 / q as f64;
        }
        int.wrapping_add(frac.round() as u64) & sci_net::pack::mask(k)
    }

    /// Coefficient `j` of `p` (coefficient form), known to be an integer of
    /// absolute value below `q_0···q_{L−2}·q_{L−1}/4`, mod `2^64` (Garner's
    /// mixed radix; the top digit says the sign).
    pub fn small_mod64(&self, p: &[u64], j: usize) -> u64 {
        let q = self.moduli();
        let mut digits = [0u64; 8];
        for i in 0..q.len() {
            // x_i = (c_i − Σ_{l<i} d_l·P_l) · P_i^{-1} mod q_i.
            let mut acc = p[i * self.n + j];
            let mut prod = 1u64;
            for (l, &d) in digits[..i].iter().enumerate() {
                let term = mulmod(d % q[i], prod, q[i]);
                acc = (acc + q[i] - term) % q[i];
                prod = mulmod(prod, q[l] % q[i], q[i]);
            }
            digits[i] = mulmod(acc, self.garner_inv[i], q[i]);
        }
        let mut v = 0u64;
        for (i, &d) in digits[..q.len()].iter().enumerate() {
            v = v.wrapping_add(d.wrapping_mul(self.prefix64[i]));
        }
        let top = q.len() - 1;
        if digits[top] > q[top] / 2 {
            v = v.wrapping_sub(self.prefix64[q.len()]);
        }
        v
    }
}

/// The encoding `⌊q·m/2^ℓ⌉ mod q_i` of plaintext coefficients `m < 2^ℓ`:
/// with `q = q_h·2^ℓ + q_l`, it is `q_h·m + ⌊q_l·m/2^ℓ⌉`, and `q_h ≡ −q_l·2^{−ℓ}
/// (mod q_i)` since `q ≡ 0`.
pub struct Scale {
    ell: u32,
    ql: u64,
    qh: Vec<u64>,
}

impl Scale {
    /// The encoding of `Z_{2^ℓ}` in `ring`.
    pub fn new(ring: &Ring, ell: u32) -> Scale {
        let ql = ring.prefix64[ring.moduli().len()] & sci_net::pack::mask(ell);
        let qh = ring
            .moduli()
            .iter()
            .map(|&q| {
                let inv = invmod(powmod(2, u64::from(ell), q), q);
                mulmod((q - ql % q) % q, inv, q)
            })
            .collect();
        Scale { ell, ql, qh }
    }

    /// `⌊q·m/2^ℓ⌉ mod q_i`.
    #[inline]
    pub fn encode(&self, m: u64, i: usize, q: u64) -> u64 {
        let low = (u128::from(self.ql) * u128::from(m) + (1u128 << (self.ell - 1))) >> self.ell;
        ((u128::from(self.qh[i]) * u128::from(m) + low) % u128::from(q)) as u64
    }
}

/// `n` uniform ternary values (rejection sampling of bytes below 243).
pub fn ternary(prg: &mut Prg, n: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    let mut buf = [0u8; 64];
    while out.len() < n {
        prg.fill_bytes(&mut buf);
        for &b in &buf {
            if b < 243 && out.len() < n {
                out.push(i64::from(b % 3) - 1);
            }
        }
    }
    out
}

/// `n` centered binomial values of variance 10 (`Σ_{20} bits − Σ_{20}
/// bits`), in `[−20, 20]` ([`ERROR_BOUND`]).
pub fn cbd(prg: &mut Prg, n: usize) -> Vec<i64> {
    const _: () = assert!(ERROR_BOUND == 20);
    prg.u64s(n)
        .into_iter()
        .map(|w| {
            i64::from((w & 0xF_FFFF).count_ones()) - i64::from((w >> 20 & 0xF_FFFF).count_ones())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntt_products_and_reconstruction() {
        for set in &PARAM_SETS {
            let r = ring(set);
            let mut g = Prg::new(Block(7));
            // (1 + X) · (X^{N−1}) = X^{N−1} − 1 (negacyclic).
            let mut a = r.from_signed(|j| i64::from(j <= 1));
            let mut b = r.from_signed(|j| i64::from(j == r.n - 1));
            r.fwd(&mut a);
            r.fwd(&mut b);
            let mut c = r.zero();
            r.mul_acc(&mut c, &a, &b);
            r.inv(&mut c);
            for j in 0..r.n {
                let want: i64 = if j == 0 { -1 } else { i64::from(j == r.n - 1) };
                assert_eq!(r.small_mod64(&c, j), want as u64, "{j}");
            }
            // Reconstruction of large small values, switching of q/2^ℓ·m.
            let v = r.from_signed(|j| (j as i64 - 2048) << 50);
            for j in 0..r.n {
                assert_eq!(r.small_mod64(&v, j), ((j as i64 - 2048) << 50) as u64);
            }
            let s = Scale::new(r, 37);
            let m: Vec<u64> = g.u64s(r.n).iter().map(|x| x & ((1 << 37) - 1)).collect();
            let mut p = r.zero();
            for (i, &q) in r.moduli().iter().enumerate() {
                for (c, &mj) in p[i * r.n..].iter_mut().zip(&m) {
                    *c = s.encode(mj, i, q);
                }
            }
            let k = set.reply_bits(37);
            for (j, &mj) in m.iter().enumerate() {
                let sw = r.switch(&p, j, k);
                let want = mj << (k - 37);
                let d = sw.wrapping_sub(want) & sci_net::pack::mask(k);
                assert!(d <= 1 || d >= (1 << k) - 1, "{j}: {sw} vs {want}");
            }
        }
    }
}
