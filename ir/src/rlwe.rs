//! Parameters, layouts and exact costs of the RLWE products over `Z_{2^ℓ}`
//! shares (coefficient encoding, no rotations; Huang, Lu, Hong, Ding,
//! "Cheetah: Lean and Fast Secure Two-Party Deep Neural Network Inference",
//! USENIX Security 2022, §3–§4). The runtime's `cheetah` module runs them;
//! this module is pure arithmetic, shared with the future cost model.
//!
//! # Ring and security ([`PARAM_SETS`])
//! `R_q = Z_q[X]/(X^N + 1)`, `q` a product of NTT primes `≡ 1 (mod 2^14)`,
//! secret key uniform ternary, errors centered binomial of variance 10
//! (`σ ≈ 3.16`, support `[−20, 20]`). The HomomorphicEncryption.org security
//! standard (Albrecht et al., "Homomorphic Encryption Security Standard",
//! 2018, Table 1, ternary secrets, `σ ≈ 3.2`, classical 128 bits) allows
//! `log₂ q ≤ 109` at `N = 4096` and `log₂ q ≤ 218` at `N = 8192`; each set
//! below stays under its bound, so each is estimated at ≥ 128 bits by that
//! table (a smaller `q` at equal `N` is only harder).
//!
//! # Plaintexts and exactness
//! A message `m ∈ Z_{2^ℓ}[X]/(X^N+1)` is encoded as `⌊q·m/2^ℓ⌉` (Cheetah's
//! encoding for a plaintext modulus that does not divide `q`): then
//! `(q/2^ℓ)·m·w ≡ (q/2^ℓ)·(m·w mod 2^ℓ) (mod q)` for any integer polynomial
//! `w`, so a product by the weights stays exact with noise `v·w` only.
//!
//! # Noise, flooding and failure ([`Layout`])
//! Every bound is worst case over bounded distributions, so decryption
//! **never fails** (probability 0), given the bounds below:
//! * client's ciphertext plus the server's share: `|v_in| ≤ 20 + ½ + ½ = 21`;
//! * products (weights `|w| ≤ 2^{ℓ−1}`): `|Σ_p v_p·K_p| ≤ 21·2^{ℓ−1}·nnz` with
//!   `nnz` the public number of weight positions of an output ciphertext (its
//!   channels times the fan-in);
//! * the mask's rounding `½` and the re-randomization `u·e + e_1 + e_2·s`
//!   (`u`, `s` ternary): `≤ 40N + 20`; in all `B_g = 21·2^{ℓ−1}·nnz + 40N + 21`;
//! * flooding: a uniform integer in `[−F, F)`, `F = 2^f`, on every returned
//!   coefficient of `c_0`, with `f = ⌊log₂ q⌋ − ℓ − 3` (so `B + F ≤ q/2^{ℓ+2}`);
//! * modulus switching to `2^k` (`k` = [`ParamSet::reply_bits`]) adds at most
//!   `1 + N` (rounding of `c_0`, and of `c_1` times the ternary `s`), below
//!   `2^{k−ℓ−2}`; the total stays below `2^{k−ℓ−1}`, half a plaintext step.
//!
//! **Statistical bound for the weights.** Shifting `U[−F, F)` by `v` moves it
//! by statistical distance `|v|/(2F)`; the client sees one flooded coefficient
//! per output element, so a layer's distance is at most
//! `Σ_g used_g·B_g / 2^{f+1}`, required `≤ 2^−40` ([`STAT_SEC`]); the layout
//! search keeps only partitions that meet it and otherwise moves to a larger
//! parameter set. Distances add (union bound): `L` layers and `I` inferences
//! reveal at most `L·I·2^−40` about the weights (e.g. 2^−23 for 26 layers and
//! 2^12 inferences).
//!
//! **Secret × secret matrix products** ([`secret_matmul`]). A `matmul` of two
//! shared matrices runs its cross terms `A_0·B_1` and `A_1·B_0` as two products
//! whose "weights" are the server's uniform shares `A_0`, `B_0` and whose encrypted
//! input is the client's share, the server adding no share of its own. The bounds
//! above need nothing of the weights but `|w| ≤ 2^{ℓ−1}`, which every element of
//! `Z_{2^ℓ}` meets in its signed view (the kernels are built from it), and
//! `|v_in| ≤ 20½` without the server's share: so each cross term is flooded
//! within `2^−40` exactly as a layer of weights, and the server's shares (hence
//! `A`, `B`) are hidden from the client within `2^−39` per instruction (both
//! terms, union bound; added over instructions and inferences as above). The
//! client's shares only ever travel encrypted; every product draws fresh
//! encryption, re-randomization, mask and flooding.
//!
//! Which `ℓ` fit: with worst-case weights (`|w| < 2^{ℓ−1}`) the first set
//! (`N = 4096`, 109 bits) floods layers up to ℓ ≈ 16–20; ℓ = 32 and 37 need
//! `N = 8192` with three primes (163 bits), larger ℓ or layers four (217 bits).
//! [`MAX_BITS`] caps ℓ at 48 (the reply modulus must fit 64 bits).

