//! SCI_HE's linear layers and key set-up (CrypTFlow2 §2.2.4, §5.1.1, App. F), as
//! sci-runtime's `he` module runs them: ciphertext counts of each packing and the bytes
//! of each ciphertext and key on the wire.
//!
//! # A layer
//! One exchange on lane 0 (the server is role `P0`): the client sends
//! [`Counts::up`] fresh ciphertexts at level [`HE_CT_LEVEL`] ([`client_ct_bytes`]),
//! the server answers with [`Counts::down`] ciphertexts switched down to
//! [`reply_level`] ([`server_ct_bytes`]). The counts depend on the shapes only, one
//! function per packing ([`conv`], [`matmul`], [`mul`]); each repeats, in closed form,
//! the layout documented in the runtime's packing (`runtime/he/src/{conv,fc,mul}.rs`),
//! and sci-runtime's `tests/he_cost.rs` checks both against each other on many shapes —
//! a change of packing there must change the function here.
//!
//! # Bytes of a ciphertext
//! The runtime sends each object as its `fhe` serialization (protobuf) behind a 4-byte
//! length. A polynomial (`fhe-math`'s `Rq` message) is its representation tag (2
//! bytes), its degree `N` (3 bytes), its coefficients packed at each prime's bit width
//! (`N·⌈log₂ q_i⌉/8` bytes per prime, behind a tag and a varint length) and, when set,
//! its variable-time flag (2 bytes). A ciphertext (`Ciphertext` message) is its
//! polynomials (tag and length each), a 32-byte seed standing for `c_1` when it is a
//! fresh symmetric encryption, and its level (omitted at 0). With the primes of
//! [`HE_MODULI`] (43, 43, 44, 44, 44 bits), length prefix included: 178,231 bytes up
//! (`c_0` at four primes and the seed) and 176,160 bytes down at level 3 (two
//! polynomials at two primes, without the flag; 88,096 at level 4).
//!
//! # Key set-up
//! Once per session, before the first instruction, on lane 0, from the client: the
//! Galois keys ([`galois_exponents`]: the column rotations by `2^j < N/2` and the row
//! swap; each a key-switching key of four `c_0` polynomials at all five primes and a
//! seed) and the public key (a seeded encryption of zero at level 0): [`key_setup_bytes`]
//! = 11,832,745 bytes.

use super::{Role, Transcript};
use crate::backend::{HE_CT_LEVEL, HE_DEGREE, HE_MODULI, reply_level};
use crate::{ConvGeom, Op, Owner, Program, ValueId};

/// `N`, slots per ciphertext.
const N: u64 = HE_DEGREE;

/// Slots of one of the two rows a column rotation rotates.
const ROW: usize = (HE_DEGREE / 2) as usize;

/// Ciphertexts of one HE layer each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// The client's encrypted share.
    pub up: usize,
    /// The server's masked result.
    pub down: usize,
}

/// Convolution by Gazelle's channel packing (runtime `he/conv.rs`), polyphase for
/// strides: the padded input is split into the phases `(φ_h, φ_w)` in use (the residues
/// mod `s` of the kernel's offsets `k·d` per axis), each a phase image of width `W_v =
/// W_out + ⌊(k_w − 1)d_w/s_w⌋`, and the convolution runs at stride 1 on the `C_v =
/// C_in·(phases)` phase channels with the kernel's phases (at stride 1: one phase, the
/// padded image). A block of `ROW/c_n` slots holds a tile of `t_h + span_h` phase-image
/// rows (`span_h = ⌊(k_h − 1)d_h/s_h⌋`), `t_h = min(H_out, ⌊ROW/W_v⌋ − span_h)` output
/// rows, where `c_n` is the largest power of two with `c_n·(t_h + span_h)·W_v ≤ ROW`;
/// each ciphertext holds `2c_n` channels of one tile. Up: `N_batch·tiles·⌈C_v/2c_n⌉`;
/// down: `N_batch·tiles·⌈C_out/2c_n⌉`. `None` for a geometry the packing refuses (a
/// phase-image row with its kernel span wider than a row, or an empty output).
pub fn conv(geom: &ConvGeom) -> Option<Counts> {
    let [n, c, _, _] = geom.input;
    let [oh, ow] = geom.output_hw();
    // An output implies kernels and strides of at least 1.
    if n == 0 || oh == 0 || ow == 0 {
        return None;
    }
    // Per axis: the phases in use and the phase image's span.
    let axis = |a: usize| {
        let (k, d, s) = (geom.kernel[a], geom.conv.dilations[a], geom.conv.strides[a]);
        let mut phases: Vec<usize> = (0..k).map(|i| i * d % s).collect();
        phases.sort_unstable();
        phases.dedup();
        (phases.len(), (k - 1) * d / s)
    };
    let ((ph, span), (pw, span_w)) = (axis(0), axis(1));
    let wv = ow + span_w;
    if wv > ROW {
        return None;
    }
    let th_max = (ROW / wv).checked_sub(span).filter(|&t| t >= 1)?;
    let th = oh.min(th_max);
    let tiles = oh.div_ceil(th);
    let cn = 1usize << (ROW / ((th + span) * wv)).ilog2();
    Some(Counts {
        up: n * tiles * (c * ph * pw).div_ceil(2 * cn),
        down: n * tiles * geom.c_out.div_ceil(2 * cn),
    })
}

