//! `F_AND` on boolean shares from Beaver bit triples (CrypTFlow2 Appendix A.1,
//! A.2).
//!
//! - **Regular triples** `(a, b, c = a ∧ b)`, two per `(16 1)-OT_2` (App. A.1,
//!   after Dessouky et al., NDSS 2017): the receiver (role `P1`) chooses with
//!   its four random bits `a₁ ‖ b₁ ‖ a₁' ‖ b₁'`; message `i` of the sender
//!   (role `P0`, random `a₀, b₀, c₀, a₀', b₀', c₀'`) is
//!   `(c₀ ⊕ (i₀ ⊕ a₀)(i₁ ⊕ b₀)) ‖ (c₀' ⊕ (i₂ ⊕ a₀')(i₃ ⊕ b₀'))`, so the receiver
//!   learns `c₁ = c₀ ⊕ a·b` (and `c₁'`). Cost 2λ + 32 bits per two triples:
//!   λ + 16 per triple.
//! - **Correlated triples** `(a, b, c)`, `(a', b, c')` sharing `b`, one pair per
//!   `(8 1)-OT_2` (App. A.2): the receiver's choice is `a₁ ‖ b₁ ‖ a₁'`. Cost
//!   2λ + 16 bits per pair: λ + 8 per triple.
//! - **Evaluation** of `z = x ∧ y` with a regular triple: both parties open
//!   `d = x ⊕ a`, `e = y ⊕ b` and set `z = c ⊕ d·b ⊕ e·a ⊕ [P0] d·e`: 4 bits per
//!   AND. Two ANDs `x ∧ y`, `x' ∧ y` with a common input use a correlated pair
//!   and open `x ⊕ a`, `x' ⊕ a'`, `y ⊕ b`: 6 bits per pair. A batch of ANDs is
//!   one exchange (one round).
//!
//! - **Silent triples** (when the OT engine is [`OtKind::Silent`], whose
//!   random OTs with random choices cost nothing but the engine's share):
//!   each party is the sender of one random OT `(x_0, x_1)` of 2-bit
//!   messages per triple (or pair) and the receiver, with random choice `u`,
//!   of another, as in the ROT-to-Beaver-triple conversion of Asharov,
//!   Lindell, Schneider and Zohner (CCS 2013, §5.1): `x_0 ⊕ x_u = u·(x_0 ⊕
//!   x_1)` shares the product of the receiver's bit `u` and the sender's
//!   `x_0 ⊕ x_1`. With `a_i = x_0 ⊕ x_1` of the OT `P_i` sends (bit 0, and
//!   bit 1 for `a'`), `b_i` its choice in the other, the cross terms `a_0
//!   b_1 ⊕ a_1 b_0` come out shared and `c_i = a_i·b_i ⊕` its two OT shares;
//!   a correlated pair uses both message bits with one `b`. Cost: 2 random
//!   OTs per triple or pair, no message of their own, no round.
//!
//! Triples are stored packed ([`Bits`]) and handed out in order
//! (`Triples::take_regular`, `Triples::take_correlated`); both parties take
//! the same slices in the same order.

use super::bits::Bits;
use super::kk::{KkBatch, KkOut, ReqId};
use super::{Ctx, ProtoError, Role, exchange};
use crate::crypto::Prg;
use crate::ot::OtKind;
use crate::pack::{BitReader, BitWriter, packed_len};

/// Regular triple shares `(a, b, c)`, one bit each per triple.
#[derive(Clone, Debug)]
pub(crate) struct Regular {
    a: Bits,
    b: Bits,
    c: Bits,
}

/// Correlated triple shares `(a, a', b, c, c')` with `c = a·b`, `c' = a'·b`.
#[derive(Clone, Debug)]
pub(crate) struct Correlated {
    a: Bits,
    a2: Bits,
    b: Bits,
    c: Bits,
    c2: Bits,
}

/// The triples of a protocol run, handed out in order.
#[derive(Debug)]
pub(crate) struct Triples {
    reg: Regular,
    cor: Correlated,
    reg_used: usize,
    cor_used: usize,
}

