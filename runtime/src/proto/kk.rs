//! Batching of `(N 1)-OT_b` requests (Kolesnikov–Kumaresan) with short
//! messages (`b ≤ 8` bits, one byte each).
//!
//! A protocol step registers every 1-of-N OT it needs and then runs them
//! together ([`KkBatch::run`]) as **one** call of the OT layer
//! ([`crate::ot::OtPack::send_kkot_classes`]): one extension batch and one
//! message each way whatever the classes `(N, b)`, so one round for the
//! receiver. The sender (role `P0`) registers a closure that writes the
//! messages of a range of instances ([`KkBatch::add_send`]); the OT layer
//! calls it group by group while it hashes, so the `count·N` messages are
//! never stored. The receiver (role `P1`) registers its choices
//! ([`KkBatch::add_recv`]). Both parties register the same requests (same
//! `N`, `b`, count, in the same order). Cost: [`crate::ot::kk_bits`] of the
//! requests' classes.

use std::ops::Range;

use super::{Ctx, ProtoError, Role};
use crate::ot::KkClass;

/// Handle of one request, to fetch the receiver's outputs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReqId {
    offset: usize,
    count: usize,
}

/// A sender's message writer: `(range, out)` writes the messages of
/// instances `range` of the request (`out[i·N + v]`, zeroed beforehand).
type Fill<'a> = Box<dyn FnMut(Range<usize>, &mut [u8]) + 'a>;

/// Requests of one party; see the [module documentation](self).
pub(crate) struct KkBatch<'a> {
    role: Role,
    classes: Vec<KkClass>,
    /// Role `P0`: one writer per request.
    fills: Vec<Fill<'a>>,
    /// Role `P1`: the choices of all requests, in order.
    choices: Vec<u8>,
}

impl std::fmt::Debug for KkBatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KkBatch")
            .field("role", &self.role)
            .field("classes", &self.classes)
            .finish_non_exhaustive()
    }
}

/// The receiver's outputs of a batch (empty on the sender's side).
#[derive(Debug)]
pub(crate) struct KkOut {
    out: Vec<u8>,
}

impl KkOut {
    /// The receiver's outputs for request `id` (one byte per instance).
    pub(crate) fn get(&self, id: ReqId) -> &[u8] {
        self.out.get(id.offset..id.offset + id.count).unwrap_or(&[])
    }
}

impl<'a> KkBatch<'a> {
    /// An empty batch for a party playing `role` (`P0` sends, `P1` receives).
    pub(crate) fn new(role: Role) -> Self {
        KkBatch {
            role,
            classes: Vec::new(),
            fills: Vec::new(),
            choices: Vec::new(),
        }
    }

    /// The role of this party.
    pub(crate) fn role(&self) -> Role {
        self.role
    }

    fn push(&mut self, n_msgs: usize, bits: u32, count: usize) -> ReqId {
        debug_assert!((1..=8).contains(&bits));
        let offset = self.classes.iter().map(|c| c.count).sum();
        self.classes.push(KkClass {
            n_msgs,
            bits,
            count,
        });
        ReqId { offset, count }
    }

    /// Role `P0`: registers `count` instances of `(n_msgs 1)-OT_bits` whose
    /// messages `fill(range, out)` writes (see [`Fill`]).
    pub(crate) fn add_send(
        &mut self,
        n_msgs: usize,
        bits: u32,
        count: usize,
        fill: impl FnMut(Range<usize>, &mut [u8]) + 'a,
    ) -> ReqId {
        debug_assert_eq!(self.role, Role::P0);
        self.fills.push(Box::new(fill));
        self.push(n_msgs, bits, count)
    }

    /// Role `P1`: registers `count` instances of `(n_msgs 1)-OT_bits` with
    /// the choices written by `fill` (into a zeroed slice of `count` bytes).
    pub(crate) fn add_recv(
        &mut self,
        n_msgs: usize,
        bits: u32,
        count: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> ReqId {
        debug_assert_eq!(self.role, Role::P1);
        let start = self.choices.len();
        self.choices.resize(start + count, 0);
        fill(&mut self.choices[start..]);
        self.push(n_msgs, bits, count)
    }

    /// Runs all requests in one OT call. Cost [`crate::ot::kk_bits`] of the
    /// classes; one round for the receiver.
    pub(crate) fn run(self, ctx: &mut Ctx<'_>) -> Result<KkOut, ProtoError> {
        let KkBatch {
            role,
            classes,
            mut fills,
            choices,
        } = self;
        let out = match role {
            Role::P0 => {
                ctx.ot
                    .send_kkot_classes(ctx.ch, &classes, |c, range, out: &mut [u8]| {
                        if let Some(f) = fills.get_mut(c) {
                            f(range, out);
                        }
                    })?;
                Vec::new()
            }
            Role::P1 => ctx.ot.recv_kkot_classes::<u8>(ctx.ch, &classes, &choices)?,
        };
        Ok(KkOut { out })
    }
}