/// `X·W` (`X` shared `rows × cols`, `W` the server's `cols × outs`) by Gazelle's hybrid
/// diagonal method (runtime `he/fc.rs`): chunks of `m = min(2^⌈log₂ cols⌉, ROW)`
/// inputs replicated in `ROW/m` blocks of both rows, `m_o = min(2^⌈log₂ ⌈outs/(2ROW/m)⌉⌉,
/// m)` outputs per block. Up: `rows·⌈cols/m⌉`; down: `rows·⌈outs/(2·(ROW/m)·m_o)⌉`.
/// `None` for an empty product.
pub fn matmul(rows: usize, cols: usize, outs: usize) -> Option<Counts> {
    if rows == 0 || cols == 0 || outs == 0 {
        return None;
    }
    let m = cols.next_power_of_two().min(ROW);
    let blocks = ROW / m;
    let mo = outs.div_ceil(2 * blocks).next_power_of_two().min(m);
    Some(Counts {
        up: rows * cols.div_ceil(m),
        down: rows * outs.div_ceil(2 * blocks * mo),
    })
}

/// Elementwise `x ⊙ w` of `n` elements (runtime `he/mul.rs`): `N` per ciphertext,
/// `⌈n/N⌉` each way. `None` for `n = 0`.
pub fn mul(n: usize) -> Option<Counts> {
    let k = n.div_ceil(N as usize);
    (n > 0).then_some(Counts { up: k, down: k })
}

/// The ciphertext counts of instruction `v` of `program` if it is a product with the
/// server's weights ([`Program::is_secure_product`]) that SCI_HE runs by HE, with the
/// packing the runtime's executor picks: `conv2d` as one [`conv`] (all groups at
/// once), `X·W` as [`matmul`], `W·X` as the [`matmul`] `Xᵀ·Wᵀ`, `mul` as [`mul`] of the
/// output's elements (the shared operand broadcast). `None` otherwise, or for a
/// geometry the packing refuses.
pub fn product(program: &Program, v: ValueId) -> Option<Counts> {
    if !program.is_secure_product(v) {
        return None;
    }
    let shape = |o: &ValueId| program.ty(*o).shape();
    let dim = |s: &[usize], i: usize| s.get(i).copied().unwrap_or(1);
    let server = |o: &ValueId| program.ty(*o).owner() == Owner::Server;
    match &program.instr(v).op {
        Op::Conv2d { x, w, conv: c, .. } => {
            let (xs, ws) = (shape(x), shape(w));
            conv(&ConvGeom {
                input: [0, 1, 2, 3].map(|i| dim(xs, i)),
                c_out: dim(ws, 0),
                kernel: [dim(ws, 2), dim(ws, 3)],
                conv: *c,
            })
        }
        Op::MatMul { a, b, .. } if server(b) => {
            let (sa, sb) = (shape(a), shape(b));
            matmul(dim(sa, 0), dim(sa, 1), dim(sb, 1))
        }
        Op::MatMul { a, b, .. } => {
            let (sa, sb) = (shape(a), shape(b));
            matmul(dim(sb, 1), dim(sb, 0), dim(sa, 0))
        }
        Op::Mul { .. } => mul(program.ty(v).numel()),
        _ => None,
    }
}

/// Bytes of a varint encoding `v`.
fn varint(v: u64) -> u64 {
    u64::from((64 - v.max(1).leading_zeros()).div_ceil(7))
}

/// Bytes of a length-delimited field (tag, length, `len` bytes of payload).
fn field(len: u64) -> u64 {
    1 + varint(len) + len
}

/// Bytes of an integer field holding `v` (omitted when 0).
fn int_field(v: u64) -> u64 {
    if v == 0 { 0 } else { 1 + varint(v) }
}

/// Bytes of a polynomial (`fhe-math`'s `Rq` message) over the primes of `level`, with
/// or without its variable-time flag.
fn poly(level: usize, variable_time: bool) -> u64 {
    let coefficients: u64 = HE_MODULI[..HE_MODULI.len() - level]
        .iter()
        .map(|&q| (N * u64::from(64 - (q - 1).leading_zeros())).div_ceil(8))
        .sum();
    2 + int_field(N) + field(coefficients) + if variable_time { 2 } else { 0 }
}

