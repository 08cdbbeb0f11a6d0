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
//! | op | how |
//! |---|---|
//! | `input` | shares as above |
//! | `const` | public: both; server: the server |
//! | `reshape`, `flatten`, `identity` | the share, reinterpreted |
//! | `transpose`, `concat`, `pad`, `add`, `sub`, `mul_public`, `scale_up`; `conv2d`, `matmul`, `mul` by a public factor | local, on each share ([`super::local`]); addends known in the clear (constants, biases, pad values) are added by the server only |
//! | `conv2d`, `matmul`, `mul` by a server factor | OT-based linear layer (§5.1.1) |
//! | `relu` | `Π_ReLU` (Algorithm 8) |
//! | `trunc s` | `Π_Trunc^{int,ℓ,s}` (Algorithm 5); the non-negative variant where marked `nonneg` |
//! | `div_public d` | division by a public integer (Theorem 4.1) |
//! | `maxpool` | windows gathered locally ([`super::windows`]), then `MaxPool_d` (§5.2.2) |
//! | `avgpool`, `global_avgpool` | window sums locally, then division by the window count (§5.1.2) |
//! | `argmax` | rows gathered locally, then `ArgMax_d` (§5.2.2) |
//! | `output` | revealed to the client |
//!
//! Values computed only from values a party knows in the clear (public ones at both,
//! server ones at the server) are computed by that party locally with the reference
//! interpreter; no protocol is run.

use super::local::{self, LocalError};
use super::protocols::{self, Cfg};
use super::report::{Cost, InstrRecord, PartyReport};
use super::windows;
use super::{ExecError, StepError};
use crate::net::{Party, Stats};
use crate::ot::Session;
use crate::proto::maxpool::Windows;
use sci_ir::{Encoding, Op, Owner, Program, Scalar, Tensor, ValueId};
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

/// This party's view of a value.
#[derive(Clone, Debug)]
enum Val {
    /// Known to this party in the clear.
    Clear(Vec<u64>),
    /// This party's additive share.
    Share(Vec<u64>),
    /// Known only to the other party (server values at the client).
    Absent,
}

/// Whether the value's owner is known in the clear by `party`.
fn knows(owner: Owner, party: Party) -> bool {
    match party {
        Party::P0 => owner.server_knows(),
        Party::P1 => owner == Owner::Public,
    }
}

/// Checks that `program` can be run by `party` with this runtime: quantized over one
/// ring `Z_{2^ℓ}`, securely executable ([`Program::check_secure`]), and, for the server,
/// with its weights. Returns ℓ.
pub fn check_plan(program: &Program, party: Party) -> Result<u32, ExecError> {
    program.check_secure().map_err(ExecError::NotSecure)?;
    let bits = match program.encoding() {
        Some(Encoding::Ring { bits }) => bits,
        Some(e) => return Err(ExecError::Encoding(e.to_string())),
        None => return Err(ExecError::Encoding("none (an empty program)".into())),
    };
    if party == Party::P0 && program.has_withheld_consts() {
        return Err(ExecError::NoWeights);
    }
    Ok(bits)
}