use crate::ops::{Conv2d, ConvGeom, Op};
use crate::{Backend, Owner, Program, ValueId};

/// A parameter set: ring degree, ciphertext primes, security.
#[derive(Debug, PartialEq, Eq)]
pub struct ParamSet {
    /// Identifier on the wire.
    pub id: u8,
    /// Ring degree `N`.
    pub degree: usize,
    /// The ciphertext primes (each `≡ 1 mod 2^14`, below `2^55`).
    pub moduli: &'static [u64],
    /// Estimated security and its source.
    pub security: &'static str,
}

const P55: u64 = 36_028_797_018_652_673;
const P54A: u64 = 18_014_398_508_400_641;
const P54B: u64 = 18_014_398_508_138_497;
const P54C: u64 = 18_014_398_507_892_737;

/// The parameter sets, smallest first; a layer takes the first one whose
/// noise budget floods it ([`conv_layout`]).
pub const PARAM_SETS: [ParamSet; 3] = [
    ParamSet {
        id: 0,
        degree: 4096,
        moduli: &[P55, P54A],
        security: "≥128 bits: log2 q < 109 ≤ 109 at N = 4096 (HomomorphicEncryption.org standard 2018, Table 1, ternary secret, σ ≈ 3.2)",
    },
    ParamSet {
        id: 1,
        degree: 8192,
        moduli: &[P55, P54A, P54B],
        security: "≥128 bits: log2 q < 163 ≤ 218 at N = 8192 (HomomorphicEncryption.org standard 2018, Table 1, ternary secret, σ ≈ 3.2)",
    },
    ParamSet {
        id: 2,
        degree: 8192,
        moduli: &[P55, P54A, P54B, P54C],
        security: "≥128 bits: log2 q < 217 ≤ 218 at N = 8192 (HomomorphicEncryption.org standard 2018, Table 1, ternary secret, σ ≈ 3.2)",
    },
];

/// Bound on a fresh error coefficient (centered binomial, variance 10).
pub const ERROR_BOUND: u64 = 20;
/// Statistical security of the flooding, per layer: distance `≤ 2^−40`.
pub const STAT_SEC: u32 = 40;
/// Largest plaintext width `ℓ`.
pub const MAX_BITS: u32 = 48;
/// Bytes of a seed (the uniform `c_1` of a ciphertext, the public key's `a`).
pub const SEED_BYTES: u64 = 16;
/// Bytes of a message header: parameter set, number of primes, count (u32).
pub const HEADER_BYTES: u64 = 6;

impl ParamSet {
    /// The set of identifier `id`.
    pub fn by_id(id: u8) -> Option<&'static ParamSet> {
        PARAM_SETS.iter().find(|s| s.id == id)
    }

    /// `log₂ q`.
    pub fn log_q(&self) -> f64 {
        self.moduli.iter().map(|&q| (q as f64).log2()).sum()
    }

    /// Bits of each prime, as packed on the wire.
    pub fn prime_bits(&self) -> impl Iterator<Item = u32> + '_ {
        self.moduli.iter().map(|q| 64 - q.leading_zeros())
    }

    /// Bits of one coefficient in RNS form (the primes' widths summed).
    pub fn coeff_bits(&self) -> u64 {
        self.prime_bits().map(u64::from).sum()
    }

    /// `k`, the reply modulus `2^k` after modulus switching: `ℓ + 2 +
    /// bitlen(N + 1)` (so the switching error `N + 1` stays below `2^{k−ℓ−2}`).
    pub fn reply_bits(&self, ell: u32) -> u32 {
        ell + 2 + (usize::BITS - (self.degree + 1).leading_zeros())
    }

    /// `f`, the flooding width `2^f`: `⌊log₂ q⌋ − ℓ − 3`.
    pub fn flood_bits(&self, ell: u32) -> u32 {
        (self.log_q().floor() as u32).saturating_sub(ell + 3)
    }

    /// Bytes of one client ciphertext: the seed of `c_1` and `c_0` packed at
    /// the primes' widths.
    pub fn ct_bytes(&self) -> u64 {
        SEED_BYTES + (self.degree as u64 * self.coeff_bits()).div_ceil(8)
    }

    /// Bytes of the client's public key message (once per session and set).
    pub fn key_bytes(&self) -> u64 {
        HEADER_BYTES + self.ct_bytes()
    }
}