/// This party's half of a pending triple generation (see [`request`]).
#[derive(Debug)]
pub(crate) struct Pending {
    n_reg: usize,
    n_cor: usize,
    /// Random `(a, b, c)` of both halves of the regular OTs (`c` is only used
    /// by role `P0`; role `P1` receives its `c`).
    reg: [Bits; 3],
    /// Random `(a, a', b, c, c')` of the correlated OTs (same remark).
    cor: [Bits; 5],
    /// The KK requests; `None` for silent triples, made by
    /// [`Pending::finish`].
    ids: Option<(ReqId, ReqId)>,
}

/// Role `P0`'s messages of a regular-triple OT, by the 6 random bits
/// `(a, b, c, a', b', c')` of its two triples (row `key`, 16 messages):
/// message `i` is `(c ⊕ (i₀ ⊕ a)(i₁ ⊕ b)) | (c' ⊕ (i₂ ⊕ a')(i₃ ⊕ b')) << 1`.
fn regular_table() -> Vec<u8> {
    (0..64u64 * 16)
        .map(|t| {
            let (r, i) = (t / 16, t % 16);
            let t0 = (r >> 2 & 1) ^ ((i & 1 ^ r & 1) & (i >> 1 & 1 ^ r >> 1 & 1));
            let t1 = (r >> 5 & 1) ^ ((i >> 2 & 1 ^ r >> 3 & 1) & (i >> 3 & 1 ^ r >> 4 & 1));
            (t0 | t1 << 1) as u8
        })
        .collect()
}

/// Role `P0`'s messages of a correlated-pair OT, by the 5 random bits
/// `(a, a', b, c, c')` (row `key`, 8 messages): message `i` is
/// `(c ⊕ (i₀ ⊕ a)(i₁ ⊕ b)) | (c' ⊕ (i₂ ⊕ a')(i₁ ⊕ b)) << 1`.
fn correlated_table() -> Vec<u8> {
    (0..32u64 * 8)
        .map(|t| {
            let (r, i) = (t / 8, t % 8);
            let (a, a2, b, c, c2) = (r & 1, r >> 1 & 1, r >> 2 & 1, r >> 3 & 1, r >> 4 & 1);
            let t0 = c ^ ((i & 1 ^ a) & (i >> 1 & 1 ^ b));
            let t1 = c2 ^ ((i >> 2 & 1 ^ a2) & (i >> 1 & 1 ^ b));
            (t0 | t1 << 1) as u8
        })
        .collect()
}

/// `n` random bytes with only the low `bits` bits kept.
fn random_keys(prg: &mut Prg, n: usize, bits: u32) -> Vec<u8> {
    let mut k = vec![0u8; n];
    prg.fill_bytes(&mut k);
    let m = ((1u16 << bits) - 1) as u8;
    k.iter_mut().for_each(|x| *x &= m);
    k
}

/// Registers the OTs generating `n_reg` regular triples and `n_cor`
/// correlated pairs in `batch` (nothing for [`OtKind::Silent`], whose
/// triples come from random OTs in [`Pending::finish`]); finish with
/// [`Pending::finish`] after the batch has run. Regular triple `t < h = ⌈n_reg/2⌉` comes from bit 0 of OT
/// instance `t`, triple `t ≥ h` from bit 1 of instance `t − h`. The random
/// bits of an OT instance are drawn as one byte (its table row), then split
/// into bit planes.
pub(crate) fn request(
    prg: &mut Prg,
    kind: OtKind,
    n_reg: usize,
    n_cor: usize,
    batch: &mut KkBatch<'_>,
) -> Pending {
    if kind == OtKind::Silent {
        return Pending {
            n_reg,
            n_cor,
            reg: Default::default(),
            cor: Default::default(),
            ids: None,
        };
    }
    let h = n_reg.div_ceil(2);
    // Regular: bits (a, b, c) of triple j, then of triple h + j.
    let rk = random_keys(prg, h, 6);
    let plane = |keys: &[u8], lo: u32, hi: u32| {
        let mut v = Bits::from_bytes_bit(keys, lo);
        v.append(&Bits::from_bytes_bit(keys, hi));
        v
    };
    let reg = [plane(&rk, 0, 3), plane(&rk, 1, 4), plane(&rk, 2, 5)];
    // Correlated: bits (a, a', b, c, c').
    let ck = random_keys(prg, n_cor, 5);
    let cor = std::array::from_fn(|k| Bits::from_bytes_bit(&ck, k as u32));
    let ids = match batch.role() {
        Role::P0 => {
            let (rt, ct) = (regular_table(), correlated_table());
            let r = batch.add_send(16, 2, h, move |range, out| {
                for (row, &key) in out.chunks_exact_mut(16).zip(&rk[range]) {
                    row.copy_from_slice(&rt[key as usize * 16..][..16]);
                }
            });
            let c = batch.add_send(8, 2, n_cor, move |range, out| {
                for (row, &key) in out.chunks_exact_mut(8).zip(&ck[range]) {
                    row.copy_from_slice(&ct[key as usize * 8..][..8]);
                }
            });
            (r, c)
        }
        Role::P1 => {
            // Choices: a ‖ b ‖ a' ‖ b' (regular), a ‖ b ‖ a' (correlated).
            let r = batch.add_recv(16, 2, h, |ch| {
                for (x, &key) in ch.iter_mut().zip(&rk) {
                    *x = key & 0b11 | (key >> 3 & 0b11) << 2;
                }
            });
            let c = batch.add_recv(8, 2, n_cor, |ch| {
                for (x, &key) in ch.iter_mut().zip(&ck) {
                    *x = key & 1 | (key >> 2 & 1) << 1 | (key >> 1 & 1) << 2;
                }
            });
            (r, c)
        }
    };
    Pending {
        n_reg,
        n_cor,
        reg,
        cor,
        ids: Some(ids),
    }
}

