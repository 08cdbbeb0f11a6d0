//! Convolutions by HE (Gazelle's channel packing with output rotations,
//! CrypTFlow2 App. F's merge of equally misaligned ciphertexts).
//!
//! # Layout
//! A ciphertext is two rows of `ROW = 4096` slots; each row holds `c_n`
//! blocks of `ROW/c_n` slots (`c_n` a power of two, so a rotation by a whole
//! number of blocks permutes blocks cyclically), one input channel per block:
//! `2c_n` channels per ciphertext. A block holds a tile of an input image,
//! row-major with its width `W_v`: `t_h + span_h` rows, where `t_h` is the
//! number of output rows of the tile — all of them when the image fits a
//! block, else the image is cut into tiles (with halos) that are packed into
//! separate ciphertexts. The output ciphertext has the same layout, one output
//! channel per block, output `(y, x)` of the tile at local slot `y·W_v + x`
//! (`x < W_out`); other slots hold garbage (masked like everything else).
//!
//! **Polyphase strides**: the images are phase images, so that only the outputs
//! in use are computed and sent back. Per axis (stride `s`, dilation `d`,
//! kernel `k`), the kernel's offsets `r = κ·d` (`κ < k`) are written `r = q·s +
//! φ`: phase `φ = r mod s`, step `q = ⌊r/s⌋`. Phase image `φ` of the zero-padded
//! input holds its rows (columns) `y·s + φ`, so output row `y` at kernel offset
//! `κ` reads row `y + q` of phase image `φ`. The layer is then a stride-1
//! convolution over the `C_v = C_in·|Φ_h|·|Φ_w|` phase channels `(φ_h, φ_w, i)`
//! (`Φ` the phases some kernel offset has) with the step pairs `(q_h, q_w)` in
//! use as its offsets; the weight of `(φ_h, φ_w, i)` at `(q_h, q_w)` is
//! `w[o][i][κ_h][κ_w]` where `q·s + φ = κ·d` on both axes, else a structural
//! zero. The phase images are `W_v = W_out + span_w` wide, `span = ⌊(k − 1)d/s⌋`
//! (the largest step). At stride 1 this is the padded image (one phase, `W_v =
//! W_p`, steps `κ·d`). SqueezeNet's conv1 (3×3, stride 2, 224×224, no padding):
//! 12 phase channels of 112 columns, 4 tiles of 35 output rows: 24 ciphertexts
//! up and 128 down, against 28 and 448 at stride 1 (14 tiles of 16 rows, then
//! subsampled).
//!
//! **Replication** (Gazelle, Juvekar et al. 2018, §5.2): when the (phase)
//! channels fit one row (`C_v ≤ c_n`), block `j` of **both** rows of the
//! single input ciphertext holds channel `j mod p`, `p = 2^⌈log₂ C_v⌉` (the
//! blocks of a channel `≥ C_v` stay empty). A shift by `u` blocks then brings
//! channel `(j + u) mod p` to output block `j`, so the `p` shifts `u ∈ [0, p)`
//! align every input channel with every output block, and no row swap is
//! needed: `p` alignments instead of `2c_n` (LeNet's 1- and 6-channel
//! convolutions: 1 and 8 instead of 64 and 128), with as many fewer plaintexts
//! and key switches. The client's ciphertexts and their count are unchanged in
//! size; only the slots hold copies.
//!
//! **Groups** are weight matrices with zeros across groups (zero plaintexts are
//! skipped).
//!
//! # Evaluation (server)
//! For output ciphertext `g`, an alignment — a row swap `s ∈ {0, 1}` and a
//! block shift `u ∈ [0, c_n)`; with replication `s = 0` and `u ∈ [0, p)` —
//! and an offset `(q_h, q_w)`, input block `(r', j')` holds phase channel `v`
//! and must contribute to output block `(r' ⊕ s, j' − u)` holding channel
//! `o`, at slot offset `δ = q_h·W_v + q_w`. So
//!
//! `out_g = Σ_{s,u,q_h,q_w} swap^s R(u·B + δ)(Σ_k in_k ⊙ P_{g,s,u,q,k})`,
//!
//! with `P` constant on each block (the weight of `v` at `q` for `o`) and `R` the
//! left rotation of both rows. Two evaluation orders, chosen per layer from
//! the worst-case noise bound (public: the geometry and `t`;
//! [`Conv::rotate_inputs`]):
//!
//! * **Input rotations** (where the bound allows: the `ℓ = 32` fields): since
//!   `P` is constant on the blocks and a valid output never reads across a
//!   block, `R(δ)(in_k ⊙ P) = R(δ)(in_k) ⊙ P` on the slots that matter, so
//!   `out_g = Σ_s swap^s Σ_u R(u·B)(Σ_{q,k} R(δ)(in_k) ⊙ P_{g,s,u,q,k})`.
//!   Each input is rotated once per layer by the offsets
//!   ([`Packing::prepare`]; each rotation starts from an earlier offset with
//!   the fewest key switches, mostly one; the rotations that start from the
//!   same ciphertext share its decomposition, [`super::keyswitch`]), and each
//!   output ciphertext then needs only its alignment sums, nested by Horner's
//!   rule over `u` (step `B`): one key switch per alignment but the first. The
//!   products multiply the key switching noise of the rotated inputs, which
//!   the bound (and the flooding) accounts for.
//! * **Output rotations** (otherwise): the products with the same misalignment
//!   `(s, u, q)` are summed **before** rotating (App. F: one rotation per
//!   subgroup instead of one per input ciphertext), and the rotations are nested
//!   by Horner's rule over `q_w` (step 1), `q_h` (step `W_v`) and `u` (step
//!   `B`), so each of the `a·|q|` sums (`a` alignments, `|q|` offsets) costs
//!   about one key switch.
//!   Rotations act on products only, so their noise adds ([`super::noise`]).
//!
//! The plaintexts `P` depend on `g` but not on the tile or the batch item, so
//! one work unit computes output ciphertext `g` of every tile and item and
//! encodes each plaintext once. Products are summed in one fused pass per sum
//! ([`Evaluator::dot_terms`]).
//!
//! # Cost
//! Client → server: `n·⌈C_v/2c_n⌉·tiles` ciphertexts; back: `n·⌈C_out/2c_n⌉·
//! tiles` (`n` the batch; the same in both orders). Server, with `a` the
//! alignments (`2c_n`, or `p` with replication) and `|q|` the offsets (`k_h·k_w`
//! at stride 1): at most `⌈C_out/2c_n⌉·a·|q|·⌈C_v/2c_n⌉` plaintexts encoded
//! (those that are zero by the geometry are skipped), and as many products per
//! tile and item; key switches: by input rotations, about `|q| − 1` per input
//! ciphertext plus `a − 1` per output ciphertext; by output rotations, about
//! `a·|q|` per output ciphertext.