/// Errors of layout selection.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RlweError {
    /// The layer's shape or width is not supported.
    #[error("RLWE layer: {0}")]
    Shape(String),
    /// No parameter set floods the layer within `2^−40`.
    #[error(
        "RLWE layer: no parameter set floods this layer within 2^-{STAT_SEC} at ℓ = {ell} (use fewer bits)"
    )]
    NoiseBudget {
        /// The plaintext width.
        ell: u32,
    },
}

/// A convolution rewritten as a stride-1, undilated, unpadded one (the
/// strides' phases become channels): input `[batch, c, h, w]` of phase
/// channels, kernel extents `kh × kw`, output `[batch, m, oh, ow]`.
///
/// Phase channel `(c, a, b)` holds `x_pad[c, u·s_h + p_a, v·s_w + p_b]` at
/// `(u, v)`, `p_a` the `a`-th distinct residue `(i·d_h) mod s_h` of the kernel
/// rows (likewise columns); kernel tap `(i, j)` of channel `c` lands at
/// `(⌊i·d_h/s_h⌋, ⌊j·d_w/s_w⌋)` of its phase channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    /// The original geometry.
    pub geom: ConvGeom,
    /// Batch.
    pub batch: usize,
    /// Phase channels.
    pub c: usize,
    /// Height and width of the phase channels.
    pub h: usize,
    /// See `h`.
    pub w: usize,
    /// Kernel extents in the phase channels.
    pub kh: usize,
    /// See `kh`.
    pub kw: usize,
    /// Output channels.
    pub m: usize,
    /// Output height and width.
    pub oh: usize,
    /// See `oh`.
    pub ow: usize,
    /// Weights per output (`C/groups · kH · kW`).
    pub fanin: usize,
    phases_h: Vec<usize>,
    phases_w: Vec<usize>,
}

/// The distinct residues `(i·d) mod s` for `i < k`, sorted.
fn phases(k: usize, d: usize, s: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..k).map(|i| i * d % s).collect();
    p.sort_unstable();
    p.dedup();
    p
}

impl Lowered {
    /// The lowered form of `geom` (errors on invalid attributes or an empty
    /// output).
    pub fn new(geom: &ConvGeom) -> Result<Lowered, RlweError> {
        let [batch, c, _, _] = geom.input;
        let [_, m, oh, ow] = geom
            .output()
            .map_err(|e| RlweError::Shape(format!("{e:?}")))?;
        if batch == 0 || c == 0 || m == 0 || oh == 0 || ow == 0 {
            return Err(RlweError::Shape(format!("empty convolution {geom:?}")));
        }
        let [kh, kw] = geom.kernel;
        let [sh, sw] = geom.conv.strides;
        let [dh, dw] = geom.conv.dilations;
        let (phases_h, phases_w) = (phases(kh, dh, sh), phases(kw, dw, sw));
        let (lkh, lkw) = ((kh - 1) * dh / sh + 1, (kw - 1) * dw / sw + 1);
        Ok(Lowered {
            geom: *geom,
            batch,
            c: c * phases_h.len() * phases_w.len(),
            h: oh + lkh - 1,
            w: ow + lkw - 1,
            kh: lkh,
            kw: lkw,
            m,
            oh,
            ow,
            fanin: c / geom.conv.groups * kh * kw,
            phases_h,
            phases_w,
        })
    }

    /// The input element (index into the `[N, C, H, W]` input, batch 0) that
    /// phase channel `pc` holds at `(u, v)`, or `None` where it is padding.
    pub fn source(&self, pc: usize, u: usize, v: usize) -> Option<usize> {
        let (na, nb) = (self.phases_h.len(), self.phases_w.len());
        let (c, a, b) = (pc / (na * nb), pc / nb % na, pc % nb);
        let [_, _, h, w] = self.geom.input;
        let g = &self.geom.conv;
        let y = (u * g.strides[0] + self.phases_h[a]).checked_sub(g.pads[0])?;
        let x = (v * g.strides[1] + self.phases_w[b]).checked_sub(g.pads[1])?;
        (y < h && x < w).then_some((c * h + y) * w + x)
    }

    /// The taps of output channel `o`: `(phase channel, row, column, index
    /// into the weights [C_out, C/groups, kH, kW])`, `fanin` of them, at
    /// distinct positions.
    pub fn taps(&self, o: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> + '_ {
        let g = &self.geom;
        let [kh, kw] = g.kernel;
        let (cg, og) = (g.input[1] / g.conv.groups, g.c_out / g.conv.groups);
        let grp = o / og;
        let (na, nb) = (self.phases_h.len(), self.phases_w.len());
        (0..cg * kh * kw).map(move |t| {
            let (cc, i, j) = (t / (kh * kw), t / kw % kh, t % kw);
            let (di, dj) = (i * g.conv.dilations[0], j * g.conv.dilations[1]);
            let (sh, sw) = (g.conv.strides[0], g.conv.strides[1]);
            let a = self.phases_h.partition_point(|&p| p < di % sh);
            let b = self.phases_w.partition_point(|&p| p < dj % sw);
            let pc = ((grp * cg + cc) * na + a) * nb + b;
            (pc, di / sh, dj / sw, o * cg * kh * kw + t)
        })
    }
}

