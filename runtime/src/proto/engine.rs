//! [`Engine`]: the protocols over all lanes of a [`Session`], one method per
//! IR operation that needs communication.
//!
//! The non-linear layers take the [`Modulus`] of the shares (`Z_{2^ℓ}` for an
//! ℓ given as `u32`, or an odd `Z_n` for SCI_HE); the OT-based linear layers
//! work over `Z_{2^ℓ}` only.
//!
//! An elementwise protocol (ReLU, truncation, division, the signs of
//! max-pooling) is cut into `T` contiguous chunks ([`Session::run`]); chunk
//! `i` runs on lane `i` with roles alternating across lanes (the party that
//! plays the paper's `P0` in even chunks plays `P1` in odd ones), so both
//! directions of the link carry OT traffic. Pooling and ArgMax cut the
//! windows. Linear layers cut the rows of the shared operand; there the
//! server (party `P0`, the weight owner) is the OT sender on every lane, and
//! several independent products run as one OT call per lane
//! ([`Engine::products`]: lane `i` runs chunk `i` of every product).
//! Results do not depend on `T`.
//!
//! Costs are those of the per-lane protocols summed over the chunks (plus
//! the per-batch padding of each chunk); rounds are those of one chunk
//! (chunks run in parallel).

use std::borrow::BorrowMut;
use std::ops::Range;

use super::Modulus;
use super::bits::Bits;
use super::maxpool::{Compare, Windows};
use super::rdiv::Sign;
use super::{
    Ctx, ProtoError, Role, matmul, maxpool, rdiv, relu, rsqrt, secmul, sigmoid, sign, softmax,
    spline, trunc,
};
use crate::cheetah;
use crate::he;
use crate::net::Party;
use crate::ot::Session;
use crate::ot::session::split;
use sci_ir::ConvGeom;
use sci_ir::interp::linear;
use sci_ir::math::{RsqrtParams, Smooth, SmoothParams, SoftmaxParams};
use sci_ir::rlwe::ParamSet;
use sci_ir::spline::{SplineFn, SplineParams};
use sci_ir::{Encoding, Pool2d, Tensor};

/// The IR encoding of shares mod `md` (a prime field for an odd modulus).
fn encoding(md: Modulus) -> Result<Encoding, ProtoError> {
    match md {
        Modulus::Pow2(ell) => Encoding::ring(ell),
        Modulus::Odd(n) => Encoding::field(n),
    }
    .map_err(|e| ProtoError::InvalidArgument(format!("shares mod {md}: {e}")))
}

/// Results of chunks that concatenate into the result of the whole batch.
trait Join: Sized + Send {
    fn join(parts: Vec<Self>) -> Self;
}

impl<T: Send> Join for Vec<T> {
    fn join(parts: Vec<Self>) -> Self {
        parts.into_iter().flatten().collect()
    }
}

impl Join for Bits {
    fn join(parts: Vec<Self>) -> Self {
        Bits::concat(&parts)
    }
}

/// The protocols on a session; see the [module documentation](self). `S`
/// is the session, owned (`Engine<Session>`, the default) or borrowed
/// (`Engine<&mut Session>`).
#[derive(Debug)]
pub struct Engine<S = Session> {
    session: S,
    radix: u32,
    /// SCI_HE's keys, set up at the first HE layer (and again if the plaintext
    /// modulus changes).
    he: Option<he::Keys>,
    /// The RLWE products' keys (per parameter set, each set up once per session).
    rlwe: Option<cheetah::Keys>,
}

impl<S: BorrowMut<Session>> Engine<S> {
    /// An engine over `session` with millionaires' radix `radix` (1..=8;
    /// both parties must use the same).
    pub fn new(session: S, radix: u32) -> Engine<S> {
        Engine {
            session,
            radix,
            he: None,
            rlwe: None,
        }
    }

    /// The session (e.g. for its counters).
    pub fn session(&self) -> &Session {
        self.session.borrow()
    }

    /// The session, mutably.
    pub fn session_mut(&mut self) -> &mut Session {
        self.session.borrow_mut()
    }

    /// The session, giving up the engine.
    pub fn into_session(self) -> S {
        self.session
    }

    /// This party.
    pub fn party(&self) -> Party {
        self.session().party()
    }