use fhe::bfv::Ciphertext;
use fhe_math::rq::Poly;
use rayon::prelude::*;

use super::layer::{Evaluator, Noisy, Packing};
use super::noise;
use super::params::{DEGREE, ROW};
use super::{HeError, check};
use sci_ir::ConvGeom;

/// A convolution in the layout of the [module documentation](self); `w`
/// (`[C_out, C_in/groups, k_h, k_w]`, elements mod `t`) on the server only.
#[derive(Debug)]
pub struct Conv<'w> {
    geom: ConvGeom,
    w: Option<&'w [u64]>,
    /// Per axis: the phases in use (the residues `r mod s` of the kernel's offsets
    /// `r = k·d`, increasing) and the phase offsets `⌊r/s⌋` in use (increasing).
    phases: [Vec<usize>; 2],
    steps: [Vec<usize>; 2],
    /// Phase-image spans `⌊(k − 1)·d/s⌋` and the phase image's row width
    /// `W_v = W_out + span_w`.
    span: [usize; 2],
    wv: usize,
    /// Output height and width (with strides).
    out_hw: [usize; 2],
    /// Phase channels `C_v = C_in·(phases in use)`.
    cv: usize,
    /// Output rows per tile, tiles, blocks per row, block size.
    th: usize,
    tiles: usize,
    cn: usize,
    bsz: usize,
    /// Ciphertexts per tile: input, output.
    in_per: usize,
    out_per: usize,
    /// The replication period `p` of the phase channels, or `None`
    /// ([module documentation](self): `Some(2^⌈log₂ C_v⌉)` when `C_v ≤ c_n`).
    rep: Option<usize>,
}