/// How a layer is cut into polynomials, with its parameter set and flooding.
///
/// Input ciphertext `((n·bh_count + bh)·bw_count + bw)·in_groups + ci` holds
/// phase channels `ci·cp ..` of rows `bh·ny .. bh·ny + hp` and columns `bw·nx
/// .. bw·nx + wp` of image `n`, channel-major (coefficient `c·hp·wp + u·wp +
/// v`). Output ciphertext `((n·bh_count + bh)·bw_count + bw)·out_groups + mo`
/// holds outputs `mo·mp ..` of the block's `ny × nx` output positions, output
/// `j` of the group at coefficient `j·cp·hp·wp + O + y·wp + x` with `O = (cp −
/// 1)·hp·wp + (kh − 1)·wp + kw − 1`. Constraint: `mp·cp·hp·wp ≤ N`.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The parameter set.
    pub set: &'static ParamSet,
    /// Plaintext width.
    pub ell: u32,
    /// The lowered convolution.
    pub conv: Lowered,
    /// Phase channels per input polynomial.
    pub cp: usize,
    /// Rows and columns per input polynomial (with the kernel's halo).
    pub hp: usize,
    /// See `hp`.
    pub wp: usize,
    /// Output rows and columns per block.
    pub ny: usize,
    /// See `ny`.
    pub nx: usize,
    /// Output channels per output polynomial.
    pub mp: usize,
    /// Blocks along the height and the width.
    pub bh_count: usize,
    /// See `bh_count`.
    pub bw_count: usize,
    /// Channel groups of the input (`⌈c/cp⌉`) and of the output (`⌈m/mp⌉`).
    pub in_groups: usize,
    /// See `in_groups`.
    pub out_groups: usize,
    /// log₂ of the layer's statistical distance (≤ −40).
    pub log_distance: f64,
}

impl Layout {
    /// Ciphertexts the client sends.
    pub fn in_cts(&self) -> usize {
        self.conv.batch * self.bh_count * self.bw_count * self.in_groups
    }

    /// Ciphertexts the server returns.
    pub fn out_cts(&self) -> usize {
        self.conv.batch * self.bh_count * self.bw_count * self.out_groups
    }

    /// Polynomial products the server computes (pairs of an input and an
    /// output group that share a weight).
    pub fn products(&self) -> usize {
        let per_block: usize = (0..self.out_groups)
            .map(|mo| (0..self.in_groups).filter(|&ci| self.links(mo, ci)).count())
            .sum();
        self.conv.batch * self.bh_count * self.bw_count * per_block
    }

    /// Whether output group `mo` has a weight on a channel of input group `ci`.
    pub fn links(&self, mo: usize, ci: usize) -> bool {
        let g = &self.conv.geom;
        let per = self.conv.c / g.conv.groups; // phase channels per group
        let og = g.c_out / g.conv.groups;
        let (o0, o1) = (mo * self.mp, ((mo + 1) * self.mp).min(self.conv.m));
        let (lo, hi) = (o0 / og * per, ((o1 - 1) / og + 1) * per);
        let (c0, c1) = (ci * self.cp, ((ci + 1) * self.cp).min(self.conv.c));
        c0 < hi && lo < c1
    }

    /// The output channels `(first, count)` of output group `mo`.
    pub fn group(&self, mo: usize) -> (usize, usize) {
        let o0 = mo * self.mp;
        (o0, self.mp.min(self.conv.m - o0))
    }

    /// The output rows `(first, count)` of block row `bh` (columns likewise
    /// with [`Layout::cols`]).
    pub fn rows(&self, bh: usize) -> (usize, usize) {
        (bh * self.ny, self.ny.min(self.conv.oh - bh * self.ny))
    }

    /// See [`Layout::rows`].
    pub fn cols(&self, bw: usize) -> (usize, usize) {
        (bw * self.nx, self.nx.min(self.conv.ow - bw * self.nx))
    }

    /// `O`, the coefficient of the first output of a group's first channel.
    pub fn offset(&self) -> usize {
        (self.cp - 1) * self.hp * self.wp + (self.conv.kh - 1) * self.wp + self.conv.kw - 1
    }