/// Silent triples (see the [module documentation](self)): `n` products
/// `(a, a', b, c = a·b, c' = a'·b)`, as bit planes, from one random OT
/// each way.
fn silent_products(ctx: &mut Ctx<'_>, n: usize) -> Result<[Bits; 5], ProtoError> {
    let (ot, ch) = (&mut *ctx.ot, &mut *ctx.ch);
    // (a_i: x_0 ⊕ x_1 of the OT this party sends, b_i: its choice in the
    // other, s_i: its shares x_0 and x_u of the two cross products).
    let (sent, (b, got)) = match ctx.role {
        Role::P0 => {
            let sent = ot.send_random_rot::<u8>(ch, n, 2)?;
            (sent, ot.recv_random_rot::<u8>(ch, n, 2)?)
        }
        Role::P1 => {
            let got = ot.recv_random_rot::<u8>(ch, n, 2)?;
            (ot.send_random_rot::<u8>(ch, n, 2)?, got)
        }
    };
    let a: Vec<u8> = sent.iter().map(|[x0, x1]| x0 ^ x1).collect();
    let c: Vec<u8> = (0..n)
        .map(|i| (a[i] & u8::from(b[i]).wrapping_neg()) ^ sent[i][0] ^ got[i])
        .collect();
    let b: Vec<u8> = b.iter().map(|&x| u8::from(x)).collect();
    Ok([
        Bits::from_bytes_bit(&a, 0),
        Bits::from_bytes_bit(&a, 1),
        Bits::from_bytes_bit(&b, 0),
        Bits::from_bytes_bit(&c, 0),
        Bits::from_bytes_bit(&c, 1),
    ])
}

impl Pending {
    /// The triples, once the batch holding the request has run (silent
    /// triples: made now, [`silent_products`]; both parties call this at the
    /// same point).
    pub(crate) fn finish(self, ctx: &mut Ctx<'_>, out: &KkOut) -> Result<Triples, ProtoError> {
        let (n_reg, n_cor, role) = (self.n_reg, self.n_cor, ctx.role);
        if self.ids.is_none() {
            let [a, a2, b, c, c2] = silent_products(ctx, n_reg + n_cor)?;
            return Ok(Triples {
                reg: Regular {
                    a: a.slice(0, n_reg),
                    b: b.slice(0, n_reg),
                    c: c.slice(0, n_reg),
                },
                cor: Correlated {
                    a: a.slice(n_reg, n_cor),
                    a2: a2.slice(n_reg, n_cor),
                    b: b.slice(n_reg, n_cor),
                    c: c.slice(n_reg, n_cor),
                    c2: c2.slice(n_reg, n_cor),
                },
                reg_used: 0,
                cor_used: 0,
            });
        }
        let [ra, rb, mut rc] = self.reg;
        let [ca, ca2, cb, mut cc, mut cc2] = self.cor;
        if let (Role::P1, Some((rid, cid))) = (role, self.ids) {
            let ro = out.get(rid);
            let co = out.get(cid);
            rc = Bits::from_bytes_bit(ro, 0);
            rc.append(&Bits::from_bytes_bit(ro, 1));
            cc = Bits::from_bytes_bit(co, 0);
            cc2 = Bits::from_bytes_bit(co, 1);
        }
        Ok(Triples {
            reg: Regular {
                a: ra.slice(0, n_reg),
                b: rb.slice(0, n_reg),
                c: rc.slice(0, n_reg),
            },
            cor: Correlated {
                a: ca,
                a2: ca2,
                b: cb,
                c: cc,
                c2: cc2,
            },
            reg_used: 0,
            cor_used: 0,
        })
    }
}