impl<'w> Conv<'w> {
    /// The packing of `geom` (weights `w` on the server).
    pub fn new(geom: &ConvGeom, w: Option<&'w [u64]>) -> Result<Conv<'w>, HeError> {
        let [n, c, _, _] = geom.input;
        let g = geom.conv.groups;
        check(
            g >= 1
                && c.is_multiple_of(g)
                && geom.c_out.is_multiple_of(g)
                && geom
                    .conv
                    .strides
                    .iter()
                    .chain(&geom.conv.dilations)
                    .all(|&s| s >= 1)
                && geom.kernel.iter().all(|&k| k >= 1),
            || format!("invalid convolution geometry {geom:?}"),
        )?;
        if let Some(w) = w {
            let want = geom.c_out * (c / g) * geom.kernel[0] * geom.kernel[1];
            check(w.len() == want, || {
                format!("{} weights for {want} expected", w.len())
            })?;
        }
        // An output implies that the dilated kernel fits the padded input.
        let out_hw = geom.output_hw();
        check(n >= 1 && out_hw[0] >= 1 && out_hw[1] >= 1, || {
            format!("empty convolution {geom:?}")
        })?;
        // Per axis: the kernel's offsets `r = k·d` as phase `r mod s` and step `⌊r/s⌋`.
        let axis = |a: usize| {
            let (k, d, s) = (geom.kernel[a], geom.conv.dilations[a], geom.conv.strides[a]);
            let mut phases: Vec<usize> = (0..k).map(|i| i * d % s).collect();
            let mut steps: Vec<usize> = (0..k).map(|i| i * d / s).collect();
            phases.sort_unstable();
            phases.dedup();
            steps.dedup();
            (phases, steps, (k - 1) * d / s)
        };
        let ((ph, sh, span_h), (pw, sw, span_w)) = (axis(0), axis(1));
        let span = [span_h, span_w];
        let wv = out_hw[1] + span_w;
        let th_max = (ROW / wv).saturating_sub(span_h);
        check(wv <= ROW && th_max >= 1, || {
            format!(
                "a phase image row of {wv} slots with a kernel span of {} rows does not fit {ROW} slots",
                span_h + 1
            )
        })?;
        let th = out_hw[0].min(th_max);
        let tiles = out_hw[0].div_ceil(th);
        let tile_len = (th + span_h) * wv;
        let cn = 1usize << (ROW / tile_len).ilog2();
        let bsz = ROW / cn;
        let cv = c * ph.len() * pw.len();
        let p = cv.next_power_of_two();
        Ok(Conv {
            geom: *geom,
            w,
            phases: [ph, pw],
            steps: [sh, sw],
            span,
            wv,
            out_hw,
            cv,
            th,
            tiles,
            cn,
            bsz,
            in_per: cv.div_ceil(2 * cn),
            out_per: geom.c_out.div_ceil(2 * cn),
            rep: (p <= cn).then_some(p),
        })
    }

    /// The phase channel `v` (phase-major: `v = (φ_h·|φ_w| + φ_w)·C_in + i`) as the
    /// indices of its phases and its input channel `i`.
    fn phase_channel(&self, v: usize) -> (usize, usize, usize) {
        let c = self.geom.input[1];
        let (phase, i) = (v / c, v % c);
        let pw = self.phases[1].len();
        (phase / pw, phase % pw, i)
    }

    /// The kernel index `k` on axis `a` with `k·d = step·s + phase`, if any.
    fn kernel_index(&self, a: usize, phase: usize, step: usize) -> Option<usize> {
        let (d, s) = (self.geom.conv.dilations[a], self.geom.conv.strides[a]);
        let r = step * s + phase;
        (r.is_multiple_of(d) && r / d < self.geom.kernel[a]).then_some(r / d)
    }

    /// Row swaps `s` of the alignments: `{0}` with replication (both rows hold
    /// every input channel), else `{0, 1}`.
    fn swaps(&self) -> usize {
        if self.rep.is_some() { 1 } else { 2 }
    }

    /// Block shifts `u` of the alignments: `0..p` with replication, else
    /// `0..c_n`.
    fn shifts(&self) -> usize {
        self.rep.unwrap_or(self.cn)
    }

    /// The phase channel in block `(r, j)` of input ciphertext `k` of a tile
    /// (possibly `≥ C_v`: an empty block).
    fn in_channel(&self, k: usize, r: usize, j: usize) -> usize {
        match self.rep {
            Some(p) => j % p,
            None => k * self.per_ct() + r * self.cn + j,
        }
    }

    /// Channels per ciphertext.
    fn per_ct(&self) -> usize {
        2 * self.cn
    }

    /// Slot of local position `p` of block `(row, block)`.
    fn slot(&self, row: usize, block: usize, p: usize) -> usize {
        row * ROW + block * self.bsz + p
    }

    /// The weight linking phase channel `v` to output channel `o` at offset
    /// `off`, or `None` if no kernel element of `v`'s phases lands there or the
    /// channels are in different groups (structural zeros).
    fn weight(&self, w: &[u64], o: usize, v: usize, off: usize) -> Option<u64> {
        let (ph, pw, i) = self.phase_channel(v);
        let nw = self.steps[1].len();
        let dy = self.kernel_index(0, self.phases[0][ph], self.steps[0][off / nw])?;
        let dx = self.kernel_index(1, self.phases[1][pw], self.steps[1][off % nw])?;
        let [_, c, _, _] = self.geom.input;
        let (cig, cog) = (
            c / self.geom.conv.groups,
            self.geom.c_out / self.geom.conv.groups,
        );
        let grp = o / cog;
        if i / cig != grp {
            return None;
        }
        let [kh, kw] = self.geom.kernel;
        Some(w[((o * cig + (i - grp * cig)) * kh + dy) * kw + dx])
    }

    /// Offsets in the phase images: the pairs of steps in use, `o = i_h·|steps_w| +
    /// i_w` (`k_h·k_w` at stride 1).
    fn offsets(&self) -> usize {
        self.steps[0].len() * self.steps[1].len()
    }

    /// The slot offset `δ = q_h·W_v + q_w` of offset `o` (steps `q_h`, `q_w`;
    /// `dy·d_h·W_p + dx·d_w` at stride 1).
    fn offset(&self, o: usize) -> usize {
        let nw = self.steps[1].len();
        self.steps[0][o / nw] * self.wv + self.steps[1][o % nw]
    }

    /// The offset with steps `(q_h, q_w)`, if in use.
    fn offset_index(&self, qh: usize, qw: usize) -> Option<usize> {
        let ih = self.steps[0].iter().position(|&q| q == qh)?;
        let iw = self.steps[1].iter().position(|&q| q == qw)?;
        Some(ih * self.steps[1].len() + iw)
    }

    /// How [`Packing::prepare`] derives an input's rotations by the offsets: per
    /// offset `o`, the earlier offset it rotates from, the left rotation, and the
    /// noise bound of the result. Each starts from the earlier
    /// offset with the fewest key switches ([`Evaluator::rotate`]: one per set bit),
    /// so a 3×3 kernel mostly costs one key switch per offset.
    fn rotation_plan(&self) -> Vec<(usize, usize, f64)> {
        let mut plan = vec![(0, 0, noise::fresh())];
        for o in 1..self.offsets() {
            let d = self.offset(o);
            let (from, steps) = (0..o)
                .filter(|&p| self.offset(p) <= d)
                .map(|p| (p, d - self.offset(p)))
                .min_by_key(|&(_, steps)| (steps % ROW).count_ones())
                .unwrap_or((0, d));
            let switches = f64::from((steps % ROW).count_ones());
            plan.push((from, steps, plan[from].2 + switches * noise::key_switch()));
        }
        plan
    }

    /// Whether the server rotates each input ciphertext by the offsets once per
    /// layer ([`Packing::prepare`]) instead of rotating every output ciphertext's
    /// `a·|q|` partial sums (`a` alignments, `|q|` offsets): far fewer key
    /// switches, but the products then multiply the key-switching noise (up to
    /// `a·|q|·⌈C_v/2c_n⌉` of them per sum), so this is chosen only where the
    /// worst-case bound (public: geometry and `t`) still floods within the
    /// layer's statistical distance (`ℓ = 32` fields, not `ℓ = 41`).
    pub(crate) fn rotate_inputs(&self, ev: &Evaluator<'_>) -> bool {
        if self.offsets() == 1 {
            return false;
        }
        let worst = self
            .rotation_plan()
            .iter()
            .map(|&(_, _, b)| b)
            .fold(0.0, f64::max);
        let alignments = self.swaps() * self.shifts();
        let products = (alignments * self.offsets() * self.in_per) as f64;
        // The Horner sums over the block shifts and the row swap: at most one
        // rotation by a multiple of the block size per alignment plus the last
        // ones' bits.
        let switches = (alignments + 2 * ROW.trailing_zeros() as usize + 1) as f64;
        let bound = products * noise::product(worst, ev.t()) + switches * noise::key_switch();
        ev.floodable(bound, self.out_cts())
    }

    /// The plaintext of output ciphertext `g`, alignment `(s, u)`, offset
    /// `off` and input ciphertext `k` (within a tile), or `None` if it is
    /// zero by the geometry alone (channels out of range or in different
    /// groups, phases without a kernel element at the offset) — never because
    /// of the weights' values, so that the work and the noise bound (hence the
    /// flooding) depend on public data only.
    fn plaintext(
        &self,
        ev: &Evaluator<'_>,
        w: &[u64],
        (g, s, u, off, k): (usize, usize, usize, usize, usize),
    ) -> Result<Option<Poly>, HeError> {
        let mut slots = vec![0u64; DEGREE];
        let mut any = false;
        for r in 0..2 {
            for j in 0..self.cn {
                let i = self.in_channel(k, r, j);
                let o = g * self.per_ct() + (r ^ s) * self.cn + (j + self.cn - u) % self.cn;
                if i >= self.cv || o >= self.geom.c_out {
                    continue;
                }
                if let Some(v) = self.weight(w, o, i, off) {
                    any = true;
                    let start = self.slot(r, j, 0);
                    slots[start..start + self.bsz].fill(v);
                }
            }
        }
        Ok(if any { Some(ev.encode(&slots)?) } else { None })
    }
}

impl Packing for Conv<'_> {
    fn in_cts(&self) -> usize {
        self.geom.input[0] * self.tiles * self.in_per
    }