    /// The coefficients of output ciphertext `g` that carry outputs, in order
    /// (channel, row, column), each with the output's index in `[N, M, OH,
    /// OW]`.
    pub fn outputs(&self, g: usize) -> Vec<(usize, usize)> {
        let mo = g % self.out_groups;
        let blk = g / self.out_groups;
        let (bw, bh, n) = (
            blk % self.bw_count,
            blk / self.bw_count % self.bh_count,
            blk / (self.bw_count * self.bh_count),
        );
        let ((o0, no), (y0, nyb), (x0, nxb)) = (self.group(mo), self.rows(bh), self.cols(bw));
        let (cell, off) = (self.cp * self.hp * self.wp, self.offset());
        let l = &self.conv;
        let mut out = Vec::with_capacity(no * nyb * nxb);
        for j in 0..no {
            for y in 0..nyb {
                for x in 0..nxb {
                    let idx = ((n * l.m + o0 + j) * l.oh + y0 + y) * l.ow + x0 + x;
                    out.push((j * cell + off + y * self.wp + x, idx));
                }
            }
        }
        out
    }

    /// `Σ` of `f(channels, used coefficients)` over the output ciphertexts
    /// (grouped: at most 8 distinct shapes).
    fn sum_outputs(&self, f: impl Fn(usize, usize) -> u128) -> u128 {
        let kinds = |count: usize, full: usize, total: usize| {
            let last = total - (count - 1) * full;
            [(count - 1, full), (1, last)]
        };
        let l = &self.conv;
        let mut sum = 0u128;
        for (a, m) in kinds(self.out_groups, self.mp, l.m) {
            for (b, y) in kinds(self.bh_count, self.ny, l.oh) {
                for (c, x) in kinds(self.bw_count, self.nx, l.ow) {
                    let n = (a * b * c * l.batch) as u128;
                    if n > 0 {
                        sum += n * f(m, m * y * x);
                    }
                }
            }
        }
        sum
    }

    /// Bytes the client sends for the layer: a header and per ciphertext a
    /// seed and `c_0` ([`ParamSet::ct_bytes`]).
    pub fn bytes_up(&self) -> u64 {
        HEADER_BYTES + self.in_cts() as u64 * self.set.ct_bytes()
    }

    /// Bytes the server returns: a header and per ciphertext `c_1` and the
    /// used coefficients of `c_0` at [`ParamSet::reply_bits`] bits.
    pub fn bytes_down(&self) -> u64 {
        let (n, k) = (
            self.set.degree as u128,
            u128::from(self.set.reply_bits(self.ell)),
        );
        HEADER_BYTES + self.sum_outputs(|_, used| ((n + used as u128) * k).div_ceil(8)) as u64
    }

    /// Worst-case noise `B_g` (before flooding) of an output ciphertext of `m`
    /// channels (module documentation).
    pub fn noise_bound(&self, m: usize) -> u128 {
        let nnz = (m * self.conv.fanin) as u128;
        21 * (1u128 << (self.ell - 1)) * nnz + 40 * self.set.degree as u128 + 21
    }

    /// `f` of the flooding `U[−2^f, 2^f)`.
    pub fn flood_bits(&self) -> u32 {
        self.set.flood_bits(self.ell)
    }

    fn distance(&self) -> f64 {
        let s = self.sum_outputs(|m, used| used as u128 * self.noise_bound(m));
        (s as f64).log2() - f64::from(self.flood_bits()) - 1.0
    }
}

/// The layout of a convolution at width `ell`: the first parameter set with
/// a partition that floods within `2^−40`, and of those partitions the one
/// with the fewest bytes (then products). Deterministic: both parties compute
/// it from the public shape. Cost `O(N log² N)` candidates per set.
pub fn conv_layout(geom: &ConvGeom, ell: u32) -> Result<Layout, RlweError> {
    if !(1..=MAX_BITS).contains(&ell) {
        return Err(RlweError::Shape(format!(
            "width ℓ = {ell} outside 1..={MAX_BITS}"
        )));
    }
    let conv = Lowered::new(geom)?;
    for set in &PARAM_SETS {
        let n = set.degree;
        let mut best: Option<(u64, usize, Layout)> = None;
        for cp in 1..=conv.c.min(n) {
            for ny in 1..=conv.oh {
                let hp = ny + conv.kh - 1;
                if cp * hp * conv.kw > n {
                    break;
                }
                for nx in 1..=conv.ow {
                    let wp = nx + conv.kw - 1;
                    let cell = cp * hp * wp;
                    if cell > n {
                        break;
                    }
                    let mp = (n / cell).min(conv.m);
                    let mut l = Layout {
                        set,
                        ell,
                        conv: conv.clone(),
                        cp,
                        hp,
                        wp,
                        ny,
                        nx,
                        mp,
                        bh_count: conv.oh.div_ceil(ny),
                        bw_count: conv.ow.div_ceil(nx),
                        in_groups: conv.c.div_ceil(cp),
                        out_groups: conv.m.div_ceil(mp),
                        log_distance: 0.0,
                    };
                    let bytes = l.bytes_up() + l.bytes_down();
                    if best.as_ref().is_some_and(|b| b.0 < bytes) {
                        continue;
                    }
                    l.log_distance = l.distance();
                    if l.log_distance > -f64::from(STAT_SEC) {
                        continue;
                    }
                    let products = l.products();
                    if best.as_ref().is_none_or(|b| (bytes, products) < (b.0, b.1)) {
                        best = Some((bytes, products, l));
                    }
                }
            }
        }
        if let Some((_, _, l)) = best {
            return Ok(l);
        }
    }
    Err(RlweError::NoiseBudget { ell })
}

