//! The memory a plan needs to run, checked against a limit when the plan loads, so that
//! a small hostile or mistaken plan (a 200-byte plan can declare a 2^32-element tensor,
//! 32 GiB of shares) or too many threads fail at once with a clear message instead of
//! exhausting the machine part way through a run.
//!
//! The estimate, per session:
//! - **tensors**: the most bytes of values alive at once, 8 bytes per element (a
//!   share, or a public value, is one `u64` per element), each value alive from its
//!   instruction to its last reader in program order (the executor frees each value
//!   after its last reader's step, [`super::execute`]);
//! - **OT engines**: one per thread (lane), [`lane_bytes`].
//!
//! A server running `K` sessions at once (`sci-run --serve --max-sessions K`) needs
//! `K` times that. The limit is [`DEFAULT_MEMORY_LIMIT`] unless the user gives another
//! (`sci-run --memory-limit`). It is an estimate of the large buffers, not of every
//! allocation: leave headroom.

use super::ExecError;
use crate::ot::OtKind;
use sci_ir::Program;
use sci_ir::params::ferret::{FERRET, LpnParams};

/// The memory limit when none is given: 8 GiB.
pub const DEFAULT_MEMORY_LIMIT: u64 = 8 << 30;

/// Bytes per tensor element while a plan runs (one `u64`).
pub const ELEMENT_BYTES: u64 = 8;

/// Ferret outputs generated per chunk (as [`crate::ot::ferret`] does).
const FERRET_CHUNK: u64 = 1 << 16;

/// Huge-page alignment slack of each of Ferret's two reserves.
const FERRET_ALIGN: u64 = 2 << 20;

/// IKNP instances per step (as [`crate::ot`]'s extension does).
const IKNP_CHUNK: u64 = 1 << 14;

/// Bytes of Ferret state per side with LPN set `p`: the next reserve and the current
/// iteration's LPN secret (`16·(k + t·h)` each), one chunk of outputs, and the reserves'
/// alignment (≈ 25 MB with the production set).
fn ferret_bytes(p: &LpnParams) -> u64 {
    let reserve = 16 * (p.k as u64 + p.t as u64 * u64::from(p.log_leaves));
    2 * reserve + 16 * FERRET_CHUNK + 2 * FERRET_ALIGN
}

/// Bytes of one lane's OT engine: Ferret's state with the production set (the largest
/// sci uses, [`FERRET`]), or IKNP's working rows (128 rows of one step's instances, and
/// their transpose, both directions: 4·16·chunk bytes, 1 MiB).
pub fn lane_bytes(ot: OtKind) -> u64 {
    match ot {
        OtKind::Silent => ferret_bytes(&FERRET.main).max(ferret_bytes(&FERRET.boot)),
        OtKind::Iknp => 4 * 16 * IKNP_CHUNK,
    }
}

/// The most bytes of `program`'s values alive at once (see the module docs).
pub fn tensor_bytes(program: &Program) -> u64 {
    let n = program.instrs().len();
    let mut last = vec![None; n];
    for v in program.ids() {
        for o in program.instr(v).op.operands() {
            last[o.index()] = Some(v.index());
        }
    }
    let mut freed_at: Vec<u64> = vec![0; n];
    let (mut live, mut peak) = (0u64, 0u64);
    for v in program.ids() {
        let bytes = (program.instr(v).ty.numel() as u64).saturating_mul(ELEMENT_BYTES);
        live = live.saturating_add(bytes);
        peak = peak.max(live);
        // Values read last here, and this one if nothing reads it, are freed now.
        match last[v.index()] {
            Some(l) => freed_at[l] = freed_at[l].saturating_add(bytes),
            None => freed_at[v.index()] = freed_at[v.index()].saturating_add(bytes),
        }
        live = live.saturating_sub(freed_at[v.index()]);
    }
    peak
}

/// The memory `sessions` sessions of `program` need at once, each on `threads` lanes of
/// engine `ot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryNeed {
    /// Tensors of one session ([`tensor_bytes`]).
    pub tensors: u64,
    /// One lane's OT engine ([`lane_bytes`]).
    pub lane: u64,
    /// Lanes per session.
    pub threads: u64,
    /// Sessions at once.
    pub sessions: u64,
}