/// Runs `program` as `party` over `session`. The client passes its encoded inputs (in
/// the order of [`Program::inputs`], as [`super::io::load_inputs`] returns them); the
/// server passes `None`. `setup` is the cost of the connection set-up, recorded in the
/// report; `observe` is called after every instruction.
pub fn execute(
    program: &Program,
    session: &mut Session,
    inputs: Option<Vec<Tensor>>,
    setup: Cost,
    observe: &mut dyn FnMut(Progress<'_>),
) -> Result<Execution, ExecError> {
    let party = session.party();
    let bits = check_plan(program, party)?;
    let enc = Encoding::ring(bits).map_err(|e| ExecError::Encoding(e.to_string()))?;
    let input_ids = program.inputs();
    let mut inputs = match (party, inputs) {
        (Party::P1, Some(i)) if i.len() == input_ids.len() => i.into_iter(),
        (Party::P1, i) => {
            return Err(ExecError::Inputs(format!(
                "the plan has {} inputs, {} were given",
                input_ids.len(),
                i.map_or(0, |i| i.len())
            )));
        }
        (Party::P0, _) => Vec::new().into_iter(),
    };
    let start = Instant::now();
    let n = program.instrs().len();
    let mut last_use = vec![None; n];
    for v in program.ids() {
        for o in program.instr(v).op.operands() {
            last_use[o.index()] = Some(v.index());
        }
    }
    let mut ex = Exec {
        program,
        party,
        enc,
        bits,
        radix: program.params().mill_radix,
        vals: vec![None; n],
        outputs: Vec::new(),
    };
    let mut records = Vec::with_capacity(n);
    for v in program.ids() {
        let instr = program.instr(v);
        let before = lane_stats(session);
        let t0 = Instant::now();
        let input = match instr.op {
            Op::Input { .. } => inputs.next(),
            _ => None,
        };
        let val = ex
            .step(v, input, session)
            .map_err(|source| ExecError::Step {
                index: v.index(),
                count: n,
                name: instr.name.clone(),
                op: instr.op.mnemonic(),
                cause: Box::new(source),
            })?;
        ex.vals[v.index()] = Some(val);
        for o in instr.op.operands() {
            if last_use[o.index()] == Some(v.index()) {
                ex.vals[o.index()] = None;
            }
        }
        if last_use[v.index()].is_none() {
            ex.vals[v.index()] = None;
        }
        let cost = Cost::between(&before, &lane_stats(session), t0.elapsed().as_secs_f64());
        records.push(InstrRecord {
            index: v.index(),
            name: instr.name.clone(),
            op: instr.op.mnemonic(),
            shape: instr.ty.shape().to_vec(),
            cost: Some(cost),
        });
        observe(Progress {
            done: v.index() + 1,
            total: n,
            name: &instr.name,
            op: instr.op.mnemonic(),
            stats: session.stats(),
        });
    }
    for lane in session.lanes_mut() {
        lane.ch.flush().map_err(ExecError::Connect)?;
    }
    let totals = Cost::from_stats(
        session.stats(),
        setup.seconds + start.elapsed().as_secs_f64(),
    );
    Ok(Execution {
        outputs: (party == Party::P1).then_some(ex.outputs),
        report: PartyReport {
            party: match party {
                Party::P0 => "server",
                Party::P1 => "client",
            },
            threads: session.threads(),
            setup,
            instructions: records,
            totals,
        },
    })
}

/// The counters of every lane.
fn lane_stats(session: &mut Session) -> Vec<Stats> {
    session.lanes_mut().iter().map(|l| l.ch.stats()).collect()
}

/// The executor's state.
struct Exec<'p> {
    program: &'p Program,
    party: Party,
    enc: Encoding,
    bits: u32,
    radix: u32,
    vals: Vec<Option<Val>>,
    outputs: Vec<Tensor>,
}