impl Triples {
    /// The next `n` regular triples.
    pub(crate) fn take_regular(&mut self, n: usize) -> Regular {
        let s = self.reg_used;
        self.reg_used += n;
        Regular {
            a: self.reg.a.slice(s, n),
            b: self.reg.b.slice(s, n),
            c: self.reg.c.slice(s, n),
        }
    }

    /// The next `n` correlated pairs.
    pub(crate) fn take_correlated(&mut self, n: usize) -> Correlated {
        let s = self.cor_used;
        self.cor_used += n;
        let t = &self.cor;
        Correlated {
            a: t.a.slice(s, n),
            a2: t.a2.slice(s, n),
            b: t.b.slice(s, n),
            c: t.c.slice(s, n),
            c2: t.c2.slice(s, n),
        }
    }
}

/// Generates `n_reg` regular triples and `n_cor` correlated pairs on their
/// own (one or two OT calls, one round each for role `P1`).
pub(crate) fn generate(
    ctx: &mut Ctx<'_>,
    n_reg: usize,
    n_cor: usize,
) -> Result<Triples, ProtoError> {
    let mut prg = ctx.prg.fork();
    let mut batch = KkBatch::new(ctx.role);
    let pending = request(&mut prg, ctx.ot.kind(), n_reg, n_cor, &mut batch);
    let out = batch.run(ctx)?;
    pending.finish(ctx, &out)
}

/// Shares of `x ∧ y` (bitwise) for boolean shares `x`, `y` of equal
/// length: `n` regular triples (`⌈n/2⌉` instances of `(16 1)-OT_2`, role
/// `P0` sending) and one exchange. Cost `⌈n/2⌉·(2λ + 32) + 4n` bits (plus
/// padding); one round for the triples and one for the exchange.
pub fn and(ctx: &mut Ctx<'_>, x: &Bits, y: &Bits) -> Result<Bits, ProtoError> {
    super::check(x.len() == y.len(), || {
        format!("AND of {} and {} bits", x.len(), y.len())
    })?;
    let mut t = generate(ctx, x.len(), 0)?;
    let job = Job::Reg {
        x,
        y,
        t: t.take_regular(x.len()),
    };
    Ok(eval(ctx, vec![job])?
        .pop()
        .map(|(z, _)| z)
        .unwrap_or_default())
}

/// One AND (or correlated pair of ANDs) over a batch of shared bits.
#[derive(Debug)]
pub(crate) enum Job<'a> {
    /// `x ∧ y`.
    Reg {
        x: &'a Bits,
        y: &'a Bits,
        t: Regular,
    },
    /// `x ∧ y` and `x2 ∧ y`.
    Cor {
        x: &'a Bits,
        x2: &'a Bits,
        y: &'a Bits,
        t: Correlated,
    },
}

/// Output of a [`Job`]: one vector for `Reg`, two for `Cor`.
pub(crate) type JobOut = (Bits, Option<Bits>);

/// `c ⊕ d·b ⊕ e·a ⊕ [P0] d·e` word by word.
fn beaver(c: &Bits, d: &Bits, e: &Bits, a: &Bits, b: &Bits, p0: bool) -> Bits {
    let de = if p0 { u64::MAX } else { 0 };
    let words = c
        .words()
        .iter()
        .zip(d.words())
        .zip(e.words())
        .zip(a.words())
        .zip(b.words())
        .map(|((((c, d), e), a), b)| c ^ (d & b) ^ (e & a) ^ (d & e & de))
        .collect();
    Bits::from_words(words, c.len())
}