    fn out_cts(&self) -> usize {
        self.geom.input[0] * self.tiles * self.out_per
    }

    fn in_len(&self) -> usize {
        self.geom.input.iter().product()
    }

    fn out_len(&self) -> usize {
        self.geom.input[0] * self.geom.c_out * self.out_hw[0] * self.out_hw[1]
    }

    fn pack(&self, x: &[u64], kg: usize) -> Vec<u64> {
        let [_, c, h, wd] = self.geom.input;
        let [sh, sw] = self.geom.conv.strides;
        let (b, rest) = (
            kg / (self.tiles * self.in_per),
            kg % (self.tiles * self.in_per),
        );
        let (tile, k) = (rest / self.in_per, rest % self.in_per);
        let [top, left, _, _] = self.geom.conv.pads;
        let mut slots = vec![0u64; DEGREE];
        for r in 0..2 {
            for j in 0..self.cn {
                let v = self.in_channel(k, r, j);
                if v >= self.cv {
                    continue;
                }
                let (ph, pw, i) = self.phase_channel(v);
                let (a, e) = (self.phases[0][ph], self.phases[1][pw]);
                for yy in 0..self.th + self.span[0] {
                    // Row `tile·t_h + yy` of phase `a`: padded row `(·)·s_h + a`.
                    let py = (tile * self.th + yy) * sh + a;
                    let Some(y) = py.checked_sub(top).filter(|&y| y < h) else {
                        continue;
                    };
                    let base = ((b * c + i) * h + y) * wd;
                    for xx in 0..self.wv {
                        let px = xx * sw + e;
                        if let Some(xo) = px.checked_sub(left).filter(|&xo| xo < wd) {
                            slots[self.slot(r, j, yy * self.wv + xx)] = x[base + xo];
                        }
                    }
                }
            }
        }
        slots
    }