impl Exec<'_> {
    /// This party's view of operand `v`.
    fn val(&self, v: ValueId) -> &Val {
        self.vals[v.index()]
            .as_ref()
            .expect("operands are computed before use and freed after their last use")
    }

    /// The protocol parameters.
    fn cfg(&self) -> Cfg {
        Cfg {
            bits: self.bits,
            radix: self.radix,
        }
    }

    fn owner(&self, v: ValueId) -> Owner {
        self.program.ty(v).owner()
    }

    fn tensor(&self, v: ValueId, data: Vec<u64>) -> Tensor {
        Tensor::canonical(self.enc, self.program.ty(v).shape().to_vec(), data)
            .expect("values are kept reduced and in their value's shape")
    }

    /// `v` as an additive share: a share as is; a value known in the clear (necessarily
    /// to the server if it is not public) is the server's share and the client's share
    /// is zero.
    fn share_of(&self, v: ValueId) -> Vec<u64> {
        match (self.val(v), self.party) {
            (Val::Share(s), _) => s.clone(),
            (Val::Clear(c), Party::P0) => c.clone(),
            (Val::Clear(_) | Val::Absent, Party::P1) | (Val::Absent, Party::P0) => {
                vec![0; self.program.ty(v).numel()]
            }
        }
    }

    /// Executes instruction `v`; `input` is the client's data for an `input`.
    fn step(
        &mut self,
        v: ValueId,
        input: Option<Tensor>,
        session: &mut Session,
    ) -> Result<Val, StepError> {
        let instr = self.program.instr(v);
        let owner = instr.ty.owner();
        match &instr.op {
            Op::Input { .. } => {
                return Ok(Val::Share(match (self.party, input) {
                    (Party::P1, Some(t)) => t.as_u64().map(<[u64]>::to_vec).ok_or_else(|| {
                        StepError::Unsupported("the input is not encoded in the plan's ring".into())
                    })?,
                    _ => vec![0; instr.ty.numel()],
                }));
            }
            Op::Const { id, .. } => {
                return Ok(if knows(owner, self.party) {
                    let t = self.program.const_data(*id).ok_or_else(|| {
                        StepError::Unsupported("the constant's data is withheld".into())
                    })?;
                    Val::Clear(t.as_u64().map(<[u64]>::to_vec).unwrap_or_default())
                } else {
                    Val::Absent
                });
            }
            Op::Output { x, .. } => return self.reveal(*x, session),
            _ => {}
        }
        if matches!(owner, Owner::Public | Owner::Server) {
            // Every operand is known to the owner: computed in the clear by it.
            if !knows(owner, self.party) {
                return Ok(Val::Absent);
            }
            let ops = instr
                .op
                .operands()
                .into_iter()
                .map(|&o| match self.val(o) {
                    Val::Clear(c) => Ok((o, self.tensor(o, c.clone()))),
                    _ => Err(StepError::Unsupported(format!(
                        "operand %{} is not known to the party computing this {} value",
                        self.program.name(o),
                        owner
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let t = local::eval(self.program, &instr.op, ops)?;
            return Ok(Val::Clear(
                t.as_u64().map(<[u64]>::to_vec).unwrap_or_default(),
            ));
        }
        self.secure(v, session)
    }

    /// Applies a linear op to shares: each share operand as is, `factor` (a public
    /// multiplicative operand) in the clear, every other operand as the server's addend.
    /// `op` may differ from the instruction's (the client's pad value is zero).
    fn linear(&self, op: &Op, factor: Option<ValueId>) -> Result<Val, StepError> {
        let ops = op
            .operands()
            .into_iter()
            .map(|&o| {
                let data = match (Some(o) == factor, self.val(o)) {
                    (true, Val::Clear(c)) => c.clone(),
                    (true, _) => {
                        return Err(StepError::Unsupported(format!(
                            "factor %{} is not public",
                            self.program.name(o)
                        )));
                    }
                    (false, _) => self.share_of(o),
                };
                Ok((o, self.tensor(o, data)))
            })
            .collect::<Result<Vec<_>, StepError>>()?;
        let t = local::eval(self.program, op, ops)?;
        Ok(Val::Share(
            t.as_u64().map(<[u64]>::to_vec).unwrap_or_default(),
        ))
    }

    /// A secret value (owner client or shared).
    fn secure(&mut self, v: ValueId, session: &mut Session) -> Result<Val, StepError> {
        let instr = self.program.instr(v);
        let op = &instr.op;
        let public = |o: &ValueId| self.owner(*o) == Owner::Public;
        match op {
            Op::Reshape { x, .. } | Op::Flatten { x, .. } | Op::Identity { x } => {
                Ok(Val::Share(self.share_of(*x)))
            }
            Op::Transpose { .. }
            | Op::Concat { .. }
            | Op::Add { .. }
            | Op::Sub { .. }
            | Op::MulPublic { .. }
            | Op::ScaleUp { .. } => self.linear(op, None),
            Op::Pad { x, pads, value } => {
                let value = match self.party {
                    Party::P0 => *value,
                    Party::P1 => Scalar::Int(0),
                };
                let op = Op::Pad {
                    x: *x,
                    pads: pads.clone(),
                    value,
                };
                self.linear(&op, None)
            }
            Op::Conv2d { w, .. } if public(w) => self.linear(op, Some(*w)),
            Op::MatMul { a, .. } if public(a) => self.linear(op, Some(*a)),
            Op::MatMul { b, .. } if public(b) => self.linear(op, Some(*b)),
            Op::Mul { a, .. } if public(a) => self.linear(op, Some(*a)),
            Op::Mul { b, .. } if public(b) => self.linear(op, Some(*b)),
            Op::Conv2d { .. } | Op::MatMul { .. } | Op::Mul { .. } => Err(StepError::Unsupported(
                "the OT-based linear layer protocol is not available in this build of the runtime yet".into(),
            )),
            Op::Relu { x } => protocols::relu(session, self.cfg(), &self.share_of(*x)).map(Val::Share),
            Op::Trunc { x, s, nonneg } => {
                protocols::trunc(session, self.cfg(), *s, *nonneg, &self.share_of(*x)).map(Val::Share)
            }
            Op::DivPublic { x, d } => {
                let n = self.program.ty(*x).numel();
                protocols::div(session, self.cfg(), &self.share_of(*x), &vec![*d; n]).map(Val::Share)
            }
            Op::MaxPool { x, pool } => {
                let win = Windows::pool2d(shape4(self.program.ty(*x).shape()), pool)?;
                protocols::reduce(session, self.cfg(), &self.share_of(*x), &win, false).map(Val::Share)
            }
            Op::AvgPool {
                x,
                pool,
                count_include_pad,
            } => {
                let xs = self.program.ty(*x).shape();
                let win = Windows::pool2d(shape4(xs), pool)?;
                let sums = windows::sums(&win, &self.share_of(*x), self.enc.mask());
                let counts = windows::avg_counts(&win, xs, instr.ty.shape(), pool, *count_include_pad);
                protocols::div(session, self.cfg(), &sums, &counts).map(Val::Share)
            }
            Op::GlobalAvgPool { x } => {
                let xs = self.program.ty(*x).shape();
                let [n, c, h, w] = shape4(xs);
                let win = Windows::axis(&[n * c, h * w], 1)?;
                let sums = windows::sums(&win, &self.share_of(*x), self.enc.mask());
                protocols::div(session, self.cfg(), &sums, &vec![(h * w).max(1) as u64; n * c]).map(Val::Share)
            }
            Op::ArgMax { x, axis, .. } => {
                let win = Windows::axis(self.program.ty(*x).shape(), *axis)?;
                protocols::reduce(session, self.cfg(), &self.share_of(*x), &win, true).map(Val::Share)
            }
            Op::BatchNorm { .. } => Err(StepError::Unsupported(
                "batchnorm exists only in float programs; compile the model with sci-compile"
                    .into(),
            )),
            Op::Input { .. } | Op::Const { .. } | Op::Output { .. } => {
                unreachable!("handled in step")
            }
        }
    }

    /// Reveals `x` to the client: the server sends its share, the client adds it.
    fn reveal(&mut self, x: ValueId, session: &mut Session) -> Result<Val, StepError> {
        let bits = self.bits;
        let n = self.program.ty(x).numel();
        let value = if let (Owner::Public, Val::Clear(c)) = (self.owner(x), self.val(x)) {
            c.clone()
        } else {
            let mine = self.share_of(x);
            let ch = &mut session
                .lanes_mut()
                .first_mut()
                .expect("a session has at least one lane")
                .ch;
            match self.party {
                Party::P0 => {
                    ch.send_u64s(&mine, bits)?;
                    ch.flush()?;
                    return Ok(Val::Absent);
                }
                Party::P1 => {
                    let theirs = ch.recv_u64s(n, bits)?;
                    let mask = self.enc.mask();
                    mine.iter()
                        .zip(&theirs)
                        .map(|(a, b)| a.wrapping_add(*b) & mask)
                        .collect()
                }
            }
        };
        if self.party == Party::P1 {
            self.outputs.push(self.tensor(x, value.clone()));
            return Ok(Val::Clear(value));
        }
        Ok(Val::Absent)
    }
}

/// A 4-D shape (`[n, c, h, w]`) as an array; the type checker guarantees rank 4 for
/// pooling operands (missing dimensions read as 1).
fn shape4(s: &[usize]) -> [usize; 4] {
    let d = |i: usize| s.get(i).copied().unwrap_or(1);
    [d(0), d(1), d(2), d(3)]
}

impl From<LocalError> for StepError {
    fn from(e: LocalError) -> Self {
        StepError::Local(e)
    }
}