/// Evaluates a batch of AND jobs in one exchange. Cost: 4 bits per regular
/// AND and 6 per correlated pair (both directions).
pub(crate) fn eval(ctx: &mut Ctx<'_>, jobs: Vec<Job<'_>>) -> Result<Vec<JobOut>, ProtoError> {
    let total: usize = jobs
        .iter()
        .map(|j| match j {
            Job::Reg { x, .. } => 2 * x.len(),
            Job::Cor { x, .. } => 3 * x.len(),
        })
        .sum();
    if total == 0 {
        return Ok(jobs
            .iter()
            .map(|j| match j {
                Job::Reg { .. } => (Bits::zeros(0), None),
                Job::Cor { .. } => (Bits::zeros(0), Some(Bits::zeros(0))),
            })
            .collect());
    }
    let mut w = BitWriter::with_capacity_bits(total as u64);
    for j in &jobs {
        match j {
            Job::Reg { x, y, t } => {
                x.xor(&t.a).write(&mut w);
                y.xor(&t.b).write(&mut w);
            }
            Job::Cor { x, x2, y, t } => {
                x.xor(&t.a).write(&mut w);
                x2.xor(&t.a2).write(&mut w);
                y.xor(&t.b).write(&mut w);
            }
        }
    }
    let mine = w.finish();
    debug_assert_eq!(mine.len(), packed_len(total, 1));
    let theirs = exchange(ctx, &mine)?;
    let (mut rm, mut rt) = (BitReader::new(&mine), BitReader::new(&theirs));
    let mut open = |len: usize| Bits::read(&mut rm, len).xor(&Bits::read(&mut rt, len));
    let p0 = ctx.role == Role::P0;
    Ok(jobs
        .into_iter()
        .map(|j| match j {
            Job::Reg { x, t, .. } => {
                let d = open(x.len());
                let e = open(x.len());
                (beaver(&t.c, &d, &e, &t.a, &t.b, p0), None)
            }
            Job::Cor { x, t, .. } => {
                let d = open(x.len());
                let d2 = open(x.len());
                let e = open(x.len());
                (
                    beaver(&t.c, &d, &e, &t.a, &t.b, p0),
                    Some(beaver(&t.c2, &d2, &e, &t.a2, &t.b, p0)),
                )
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{open_bits, prg, run2, run2_tcp};

    fn check(n: usize, tcp: bool) {
        let mut g = prg(n as u128);
        let (x, y, sx, sy) = (
            Bits::random(&mut g, n),
            Bits::random(&mut g, n),
            Bits::random(&mut g, n),
            Bits::random(&mut g, n),
        );
        let f = |ctx: &mut Ctx<'_>| match ctx.role {
            Role::P0 => and(ctx, &sx, &sy),
            Role::P1 => and(ctx, &x.xor(&sx), &y.xor(&sy)),
        };
        let r = if tcp { run2_tcp(4, f) } else { run2(4, f) };
        assert_eq!(open_bits(&r.p0, &r.p1), x.and(&y).to_bools());
    }

    #[test]
    fn and_of_shared_bits() {
        for n in [0, 1, 2, 3, 63, 64, 65, 10_001] {
            check(n, false);
        }
        check(1 << 16, true);
    }

    #[test]
    fn correlated_pairs() {
        // x ∧ y and x2 ∧ y from one correlated pair, on shares.
        let n = 10_000;
        let mut g = prg(5);
        let v: Vec<Bits> = (0..6).map(|_| Bits::random(&mut g, n)).collect();
        let r = run2(4, |ctx| {
            let mut t = generate(ctx, 0, n)?;
            let (x, x2, y) = match ctx.role {
                Role::P0 => (v[3].clone(), v[4].clone(), v[5].clone()),
                Role::P1 => (v[0].xor(&v[3]), v[1].xor(&v[4]), v[2].xor(&v[5])),
            };
            let job = Job::Cor {
                x: &x,
                x2: &x2,
                y: &y,
                t: t.take_correlated(n),
            };
            Ok(eval(ctx, vec![job])?.pop().expect("one job"))
        });
        let (z0, z1) = (r.p0, r.p1);
        assert_eq!(open_bits(&z0.0, &z1.0), v[0].and(&v[2]).to_bools());
        let (a, b) = (z0.1.expect("pair"), z1.1.expect("pair"));
        assert_eq!(open_bits(&a, &b), v[1].and(&v[2]).to_bools());
    }
}