    /// Runs `f` on the chunks of `0..n`, roles alternating across lanes
    /// (`server_sends`: the server is role `P0` on every lane).
    fn chunks<R: Join>(
        &mut self,
        n: usize,
        server_sends: bool,
        f: impl Fn(&mut Ctx<'_>, Range<usize>) -> Result<R, ProtoError> + Sync,
    ) -> Result<R, ProtoError> {
        let lanes = self.session().threads();
        let parts = self.on_lanes(server_sends, |ctx, i| {
            f(ctx, split(n, lanes).swap_remove(i))
        })?;
        Ok(R::join(parts))
    }

    /// Runs `f(ctx, i)` on every lane `i` of the session in parallel, roles
    /// alternating across lanes (`server_sends`: the server is role `P0` on
    /// every lane); the results in lane order.
    fn on_lanes<R: Send>(
        &mut self,
        server_sends: bool,
        f: impl Fn(&mut Ctx<'_>, usize) -> Result<R, ProtoError> + Sync,
    ) -> Result<Vec<R>, ProtoError> {
        let radix = self.radix;
        let lanes = self.session().threads();
        self.session_mut().run(lanes, |c| {
            let role = if server_sends {
                Role::from_sender(c.party == Party::Server)
            } else {
                Role::from_sender(c.sender)
            };
            let mut ctx = Ctx {
                ch: &mut c.lane.ch,
                ot: &mut c.lane.ot,
                prg: &mut c.lane.prg,
                role,
                radix,
            };
            f(&mut ctx, c.index)
        })
    }

    /// Shares of `ReLU(x)` mod `md` ([`relu::relu`]).
    pub fn relu(&mut self, md: impl Into<Modulus>, x: &[u64]) -> Result<Vec<u64>, ProtoError> {
        let md = md.into();
        self.chunks(x.len(), false, |ctx, r| relu::relu(ctx, md, &x[r]))
    }

    /// Shares of `max(x, 0) ≫ s` of shares `x` over `md = Z_{2^ℓ}`
    /// ([`trunc::relu_trunc`]: the IR's `relu_trunc`); errors over a field.
    pub fn relu_trunc(
        &mut self,
        md: impl Into<Modulus>,
        s: u32,
        x: &[u64],
    ) -> Result<Vec<u64>, ProtoError> {
        let ell = ring_width(md, "relu_trunc")?;
        self.chunks(x.len(), false, |ctx, r| {
            trunc::relu_trunc(ctx, ell, s, &x[r])
        })
    }

    /// Shares of `sigmoid` or `tanh` (`kind`) of shares `x` at scale `s` over
    /// `md = Z_{2^ℓ}` ([`sigmoid::smooth`] with the IR op's parameters,
    /// [`SmoothParams::of_op`]); errors over a field or outside the
    /// parameters' range.
    pub fn smooth(
        &mut self,
        md: impl Into<Modulus>,
        kind: Smooth,
        s: u32,
        x: &[u64],
    ) -> Result<Vec<u64>, ProtoError> {
        let ell = ring_width(md, &format!("{kind:?}"))?;
        let p = SmoothParams::of_op(kind, ell, s)
            .map_err(|e| ProtoError::InvalidArgument(e.to_string()))?;
        self.chunks(x.len(), false, |ctx, r| sigmoid::smooth(ctx, &p, &x[r]))
    }

    /// Shares of `rsqrt` of shares `x` at scale `s` over `md = Z_{2^ℓ}`
    /// ([`rsqrt::rsqrt`] with [`RsqrtParams::new`]); errors over a field or
    /// outside the parameters' range.
    pub fn rsqrt(
        &mut self,
        md: impl Into<Modulus>,
        s: u32,
        x: &[u64],
    ) -> Result<Vec<u64>, ProtoError> {
        let ell = ring_width(md, "rsqrt")?;
        let p = RsqrtParams::new(ell, s).map_err(|e| ProtoError::InvalidArgument(e.to_string()))?;
        self.chunks(x.len(), false, |ctx, r| rsqrt::rsqrt(ctx, &p, &x[r]))
    }

    /// Shares of `spline` (`func`) of shares `x` at scale `s` over `md = Z_{2^ℓ}`
    /// ([`spline::spline`] with [`SplineParams::new`]); errors over a field or
    /// outside the parameters' range.
    pub fn spline(
        &mut self,
        md: impl Into<Modulus>,
        func: SplineFn,
        s: u32,
        x: &[u64],
    ) -> Result<Vec<u64>, ProtoError> {
        let ell = ring_width(md, "spline")?;
        let p = SplineParams::new(func, ell, s)
            .map_err(|e| ProtoError::InvalidArgument(e.to_string()))?;
        self.chunks(x.len(), false, |ctx, r| spline::spline(ctx, &p, &x[r]))
    }

    /// Shares of `1{x < 0}` mod `md` (`MSB(x)` for `Z_{2^ℓ}`,
    /// [`sign::negative`]).
    pub fn msb(&mut self, md: impl Into<Modulus>, x: &[u64]) -> Result<Bits, ProtoError> {
        let md = md.into();
        self.chunks(x.len(), false, |ctx, r| sign::negative(ctx, md, &x[r]))
    }

    /// Shares of `x ≫ s` = `rdiv(x, 2^s)`: over `Z_{2^ℓ}` [`trunc::trunc`],
    /// or [`trunc::trunc_nonneg`] if the inputs are known to be non-negative;
    /// over an odd `Z_n` the division by `2^s` ([`rdiv::rdiv`], which takes
    /// §4.2.3's two-comparison path when `2·(n mod 2^s) ≤ 2^s`), or
    /// [`rdiv::rdiv_nonneg`] (no sign test) if the inputs are known to be
    /// non-negative.
    pub fn trunc(
        &mut self,
        md: impl Into<Modulus>,
        s: u32,
        x: &[u64],
        nonneg: bool,
    ) -> Result<Vec<u64>, ProtoError> {
        match md.into() {
            Modulus::Pow2(ell) => self.chunks(x.len(), false, |ctx, r| {
                if nonneg {
                    trunc::trunc_nonneg(ctx, ell, s, &x[r])
                } else {
                    trunc::trunc(ctx, ell, s, &x[r])
                }
            }),
            md => {
                super::check(s < 63, || format!("shift {s} too large"))?;
                let known = if nonneg { Sign::NonNeg } else { Sign::Any };
                self.rdiv(md, x, &[1 << s], known)
            }
        }
    }

    /// Shares of `rdiv(x_i, d_i)` mod `md` ([`rdiv::rdiv`], or
    /// [`rdiv::rdiv_nonneg`] for `Sign::NonNeg`; `d` has one divisor for all
    /// or one per element).
    pub fn rdiv(
        &mut self,
        md: impl Into<Modulus>,
        x: &[u64],
        d: &[u64],
        known: Sign,
    ) -> Result<Vec<u64>, ProtoError> {
        let md = md.into();
        super::check(d.len() == 1 || d.len() == x.len(), || {
            format!("{} divisors for {} elements", d.len(), x.len())
        })?;
        self.chunks(x.len(), false, |ctx, r| {
            let dr = if d.len() == 1 { d } else { &d[r.clone()] };
            match known {
                Sign::Any => rdiv::rdiv(ctx, md, &x[r], dr),
                Sign::NonNeg => rdiv::rdiv_nonneg(ctx, md, &x[r], dr),
            }
        })
    }

    /// The windows' maxima or first-maximum positions ([`maxpool`]).
    fn reduce(
        &mut self,
        md: Modulus,
        x: &[u64],
        windows: &Windows,
        cmp: Compare,
        index: bool,
    ) -> Result<Vec<u64>, ProtoError> {
        let signs = match cmp {
            Compare::Exact => Some(self.msb(md, x)?),
            Compare::Narrow => None,
        };
        self.chunks(windows.len(), false, |ctx, r| {
            let (v, i) =
                maxpool::reduce_windows(ctx, md, x, signs.as_ref(), &windows.slice(r), index)?;
            Ok(if index { i } else { v })
        })
    }

    /// Shares of the 2-D max pooling of `x` (`[n, c, h, w]`), as
    /// [`sci_ir::Op::MaxPool`]: where the geometry and comparisons allow, separably — the
    /// columns pass, then the rows pass ([`sci_ir::params::pool::separable`]: fewer
    /// comparisons in no more levels) — else all windows at once.
    pub fn maxpool(
        &mut self,
        md: impl Into<Modulus>,
        x: &[u64],
        shape: [usize; 4],
        pool: &Pool2d,
        cmp: Compare,
    ) -> Result<Vec<u64>, ProtoError> {
        let md = md.into();
        let [.., h, w] = shape;
        match sci_ir::params::pool::separable(pool, [h, w], cmp == Compare::Exact) {
            Some(sep) => {
                let (cols, rows) = Windows::separable(shape, &sep)?;
                let y = self.reduce(md, x, &cols, cmp, false)?;
                self.reduce(md, &y, &rows, cmp, false)
            }
            None => self.reduce(md, x, &Windows::pool2d(shape, pool)?, cmp, false),
        }
    }

    /// Shares of the index of the first maximum along `axis` of `x` (shape
    /// `shape`), as [`sci_ir::Op::ArgMax`].
    pub fn argmax(
        &mut self,
        md: impl Into<Modulus>,
        x: &[u64],
        shape: &[usize],
        axis: usize,
        cmp: Compare,
    ) -> Result<Vec<u64>, ProtoError> {
        let w = Windows::axis(shape, axis)?;
        self.reduce(md.into(), x, &w, cmp, true)
    }

    /// Shares of the softmax along `axis` of `x` (shape `shape`) at scale `s`
    /// over `md = Z_{2^ℓ}`, as [`sci_ir::Op::Softmax`]: the lines along the axis
    /// cut into one chunk per lane, each lane running [`softmax::softmax`] on
    /// its lines (`cmp` for their maxima); errors over a field or outside the
    /// parameters' range.
    pub fn softmax(
        &mut self,
        md: impl Into<Modulus>,
        s: u32,
        x: &[u64],
        shape: &[usize],
        axis: usize,
        cmp: Compare,
    ) -> Result<Vec<u64>, ProtoError> {
        let ell = ring_width(md, "softmax")?;
        let w = Windows::axis(shape, axis)?;
        let n = shape[axis];
        super::check(x.len() == shape.iter().product::<usize>(), || {
            format!("{} elements for the shape {shape:?}", x.len())
        })?;
        let p = SoftmaxParams::new(ell, s, n)
            .map_err(|e| ProtoError::InvalidArgument(e.to_string()))?;
        let lines: Vec<u64> = (0..w.len())
            .flat_map(|i| w.get(i).iter().map(|&j| x[j]))
            .collect();
        let y = self.chunks(w.len(), false, |ctx, r| {
            softmax::softmax(ctx, &p, cmp, &lines[r.start * n..r.end * n])
        })?;
        let mut out = vec![0; x.len()];
        for i in 0..w.len() {
            for (k, &j) in w.get(i).iter().enumerate() {
                out[j] = y[i * n + k];
            }
        }
        Ok(out)
    }

    /// Shares of the 2-D average pooling of `x` (`[n, c, h, w]`), as
    /// [`sci_ir::Op::AvgPool`] (CrypTFlow2 §5.1.2): the window sums, computed
    /// locally by the reference interpreter's kernel
    /// ([`sci_ir::interp::linear::window_sums`], sums mod `md`), then
    /// [`Self::rdiv`] by each window's count ([`Pool2d::window_counts`]).
    /// Cost and rounds: those of `rdiv` on the outputs.
    pub fn avgpool(
        &mut self,
        md: impl Into<Modulus>,
        x: &[u64],
        shape: [usize; 4],
        pool: &Pool2d,
        count_include_pad: bool,
    ) -> Result<Vec<u64>, ProtoError> {
        let md = md.into();
        let geometry = |e: sci_ir::CheckErrorKind| {
            ProtoError::InvalidArgument(format!("average pooling: {e}"))
        };
        let [n, c, h, w] = shape;
        let t = Tensor::canonical(encoding(md)?, shape.to_vec(), x.to_vec())
            .map_err(|e| ProtoError::InvalidArgument(format!("average pooling: {e}")))?;
        let sums = linear::window_sums(&t, pool).map_err(geometry)?;
        let counts = pool
            .window_counts([h, w], count_include_pad)
            .map_err(geometry)?
            .repeat(n * c);
        let sums = sums
            .as_u64()
            .expect("sums of ring or field elements are u64 words");
        self.rdiv(md, sums, &counts, Sign::Any)
    }

    /// Shares of the global average pooling of `x` (`[n, c, h, w]` →
    /// `[n, c]`), as [`sci_ir::Op::GlobalAvgPool`]: [`Self::avgpool`] with one
    /// window per plane.
    pub fn global_avgpool(
        &mut self,
        md: impl Into<Modulus>,
        x: &[u64],
        shape: [usize; 4],
    ) -> Result<Vec<u64>, ProtoError> {
        let [_, _, h, w] = shape;
        self.avgpool(md, x, shape, &Pool2d::global([h, w]), false)
    }

    /// Shares of the products `ps` by the server's weights (`None` at the
    /// client) ([`matmul::products`]): each product's rows cut into one chunk
    /// per lane, and lane `i` runs chunk `i` of every product in **one**
    /// streamed OT call, the server the sender on every lane. Rounds: those of
    /// one product; bytes: those of the products run one by one.
    pub fn products(
        &mut self,
        ell: u32,
        ps: &[matmul::Product<'_>],
    ) -> Result<Vec<Vec<u64>>, ProtoError> {
        let lanes = self.session().threads();
        matmul::products_with(ps, |jobs| {
            let parts = self.on_lanes(true, |ctx, i| {
                let chunks: Vec<matmul::Job<'_>> = jobs
                    .iter()
                    .map(|j| j.chunk(split(j.rows(), lanes).swap_remove(i)))
                    .collect();
                matmul::run_jobs(ctx, ell, &chunks)
            })?;
            let mut ys = vec![Vec::new(); jobs.len()];
            for part in parts {
                for (y, p) in ys.iter_mut().zip(part) {
                    y.extend(p);
                }
            }
            Ok(ys)
        })
    }

    /// Shares of the products `ps` of two shared operands mod `2^ℓ`
    /// ([`secmul::products`]): each product's rows (a `mul`'s elements) cut
    /// into one chunk per lane, and lane `i` runs chunk `i` of every product
    /// in one call, roles alternating across lanes (the protocol is
    /// symmetric). Rounds: those of one product (1 for role `P1`, 2 for role
    /// `P0`); bytes: [`sci_ir::cost::secmul::products`] of each lane's chunks.
    pub fn secret_products(
        &mut self,
        ell: u32,
        ps: &[secmul::SecretProduct<'_>],
    ) -> Result<Vec<Vec<u64>>, ProtoError> {
        for p in ps {
            p.validate(ell)?;
        }
        let lanes = self.session().threads();
        let parts = self.on_lanes(false, |ctx, i| {
            let chunks = ps
                .iter()
                .map(|p| p.rows(split(p.dims().0, lanes).swap_remove(i)))
                .collect::<Result<Vec<_>, _>>()?;
            secmul::products(ctx, ell, &chunks)
        })?;
        let mut ys = vec![Vec::new(); ps.len()];
        for part in parts {
            for (y, p) in ys.iter_mut().zip(part) {
                y.extend(p);
            }
        }
        Ok(ys)
    }

    /// Shares of `X·W` (`[R, C] × [C, O]`), `W` the server's (`None` on the
    /// client): [`Self::products`] of one [`matmul::Product::MatMul`].
    pub fn matmul(
        &mut self,
        ell: u32,
        dims: (usize, usize, usize),
        x: &[u64],
        w: Option<&[u64]>,
    ) -> Result<Vec<u64>, ProtoError> {
        matmul::one(self.products(ell, &[matmul::Product::MatMul { dims, x, w }]))
    }

    /// Shares of the convolution of `x` with the server's weights:
    /// [`Self::products`] of one [`matmul::Product::Conv`] (its groups in one
    /// call).
    pub fn conv2d(
        &mut self,
        ell: u32,
        geom: &ConvGeom,
        x: &[u64],
        w: Option<&[u64]>,
    ) -> Result<Vec<u64>, ProtoError> {
        matmul::one(self.products(ell, &[matmul::Product::Conv { geom, x, w }]))
    }

    /// Shares of `x ⊙ w` with `w` the server's: [`Self::products`] of one
    /// [`matmul::Product::Mul`].
    pub fn mul(&mut self, ell: u32, x: &[u64], w: Option<&[u64]>) -> Result<Vec<u64>, ProtoError> {
        matmul::one(self.products(ell, &[matmul::Product::Mul { x, w }]))
    }

    /// Shares of HE linear layers ([`he::layer::run_all`]) over the field
    /// `Z_t`: each `(packing, x)` is a [`he::conv::Conv`], [`he::fc::MatMul`]
    /// or [`he::mul::Mul`] (with the weights at the server) and this party's
    /// share of its input. Runs on lane 0; the first call of a session (or of
    /// a new `t`) sets up the keys there (client → server, ≈ 11.8 MB). One
    /// round trip for all the layers: the client's ciphertexts of every layer
    /// in one flight, the server's in one.
    pub fn he_linears(
        &mut self,
        t: u64,
        layers: &[(&dyn he::Packing, &[u64])],
    ) -> Result<Vec<Vec<u64>>, ProtoError> {
        self.he_keys(t)?;
        let keys = self
            .he
            .as_ref()
            .expect("set up just above when absent or for another modulus");
        let lane = self
            .session
            .borrow_mut()
            .lanes_mut()
            .first_mut()
            .ok_or_else(|| ProtoError::InvalidArgument("a session without lanes".into()))?;
        Ok(he::layer::run_all(keys, &mut lane.ch, layers)?)
    }

    /// Shares of one HE linear layer: [`Self::he_linears`] of one layer.
    pub fn he_linear(
        &mut self,
        t: u64,
        packing: &dyn he::Packing,
        x: &[u64],
    ) -> Result<Vec<u64>, ProtoError> {
        matmul::one(self.he_linears(t, &[(packing, x)]))
    }

    /// Sets up this session's HE keys for the field `Z_t` on lane 0 unless they
    /// exist ([`he::Keys::setup`]: the client's fresh secret key stays with it; its
    /// public and Galois keys go to the server, ≈ 11.8 MB, one message). Returns
    /// whether it set them up. [`Self::he_linears`] calls it; the executor calls it
    /// before the first instruction so the report shows the key set-up apart.
    pub fn he_keys(&mut self, t: u64) -> Result<bool, ProtoError> {
        if self.he.as_ref().is_some_and(|k| k.params().t == t) {
            return Ok(false);
        }
        let party = self.party();
        let lane = self
            .session
            .borrow_mut()
            .lanes_mut()
            .first_mut()
            .ok_or_else(|| ProtoError::InvalidArgument("a session without lanes".into()))?;
        self.he = Some(he::Keys::setup(&mut lane.ch, party, t)?);
        Ok(true)
    }

    /// Sets up this session's RLWE keys of `sets` on lane 0, those not yet set up
    /// ([`cheetah::Keys::setup`]: the client's public key of each set to the
    /// server, [`sci_ir::rlwe::ParamSet::key_bytes`] each, one flight, no flush;
    /// its secret keys stay with it). Returns whether it set any up. Both parties
    /// pass the same sets (the plan's: [`sci_ir::rlwe::program_sets`]). A
    /// malformed key is [`cheetah::CheetahError::Malformed`].
    pub fn rlwe_keys(&mut self, sets: &[&'static ParamSet]) -> Result<bool, ProtoError> {
        let party = self.party();
        let keys = self.rlwe.get_or_insert_with(|| match party {
            Party::Server => cheetah::Keys::server(),
            Party::Client => cheetah::Keys::client(),
        });
        let lane = self
            .session
            .borrow_mut()
            .lanes_mut()
            .first_mut()
            .ok_or_else(|| ProtoError::InvalidArgument("a session without lanes".into()))?;
        Ok(keys.setup(&mut lane.ch, &mut lane.prg, sets, "the key set-up")?)
    }

    /// Shares of independent RLWE products ([`cheetah::run_all`]: one round trip
    /// on lane 0, the server's work over rayon's threads), each layer with this
    /// party's share of its input (the server's layers hold the weights); the
    /// keys of sets not yet set up ride ahead of the client's ciphertexts.
    pub fn rlwe_products(
        &mut self,
        layers: &[(&cheetah::Layer, &[u64])],
    ) -> Result<Vec<Vec<u64>>, ProtoError> {
        let sets = sci_ir::rlwe::sets(layers.iter().map(|(l, _)| &l.layout));
        self.rlwe_keys(&sets)?;
        let keys = self.rlwe.as_mut().ok_or_else(|| {
            ProtoError::InvalidArgument("RLWE keys missing after their set-up".into())
        })?;
        let lane = self
            .session
            .borrow_mut()
            .lanes_mut()
            .first_mut()
            .ok_or_else(|| ProtoError::InvalidArgument("a session without lanes".into()))?;
        Ok(cheetah::run_all(keys, &mut lane.ch, &mut lane.prg, layers)?)
    }

    /// Shares of the products `ps` of two shared matrices mod `2^ℓ` by RLWE
    /// ([`cheetah::secret::products`]): every product's two cross terms in one
    /// [`Self::rlwe_products`] exchange on lane 0 (the keys of sets not yet set up
    /// ahead), then the local terms. Bytes and rounds: [`sci_ir::cost::rlwe::wave`]
    /// of the cross terms' layouts ([`sci_ir::rlwe::secret_matmul`]).
    pub fn rlwe_secret_products(
        &mut self,
        ell: u32,
        ps: &[cheetah::SecretMatMul<'_>],
    ) -> Result<Vec<Vec<u64>>, ProtoError> {
        let server = self.party() == Party::Server;
        cheetah::secret::products(server, ell, ps, |calls| self.rlwe_products(calls))
    }

    /// Opens shares mod `md` to party `to`: the other party sends its share
    /// (`⌈log₂ n⌉` bits per element, on lane 0); `to` gets the values, the
    /// other `None`.
    pub fn reveal(
        &mut self,
        md: impl Into<Modulus>,
        x: &[u64],
        to: Party,
    ) -> Result<Option<Vec<u64>>, ProtoError> {
        let md = md.into().check()?;
        let me = self.party();
        let Some(lane) = self.session_mut().lanes_mut().first_mut() else {
            return Err(ProtoError::InvalidArgument(
                "a session without lanes".into(),
            ));
        };
        if me == to {
            let other = lane.ch.recv_u64s(x.len(), md.bits())?;
            Ok(Some(
                x.iter()
                    .zip(other)
                    .map(|(&a, b)| md.add(md.reduce(a), md.reduce(b)))
                    .collect(),
            ))
        } else {
            lane.ch.send_u64s(x, md.bits())?;
            lane.ch.flush()?;
            Ok(None)
        }
    }
}

/// The width ℓ of `md = Z_{2^ℓ}`, for the protocols defined over a ring only (`what`
/// names the one in the error over a field).
fn ring_width(md: impl Into<Modulus>, what: &str) -> Result<u32, ProtoError> {
    match md.into() {
        Modulus::Pow2(ell) => Ok(ell),
        Modulus::Odd(_) => Err(ProtoError::InvalidArgument(format!(
            "{what} runs over a ring Z_2^ℓ only"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Channel, mem};
    use crate::proto::testutil::{open, prg, reference, role_prg, share, use_engine};
    use sci_ir::{Encoding, Op, Owner, fixed};
    use std::time::Duration;

    /// A client input for [`reference`].
    fn c<'a>(x: &'a [u64], s: &'a [usize]) -> (&'a [u64], &'a [usize], Owner) {
        (x, s, Owner::Client)
    }

    /// Runs `f` on an engine for each party over `t` in-memory lanes.
    fn run<R: Send>(
        t: usize,
        f: impl Fn(&mut Engine<&mut Session>, Party) -> Result<R, ProtoError> + Sync,
    ) -> (R, R) {
        let (a, b) = mem::pairs(t, Some(Duration::from_secs(120)));
        run_on(a, b, f)
    }

    /// Runs `f` on an engine for each party over the given lanes.
    fn run_on<R: Send>(
        a: Vec<Channel>,
        b: Vec<Channel>,
        f: impl Fn(&mut Engine<&mut Session>, Party) -> Result<R, ProtoError> + Sync,
    ) -> (R, R) {
        let party = |chans, p: Party, role| {
            let mut s = Session::with_seed(p, chans, role_prg(role).next_block());
            s.lanes_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(i, l)| use_engine(&mut l.ot, i));
            let mut e = Engine::new(&mut s, 4);
            f(&mut e, p).unwrap_or_else(|e| panic!("{p:?}: {e}"))
        };
        sci_testkit::run2(
            || party(a, Party::Server, Role::P0),
            || party(b, Party::Client, Role::P1),
        )
    }

    /// One run of every layer: the operand's shape, the layers' parameters and the
    /// server's weights (`w` serves as the convolution's weights and, cut to its rows,
    /// as the matrix product's).
    struct Layers {
        shape: [usize; 4],
        pool: Pool2d,
        geom: ConvGeom,
        w: Vec<u64>,
        shift: u32,
        divisor: u64,
        /// Rows of the matrix product and of ArgMax's lines (dividing the element
        /// count).
        rows: usize,
    }

    impl Layers {
        /// A 3×3/2 pooling with padding 1, a convolution of `c_out` kernels `k×k`
        /// with padding `p`, truncation by 7 and division by 5.
        fn new(
            shape: [usize; 4],
            (c_out, k, p): (usize, usize, usize),
            w: Vec<u64>,
            rows: usize,
        ) -> Layers {
            Layers {
                shape,
                pool: Pool2d {
                    kernel: [3, 3],
                    strides: [2, 2],
                    pads: [1; 4],
                    ceil_mode: false,
                },
                geom: ConvGeom {
                    input: shape,
                    c_out,
                    kernel: [k, k],
                    conv: sci_ir::Conv2d {
                        strides: [1, 1],
                        pads: [p; 4],
                        dilations: [1, 1],
                        groups: 1,
                    },
                },
                w,
                shift: 7,
                divisor: 5,
                rows,
            }
        }

        fn n(&self) -> usize {
            self.shape.iter().product()
        }

        fn mat(&self) -> (usize, usize) {
            (self.rows, self.n() / self.rows)
        }

        fn conv_shape(&self) -> [usize; 4] {
            let g = &self.geom;
            [
                g.c_out,
                self.shape[1] / g.conv.groups,
                g.kernel[0],
                g.kernel[1],
            ]
        }

        fn conv_weights(&self) -> usize {
            self.conv_shape().iter().product()
        }

        /// Every layer on this party's shares `xs` of `x` (the server's product is
        /// with `x` itself) and `ns` of [`nonneg`]`(x)`.
        fn secure(
            &self,
            e: &mut Engine<&mut Session>,
            p: Party,
            (xs, ns): (&[u64], &[u64]),
            x: &[u64],
        ) -> Result<Vec<Vec<u64>>, ProtoError> {
            let ell = 32;
            let server = p == Party::Server;
            let ws = server.then_some(&self.w[..]);
            let (r, c) = self.mat();
            let conv_w = ws.map(|w| &w[..self.conv_weights()]);
            Ok(vec![
                e.relu(ell, xs)?,
                e.trunc(ell, self.shift, xs, false)?,
                e.rdiv(ell, xs, &[self.divisor], Sign::Any)?,
                e.maxpool(ell, xs, self.shape, &self.pool, Compare::Exact)?,
                e.maxpool(ell, ns, self.shape, &self.pool, Compare::Narrow)?,
                e.argmax(ell, xs, &[r, c], 1, Compare::Exact)?,
                e.conv2d(ell, &self.geom, xs, conv_w)?,
                e.matmul(ell, (r, c, 1), xs, ws.map(|w| &w[..c]))?,
                e.mul(ell, xs, server.then_some(x))?,
            ])
        }

        /// The same layers in the clear.
        fn reference(&self, x: &[u64]) -> Vec<Vec<u64>> {
            let ell = 32;
            let enc = Encoding::ring(ell).expect("ring");
            let (shape, pool, g) = (&self.shape, self.pool, &self.geom);
            let (r, cols) = self.mat();
            let wshape = self.conv_shape();
            let cw = &self.w[..self.conv_weights()];
            vec![
                reference_relu(x),
                x.iter()
                    .map(|&v| fixed::trunc(v, self.shift, enc))
                    .collect(),
                x.iter()
                    .map(|&v| fixed::rdiv(v, self.divisor, enc))
                    .collect(),
                reference(ell, &[c(x, shape)], |v| Op::MaxPool { x: v[0], pool }).0,
                reference(ell, &[c(&nonneg(x), shape)], |v| Op::MaxPool {
                    x: v[0],
                    pool,
                })
                .0,
                reference(ell, &[c(x, &[r, cols])], |v| Op::ArgMax {
                    x: v[0],
                    axis: 1,
                    keepdims: false,
                })
                .0,
                reference(ell, &[c(x, shape), (cw, &wshape, Owner::Server)], |v| {
                    Op::Conv2d {
                        x: v[0],
                        w: v[1],
                        bias: None,
                        conv: g.conv,
                    }
                })
                .0,
                reference(
                    ell,
                    &[
                        c(x, &[r, cols]),
                        (&self.w[..cols], &[cols, 1], Owner::Server),
                    ],
                    |v| Op::MatMul {
                        a: v[0],
                        b: v[1],
                        bias: None,
                    },
                )
                .0,
                x.iter().map(|&v| v.wrapping_mul(v) & 0xffff_ffff).collect(),
            ]
        }

        /// Runs every layer on shares of `x` over the given lanes and checks each
        /// against the reference, the reveal and (on request) the MSBs.
        fn check(&self, x: &[u64], a: Vec<Channel>, b: Vec<Channel>, what: &str) {
            let ell = 32;
            let mut g = prg(self.n() as u128);
            let (x0, x1) = share(&mut g, x, ell);
            let (n0, n1) = share(&mut g, &nonneg(x), ell);
            let (r0, r1) = run_on(a, b, |e, p| {
                let (xs, ns) = if p == Party::Server {
                    (&x0, &n0)
                } else {
                    (&x1, &n1)
                };
                let layers = self.secure(e, p, (xs, ns), x)?;
                let msb = e.msb(ell, xs)?;
                let shown = e.reveal(ell, xs, Party::Client)?;
                Ok((layers, msb, shown))
            });
            for (k, ((a, b), want)) in r0.0.iter().zip(&r1.0).zip(self.reference(x)).enumerate() {
                assert_eq!(open(a, b, ell), want, "layer {k} {what}");
            }
            let signs = r0.1.xor(&r1.1);
            assert!((0..x.len()).all(|i| signs.get(i) == (x[i] >> 31 == 1)));
            assert_eq!(r1.2.as_deref(), Some(x), "reveal");
            assert!(r0.2.is_none());
        }
    }

    /// The counters of every lane.
    fn lane_stats(e: &mut Engine<&mut Session>) -> Vec<crate::net::Stats> {
        e.session_mut()
            .lanes_mut()
            .iter()
            .map(|l| l.ch.stats())
            .collect()
    }

    /// Independent products of different shapes and widths as one call of each
    /// backend, on 1 and 3 lanes: a grouped convolution, two matrix products (one with
    /// fewer rows than lanes) and an elementwise product. Each output equals the
    /// interpreter's; the call takes the rounds of one product, and its bytes are the
    /// cost model's (SCI_OT: the lanes' chunks of every product in one OT call; SCI_HE:
    /// every layer's ciphertexts in one flight each way).
    #[test]
    fn independent_products_run_as_one_call() {
        use crate::proto::matmul::Product;
        use sci_ir::cost::{he as he_cost, linear as lin};
        use sci_ir::params::Role as CostRole;
        const T32: u64 = 4_295_049_217;
        let conv = sci_ir::Conv2d {
            strides: [1, 1],
            pads: [1, 1, 1, 1],
            dilations: [1, 1],
            groups: 2,
        };
        let geom = ConvGeom {
            input: [1, 4, 6, 5],
            c_out: 6,
            kernel: [3, 3],
            conv,
        };
        const WSHAPE: [usize; 4] = [6, 2, 3, 3];
        let (m1, m2) = ((7usize, 5usize, 3usize), (2usize, 9usize, 40usize));
        // (rows, cols, outs) of the OT products: the convolution's two groups first.
        let ot_dims = [(30, 18, 3), (30, 18, 3), m1, m2, (11, 1, 1)];
        let moduli = [
            (Modulus::Pow2(32), 1usize),
            (Modulus::Pow2(41), 3),
            (Modulus::Odd(T32), 1),
            (Modulus::Odd(T32), 3),
        ];
        for (md, t) in moduli {
            let mut g = prg(u128::from(md.bits()) + t as u128);
            // Small weights keep the HE noise within its budget.
            let small = |g: &mut crate::crypto::Prg, n: usize| -> Vec<u64> {
                (0..n)
                    .map(|_| md.reduce_i128((g.next_block().0 % 4097) as i128 - 2048))
                    .collect()
            };
            let xs: Vec<Vec<u64>> = [120, 35, 18, 11]
                .into_iter()
                .map(|n| md.random(&mut g, n))
                .collect();
            let ws: Vec<Vec<u64>> = [108, 15, 360, 11]
                .into_iter()
                .map(|n| small(&mut g, n))
                .collect();
            let shares: Vec<(Vec<u64>, Vec<u64>)> =
                xs.iter().map(|x| share(&mut g, x, md)).collect();
            let (r0, r1) = run(t, |e, p| {
                let server = p == Party::Server;
                let x = |k: usize| -> &[u64] { if server { &shares[k].0 } else { &shares[k].1 } };
                let w = |k: usize| server.then_some(&ws[k][..]);
                e.session_mut().setup()?;
                let before = lane_stats(e);
                let ys = match md {
                    Modulus::Pow2(ell) => e.products(
                        ell,
                        &[
                            Product::Conv {
                                geom: &geom,
                                x: x(0),
                                w: w(0),
                            },
                            Product::MatMul {
                                dims: m1,
                                x: x(1),
                                w: w(1),
                            },
                            Product::MatMul {
                                dims: m2,
                                x: x(2),
                                w: w(2),
                            },
                            Product::Mul { x: x(3), w: w(3) },
                        ],
                    )?,
                    Modulus::Odd(t) => {
                        e.he_keys(t)?;
                        let he_err = |e: he::HeError| ProtoError::He(e);
                        let conv = he::conv::Conv::new(&geom, w(0)).map_err(he_err)?;
                        let fc1 = he::fc::MatMul::new(m1, w(1)).map_err(he_err)?;
                        let fc2 = he::fc::MatMul::new(m2, w(2)).map_err(he_err)?;
                        let mul = he::mul::Mul::new(11, w(3)).map_err(he_err)?;
                        let before = lane_stats(e);
                        let ys = e.he_linears(
                            t,
                            &[
                                (&conv as &dyn he::Packing, x(0)),
                                (&fc1, x(1)),
                                (&fc2, x(2)),
                                (&mul, x(3)),
                            ],
                        )?;
                        return Ok((ys, before, lane_stats(e)));
                    }
                };
                Ok((ys, before, lane_stats(e)))
            });
            let server = |k: usize, shape: &'static [usize]| (&ws[k][..], shape, Owner::Server);
            let matmul = |k: usize, (r, cols, o): (usize, usize, usize)| {
                let (xs_shape, ws_shape) = ([r, cols], [cols, o]);
                reference(
                    md,
                    &[c(&xs[k], &xs_shape), (&ws[k], &ws_shape, Owner::Server)],
                    |v| Op::MatMul {
                        a: v[0],
                        b: v[1],
                        bias: None,
                    },
                )
            };
            let want = [
                reference(md, &[c(&xs[0], &geom.input), server(0, &WSHAPE)], |v| {
                    Op::Conv2d {
                        x: v[0],
                        w: v[1],
                        bias: None,
                        conv,
                    }
                }),
                matmul(1, m1),
                matmul(2, m2),
                reference(md, &[c(&xs[3], &[11]), server(3, &[11])], |v| Op::Mul {
                    a: v[0],
                    b: v[1],
                }),
            ];
            for (k, ((a, b), want)) in r0.0.iter().zip(&r1.0).zip(&want).enumerate() {
                assert_eq!(open(a, b, md), want.0, "product {k}, {md} on {t} lanes");
            }
            // Bytes each party sent, summed over lanes, and rounds, the slowest lane's.
            let cost = |(_, before, after): &(
                Vec<Vec<u64>>,
                Vec<crate::net::Stats>,
                Vec<crate::net::Stats>,
            )| {
                let d: Vec<_> = after.iter().zip(before).map(|(a, b)| *a - *b).collect();
                (
                    d.iter().map(|s| s.bytes_sent).sum::<u64>(),
                    d.iter().map(|s| s.rounds).max().unwrap_or(0),
                )
            };
            let (server, client) = (cost(&r0), cost(&r1));
            let want = match md {
                Modulus::Pow2(ell) => (0..t)
                    .map(|i| {
                        let lane: Vec<_> = ot_dims
                            .iter()
                            .map(|&(r, c, o)| (split(r, t)[i].len(), c, o))
                            .collect();
                        lin::products(ell, &lane, true)
                    })
                    .fold((0, 0), |(s, c), tr| {
                        (s + tr.sent(CostRole::P0), c + tr.sent(CostRole::P1))
                    }),
                Modulus::Odd(t) => {
                    let counts = [
                        he_cost::conv(&geom),
                        he_cost::matmul(7, 5, 3),
                        he_cost::matmul(2, 9, 40),
                        he_cost::mul(11),
                    ]
                    .map(|c| c.expect("packable"));
                    let tr = he_cost::layer(
                        he_cost::Counts {
                            up: counts.iter().map(|c| c.up).sum(),
                            down: counts.iter().map(|c| c.down).sum(),
                        },
                        t,
                    );
                    (tr.sent(CostRole::P0), tr.sent(CostRole::P1))
                }
            };
            if crate::proto::testutil::costed() || matches!(md, Modulus::Odd(_)) {
                assert_eq!((server.0, client.0), want, "bytes, {md} on {t} lanes");
                // One flight each way: the client waits once; the server, whose last
                // act was to receive the set-up's (or the keys') messages, not at all.
                assert_eq!((server.1, client.1), (0, 1), "rounds, {md} on {t} lanes");
            }
        }
    }

    /// Non-negative 32-bit values (the narrow comparison's domain): `x` without its
    /// sign bit.
    fn nonneg(x: &[u64]) -> Vec<u64> {
        x.iter().map(|&v| v & 0x7fff_ffff).collect()
    }

    #[test]
    fn every_layer_on_several_lanes_equals_reference() {
        let mut g = prg(77);
        let x: Vec<u64> = g
            .ring_elems(300, 28)
            .iter()
            .map(|v| v.wrapping_sub(1 << 27) & 0xffff_ffff)
            .collect();
        let layers = Layers::new([1, 3, 10, 10], (4, 3, 1), g.ring_elems(27 * 4, 32), 3);
        for t in [1usize, 2, 3] {
            let (a, b) = mem::pairs(t, Some(Duration::from_secs(120)));
            layers.check(&x, a, b, &format!("with {t} lanes"));
        }
    }

    /// A run is a function of the sessions' seeds: the same seeds replay the same
    /// shares on every lane, other seeds give other shares of the same values.
    #[test]
    fn runs_replay_from_their_seeds() {
        let mut g = prg(80);
        let x = g.ring_elems(500, 32);
        let (x0, x1) = share(&mut g, &x, 32);
        let run_with = |seeds: [u128; 2]| {
            let (a, b) = mem::pairs(2, Some(Duration::from_secs(120)));
            let party = |chans, p: Party, seed| {
                let mut s = Session::with_seed(p, chans, crate::crypto::Block(seed));
                s.lanes_mut()
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, l)| use_engine(&mut l.ot, i));
                let xs = if p == Party::Server { &x0 } else { &x1 };
                let y = Engine::new(&mut s, 4).relu(32, xs).expect("relu");
                (y, s.stats())
            };
            sci_testkit::run2(
                || party(a, Party::Server, seeds[0]),
                || party(b, Party::Client, seeds[1]),
            )
        };
        let first = run_with([1, 2]);
        assert_eq!(open(&first.0.0, &first.1.0, 32), reference_relu(&x));
        assert_eq!(run_with([1, 2]), first);
        let other = run_with([3, 2]);
        assert_eq!(open(&other.0.0, &other.1.0, 32), reference_relu(&x));
        assert_ne!(other.0.0, first.0.0);
        assert_eq!((other.0.1, other.1.1), (first.0.1, first.1.1));
    }

    /// `ReLU` of 32-bit values in the clear.
    fn reference_relu(x: &[u64]) -> Vec<u64> {
        x.iter()
            .map(|&v| if v >> 31 == 1 { 0 } else { v })
            .collect()
    }

    /// Average pooling over prime fields (sums wrap mod n, as in the
    /// interpreter), with and without the padding in the count.
    #[test]
    fn avgpool_over_fields_equals_reference() {
        use crate::proto::testutil::{open, reference, share, values_with_edges};
        let shape = [1usize, 3, 9, 10];
        let numel: usize = shape.iter().product();
        let pool = Pool2d {
            kernel: [3, 3],
            strides: [2, 2],
            pads: [1, 1, 1, 1],
            ceil_mode: false,
        };
        for n in [65537u64, 4_293_918_721, 2_199_023_190_017, (1 << 61) - 1] {
            let md = Modulus::Odd(n);
            let mut g = prg(n as u128);
            let x = values_with_edges(&mut g, numel - 9, md);
            let (x0, x1) = share(&mut g, &x, md);
            for incl in [false, true] {
                let (r0, r1) = run(1, |e, p| {
                    let xs = if p == Party::Server { &x0 } else { &x1 };
                    e.avgpool(md, xs, shape, &pool, incl)
                });
                let want = reference(md, &[(&x[..], &shape[..], Owner::Client)], |v| {
                    Op::AvgPool {
                        x: v[0],
                        pool,
                        count_include_pad: incl,
                    }
                })
                .0;
                assert_eq!(open(&r0, &r1, md), want, "n={n} incl={incl}");
            }
        }
    }

    #[test]
    fn every_non_linear_layer_over_a_field_on_several_lanes() {
        use crate::proto::testutil::{open, reference, share, values_with_edges};
        let n = 2_199_023_190_017u64;
        let md = Modulus::Odd(n);
        let enc = Encoding::field(n).expect("prime");
        let mut g = prg(79);
        let shape = [1usize, 3, 10, 10];
        let x = values_with_edges(&mut g, 291, md);
        let (x0, x1) = share(&mut g, &x, md);
        let pool = Pool2d {
            kernel: [3, 3],
            strides: [2, 2],
            pads: [1, 1, 1, 1],
            ceil_mode: false,
        };
        let c = |s: &'static [usize]| [(&x[..], s, Owner::Client)];
        for t in [1usize, 2, 3] {
            let (r0, r1) = run(t, |e, p| {
                let xs = if p == Party::Server { &x0 } else { &x1 };
                Ok(vec![
                    e.relu(md, xs)?,
                    e.trunc(md, 12, xs, false)?,
                    e.rdiv(md, xs, &[49], Sign::Any)?,
                    e.maxpool(md, xs, shape, &pool, Compare::Exact)?,
                    e.argmax(md, xs, &[30, 10], 1, Compare::Exact)?,
                    e.avgpool(md, xs, shape, &pool, false)?,
                    e.global_avgpool(md, xs, shape)?,
                    e.reveal(md, xs, Party::Client)?.unwrap_or_default(),
                ])
            });
            let got: Vec<Vec<u64>> = r0
                .iter()
                .zip(&r1)
                .take(7)
                .map(|(a, b)| open(a, b, md))
                .collect();
            let want: [Vec<u64>; 7] = [
                x.iter()
                    .map(|&v| if enc.signed(v) < 0 { 0 } else { v })
                    .collect(),
                x.iter().map(|&v| fixed::trunc(v, 12, enc)).collect(),
                x.iter().map(|&v| fixed::rdiv(v, 49, enc)).collect(),
                reference(md, &c(&[1, 3, 10, 10]), |v| Op::MaxPool { x: v[0], pool }).0,
                reference(md, &c(&[30, 10]), |v| Op::ArgMax {
                    x: v[0],
                    axis: 1,
                    keepdims: false,
                })
                .0,
                reference(md, &c(&[1, 3, 10, 10]), |v| Op::AvgPool {
                    x: v[0],
                    pool,
                    count_include_pad: false,
                })
                .0,
                reference(md, &c(&[1, 3, 10, 10]), |v| Op::GlobalAvgPool { x: v[0] }).0,
            ];
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "layer {k} with {t} lanes");
            }
            assert_eq!(r1[7], x, "reveal");
            assert!(r0[7].is_empty());
        }
    }

    /// Every protocol over TCP loopback on two lanes with 2^16 elements.
    #[test]
    fn every_layer_over_tcp_loopback() {
        let shape = [1usize, 4, 128, 128];
        let mut g = prg(78);
        let x: Vec<u64> = g.ring_elems(shape.iter().product(), 32);
        let mut layers = Layers::new(shape, (1, 1, 0), g.ring_elems(16, 32), 4096);
        (layers.shift, layers.divisor) = (12, 49);
        let cfg = crate::net::tcp::TcpConfig {
            timeout: Some(Duration::from_secs(120)),
            ..Default::default()
        };
        let (a, b) = crate::net::tcp::loopback_pairs(2, &cfg).expect("loopback");
        layers.check(&x, a, b, "over TCP");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 20, ..Default::default() })]
        /// Random widths, radices, shifts, divisors, sizes and lane counts.
        #[test]
        fn random_parameters(
            ell in 1u32..=64,
            m in 1u32..=8,
            n in 0usize..300,
            t in 1usize..=3,
            s_frac in 0.0f64..1.0,
            d_raw in 1u64..1000,
            seed in proptest::prelude::any::<u64>(),
        ) {
            let enc = Encoding::ring(ell).expect("ring");
            let s = ((ell - 1) as f64 * s_frac) as u32;
            let d = (d_raw & crate::pack::mask(ell)).max(1);
            let mut g = prg(seed as u128);
            let x = g.ring_elems(n, ell);
            let (x0, x1) = share(&mut g, &x, ell);
            let (a, b) = mem::pairs(t, Some(Duration::from_secs(120)));
            let (r0, r1) = run_on(a, b, |e, p| {
                let xs = if p == Party::Server { &x0 } else { &x1 };
                let mut e = Engine::new(e.session_mut(), m);
                Ok(vec![e.relu(ell, xs)?, e.trunc(ell, s, xs, false)?, e.rdiv(ell, xs, &[d], Sign::Any)?])
            });
            let want = [
                x.iter().map(|&v| if enc.signed(v) < 0 { 0 } else { v }).collect::<Vec<u64>>(),
                x.iter().map(|&v| fixed::trunc(v, s, enc)).collect(),
                x.iter().map(|&v| fixed::rdiv(v, d, enc)).collect(),
            ];
            for (k, w) in want.iter().enumerate() {
                proptest::prop_assert_eq!(&open(&r0[k], &r1[k], ell), w, "protocol {} ℓ={} m={} s={} d={}", k, ell, m, s, d);
            }
        }
    }
}