/// The layout of a matrix product with `inner`-long dot products, `rows`
/// right-hand vectors and `outs` outputs each: a 1×1 convolution of `inner`
/// channels over `rows × 1` positions to `outs` channels (Cheetah's HomFC is
/// its `hp = wp = 1` case).
pub fn matmul_layout(
    rows: usize,
    inner: usize,
    outs: usize,
    ell: u32,
) -> Result<Layout, RlweError> {
    conv_layout(&matmul_geom(rows, inner, outs), ell)
}

/// The convolution geometry of [`matmul_layout`].
pub fn matmul_geom(rows: usize, inner: usize, outs: usize) -> ConvGeom {
    ConvGeom {
        input: [1, inner, rows, 1],
        c_out: outs,
        kernel: [1, 1],
        conv: crate::ops::Conv2d::default(),
    }
}

/// A product with the server's weights of a program as the RLWE backend runs it: a
/// convolution ([`Product::geom`]) and how the instruction's tensors map onto it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Product {
    /// `conv2d` as it is.
    Conv(ConvGeom),
    /// `X·W`: `X [rows, inner]` shared, `W [inner, outs]` the server's.
    Right {
        /// Rows of `X`.
        rows: usize,
        /// The dot products' length.
        inner: usize,
        /// Columns of `W`.
        outs: usize,
    },
    /// `W·X`: `W [outs, inner]` the server's, `X [inner, cols]` shared.
    Left {
        /// Rows of `W`.
        outs: usize,
        /// The dot products' length.
        inner: usize,
        /// Columns of `X`.
        cols: usize,
    },
    /// `x ⊙ w` (`mul`) with `w` varying along one axis of the output at most (a
    /// per-channel scale, e.g. an unfolded batch norm): the output viewed as `[pre, c,
    /// post]`, a depthwise 1×1 convolution of `c` channels over `pre` images of `post`
    /// rows (`c = 1` for a scalar `w`).
    Scale {
        /// Elements before the axis.
        pre: usize,
        /// The axis' length (the weights).
        c: usize,
        /// Elements after the axis.
        post: usize,
    },
}

impl Product {
    /// The RLWE form of instruction `v` of `program`, if it is a product with the
    /// server's weights ([`Program::is_secure_product`]) of a kind RLWE runs: any
    /// `conv2d`, a 2-D `matmul` either way, a `mul` whose shared operand has the
    /// output's shape and whose weights vary along one axis at most. `None` otherwise
    /// (e.g. an elementwise `mul` by a full weight tensor, which coefficient encoding
    /// does not suit).
    pub fn of(program: &Program, v: ValueId) -> Option<Product> {
        if !program.is_secure_product(v) {
            return None;
        }
        let shape = |o: &ValueId| program.ty(*o).shape();
        let server = |o: &ValueId| program.ty(*o).owner() == Owner::Server;
        match &program.instr(v).op {
            Op::Conv2d { x, w, conv, .. } => {
                let (xs, ws) = (shape(x), shape(w));
                let [n, c, h, wd]: [usize; 4] = xs.try_into().ok()?;
                let [co, _, kh, kw]: [usize; 4] = ws.try_into().ok()?;
                Some(Product::Conv(ConvGeom {
                    input: [n, c, h, wd],
                    c_out: co,
                    kernel: [kh, kw],
                    conv: *conv,
                }))
            }
            Op::MatMul { a, b, .. } => {
                let [r, k]: [usize; 2] = shape(a).try_into().ok()?;
                let [_, o]: [usize; 2] = shape(b).try_into().ok()?;
                Some(if server(b) {
                    Product::Right {
                        rows: r,
                        inner: k,
                        outs: o,
                    }
                } else {
                    Product::Left {
                        outs: r,
                        inner: k,
                        cols: o,
                    }
                })
            }
            Op::Mul { a, b } => {
                let (x, w) = if server(b) { (a, b) } else { (b, a) };
                let out = program.ty(v).shape();
                if shape(x) != out {
                    return None;
                }
                let ws = shape(w);
                let lead = out.len().checked_sub(ws.len())?;
                let mut axes = (0..ws.len()).filter(|&i| ws[i] != 1).map(|i| i + lead);
                let (pre, c, post) = match (axes.next(), axes.next()) {
                    (None, _) => (1, 1, out.iter().product()),
                    (Some(a), None) => (
                        out[..a].iter().product(),
                        out[a],
                        out[a + 1..].iter().product(),
                    ),
                    (Some(_), Some(_)) => return None,
                };
                Some(Product::Scale { pre, c, post })
            }
            _ => None,
        }
    }

