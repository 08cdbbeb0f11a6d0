//! Convolutions by HE (Gazelle's channel packing with output rotations,
//! CrypTFlow2 App. F's merge of equally misaligned ciphertexts).
//!
//! # Layout
//! A ciphertext is two rows of `ROW = 4096` slots; each row holds `c_n`
//! blocks of `ROW/c_n` slots (`c_n` a power of two, so a rotation by a whole
//! number of blocks permutes blocks cyclically), one input channel per block:
//! `2c_n` channels per ciphertext. A block holds a tile of the zero-padded
//! input image, row-major with the padded width `W_p`: `t_h + (k_h − 1)d_h`
//! padded rows, where `t_h` is the number of (stride-1) output rows of the
//! tile — all of them when the padded image fits a block, else the image is
//! cut into tiles (with halos) that are packed into separate ciphertexts.
//! The output ciphertext has the same layout, one output channel per block,
//! output `(y, x)` of the tile at local slot `y·W_p + x` (`x < W_p − (k_w −
//! 1)d_w`); other slots hold garbage (masked like everything else).
//!
//! **Replication** (Gazelle, Juvekar et al. 2018, §5.2): when the input
//! channels fit one row (`C_in ≤ c_n`), block `j` of **both** rows of the
//! single input ciphertext holds channel `j mod p`, `p = 2^⌈log₂ C_in⌉` (the
//! blocks of a channel `≥ C_in` stay empty). A shift by `u` blocks then brings
//! channel `(j + u) mod p` to output block `j`, so the `p` shifts `u ∈ [0, p)`
//! align every input channel with every output block, and no row swap is
//! needed: `p` alignments instead of `2c_n` (LeNet's 1- and 6-channel
//! convolutions: 1 and 8 instead of 64 and 128), with as many fewer plaintexts
//! and key switches. The client's ciphertexts and their count are unchanged in
//! size; only the slots hold copies.
//!
//! **Strides** are computed at stride 1 and subsampled when the shares are
//! read out (`s_h·s_w` times the products of a strided layer, no extra
//! ciphertexts beyond the stride-1 rows needed). **Groups** are weight
//! matrices with zeros across groups (zero plaintexts are skipped).
//!
//! # Evaluation (server)
//! For output ciphertext `g`, an alignment — a row swap `s ∈ {0, 1}` and a
//! block shift `u ∈ [0, c_n)`; with replication `s = 0` and `u ∈ [0, p)` —
//! and a kernel offset `(dy, dx)`, input block `(r', j')` holds channel `i`
//! and must contribute to output block `(r' ⊕ s, j' − u)` holding channel
//! `o`, at offset `δ = dy·d_h·W_p + dx·d_w`. So
//!
//! `out_g = Σ_{s,u,dy,dx} swap^s R(u·B + δ)(Σ_k in_k ⊙ P_{g,s,u,dy,dx,k})`,
//!
//! with `P` constant on each block (the weight `w[o][i][dy][dx]`) and `R` the
//! left rotation of both rows. Two evaluation orders, chosen per layer from
//! the worst-case noise bound (public: the geometry and `t`;
//! [`Conv::rotate_inputs`]):
//!
//! * **Input rotations** (where the bound allows: the `ℓ = 32` fields): since
//!   `P` is constant on the blocks and a valid output never reads across a
//!   block, `R(δ)(in_k ⊙ P) = R(δ)(in_k) ⊙ P` on the slots that matter, so
//!   `out_g = Σ_s swap^s Σ_u R(u·B)(Σ_{dy,dx,k} R(δ)(in_k) ⊙ P_{g,s,u,dy,dx,k})`.
//!   Each input is rotated once per layer by the `k_h·k_w` offsets
//!   ([`Packing::prepare`]; each rotation starts from an earlier offset with
//!   the fewest key switches, mostly one; the rotations that start from the
//!   same ciphertext share its decomposition, [`super::keyswitch`]), and each
//!   output ciphertext then
//!   needs only its alignment sums, nested by Horner's rule over `u` (step
//!   `B`): one key switch per alignment but the first. The products multiply the key
//!   switching noise of the rotated inputs, which the bound (and the flooding)
//!   accounts for.
//! * **Output rotations** (otherwise): the products with the same misalignment
//!   `(s, u, dy, dx)` are summed **before** rotating (App. F: one rotation per
//!   subgroup instead of one per input ciphertext), and the rotations are nested
//!   by Horner's rule over `dx` (step `d_w`), `dy` (step `d_h·W_p`) and `u`
//!   (step `B`), so each of the `a·k_h·k_w` sums (`a` alignments) costs about
//!   one key switch.
//!   Rotations act on products only, so their noise adds ([`super::noise`]).
//!
//! The plaintexts `P` depend on `g` but not on the tile or the batch item, so
//! one work unit computes output ciphertext `g` of every tile and item and
//! encodes each plaintext once. Products are summed in one fused pass per sum
//! ([`Evaluator::dot_terms`]).
//!
//! # Cost
//! Client → server: `n·⌈C_in/2c_n⌉·tiles` ciphertexts; back: `n·⌈C_out/2c_n⌉·
//! tiles` (`n` the batch; the same in both orders). Server, with `a` the
//! alignments (`2c_n`, or `p` with replication): at most
//! `⌈C_out/2c_n⌉·a·k_h·k_w·⌈C_in/2c_n⌉` plaintexts encoded (those that are
//! zero by the geometry are skipped), and as many products per tile and item;
//! key switches: by input rotations, about `k_h·k_w − 1` per input ciphertext
//! plus `a − 1` per output ciphertext; by output rotations, about
//! `a·k_h·k_w` per output ciphertext.

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
    /// Padded input height and width.
    hp: usize,
    wp: usize,
    /// Kernel spans `(k − 1)·d`.
    span: [usize; 2],
    /// Output height and width (with strides).
    out_hw: [usize; 2],
    /// Stride-1 output rows per tile, tiles, blocks per row, block size.
    th: usize,
    tiles: usize,
    cn: usize,
    bsz: usize,
    /// Ciphertexts per tile: input, output.
    in_per: usize,
    out_per: usize,
    /// The replication period `p` of the input channels, or `None`
    /// ([module documentation](self): `Some(2^⌈log₂ C_in⌉)` when `C_in ≤ c_n`).
    rep: Option<usize>,
}

