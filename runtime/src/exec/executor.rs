//! The plan executor: walks the program, keeps this party's view of every live value,
//! and maps each instruction to local computation or to a protocol of [`crate::proto`].
//!
//! # What each party holds
//! | owner of a value | server (party 0) | client (party 1) |
//! |---|---|---|
//! | public | the value | the value |
//! | server | the value | nothing |
//! | client, shared | an additive share in `Z_{2^ℓ}` | an additive share |
//!
//! Client-owned values (the input, and anything computed from it alone) are held as
//! shares like activations; that is how the input enters the computation (below).
//! Values are freed after their last use.
//!
//! # Client input: `⟨x⟩₁ = x`, `⟨x⟩₀ = 0`
//! The client's share of its input is the input itself and the server's share is zero;
//! no message is sent. This is secure (semi-honest) because every protocol that
//! consumes shares is secure for *arbitrary* input shares: its simulator for the server
//! is given the server's share, and a share that is the constant 0 is independent of `x`,
//! so the server's view is simulated without `x`. Each protocol's output shares are
//! fresh (uniformly random for the server, in the OT-based linear layers and the
//! non-linear protocols), so no later step sees a structured share either. Local steps
//! (data movement, additions) only combine a party's own shares with public data. The
//! alternative — the client sends `x − r` for a random `r` — gives the server a uniformly
//! random share instead of zero: it is equally secure, costs `n·ℓ` bits, and buys
//! nothing.
//!
//! # Output: revealed to the client only
//! For an output the server sends its share (`n·ℓ` bits, bit-packed) and the client adds
//! it to its own; the server receives nothing. A public output is known to both and is
//! not sent.
//!
//! # Mapping of ops
//! Each instruction runs by its [`Step`] ([`Step::of`], the one rule per op shared with
//! the cost model and the compiler); the executor dispatches on the step only:
//!
//! | op | how |
//! |---|---|
//! | `input` | shares as above |
//! | `const` | public: both; server: the server |
//! | `reshape`, `flatten`, `identity` | the share, reinterpreted |
//! | `transpose`, `gather`, `concat`, `pad`, `add`, `sub`, `mul_public`, `scale_up`; `conv2d`, `matmul`, `mul` by a public factor | local, on each share ([`interp::eval_op`]); addends known in the clear (constants, biases, pad values) are added by the server only |
//! | `conv2d`, `matmul` (`X·W` or `W·X`), `mul` by a server factor | SCI_OT: OT-based linear layer (§5.1.1; convolution by `im2col`, `mul` broadcast first); SCI_HE: HE linear layer ([`crate::he`]: Gazelle packing, App. F); the bias is the server's addend |
//! | `mul`, `matmul` of two secret operands (activations, the client's values) | [`Engine::secret_products`]: two OT-based products `X·Y_0 + X·Y_1` (`proto::secmul`), `mul` broadcast first; the bias of a `matmul` added after |
//! | `relu` | `Π_ReLU` (Algorithm 8) |
//! | `trunc s` | ring: `Π_Trunc^{int,ℓ,s}` (Algorithm 5), the non-negative variant where marked `nonneg`; field: division by `2^s` (§4.2.3), its non-negative variant (`rdiv_nonneg`: no sign test) where marked `nonneg` |
//! | `div_public d` | division by a public integer (Theorem 4.1), the non-negative variant (`rdiv_nonneg`) where the operand is provably non-negative ([`sci_ir::analysis::nonneg`]) |
//! | `maxpool` | `MaxPool_d` (§5.2.2) over the windows; comparisons as below |
//! | `avgpool`, `global_avgpool` | [`Engine::avgpool`]: window sums locally ([`linear::window_sums`]), then division by each window's count (§5.1.2) |
//! | `argmax` | `ArgMax_d` (§5.2.2) along the axis; comparisons as below |
//! | `softmax` | [`Engine::softmax`]: the lines' maxima as `maxpool`'s (comparisons as below), exp, the sums' range-reduced reciprocal, one rounded secret product (`proto::softmax`), over `Z_{2^ℓ}` only |
//! | `output` | revealed to the client |
//!
//! # Order: waves
//! Instructions run in the order of [`sci_ir::schedule::waves`], not program order:
//! level by level (protocol steps on the longest chain before an instruction), and the
//! ReLUs (truncations by the same shift, divisions by the same `d`) of one level run as
//! **one** protocol call over their concatenated shares, and the products by the
//! server's weights of one level as **one** call of the backend (SCI_OT: one streamed
//! OT call per lane over every product's chunk of rows, [`Engine::products`]; SCI_HE:
//! every layer's ciphertexts in one flight each way, [`Engine::he_linears`]) — the two
//! expand branches of a fire module share their rounds, the products' bytes are
//! unchanged. Both parties derive the schedule from the public program. A wave's cost
//! is recorded on its first member, the other members record zero, as the cost model
//! predicts; values are freed after the last wave that reads them, and the outputs are
//! returned in program order.
//!
//! The protocols run through [`Engine`], which cuts every layer into one chunk per lane.
//! The plan's [`sci_ir::Backend`] fixes the modulus of the shares: `Z_{2^ℓ}` for SCI_OT,
//! the HE field `Z_n` for SCI_HE, where every non-linear protocol runs over `Z_n`
//! ([`crate::proto::Modulus::Odd`]). A product with the server's weights runs by the
//! backend of its step ([`Step::Product`], the plan's per-instruction record): by HE on
//! lane 0 (keys set up once per session, at the first HE layer) or by OT.
//!
//! # MaxPool and ArgMax: which comparison
//! The executor must agree with the reference interpreter on every input, not only on
//! inputs whose values stay small. The paper's comparison — the `DReLU` of the
//! difference of two values, [`Compare::Narrow`] — is wrong when that difference
//! overflows ℓ bits; [`Compare::Exact`] compares any two signed ℓ-bit values exactly, at
//! the price of one more `DReLU` per input element and one AND per comparison (about
//! 1.5–2× the communication). So a MaxPool or ArgMax whose operand is provably
//! non-negative on every input ([`sci_ir::analysis::nonneg`], sound under wrapping:
//! e.g. the output of a ReLU, or a MaxPool or truncation of one) uses `Narrow` — exact
//! there, since values in `[0, 2^(ℓ−1))` have differences in `(−2^(ℓ−1), 2^(ℓ−1))` —
//! and every other one uses `Exact` ([`Step::MaxPool`]'s `exact`, decided by
//! [`Step::of`]). The analysis reads only the public program, so both parties choose
//! the same protocol.
//!
//! Values computed only from values a party knows in the clear (public ones at both,
//! server ones at the server) are computed by that party locally with the reference
//! interpreter; no protocol is run.
//!
//! # Local steps: the interpreter's kernels
//! Every local step — a value known in the clear, a linear op applied to each share,
//! the bias added after an OT-based product, the transposes of `W·X`, the window sums of
//! average pooling — runs the reference interpreter's own kernels, through
//! [`interp::eval_op`] (one instruction on given tensors) and [`interp::linear`] (the
//! same kernels on tensors that are not values of the plan). There is no second
//! implementation of these ops in the runtime: the arithmetic of a secure run's local
//! steps *is* the oracle's, so they agree with the cleartext run by construction, and a
//! fix or a new op lands in one place. It costs nothing on the hot path: `eval_op`
//! evaluates the op directly on borrowed tensors (a type inference of one op and a shape
//! check per operand, no program is built and nothing is copied), and the executor keeps
//! every value as a [`Tensor`], so shares flow into the kernels and the protocols
//! without conversion.