    fn unpack(&self, slots: &[u64], gg: usize, y: &mut [u64]) {
        let co = self.geom.c_out;
        let [oh, ow] = self.out_hw;
        let (b, rest) = (
            gg / (self.tiles * self.out_per),
            gg % (self.tiles * self.out_per),
        );
        let (tile, g) = (rest / self.out_per, rest % self.out_per);
        for r in 0..2 {
            for j in 0..self.cn {
                let o = g * self.per_ct() + r * self.cn + j;
                if o >= co {
                    continue;
                }
                for yy in 0..self.th {
                    let oy = tile * self.th + yy;
                    if oy >= oh {
                        continue;
                    }
                    for ox in 0..ow {
                        let p = yy * self.wv + ox;
                        y[((b * co + o) * oh + oy) * ow + ox] = slots[self.slot(r, j, p)];
                    }
                }
            }
        }
    }

    fn prepare(
        &self,
        ev: &Evaluator<'_>,
        inputs: Vec<Ciphertext>,
    ) -> Result<Vec<Ciphertext>, HeError> {
        if !self.rotate_inputs(ev) {
            return Ok(inputs);
        }
        let plan = self.rotation_plan();
        let rotated = inputs
            .into_par_iter()
            .map(|ct| {
                // Each rotation starts from an earlier one (the plan's `from`):
                // the children of one ciphertext share its digits (hoisting).
                let mut rots: Vec<Option<Noisy>> = (0..plan.len()).map(|_| None).collect();
                rots[0] = Some(Noisy {
                    ct,
                    bound: noise::fresh(),
                });
                for p in 0..plan.len() {
                    let children: Vec<usize> =
                        (1..plan.len()).filter(|&o| plan[o].0 == p).collect();
                    let Some(parent) = rots[p].as_ref().filter(|_| !children.is_empty()) else {
                        continue;
                    };
                    let h = ev.hoist(&parent.ct)?;
                    let done = children
                        .iter()
                        .map(|&o| Ok((o, ev.rotate_hoisted(&h, parent.bound, plan[o].1)?)))
                        .collect::<Result<Vec<_>, HeError>>()?;
                    for (o, r) in done {
                        rots[o] = Some(r);
                    }
                }
                rots.into_iter()
                    .map(|r| {
                        r.map(|r| r.ct).ok_or_else(|| {
                            HeError::InvalidArgument("a rotation plan out of order".into())
                        })
                    })
                    .collect::<Result<Vec<_>, HeError>>()
            })
            .collect::<Result<Vec<_>, HeError>>()?;
        Ok(rotated.into_iter().flatten().collect())
    }

