//! Batching of `(N 1)-OT_b` requests (Kolesnikov–Kumaresan) with short
//! messages (`b ≤ 8` bits, one byte each).
//!
//! A protocol step registers every 1-of-N OT it needs ([`KkBatch::add`]) and
//! then runs them together ([`KkBatch::run`]): requests with the same `(N, b)`
//! are merged into one call of the OT layer, and the calls are issued in the
//! order in which their class first appeared. Both parties register the same
//! requests (same `N`, `b`, count, in the same order; only the payload
//! differs), so they issue matching calls. Each call costs the receiver one
//! round; the number of calls is the number of distinct classes.

use super::{Ctx, ProtoError, Role};

/// Handle of one request, to fetch the receiver's outputs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReqId {
    class: usize,
    offset: usize,
    count: usize,
}

#[derive(Debug)]
struct Class {
    n_msgs: usize,
    bits: u32,
    count: usize,
    /// The sender's messages (`count·n_msgs`) or the receiver's choices (`count`).
    data: Vec<u8>,
}

/// Requests of one party; see the [module documentation](self).
#[derive(Debug)]
pub(crate) struct KkBatch {
    role: Role,
    classes: Vec<Class>,
}

/// The receiver's outputs of a batch (empty on the sender's side).
#[derive(Debug)]
pub(crate) struct KkOut {
    outs: Vec<Vec<u8>>,
}

impl KkOut {
    /// The receiver's outputs for request `id` (one byte per instance).
    pub(crate) fn get(&self, id: ReqId) -> &[u8] {
        self.outs
            .get(id.class)
            .and_then(|o| o.get(id.offset..id.offset + id.count))
            .unwrap_or(&[])
    }
}

impl KkBatch {
    /// An empty batch for a party playing `role` (`P0` sends, `P1` receives).
    pub(crate) fn new(role: Role) -> Self {
        KkBatch {
            role,
            classes: Vec::new(),
        }
    }

    /// The role of this party.
    pub(crate) fn role(&self) -> Role {
        self.role
    }

    /// Registers `count` instances of `(n_msgs 1)-OT_bits`. `fill` writes the
    /// payload in place: for role `P0` the sender's messages (`count·n_msgs`
    /// bytes, message `v` of instance `j` at `j·n_msgs + v`), for role `P1`
    /// the receiver's choices (`count` bytes); the slice is zeroed.
    pub(crate) fn add_with(
        &mut self,
        n_msgs: usize,
        bits: u32,
        count: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> ReqId {
        debug_assert!((1..=8).contains(&bits));
        if count == 0 {
            return ReqId {
                class: usize::MAX,
                offset: 0,
                count: 0,
            };
        }
        let class = match self
            .classes
            .iter()
            .position(|c| c.n_msgs == n_msgs && c.bits == bits)
        {
            Some(i) => i,
            None => {
                self.classes.push(Class {
                    n_msgs,
                    bits,
                    count: 0,
                    data: Vec::new(),
                });
                self.classes.len() - 1
            }
        };
        let per = if self.role == Role::P0 { n_msgs } else { 1 };
        let c = &mut self.classes[class];
        let offset = c.count;
        let start = c.data.len();
        c.count += count;
        c.data.resize(start + count * per, 0);
        fill(&mut c.data[start..]);
        ReqId {
            class,
            offset,
            count,
        }
    }

    /// Runs all requests: one OT call per class. Cost per instance of class
    /// `(N, b)`: 2λ + N·b bits; one round per class for the receiver.
    pub(crate) fn run(self, ctx: &mut Ctx<'_>) -> Result<KkOut, ProtoError> {
        let mut outs = Vec::new();
        for c in self.classes {
            match self.role {
                Role::P0 => ctx.ot.send_kkot(ctx.ch, c.n_msgs, &c.data, c.bits)?,
                Role::P1 => outs.push(ctx.ot.recv_kkot::<u8>(ctx.ch, c.n_msgs, &c.data, c.bits)?),
            }
        }
        Ok(KkOut { outs })
    }
}