use super::report::{Cost, InstrRecord, PartyReport};
use super::{ExecError, StepError};
use crate::cheetah;
use crate::he;
use crate::net::{Party, Stats};
use crate::proto::engine::Engine;
use crate::proto::matmul;
use crate::proto::maxpool::Compare;
use crate::proto::rdiv::Sign;
use crate::proto::secmul::SecretProduct;
use crate::proto::{Modulus, ProtoError};
use sci_ir::interp::{self, InterpError, linear};
use sci_ir::schedule::{Step, waves};
use sci_ir::{
    Backend, CheckErrorKind, ConvGeom, Encoding, Op, Owner, Program, Scalar, Tensor, TensorError,
    ValueId,
};
use std::borrow::Cow;
use std::time::Instant;

/// Progress of a run, passed to the observer after each instruction.
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// Instructions done.
    pub done: usize,
    /// Instructions in the program.
    pub total: usize,
    /// The instruction just executed.
    pub name: &'a str,
    /// Its op.
    pub op: &'static str,
    /// The session's counters so far.
    pub stats: Stats,
}

/// The result of [`execute`].
#[derive(Debug)]
pub struct Execution {
    /// The client's outputs, in the order of [`Program::outputs`] (`None` at the
    /// server).
    pub outputs: Option<Vec<Tensor>>,
    /// This party's costs.
    pub report: PartyReport,
}

/// This party's view of a value: tensors of the plan's ring in the value's shape.
#[derive(Clone, Debug)]
enum Val<'p> {
    /// Known to this party in the clear (a constant is borrowed from the plan).
    Clear(Cow<'p, Tensor>),
    /// This party's additive share.
    Share(Tensor),
    /// Known only to the other party (server values at the client).
    Absent,
}

/// Whether the value's owner is known in the clear by `party`.
fn knows(owner: Owner, party: Party) -> bool {
    match party {
        Party::Server => owner.server_knows(),
        Party::Client => owner == Owner::Public,
    }
}

/// Checks that `program` can be run by `party` with this runtime: quantized over one
/// ring `Z_{2^ℓ}` (SCI_OT) or HE field `Z_n` (SCI_HE), securely executable
/// ([`Program::check_secure`], which checks that the encoding suits the backend), and,
/// for the server, with its weights. Returns the modulus of the shares.
pub fn check_plan(program: &Program, party: Party) -> Result<Modulus, ExecError> {
    program.check_secure().map_err(ExecError::NotSecure)?;
    let md = match program.encoding() {
        Some(e) => Modulus::of_encoding(e).ok_or_else(|| ExecError::Encoding(e.to_string()))?,
        None => return Err(ExecError::Encoding("none (an empty program)".into())),
    };
    if party == Party::Server && program.has_withheld_consts() {
        return Err(ExecError::NoWeights);
    }
    check_nonneg_claims(program)?;
    Ok(md)
}

/// Rejects a `trunc nonneg` whose operand [`sci_ir::analysis::nonneg`] does not prove
/// non-negative: the flag skips the DReLU of the truncation, so a plan claiming it
/// falsely would give a silently wrong output. Both parties run the same public analysis
/// on the same plan (the flag is in the client's plan too). Cost: one pass over the plan.
fn check_nonneg_claims(program: &Program) -> Result<(), ExecError> {
    let proven = sci_ir::analysis::nonneg::nonneg(program);
    for v in program.ids() {
        if let Op::Trunc {
            x, nonneg: true, ..
        } = &program.instr(v).op
            && !proven[x.index()]
        {
            return Err(ExecError::UnprovenNonneg {
                name: program.name(v).to_string(),
                operand: program.name(*x).to_string(),
            });
        }
    }
    Ok(())
}