    /// The convolution that computes the product (the matrix products by
    /// [`matmul_geom`]).
    pub fn geom(&self) -> ConvGeom {
        match *self {
            Product::Conv(g) => g,
            Product::Right { rows, inner, outs } => matmul_geom(rows, inner, outs),
            Product::Left { outs, inner, cols } => matmul_geom(cols, inner, outs),
            Product::Scale { pre, c, post } => ConvGeom {
                input: [pre, c, post, 1],
                c_out: c,
                kernel: [1, 1],
                conv: Conv2d {
                    groups: c,
                    ..Conv2d::default()
                },
            },
        }
    }

    /// The product's layout at width `ell` ([`conv_layout`] of [`Product::geom`]).
    pub fn layout(&self, ell: u32) -> Result<Layout, RlweError> {
        conv_layout(&self.geom(), ell)
    }
}

/// The layout of instruction `v` of `program` if RLWE runs it
/// ([`Program::product_backend`] is RLWE), at the program's ring width; `None`
/// otherwise. An error for a product that RLWE cannot run (a kind
/// [`Product::of`] refuses, or no layout floods it).
pub fn layout(program: &Program, v: ValueId) -> Option<Result<Layout, RlweError>> {
    (program.product_backend(v) == Some(Backend::Rlwe)).then(|| runnable(program, v))
}

/// The RLWE products of instruction `v` of `program`, in the order the runtime runs
/// them: a product with the server's weights that RLWE runs ([`layout`]) is one; a
/// product of two secret matrices that RLWE runs
/// ([`Program::secret_product_backend`]) is its two cross terms ([`secret_matmul`]).
/// `None` for an instruction RLWE does not run; an error where no layout floods.
pub fn layouts(program: &Program, v: ValueId) -> Option<Result<Vec<Layout>, RlweError>> {
    if let Some(l) = layout(program, v) {
        return Some(l.map(|l| vec![l]));
    }
    (program.secret_product_backend(v) == Some(Backend::Rlwe))
        .then(|| secret_runnable(program, v).map(Vec::from))
}

/// The two cross terms of a product `A·B` of two secret matrices, `A [n, k]`, `B
/// [k, m]`, shared `A = A_0 + A_1`, `B = B_0 + B_1` (server's share first), as RLWE
/// products whose weights are the server's shares: `A_0·B_1` ([`Product::Left`], the
/// client's `B_1` encrypted) and `A_1·B_0` ([`Product::Right`], the client's `A_1`
/// encrypted). The local terms `A_0·B_0` and `A_1·B_1` need no message.
///
/// The noise analysis of the module documentation holds unchanged: it assumes
/// worst-case weights `|w| ≤ 2^{ℓ−1}` (the signed view of any element of
/// `Z_{2^ℓ}`), so a uniform share is as good a weight as any, and the server adds no
/// share of its own to the ciphertext (`|v_in| ≤ 20½ ≤ 21`); so each cross term is
/// flooded within `2^−40` ([`STAT_SEC`]) like a product by weights, the two of one
/// instruction within `2^−39`, and the client's shares are only ever sent encrypted.
pub fn secret_matmul(n: usize, k: usize, m: usize) -> [Product; 2] {
    [
        Product::Left {
            outs: n,
            inner: k,
            cols: m,
        },
        Product::Right {
            rows: n,
            inner: k,
            outs: m,
        },
    ]
}

/// The layouts RLWE would run secret product `v` of `program` with ([`secret_matmul`]
/// at the program's ring width), whatever its recorded backend: an error unless `v`
/// is a `matmul` of two secret operands over a ring whose two cross terms RLWE floods.
pub fn secret_runnable(program: &Program, v: ValueId) -> Result<[Layout; 2], RlweError> {
    let bits = ring_bits(program)?;
    let name = program.name(v);
    let [n, k, m] = match &program.instr(v).op {
        Op::MatMul { a, b, .. } if program.is_secret_product(v) => {
            let (sa, sb) = (program.ty(*a).shape(), program.ty(*b).shape());
            [sa[0], sa[1], sb[1]]
        }
        _ => {
            return Err(RlweError::Shape(format!(
                "%{name} is no matmul of two secret operands"
            )));
        }
    };
    let [left, right] = secret_matmul(n, k, m);
    Ok([left.layout(bits)?, right.layout(bits)?])
}