/// Bytes of a `Ciphertext` message at `level` with `polys` polynomials sent, plus the
/// 32-byte seed of `c_1` if `seeded`.
fn ciphertext(level: usize, polys: u64, seeded: bool, variable_time: bool) -> u64 {
    polys * field(poly(level, variable_time))
        + if seeded { field(32) } else { 0 }
        + int_field(level as u64)
}

/// Bytes on the wire (length prefix included) of one of the client's ciphertexts: a
/// fresh symmetric encryption at level [`HE_CT_LEVEL`], `c_0` and the seed of `c_1`.
pub fn client_ct_bytes() -> u64 {
    4 + ciphertext(HE_CT_LEVEL, 1, true, true)
}

/// Bytes on the wire of one of the server's reply ciphertexts for the plaintext modulus
/// `t`: both polynomials at [`reply_level`]`(t)`, without the variable-time flag (the
/// server clears it on everything it receives and sends).
pub fn server_ct_bytes(t: u64) -> u64 {
    4 + ciphertext(reply_level(t), 2, false, false)
}

/// The exponents of the client's Galois keys: `3^(2^j) mod 2N` for the column rotations
/// by `2^j < N/2` (others are composed) and `2N − 1` for the row swap.
pub fn galois_exponents() -> Vec<u64> {
    let two_n = 2 * N;
    let mut e: Vec<u64> = (0..ROW.trailing_zeros())
        .map(|j| (0..1u64 << j).fold(1, |acc, _| acc * 3 % two_n))
        .collect();
    e.push(two_n - 1);
    e
}

/// Bytes on the wire of the key set-up (client to server; the server sends nothing):
/// the Galois keys at level 0 for ciphertexts at [`HE_CT_LEVEL`] (a key-switching key
/// of one seeded `c_0` at all five primes per ciphertext prime), then the public key.
pub fn key_setup_bytes() -> u64 {
    let digits = (HE_MODULI.len() - HE_CT_LEVEL) as u64;
    let ksk = digits * field(poly(0, true)) + field(32) + int_field(HE_CT_LEVEL as u64);
    let galois: u64 = galois_exponents()
        .into_iter()
        .map(|e| field(field(ksk) + int_field(e)))
        .sum();
    let evaluation_key = galois + int_field(HE_CT_LEVEL as u64);
    let public_key = field(ciphertext(0, 1, true, false));
    4 + evaluation_key + 4 + public_key
}

/// The key set-up's transcript (the server as role `P0`).
pub fn key_setup() -> Transcript {
    Transcript::new().send(Role::P1, key_setup_bytes())
}

/// One HE layer with `counts` ciphertexts at plaintext modulus `t` (the server as role
/// `P0`): the client's ciphertexts, then the server's.
pub fn layer(counts: Counts, t: u64) -> Transcript {
    Transcript::new()
        .send(Role::P1, counts.up as u64 * client_ct_bytes())
        .send(Role::P0, counts.down as u64 * server_ct_bytes(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{HE_BITS, he_prime};

    #[test]
    fn sizes_of_ciphertexts_and_keys() {
        // As measured on the wire (sci-runtime's tests/he_cost.rs).
        assert_eq!(client_ct_bytes(), 178_231);
        assert_eq!(server_ct_bytes(4_294_475_777), 176_160);
        assert_eq!(server_ct_bytes(114_689), 88_096);
        assert_eq!(key_setup_bytes(), 11_832_745);
        assert_eq!(galois_exponents().len(), 13);
        for bits in HE_BITS {
            if let Ok(t) = he_prime(bits) {
                assert_eq!(reply_level(t), if bits < 24 { 4 } else { 3 }, "{bits}");
            }
        }
    }

    #[test]
    fn packings() {
        // A 3×3 convolution without dilation or groups.
        let conv3x3 = |input, c_out, strides, pads| ConvGeom {
            input,
            c_out,
            kernel: [3, 3],
            conv: crate::Conv2d {
                strides,
                pads,
                dilations: [1, 1],
                groups: 1,
            },
        };
        // 64 → 64 channels, 32×32 padded to 34×34: three channels' tiles per row
        // rounded down to two, four channels per ciphertext.
        let geom = conv3x3([1, 64, 32, 32], 64, [1, 1], [1; 4]);
        assert_eq!(conv(&geom), Some(Counts { up: 16, down: 16 }));
        // SqueezeNet's conv1, 3 → 64 channels at stride 2 on 224×224: 12 phase
        // channels of 112 columns, 4 tiles of 35 output rows, one channel per row.
        let conv1 = conv3x3([1, 3, 224, 224], 64, [2, 2], [0; 4]);
        assert_eq!(conv(&conv1), Some(Counts { up: 24, down: 128 }));
        assert_eq!(matmul(1, 1024, 10), Some(Counts { up: 1, down: 1 }));
        assert_eq!(matmul(2, 5000, 3), Some(Counts { up: 4, down: 2 }));
        assert_eq!(mul(9000), Some(Counts { up: 2, down: 2 }));
        assert_eq!(mul(0), None);
    }
}