/// Runs `program` as `party` with the protocols of `engine` (whose millionaires' radix
/// should be the plan's, [`sci_ir::Params::mill_radix`]). The client passes its encoded
/// inputs (in the order of [`Program::inputs`], as [`super::io::load_inputs`] returns
/// them); the server passes `None`. `setup` is the cost of the connection set-up,
/// recorded in the report; `observe` is called after every instruction. An engine may
/// run several executions one after another; each report counts its own run (plus
/// `setup`).
pub fn execute(
    program: &Program,
    engine: &mut Engine,
    inputs: Option<Vec<Tensor>>,
    setup: Cost,
    observe: &mut dyn FnMut(Progress<'_>),
) -> Result<Execution, ExecError> {
    let party = engine.party();
    let md = check_plan(program, party)?;
    let enc = program
        .encoding()
        .expect("check_plan accepted the program's encoding");
    let mut inputs: Vec<Option<Tensor>> = check_inputs(program, party, inputs)?
        .into_iter()
        .map(Some)
        .collect();
    let input_slot: Vec<Option<usize>> = {
        let mut slots = vec![None; program.instrs().len()];
        for (i, v) in program.inputs().into_iter().enumerate() {
            slots[v.index()] = Some(i);
        }
        slots
    };
    let start = Instant::now();
    let begin = lane_stats(engine);
    let n = program.instrs().len();
    let nonneg = sci_ir::analysis::nonneg::nonneg(program);
    let waves = waves(program, &nonneg);
    // The last wave (in execution order) that reads each value.
    let mut last_use = vec![None; n];
    for (w, wave) in waves.iter().enumerate() {
        for &v in &wave.members {
            for o in program.instr(v).op.operands() {
                last_use[o.index()] = Some(w);
            }
        }
    }
    let mut ex = Exec {
        program,
        party,
        enc,
        md,
        vals: vec![None; n],
        outputs: Vec::new(),
    };
    let he_keys = he_setup(program, md, engine)?;
    let mut records: Vec<Option<InstrRecord>> = vec![None; n];
    let mut done = 0;
    for (w, wave) in waves.iter().enumerate() {
        let before = lane_stats(engine);
        let t0 = Instant::now();
        let first = wave.members[0];
        let fail = |v: ValueId, source: StepError| ExecError::Step {
            index: v.index(),
            count: n,
            name: program.instr(v).name.clone(),
            op: program.instr(v).op.mnemonic(),
            cause: Box::new(source),
        };
        let vals = match wave.step {
            Step::Local => {
                let input = input_slot[first.index()].and_then(|i| inputs.get_mut(i)?.take());
                ex.local(first, input).map(|val| vec![val])
            }
            Step::Reveal => ex.reveal(first, engine).map(|val| vec![val]),
            Step::Relu
            | Step::ReluTrunc { .. }
            | Step::Trunc { .. }
            | Step::Div { .. }
            | Step::Smooth { .. }
            | Step::Rsqrt { .. }
            | Step::Spline { .. } => ex.elementwise(&wave.members, wave.step, engine),
            Step::AvgPool | Step::MaxPool { .. } | Step::ArgMax { .. } | Step::Softmax { .. } => ex
                .pooling(first, wave.step, engine)
                .map(|share| vec![Val::Share(share)]),
            Step::Product { backend } => ex.products(&wave.members, backend, engine),
            Step::SecretProduct { backend } => ex.secret_products(&wave.members, backend, engine),
        }
        .map_err(|source| fail(first, source))?;
        for (&v, val) in wave.members.iter().zip(vals) {
            ex.vals[v.index()] = Some(val);
        }
        for &v in &wave.members {
            for o in program.instr(v).op.operands() {
                if last_use[o.index()] == Some(w) {
                    ex.vals[o.index()] = None;
                }
            }
            if last_use[v.index()].is_none() {
                ex.vals[v.index()] = None;
            }
        }
        let cost = Cost::between(&before, &lane_stats(engine), t0.elapsed().as_secs_f64());
        for &v in &wave.members {
            let instr = program.instr(v);
            records[v.index()] = Some(InstrRecord {
                index: v.index(),
                name: instr.name.clone(),
                op: instr.op.mnemonic(),
                shape: instr.ty.shape().to_vec(),
                cost: Some(if v == first {
                    cost.clone()
                } else {
                    Cost::default()
                }),
                predicted: None,
            });
            done += 1;
            observe(Progress {
                done,
                total: n,
                name: &instr.name,
                op: instr.op.mnemonic(),
                stats: engine.session().stats(),
            });
        }
    }
    let records: Vec<InstrRecord> = records
        .into_iter()
        .map(|r| r.expect("the schedule runs every instruction once"))
        .collect();
    for lane in engine.session_mut().lanes_mut() {
        lane.ch.flush().map_err(ExecError::Connect)?;
    }
    // This run's counters plus the set-up: for the first run on a session, exactly the
    // channel counters' bytes. Rounds: the largest over lanes of this run's rounds on
    // that lane (as the cost model's totals), whatever the lanes did before.
    let run = Cost::between(&begin, &lane_stats(engine), 0.0);
    let totals = Cost {
        seconds: setup.seconds + start.elapsed().as_secs_f64(),
        bytes_sent: setup.bytes_sent + run.bytes_sent,
        bytes_recv: setup.bytes_recv + run.bytes_recv,
        rounds: setup.rounds + run.rounds,
    };
    Ok(Execution {
        outputs: (party == Party::Client).then(|| {
            ex.outputs.sort_by_key(|(v, _)| v.index());
            ex.outputs.into_iter().map(|(_, t)| t).collect()
        }),
        report: PartyReport {
            party: match party {
                Party::Server => "server",
                Party::Client => "client",
            },
            threads: engine.session().threads(),
            ot: Some(engine.session().ot_kind().name()),
            setup,
            control: Cost::default(),
            he_keys,
            instructions: records,
            totals,
            predicted: None,
        },
    })
}

/// The client's inputs checked against the plan (count, encoding, shapes); none at the
/// server.
fn check_inputs(
    program: &Program,
    party: Party,
    inputs: Option<Vec<Tensor>>,
) -> Result<Vec<Tensor>, ExecError> {
    let input_ids = program.inputs();
    let inputs = match (party, inputs) {
        (Party::Client, Some(i)) if i.len() == input_ids.len() => i,
        (Party::Client, i) => {
            return Err(ExecError::Inputs(format!(
                "the plan has {} inputs, {} were given",
                input_ids.len(),
                i.map_or(0, |i| i.len())
            )));
        }
        (Party::Server, _) => return Ok(Vec::new()),
    };
    let enc = program.encoding();
    for (&v, t) in input_ids.iter().zip(&inputs) {
        let ty = program.ty(v);
        if Some(t.encoding()) != enc || t.shape() != ty.shape() {
            return Err(ExecError::Inputs(format!(
                "input %{}: expected {} {:?}, found {} {:?}",
                program.name(v),
                ty.encoding(),
                ty.shape(),
                t.encoding(),
                t.shape()
            )));
        }
    }
    Ok(inputs)
}

/// SCI_HE: the session's keys, set up before the first instruction of a plan with HE
/// products unless the session has them; their cost, recorded apart in the report.
fn he_setup(
    program: &Program,
    md: Modulus,
    engine: &mut Engine,
) -> Result<Option<Cost>, ExecError> {
    if !program
        .ids()
        .any(|v| program.product_backend(v) == Some(Backend::He))
    {
        return Ok(None);
    }
    let Modulus::Odd(t) = md else {
        return Err(ExecError::Encoding(format!("{md} with HE products")));
    };
    let before = lane_stats(engine);
    let t0 = Instant::now();
    let made = engine
        .he_keys(t)
        .map_err(|e| ExecError::HeSetup(Box::new(StepError::Proto(e))))?;
    Ok(made.then(|| Cost::between(&before, &lane_stats(engine), t0.elapsed().as_secs_f64())))
}

/// The counters of every lane.
pub(super) fn lane_stats(engine: &mut Engine) -> Vec<Stats> {
    engine
        .session_mut()
        .lanes_mut()
        .iter()
        .map(|l| l.ch.stats())
        .collect()
}

/// The executor's state.
struct Exec<'p> {
    program: &'p Program,
    party: Party,
    enc: Encoding,
    /// The modulus of the shares (the plan's ring or field).
    md: Modulus,
    vals: Vec<Option<Val<'p>>>,
    /// The client's outputs so far, by the output instruction (the schedule may reveal
    /// a public output before a secret one).
    outputs: Vec<(ValueId, Tensor)>,
}