/// The ring width of `program`, or an error if it is not over a ring.
fn ring_bits(program: &Program) -> Result<u32, RlweError> {
    match program.encoding() {
        Some(crate::Encoding::Ring { bits }) => Ok(bits),
        e => Err(RlweError::Shape(format!(
            "the program's encoding {e:?} is not a ring"
        ))),
    }
}

/// The layout RLWE would run product `v` of `program` with, whatever its recorded
/// backend: an error if RLWE cannot run it ([`Product::of`], [`Product::layout`]).
pub fn runnable(program: &Program, v: ValueId) -> Result<Layout, RlweError> {
    let bits = ring_bits(program)?;
    let name = program.name(v);
    Product::of(program, v)
        .ok_or_else(|| {
            RlweError::Shape(format!(
                "%{name} is no product RLWE runs (a conv2d, a 2-D matmul, or a mul by weights along one axis)"
            ))
        })?
        .layout(bits)
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

/// The parameter sets of `program`'s RLWE products, secret products' cross terms
/// included ([`sets`] of their [`layouts`]; a product without one is left out: the
/// runtime refuses it).
pub fn program_sets(program: &Program) -> Vec<&'static ParamSet> {
    let layouts: Vec<Layout> = program
        .ids()
        .filter_map(|v| layouts(program, v)?.ok())
        .flatten()
        .collect();
    sets(&layouts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Conv2d;

    fn geom(input: [usize; 4], c_out: usize, k: usize, conv: Conv2d) -> ConvGeom {
        ConvGeom {
            input,
            c_out,
            kernel: [k, k],
            conv,
        }
    }

    #[test]
    fn sets_fit_the_standard() {
        for s in &PARAM_SETS {
            let bound = if s.degree == 4096 { 109.0 } else { 218.0 };
            assert!(s.log_q() <= bound, "{}", s.log_q());
            for &q in s.moduli {
                assert!(crate::types::is_prime(q) && q % (2 * s.degree as u64) == 1);
            }
        }
        assert_eq!(PARAM_SETS[0].reply_bits(37), 52);
        assert_eq!(PARAM_SETS[1].reply_bits(37), 53);
    }

    #[test]
    fn layouts_cover_every_output_once_and_flood() {
        let cases = [
            (
                geom(
                    [1, 3, 224, 224],
                    64,
                    3,
                    Conv2d {
                        strides: [2, 2],
                        ..Conv2d::default()
                    },
                ),
                37,
            ),
            (
                geom(
                    [1, 64, 13, 13],
                    256,
                    3,
                    Conv2d {
                        pads: [1; 4],
                        ..Conv2d::default()
                    },
                ),
                37,
            ),
            (geom([1, 512, 13, 13], 1000, 1, Conv2d::default()), 37),
            (
                geom(
                    [2, 8, 9, 7],
                    8,
                    3,
                    Conv2d {
                        groups: 8,
                        dilations: [2, 2],
                        pads: [2, 1, 0, 3],
                        ..Conv2d::default()
                    },
                ),
                16,
            ),
        ];
        for (g, ell) in cases {
            let l = conv_layout(&g, ell).expect("layout");
            assert!(l.mp * l.cp * l.hp * l.wp <= l.set.degree);
            assert!(l.log_distance <= -40.0);
            let [b, m, oh, ow] = g.output_shape();
            let mut seen = vec![false; b * m * oh * ow];
            let mut used = 0;
            for ct in 0..l.out_cts() {
                for (coef, idx) in l.outputs(ct) {
                    assert!(coef < l.set.degree && !seen[idx]);
                    seen[idx] = true;
                    used += 1;
                }
            }
            assert!(seen.iter().all(|&s| s));
            let n = l.set.degree as u64;
            let k = u64::from(l.set.reply_bits(ell));
            let down: u64 = (0..l.out_cts())
                .map(|ct| ((n + l.outputs(ct).len() as u64) * k).div_ceil(8))
                .sum();
            assert_eq!(l.bytes_down(), HEADER_BYTES + down);
            assert_eq!(used, b * m * oh * ow);
        }
        // ℓ = 37 needs N = 8192; ℓ = 16 fits N = 4096.
        assert_eq!(
            conv_layout(&cases_small(), 37).map(|l| l.set.degree),
            Ok(8192)
        );
        assert_eq!(
            conv_layout(&cases_small(), 16).map(|l| l.set.degree),
            Ok(4096)
        );
        assert!(conv_layout(&cases_small(), 49).is_err());
    }

    fn cases_small() -> ConvGeom {
        geom([1, 4, 8, 8], 4, 3, Conv2d::default())
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