impl MemoryNeed {
    /// The estimate for `program` (see the module docs).
    pub fn of(program: &Program, threads: u32, ot: OtKind, sessions: u32) -> MemoryNeed {
        MemoryNeed {
            tensors: tensor_bytes(program),
            lane: lane_bytes(ot),
            threads: u64::from(threads),
            sessions: u64::from(sessions),
        }
    }

    /// The total, in bytes.
    pub fn total(&self) -> u64 {
        let session = self
            .tensors
            .saturating_add(self.threads.saturating_mul(self.lane));
        session.saturating_mul(self.sessions)
    }

    /// `Err(ExecError::MemoryLimit)` if the total exceeds `limit` bytes.
    pub fn check(&self, limit: u64) -> Result<(), ExecError> {
        if self.total() > limit {
            return Err(ExecError::MemoryLimit {
                need: gib(self.total()),
                tensors: gib(self.tensors),
                threads: self.threads,
                lane: gib(self.lane),
                sessions: self.sessions,
                limit: gib(limit),
            });
        }
        Ok(())
    }
}

/// Bytes in GiB (for messages).
fn gib(b: u64) -> f64 {
    b as f64 / (1u64 << 30) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use sci_ir::{Builder, Encoding, Op, Owner, Type};

    fn ty(shape: &[usize]) -> Type {
        Type::new(
            Encoding::ring(16).unwrap(),
            4,
            shape.to_vec(),
            Owner::Client,
        )
        .unwrap()
    }

    /// A chain frees each value after its reader: at most two alive at once.
    #[test]
    fn tensors_count_the_values_alive_at_once() {
        let mut b = Builder::new();
        let x = b.input("x", ty(&[1000])).unwrap();
        let r1 = b.push("r1", Op::Relu { x }).unwrap();
        let r2 = b.push("r2", Op::Relu { x: r1 }).unwrap();
        let r3 = b.push("r3", Op::Relu { x: r2 }).unwrap();
        b.output("y", r3).unwrap();
        let p = b.finish().unwrap();
        assert_eq!(tensor_bytes(&p), 2 * 1000 * ELEMENT_BYTES);
        // The input read by every step stays alive to the last.
        let mut b = Builder::new();
        let x = b.input("x", ty(&[1000])).unwrap();
        let r1 = b.push("r1", Op::Relu { x }).unwrap();
        let a = b.push("a", Op::Add { a: r1, b: x }).unwrap();
        b.output("y", a).unwrap();
        assert_eq!(tensor_bytes(&b.finish().unwrap()), 3 * 1000 * ELEMENT_BYTES);
    }

    #[test]
    fn the_limit_counts_threads_and_sessions() {
        let mut b = Builder::new();
        let x = b.input("x", ty(&[1 << 16, 1 << 16])).unwrap();
        let r = b.push("r", Op::Relu { x }).unwrap();
        b.output("y", r).unwrap();
        let huge = b.finish().unwrap();
        let need = MemoryNeed::of(&huge, 1, OtKind::Iknp, 1);
        assert_eq!(need.tensors, 2 * (1 << 32) * ELEMENT_BYTES);
        let e = need.check(DEFAULT_MEMORY_LIMIT).unwrap_err().to_string();
        assert!(
            e.contains("64.00 GiB") && e.contains("--memory-limit"),
            "{e}"
        );
        // Ferret's state per lane is tens of MB; 256 threads of it, 10 sessions: refused.
        let lane = lane_bytes(OtKind::Silent);
        assert!((20 << 20..40 << 20).contains(&lane), "{lane}");
        let mut b = Builder::new();
        let x = b.input("x", ty(&[10])).unwrap();
        b.output("y", x).unwrap();
        let small = b.finish().unwrap();
        assert!(
            MemoryNeed::of(&small, 4, OtKind::Silent, 1)
                .check(DEFAULT_MEMORY_LIMIT)
                .is_ok()
        );
        let many = MemoryNeed::of(&small, 256, OtKind::Silent, 10);
        assert!(many.check(DEFAULT_MEMORY_LIMIT).is_err());
        assert!(many.check(u64::MAX).is_ok());
    }
}