/// The words of a tensor of the plan's ring.
fn words(t: &Tensor) -> &[u64] {
    t.as_u64()
        .expect("the executor holds tensors of the plan's ring, whose data are u64 words")
}

impl<'p> Exec<'p> {
    /// This party's view of operand `v`.
    fn val(&self, v: ValueId) -> &Val<'p> {
        self.vals[v.index()]
            .as_ref()
            .expect("operands are computed before use and freed after their last use")
    }

    fn owner(&self, v: ValueId) -> Owner {
        self.program.ty(v).owner()
    }

    /// A tensor of the plan's ring in `shape` from words a protocol returned.
    fn ring_tensor(&self, shape: &[usize], data: Vec<u64>) -> Result<Tensor, StepError> {
        Tensor::canonical(self.enc, shape.to_vec(), data).map_err(|e| {
            StepError::Local(InterpError::Tensor {
                name: "protocol output".into(),
                source: e,
            })
        })
    }

    /// `v` as an additive share: a share as is; a value known in the clear (necessarily
    /// to the server if it is not public) is the server's share and the client's share
    /// is zero.
    fn share_of(&self, v: ValueId) -> Cow<'_, Tensor> {
        match (self.val(v), self.party) {
            (Val::Share(s), _) => Cow::Borrowed(s),
            (Val::Clear(c), Party::Server) => Cow::Borrowed(c.as_ref()),
            (Val::Clear(_) | Val::Absent, Party::Client) | (Val::Absent, Party::Server) => {
                Cow::Owned(
                    Tensor::zeros(self.enc, self.program.ty(v).shape().to_vec())
                        .expect("the plan's types are valid tensor types"),
                )
            }
        }
    }

    /// Executes instruction `v` of step [`Step::Local`]; `input` is the client's data for
    /// an `input`.
    fn local(&mut self, v: ValueId, input: Option<Tensor>) -> Result<Val<'p>, StepError> {
        let program = self.program;
        let instr = program.instr(v);
        let owner = instr.ty.owner();
        match &instr.op {
            Op::Input { .. } => {
                return Ok(Val::Share(match (self.party, input) {
                    (Party::Client, Some(t)) => t,
                    _ => Tensor::zeros(self.enc, instr.ty.shape().to_vec())
                        .expect("the plan's types are valid tensor types"),
                }));
            }
            Op::Const { id, .. } => {
                return Ok(if knows(owner, self.party) {
                    let t = program.const_data(*id).ok_or_else(|| {
                        StepError::Unsupported("the constant's data is withheld".into())
                    })?;
                    Val::Clear(Cow::Borrowed(t))
                } else {
                    Val::Absent
                });
            }
            Op::Output { x, .. } => return Ok(self.output(v, self.clear(*x).cloned())),
            _ => {}
        }
        if matches!(owner, Owner::Public | Owner::Server) {
            // Every operand is known to the owner: computed in the clear by it.
            if !knows(owner, self.party) {
                return Ok(Val::Absent);
            }
            let t = interp::eval_op(program, &instr.op, &|o| match self.val(o) {
                Val::Clear(c) => Some(c.as_ref()),
                _ => None,
            })?;
            return Ok(Val::Clear(Cow::Owned(t)));
        }
        self.on_shares(v).map(Val::Share)
    }

    /// Applies a linear op to shares ([`interp::eval_op`]): each share operand as is,
    /// `factor` (a public multiplicative operand) in the clear, every other operand as the
    /// server's addend. `op` may differ from the instruction's (the client's pad value is
    /// zero).
    fn linear(&self, op: &Op, factor: Option<ValueId>) -> Result<Tensor, StepError> {
        let mut ops: Vec<(ValueId, Cow<'_, Tensor>)> = Vec::new();
        for &o in op.operands() {
            if ops.iter().any(|(v, _)| *v == o) {
                continue;
            }
            let t = match (Some(o) == factor, self.val(o)) {
                (true, Val::Clear(c)) => Cow::Borrowed(c.as_ref()),
                (true, _) => {
                    return Err(StepError::Unsupported(format!(
                        "factor %{} is not public",
                        self.program.name(o)
                    )));
                }
                (false, _) => self.share_of(o),
            };
            ops.push((o, t));
        }
        Ok(interp::eval_op(self.program, op, &|v| {
            ops.iter().find(|(o, _)| *o == v).map(|(_, t)| t.as_ref())
        })?)
    }

    /// The value of `v` if this party knows it in the clear.
    fn clear(&self, v: ValueId) -> Option<&Tensor> {
        match self.val(v) {
            Val::Clear(c) => Some(c),
            _ => None,
        }
    }

    /// Whether `v` is known to the server but not public (a weight).
    fn server_only(&self, v: ValueId) -> bool {
        self.owner(v) == Owner::Server
    }

    /// This party's share of a secret value (owner client or shared) computed locally
    /// from the shares of its operands ([`Step::Local`]).
    fn on_shares(&self, v: ValueId) -> Result<Tensor, StepError> {
        let instr = self.program.instr(v);
        let op = &instr.op;
        let public = |o: &ValueId| self.owner(*o) == Owner::Public;
        match op {
            Op::Reshape { x, .. } | Op::Flatten { x, .. } | Op::Identity { x } => Ok(self
                .share_of(*x)
                .into_owned()
                .reshaped(instr.ty.shape().to_vec())?),
            Op::Transpose { .. }
            | Op::Gather { .. }
            | Op::Concat { .. }
            | Op::Add { .. }
            | Op::Sub { .. }
            | Op::MulPublic { .. }
            | Op::ScaleUp { .. } => self.linear(op, None),
            Op::Pad { x, pads, value } => {
                // The client's pad value is zero: the server's share carries it.
                let value = match self.party {
                    Party::Server => *value,
                    Party::Client => Scalar::Int(0),
                };
                let op = Op::Pad {
                    x: *x,
                    pads: pads.clone(),
                    value,
                };
                self.linear(&op, None)
            }
            // A product by a public factor; a product by the server's weights is a
            // `Step::Product`.
            Op::Conv2d { w, .. } if public(w) => self.linear(op, Some(*w)),
            Op::MatMul { a, .. } | Op::Mul { a, .. } if public(a) => self.linear(op, Some(*a)),
            Op::MatMul { b, .. } | Op::Mul { b, .. } if public(b) => self.linear(op, Some(*b)),
            Op::Conv2d { .. } | Op::MatMul { .. } | Op::Mul { .. } => Err(secret_product(op)),
            Op::BatchNorm { .. } => Err(StepError::Unsupported(
                "batchnorm exists only in float programs; compile the model with sci-compile"
                    .into(),
            )),
            op => Err(StepError::Unsupported(format!(
                "{} is not a local step on shares",
                op.mnemonic()
            ))),
        }
    }

    /// A product wave ([`Step::Product`] on `backend`): the products of secret
    /// operands by the server's weights in `members`, run as **one** call of the
    /// backend — SCI_OT: one streamed OT call per lane over every product's chunk of
    /// rows ([`Engine::products`]); SCI_HE: every layer's ciphertexts in one flight
    /// each way ([`Engine::he_linears`]). Rounds: those of one product; bytes: the
    /// products' summed. Their output shares, in order.
    fn products(
        &self,
        members: &[ValueId],
        backend: Backend,
        engine: &mut Engine,
    ) -> Result<Vec<Val<'p>>, StepError> {
        if let (Backend::Rlwe, Modulus::Pow2(ell)) = (backend, self.md) {
            return self.rlwe_products(members, ell, engine);
        }
        let prepared = members
            .iter()
            .map(|&v| self.prepare(v))
            .collect::<Result<Vec<_>, _>>()?;
        let ys = match (backend, self.md) {
            (Backend::Ot, Modulus::Pow2(ell)) => {
                let ps: Vec<matmul::Product<'_>> =
                    prepared.iter().map(Prepared::ot_product).collect();
                engine.products(ell, &ps)?
            }
            (Backend::He, Modulus::Odd(t)) => {
                let packings = prepared
                    .iter()
                    .map(Prepared::he_packing)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(he_err)?;
                let layers: Vec<(&dyn he::Packing, &[u64])> = packings
                    .iter()
                    .zip(&prepared)
                    .map(|(p, q)| (p.as_ref(), q.x.as_slice()))
                    .collect();
                engine.he_linears(t, &layers)?
            }
            (backend, md) => {
                return Err(StepError::Unsupported(format!(
                    "{backend} products over shares in {md}"
                )));
            }
        };
        prepared
            .iter()
            .zip(ys)
            .map(|(p, y)| self.finish(p, y).map(Val::Share))
            .collect()
    }

    /// A wave of products of two secret operands ([`Step::SecretProduct`]) on
    /// `backend`: every member as a product of this party's shares (a `mul`'s operands
    /// broadcast to its output first), all run as one call — OT: each a
    /// [`SecretProduct`] ([`Engine::secret_products`]: on each lane one `secmul` call
    /// over the lane's rows of every product; bytes and rounds
    /// [`sci_ir::cost::secmul::products`]); RLWE (matmuls only): each a
    /// [`cheetah::SecretMatMul`] ([`Engine::rlwe_secret_products`]: every cross term in
    /// one exchange on lane 0; [`sci_ir::cost::rlwe::wave`]). Their output shares plus
    /// a `matmul`'s bias, in order.
    fn secret_products(
        &self,
        members: &[ValueId],
        backend: Backend,
        engine: &mut Engine,
    ) -> Result<Vec<Val<'p>>, StepError> {
        let Modulus::Pow2(ell) = self.md else {
            return Err(StepError::Unsupported(format!(
                "products of two secret operands over shares in {}",
                self.md
            )));
        };
        let shape = |o: &ValueId| self.program.ty(*o).shape();
        let mut operands = Vec::with_capacity(members.len());
        for &v in members {
            let instr = self.program.instr(v);
            let out = instr.ty.shape();
            operands.push(match &instr.op {
                Op::Mul { a, b } => {
                    let xa = linear::broadcast_to(&self.share_of(*a), out)?;
                    let xb = linear::broadcast_to(&self.share_of(*b), out)?;
                    (None, words(&xa).to_vec(), words(&xb).to_vec(), None)
                }
                Op::MatMul { a, b, bias } => {
                    let dims = (shape(a)[0], shape(a)[1], shape(b)[1]);
                    let (xa, xb) = (self.share_of(*a), self.share_of(*b));
                    let bias = bias.map(|c| (c, vec![dims.2]));
                    (Some(dims), words(&xa).to_vec(), words(&xb).to_vec(), bias)
                }
                op => return Err(secret_product(op)),
            });
        }
        let ys = match backend {
            Backend::Rlwe => {
                let ps = members
                    .iter()
                    .zip(&operands)
                    .map(|(&v, (dims, a, b, _))| match dims {
                        Some(dims) => Ok(cheetah::SecretMatMul {
                            name: &self.program.instr(v).name,
                            dims: *dims,
                            a,
                            b,
                        }),
                        None => Err(StepError::Unsupported(format!(
                            "%{}: an elementwise product of two secret operands runs by OT only",
                            self.program.instr(v).name
                        ))),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                engine.rlwe_secret_products(ell, &ps)?
            }
            _ => {
                let ps: Vec<SecretProduct<'_>> = operands
                    .iter()
                    .map(|(dims, x, y, _)| match dims {
                        Some(dims) => SecretProduct::MatMul { dims: *dims, x, y },
                        None => SecretProduct::Mul { x, y },
                    })
                    .collect();
                engine.secret_products(ell, &ps)?
            }
        };
        members
            .iter()
            .zip(&operands)
            .zip(ys)
            .map(|((&v, (_, _, _, bias)), y)| {
                let y = self.ring_tensor(self.program.ty(v).shape(), y)?;
                match bias {
                    Some((b, shape)) => self.add_bias(y, Some(*b), shape),
                    None => Ok(y),
                }
                .map(Val::Share)
            })
            .collect()
    }

    /// An RLWE product wave ([`Step::Product`] on [`Backend::Rlwe`]): every member as
    /// the [`cheetah::Layer`] of its [`sci_ir::rlwe::Product`] (the shared operand and
    /// the weights as the instruction holds them), all run in one exchange
    /// ([`Engine::rlwe_products`]: the client's ciphertexts in one flight, the
    /// server's masked replies in one; the session's keys set up on first use). Bytes
    /// and rounds: [`sci_ir::cost::rlwe::wave`]. Their output shares plus the server's
    /// bias, in order.
    fn rlwe_products(
        &self,
        members: &[ValueId],
        ell: u32,
        engine: &mut Engine,
    ) -> Result<Vec<Val<'p>>, StepError> {
        let mut layers = Vec::with_capacity(members.len());
        let mut finish = Vec::with_capacity(members.len());
        for &v in members {
            let instr = self.program.instr(v);
            let product = sci_ir::rlwe::Product::of(self.program, v).ok_or_else(|| {
                StepError::Unsupported(format!(
                    "%{} is marked for RLWE but is no product RLWE runs",
                    instr.name
                ))
            })?;
            let shape = |o: &ValueId| self.program.ty(*o).shape();
            let (x, w, bias) = match &instr.op {
                Op::Conv2d { x, w, bias, .. } => {
                    let c = shape(w).first().copied().unwrap_or(1);
                    (*x, *w, bias.map(|b| (b, vec![1, c, 1, 1])))
                }
                Op::MatMul { a, b, bias } => {
                    let cols = shape(b).get(1).copied().unwrap_or(1);
                    let (x, w) = if self.server_only(*b) { (a, b) } else { (b, a) };
                    (*x, *w, bias.map(|b| (b, vec![cols])))
                }
                Op::Mul { a, b } if self.server_only(*a) => (*b, *a, None),
                Op::Mul { a, b } => (*a, *b, None),
                op => return Err(secret_product(op)),
            };
            let layer = cheetah::Layer::product(&instr.name, &product, ell, self.clear_words(w))
                .map_err(ProtoError::from)?;
            layers.push((layer, words(&self.share_of(x)).to_vec()));
            finish.push((instr.ty.shape(), bias));
        }
        let calls: Vec<(&cheetah::Layer, &[u64])> =
            layers.iter().map(|(l, x)| (l, x.as_slice())).collect();
        let ys = engine.rlwe_products(&calls)?;
        finish
            .into_iter()
            .zip(ys)
            .map(|((out, bias), y)| {
                let y = self.ring_tensor(out, y)?;
                match bias {
                    Some((b, shape)) => self.add_bias(y, Some(b), &shape),
                    None => Ok(y),
                }
                .map(Val::Share)
            })
            .collect()
    }

    /// Product `v` by the server's weights as the backend takes it: a
    /// convolution as is (`im2col` in the OT protocol), `X·W` as is, `W·X` as the
    /// product `Xᵀ·Wᵀ`, `mul` broadcast first.
    fn prepare(&self, v: ValueId) -> Result<Prepared<'_>, StepError> {
        let instr = self.program.instr(v);
        let (op, out) = (&instr.op, instr.ty.shape());
        let shape = |o: &ValueId| self.program.ty(*o).shape();
        let owned = |t: Cow<'_, Tensor>| words(&t).to_vec();
        Ok(match op {
            Op::Conv2d { x, w, bias, conv } if self.server_only(*w) => {
                let ws = shape(w);
                let geom = ConvGeom {
                    input: shape4(shape(x)),
                    c_out: ws.first().copied().unwrap_or(1),
                    kernel: [
                        ws.get(2).copied().unwrap_or(1),
                        ws.get(3).copied().unwrap_or(1),
                    ],
                    conv: *conv,
                };
                let [_, c, _, _] = geom.output_shape();
                Prepared {
                    kind: Product::Conv(geom),
                    x: owned(self.share_of(*x)),
                    w: self.clear_words(*w).map(Cow::Borrowed),
                    transposed: None,
                    bias: bias.map(|b| (b, vec![1, c, 1, 1])),
                    out: out.to_vec(),
                }
            }
            Op::MatMul { a, b, bias } if self.server_only(*b) => {
                let (sa, sb) = (shape(a), shape(b));
                Prepared {
                    kind: Product::MatMul((sa[0], sa[1], sb[1])),
                    x: owned(self.share_of(*a)),
                    w: self.clear_words(*b).map(Cow::Borrowed),
                    transposed: None,
                    bias: bias.map(|b| (b, vec![sb[1]])),
                    out: out.to_vec(),
                }
            }
            Op::MatMul { a, b, bias } if self.server_only(*a) => {
                // W·X = (Xᵀ·Wᵀ)ᵀ.
                let (sa, sb) = (shape(a), shape(b));
                let xt = linear::transpose(&self.share_of(*b), &[1, 0])?;
                let wt = self
                    .clear(*a)
                    .map(|w| linear::transpose(w, &[1, 0]))
                    .transpose()?;
                Prepared {
                    kind: Product::MatMul((sb[1], sb[0], sa[0])),
                    x: words(&xt).to_vec(),
                    w: wt.as_ref().map(|w| Cow::Owned(words(w).to_vec())),
                    transposed: Some([sb[1], sa[0]]),
                    bias: bias.map(|b| (b, vec![sb[1]])),
                    out: out.to_vec(),
                }
            }
            Op::Mul { a, b } if self.server_only(*a) || self.server_only(*b) => {
                let (w, x) = if self.server_only(*a) { (a, b) } else { (b, a) };
                let xb = linear::broadcast_to(&self.share_of(*x), out)?;
                let wb = self
                    .clear(*w)
                    .map(|c| linear::broadcast_to(c, out))
                    .transpose()?;
                Prepared {
                    kind: Product::Mul,
                    x: words(&xb).to_vec(),
                    w: wb.as_ref().map(|w| Cow::Owned(words(w).to_vec())),
                    transposed: None,
                    bias: None,
                    out: out.to_vec(),
                }
            }
            _ => return Err(secret_product(op)),
        })
    }

    /// The instruction's share from the backend's output `y` for `p`: transposed
    /// back for `W·X`, plus the server's bias.
    fn finish(&self, p: &Prepared<'_>, y: Vec<u64>) -> Result<Tensor, StepError> {
        let y = match p.transposed {
            Some(shape) => linear::transpose(&self.ring_tensor(&shape, y)?, &[1, 0])?,
            None => self.ring_tensor(&p.out, y)?,
        };
        match &p.bias {
            Some((b, shape)) => self.add_bias(y, Some(*b), shape),
            None => Ok(y),
        }
    }

    /// A wave of the elementwise `step` (`relu`, `trunc`, `div_public`: Algorithms 8
    /// and 5, Theorem 4.1; `relu_trunc`: both fused, `proto::trunc::relu_trunc`; `sigmoid`, `tanh`: `proto::sigmoid`; `rsqrt`: `proto::rsqrt`; `spline`: `proto::spline`) over `members` ([`sci_ir::schedule::waves`]): one protocol
    /// call over their operands' shares concatenated; their output shares, split again,
    /// in order. One call's rounds instead of one per member; bytes those of one call
    /// on the summed length.
    fn elementwise(
        &self,
        members: &[ValueId],
        step: Step,
        engine: &mut Engine,
    ) -> Result<Vec<Val<'p>>, StepError> {
        let (program, md) = (self.program, self.md);
        let mut x = Vec::new();
        for &v in members {
            x.extend_from_slice(words(&self.share_of(*program.instr(v).op.operands()[0])));
        }
        let y = match step {
            Step::Relu => engine.relu(md, &x)?,
            Step::ReluTrunc { s } => engine.relu_trunc(md, s, &x)?,
            Step::Smooth { kind, s } => engine.smooth(md, kind, s, &x)?,
            Step::Rsqrt { s } => engine.rsqrt(md, s, &x)?,
            Step::Spline { func, s } => engine.spline(md, func, s, &x)?,
            Step::Trunc { s, nonneg } => engine.trunc(md, s, &x, nonneg)?,
            Step::Div { d, nonneg } => {
                let known = if nonneg { Sign::NonNeg } else { Sign::Any };
                engine.rdiv(md, &x, &[d], known)?
            }
            step => unreachable!("{step:?} is not elementwise"),
        };
        let mut rest = y.as_slice();
        members
            .iter()
            .map(|&v| {
                let (head, tail) = rest.split_at(program.ty(v).numel());
                rest = tail;
                self.ring_tensor(program.ty(v).shape(), head.to_vec())
                    .map(Val::Share)
            })
            .collect()
    }

    /// `maxpool`, `argmax` (§5.2.2, comparisons as `step` says, module docs),
    /// `avgpool`, `global_avgpool` (window sums, then division, §5.1.2), `softmax`
    /// (`proto::softmax`: the lines' maxima as MaxPool's, comparisons likewise).
    fn pooling(&self, v: ValueId, step: Step, engine: &mut Engine) -> Result<Tensor, StepError> {
        let instr = self.program.instr(v);
        let compare = match step {
            Step::MaxPool { exact: true }
            | Step::ArgMax { exact: true }
            | Step::Softmax { exact: true, .. } => Compare::Exact,
            _ => Compare::Narrow,
        };
        let md = self.md;
        let shape = |o: &ValueId| self.program.ty(*o).shape();
        let share = match &instr.op {
            Op::MaxPool { x, pool } => engine.maxpool(
                md,
                words(&self.share_of(*x)),
                shape4(shape(x)),
                pool,
                compare,
            )?,
            Op::AvgPool {
                x,
                pool,
                count_include_pad,
            } => engine.avgpool(
                md,
                words(&self.share_of(*x)),
                shape4(shape(x)),
                pool,
                *count_include_pad,
            )?,
            Op::GlobalAvgPool { x } => {
                engine.global_avgpool(md, words(&self.share_of(*x)), shape4(shape(x)))?
            }
            Op::ArgMax { x, axis, .. } => {
                engine.argmax(md, words(&self.share_of(*x)), shape(x), *axis, compare)?
            }
            Op::Softmax { x, axis } => engine.softmax(
                md,
                instr.ty.scale(),
                words(&self.share_of(*x)),
                shape(x),
                *axis,
                compare,
            )?,
            op => unreachable!("{} is not a pooling", op.mnemonic()),
        };
        self.ring_tensor(instr.ty.shape(), share)
    }

    /// The words of `v` if this party knows it in the clear (the server's weights).
    fn clear_words(&self, v: ValueId) -> Option<&[u64]> {
        self.clear(v).map(words)
    }

    /// Adds this party's share of an optional bias, reshaped to `bias_shape`, to `y` with
    /// broadcasting: the server adds a known bias, the client nothing; a shared bias each
    /// party's share.
    fn add_bias(
        &self,
        y: Tensor,
        bias: Option<ValueId>,
        bias_shape: &[usize],
    ) -> Result<Tensor, StepError> {
        match bias {
            Some(b) if self.party != Party::Client || matches!(self.val(b), Val::Share(_)) => {
                let b = self
                    .share_of(b)
                    .into_owned()
                    .reshaped(bias_shape.to_vec())?;
                Ok(linear::add(&y, &b)?)
            }
            _ => Ok(y),
        }
    }

    /// Output `v` of a secret value ([`Step::Reveal`]) revealed to the client: the
    /// server sends its share, the client adds it.
    fn reveal(&mut self, v: ValueId, engine: &mut Engine) -> Result<Val<'p>, StepError> {
        let x = *self.program.instr(v).op.operands()[0];
        let value = engine
            .reveal(self.md, words(&self.share_of(x)), Party::Client)?
            .map(|v| self.ring_tensor(self.program.ty(x).shape(), v))
            .transpose()?;
        Ok(self.output(v, value))
    }

    /// Output `v` of `value`, known to this party (the client's, after a reveal, or a
    /// public one's at both): recorded as the client's output.
    fn output(&mut self, v: ValueId, value: Option<Tensor>) -> Val<'p> {
        match (self.party, value) {
            (Party::Client, Some(value)) => {
                self.outputs.push((v, value.clone()));
                Val::Clear(Cow::Owned(value))
            }
            _ => Val::Absent,
        }
    }
}