    fn units(&self) -> usize {
        self.out_per
    }

    /// Output ciphertext `g` of every tile and batch item: the plaintexts
    /// depend on `g` only, so each is encoded once for all of them.
    fn eval(
        &self,
        ev: &Evaluator<'_>,
        inputs: &[Ciphertext],
        g: usize,
    ) -> Result<Vec<(usize, Noisy)>, HeError> {
        let w = self
            .w
            .ok_or_else(|| HeError::InvalidArgument("the server's weights are missing".into()))?;
        let rotated = self.rotate_inputs(ev);
        let plan = self.rotation_plan();
        // The prepared ciphertexts of a tile: the inputs, or each input's
        // rotations by the offsets (`offsets()` per input).
        let per_in = if rotated { self.offsets() } else { 1 };
        let tiles = self.geom.input[0] * self.tiles;
        let tile_in =
            |bt: usize| &inputs[bt * self.in_per * per_in..(bt + 1) * self.in_per * per_in];
        // Per tile, per row swap s, per block shift u: the sum to rotate.
        let mut sums: Vec<[Vec<Option<Noisy>>; 2]> = (0..tiles).map(|_| [vec![], vec![]]).collect();
        for s in 0..self.swaps() {
            for u in 0..self.shifts() {
                // The plaintexts of alignment (s, u): (offset, input, plaintext).
                let mut pts = Vec::new();
                for o in 0..self.offsets() {
                    for k in 0..self.in_per {
                        if let Some(pt) = self.plaintext(ev, w, (g, s, u, o, k))? {
                            pts.push((o, k, pt));
                        }
                    }
                }
                for (bt, sum) in sums.iter_mut().enumerate() {
                    let tin = tile_in(bt);
                    let dot = |want: Option<usize>| {
                        ev.dot_terms(
                            pts.iter()
                                .filter(|(o, ..)| want.is_none_or(|x| x == *o))
                                .map(|(o, k, pt)| {
                                    if rotated {
                                        (&tin[k * per_in + o], pt, plan[*o].2)
                                    } else {
                                        (&tin[*k], pt, noise::fresh())
                                    }
                                }),
                        )
                    };
                    sum[s].push(if rotated {
                        // Σ_{dy,dx,k} R(δ)(in_k) ⊙ P: no rotation per offset.
                        dot(None)?
                    } else {
                        // Horner over the steps of each axis (absent ones are zero).
                        let mut per_qh = Vec::with_capacity(self.span[0] + 1);
                        for qh in 0..=self.span[0] {
                            let per_qw = (0..=self.span[1])
                                .map(|qw| match self.offset_index(qh, qw) {
                                    Some(o) => dot(Some(o)),
                                    None => Ok(None),
                                })
                                .collect::<Result<Vec<_>, HeError>>()?;
                            per_qh.push(ev.horner(per_qw, 1)?);
                        }
                        ev.horner(per_qh, self.wv)?
                    });
                }
            }
        }
        sums.into_iter()
            .enumerate()
            .map(|(bt, [s0, s1])| {
                let swapped = ev
                    .horner(s1, self.bsz)?
                    .map(|h| ev.swap_rows(h))
                    .transpose()?;
                let total = match (ev.horner(s0, self.bsz)?, swapped) {
                    (Some(a), Some(b)) => ev.add(a, &b),
                    (Some(a), None) | (None, Some(a)) => a,
                    // No weight at all: an encryption of zero derived from an input.
                    (None, None) => ev.zero(&tile_in(bt)[0])?,
                };
                Ok((bt * self.out_per + g, total))
            })
            .collect()
    }
}