impl<'w> Conv<'w> {
    /// The packing of `geom` (weights `w` on the server).
    pub fn new(geom: &ConvGeom, w: Option<&'w [u64]>) -> Result<Conv<'w>, HeError> {
        let [n, c, h, wd] = geom.input;
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
        let hp = h + geom.conv.pads[0] + geom.conv.pads[2];
        let wp = wd + geom.conv.pads[1] + geom.conv.pads[3];
        let span = [
            geom.conv.dilations[0] * (geom.kernel[0] - 1),
            geom.conv.dilations[1] * (geom.kernel[1] - 1),
        ];
        let out_hw = geom.output_hw();
        check(
            n >= 1 && out_hw[0] >= 1 && out_hw[1] >= 1 && hp > span[0],
            || format!("empty convolution {geom:?}"),
        )?;
        let rows_needed = (out_hw[0] - 1) * geom.conv.strides[0] + 1;
        let th_max = (ROW / wp.max(1)).saturating_sub(span[0]);
        check(wp <= ROW && th_max >= 1, || {
            format!(
                "a padded image row of {wp} slots with a kernel span of {} rows does not fit {ROW} slots",
                span[0] + 1
            )
        })?;
        let th = rows_needed.min(th_max);
        let tiles = rows_needed.div_ceil(th);
        let tile_len = (th + span[0]) * wp;
        let cn = 1usize << (ROW / tile_len).ilog2();
        let bsz = ROW / cn;
        let p = c.next_power_of_two();
        Ok(Conv {
            geom: *geom,
            w,
            hp,
            wp,
            span,
            out_hw,
            th,
            tiles,
            cn,
            bsz,
            in_per: c.div_ceil(2 * cn),
            out_per: geom.c_out.div_ceil(2 * cn),
            rep: (p <= cn).then_some(p),
        })
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

    /// The input channel in block `(r, j)` of input ciphertext `k` of a tile
    /// (possibly `≥ C_in`: an empty block).
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

    /// The weight linking input channel `i` to output channel `o` at `(dy,
    /// dx)`, or `None` if they are in different groups (a structural zero).
    fn weight(&self, w: &[u64], o: usize, i: usize, dy: usize, dx: usize) -> Option<u64> {
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

    /// Kernel offsets `k_h·k_w`.
    fn offsets(&self) -> usize {
        self.geom.kernel[0] * self.geom.kernel[1]
    }

    /// The slot offset `δ = dy·d_h·W_p + dx·d_w` of kernel offset `o = dy·k_w + dx`.
    fn offset(&self, o: usize) -> usize {
        let kw = self.geom.kernel[1];
        let [dh, dw] = self.geom.conv.dilations;
        (o / kw) * dh * self.wp + (o % kw) * dw
    }

    /// How [`Packing::prepare`] derives an input's rotations by the kernel
    /// offsets: per offset `o`, the earlier offset it rotates from, the left
    /// rotation, and the noise bound of the result. Each starts from the earlier
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

    /// Whether the server rotates each input ciphertext by the `k_h·k_w` kernel
    /// offsets once per layer ([`Packing::prepare`]) instead of rotating every
    /// output ciphertext's `a·k_h·k_w` partial sums (`a` alignments): far fewer key switches, but
    /// the products then multiply the key-switching noise, so this is chosen only
    /// where the worst-case bound (public: geometry and `t`) still floods within
    /// the layer's statistical distance (`ℓ = 32` fields, not `ℓ = 41`).
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
    /// `(dy, dx)` and input ciphertext `k` (within a tile), or `None` if it is
    /// zero by the geometry alone (channels out of range or in different
    /// groups) — never because of the weights' values, so that the work and
    /// the noise bound (hence the flooding) depend on public data only.
    fn plaintext(
        &self,
        ev: &Evaluator<'_>,
        w: &[u64],
        (g, s, u, dy, dx, k): (usize, usize, usize, usize, usize, usize),
    ) -> Result<Option<Poly>, HeError> {
        let [_, c, _, _] = self.geom.input;
        let mut slots = vec![0u64; DEGREE];
        let mut any = false;
        for r in 0..2 {
            for j in 0..self.cn {
                let i = self.in_channel(k, r, j);
                let o = g * self.per_ct() + (r ^ s) * self.cn + (j + self.cn - u) % self.cn;
                if i >= c || o >= self.geom.c_out {
                    continue;
                }
                if let Some(v) = self.weight(w, o, i, dy, dx) {
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
        let (b, rest) = (
            kg / (self.tiles * self.in_per),
            kg % (self.tiles * self.in_per),
        );
        let (tile, k) = (rest / self.in_per, rest % self.in_per);
        let [top, left, _, _] = self.geom.conv.pads;
        let mut slots = vec![0u64; DEGREE];
        for r in 0..2 {
            for j in 0..self.cn {
                let i = self.in_channel(k, r, j);
                if i >= c {
                    continue;
                }
                for yy in 0..self.th + self.span[0] {
                    let py = tile * self.th + yy;
                    let Some(y) = py.checked_sub(top).filter(|&y| y < h && py < self.hp) else {
                        continue;
                    };
                    let base = ((b * c + i) * h + y) * wd;
                    for xx in 0..self.wp {
                        if let Some(xo) = xx.checked_sub(left).filter(|&xo| xo < wd) {
                            slots[self.slot(r, j, yy * self.wp + xx)] = x[base + xo];
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
        let [sh, sw] = self.geom.conv.strides;
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
                    let y1 = tile * self.th + yy;
                    if !y1.is_multiple_of(sh) || y1 / sh >= oh {
                        continue;
                    }
                    for ox in 0..ow {
                        let p = yy * self.wp + ox * sw;
                        y[((b * co + o) * oh + y1 / sh) * ow + ox] = slots[self.slot(r, j, p)];
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
        let [kh, kw] = self.geom.kernel;
        let [dh, dw] = self.geom.conv.dilations;
        let rotated = self.rotate_inputs(ev);
        let plan = self.rotation_plan();
        // The prepared ciphertexts of a tile: the inputs, or each input's
        // rotations by the kernel offsets (`offsets()` per input).
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
                        if let Some(pt) = self.plaintext(ev, w, (g, s, u, o / kw, o % kw, k))? {
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
                        let mut per_dy = Vec::with_capacity(kh);
                        for dy in 0..kh {
                            let per_dx = (0..kw)
                                .map(|dx| dot(Some(dy * kw + dx)))
                                .collect::<Result<Vec<_>, HeError>>()?;
                            per_dy.push(ev.horner(per_dx, dw)?);
                        }
                        ev.horner(per_dy, dh * self.wp)?
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