/// A product with the server's weights, by its shape.
#[derive(Clone, Copy)]
enum Product {
    /// A convolution.
    Conv(ConvGeom),
    /// `[rows, cols] × [cols, outs]`.
    MatMul((usize, usize, usize)),
    /// Elementwise, as long as the operand.
    Mul,
}

/// A product by the server's weights as the backend takes it ([`Exec::prepare`]).
struct Prepared<'e> {
    kind: Product,
    /// This party's share of the operand (transposed for `W·X`, broadcast for `mul`).
    x: Vec<u64>,
    /// The weights, at the server (likewise transposed or broadcast).
    w: Option<Cow<'e, [u64]>>,
    /// The shape of the backend's output if it is the transpose of the result
    /// (`W·X`).
    transposed: Option<[usize; 2]>,
    /// The bias and the shape it broadcasts from.
    bias: Option<(ValueId, Vec<usize>)>,
    /// The instruction's shape.
    out: Vec<usize>,
}

impl Prepared<'_> {
    /// The product as an OT call member ([`matmul::Product`]).
    fn ot_product(&self) -> matmul::Product<'_> {
        let (x, w) = (self.x.as_slice(), self.w.as_deref());
        match &self.kind {
            Product::Conv(geom) => matmul::Product::Conv { geom, x, w },
            Product::MatMul(dims) => matmul::Product::MatMul { dims: *dims, x, w },
            Product::Mul => matmul::Product::Mul { x, w },
        }
    }

    /// The product's HE packing (Gazelle's, App. F).
    fn he_packing(&self) -> Result<Box<dyn he::Packing + '_>, he::HeError> {
        let w = self.w.as_deref();
        Ok(match &self.kind {
            Product::Conv(geom) => Box::new(he::conv::Conv::new(geom, w)?),
            Product::MatMul(dims) => Box::new(he::fc::MatMul::new(*dims, w)?),
            Product::Mul => Box::new(he::mul::Mul::new(self.x.len(), w)?),
        })
    }
}

/// The error for a product of a secret tensor by an operand that is neither the
/// server's weights nor public.
fn secret_product(op: &Op) -> StepError {
    StepError::Unsupported(format!(
        "{} of a secret tensor by another secret operand (only the server's weights or public values can multiply a secret tensor here)",
        op.mnemonic()
    ))
}

/// An HE packing error as a step error.
fn he_err(e: he::HeError) -> StepError {
    StepError::Proto(crate::proto::ProtoError::He(e))
}

/// A 4-D shape (`[n, c, h, w]`) as an array; the type checker guarantees rank 4 for
/// pooling operands (missing dimensions read as 1).
fn shape4(s: &[usize]) -> [usize; 4] {
    let d = |i: usize| s.get(i).copied().unwrap_or(1);
    [d(0), d(1), d(2), d(3)]
}

impl From<CheckErrorKind> for StepError {
    fn from(e: CheckErrorKind) -> Self {
        StepError::Local(InterpError::Op(e))
    }
}

impl From<TensorError> for StepError {
    fn from(e: TensorError) -> Self {
        StepError::Local(InterpError::Tensor {
            name: "share".into(),
            source: e,
        })
    }
}
