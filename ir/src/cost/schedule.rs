//! The order in which the runtime's executor runs a program, and which instructions run
//! their protocols together ("waves"), so that independent protocol steps share their
//! rounds: the two expand branches of a fire module, the branches of a residual block,
//! the ReLUs of a DenseNet's concatenated features.
//!
//! # Levels
//! A program is in SSA form and in topological order, so its dependency graph needs no
//! graph library: one pass in program order gives every instruction its *level*, the
//! number of protocol steps on the longest chain of operands before it
//! (`start(v) = max over operands o of done(o)`, `done(v) = start(v) + 1` if `v`
//! communicates, else `start(v)`). An output's level is at least the previous output's,
//! so outputs are revealed in program order.
//!
//! # Waves
//! Level by level, the executor first runs the level's local instructions (in program
//! order), then its protocol steps: those with the same [`Batch`] key run as **one**
//! protocol call over the concatenation of their operands (the outputs are split again),
//! so their rounds are those of one call; every other protocol step (products, pooling,
//! reveals) runs alone. Waves of a level run in the order of their first member. Every
//! operand of a level-`s` step is done by level `s`, so the order is a topological one.
//!
//! A batched call's transcript is that of one call on the summed length: its bytes are
//! at most the members' sum (bit-packed messages are rounded up once instead of once
//! per member, and lanes split the sum), its rounds those of one member. The cost of a
//! wave is recorded on its first member (in program order); the other members record
//! zero ([`super::predict_program`] and the runtime's report alike).

use super::predict::communicates;
use crate::{Op, Program, ValueId};

/// Which protocol steps can run as one call: same protocol, same public parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batch {
    /// `relu` (Algorithm 8).
    Relu,
    /// `trunc s`, with its `nonneg` mark.
    Trunc {
        /// The shift.
        s: u32,
        /// The operand is marked non-negative.
        nonneg: bool,
    },
    /// `div_public d`, with whether the operand is provably non-negative.
    Div {
        /// The divisor.
        d: u64,
        /// The operand is provably non-negative ([`crate::analysis::nonneg`]).
        nonneg: bool,
    },
}

/// Instructions run as one step: a local instruction, one protocol step, or several
/// protocol steps of the same [`Batch`] run as one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wave {
    /// The instructions, in program order (more than one only with `batch`).
    pub members: Vec<ValueId>,
    /// The common protocol of a batched wave (`None` for a wave of one).
    pub batch: Option<Batch>,
}

/// The batch key of instruction `v`, if it communicates and its protocol batches.
/// `nonneg` is [`crate::analysis::nonneg::nonneg`] of `program`.
pub fn batch_key(program: &Program, nonneg: &[bool], v: ValueId) -> Option<Batch> {
    if !communicates(program, nonneg, v) {
        return None;
    }
    match program.instr(v).op {
        Op::Relu { .. } => Some(Batch::Relu),
        Op::Trunc { s, nonneg, .. } => Some(Batch::Trunc { s, nonneg }),
        Op::DivPublic { x, d } => Some(Batch::Div {
            d,
            nonneg: nonneg.get(x.index()).copied().unwrap_or(false),
        }),
        _ => None,
    }
}

/// The waves of `program` in execution order (module docs); every instruction is in
/// exactly one wave. Linear in the program's size (plus sorting each level's steps).
pub fn schedule(program: &Program, nonneg: &[bool]) -> Vec<Wave> {
    let n = program.instrs().len();
    let mut done = vec![0usize; n];
    let mut levels: Vec<(Vec<ValueId>, Vec<ValueId>)> = Vec::new();
    let mut last_output = 0;
    for v in program.ids() {
        let instr = program.instr(v);
        let mut start = instr
            .op
            .operands()
            .iter()
            .map(|o| done[o.index()])
            .max()
            .unwrap_or(0);
        if matches!(instr.op, Op::Output { .. }) {
            start = start.max(last_output);
            last_output = start;
        }
        let protocol = communicates(program, nonneg, v);
        done[v.index()] = start + usize::from(protocol);
        if levels.len() <= start {
            levels.resize_with(start + 1, Default::default);
        }
        let (locals, steps) = &mut levels[start];
        if protocol { steps } else { locals }.push(v);
    }
    let mut waves = Vec::with_capacity(n);
    for (locals, steps) in levels {
        waves.extend(locals.into_iter().map(|v| Wave {
            members: vec![v],
            batch: None,
        }));
        let mut level: Vec<Wave> = Vec::new();
        for v in steps {
            let key = batch_key(program, nonneg, v);
            match level.iter_mut().find(|w| key.is_some() && w.batch == key) {
                Some(w) => w.members.push(v),
                None => level.push(Wave {
                    members: vec![v],
                    batch: key,
                }),
            }
        }
        waves.extend(level.into_iter().map(|mut w| {
            if w.members.len() == 1 {
                w.batch = None;
            }
            w
        }));
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::nonneg::nonneg;

    /// A fire module's shape: one input, two independent branches (a product by the
    /// server's weights, a ReLU, a truncation each), concatenated.
    const FIRE: &str = "
%x: client i32.12[1,4] = input \"x\"
%w1: server i32.12[4,3] = const [1,2,3,4,5,6,7,8,9,10,11,12]
%w2: server i32.12[4,5] = const [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]
%a: shared i32.24[1,3] = matmul %x, %w1
%b: shared i32.24[1,5] = matmul %x, %w2
%ra: shared i32.24[1,3] = relu %a
%rb: shared i32.24[1,5] = relu %b
%ta: shared i32.12[1,3] = trunc %ra s=12 nonneg
%tb: shared i32.12[1,5] = trunc %rb s=12 nonneg
%c: shared i32.12[1,8] = concat %ta, %tb axis=1
%y: client i32.12[1,8] = output %c \"y\"
";

    #[test]
    fn independent_branches_share_waves() {
        let p = Program::parse(FIRE).expect("parses");
        let waves = schedule(&p, &nonneg(&p));
        let names = |w: &Wave| -> Vec<&str> { w.members.iter().map(|&v| p.name(v)).collect() };
        let got: Vec<Vec<&str>> = waves.iter().map(names).collect();
        assert_eq!(
            got,
            vec![
                vec!["x"],
                vec!["w1"],
                vec!["w2"],
                vec!["a"],
                vec!["b"],
                vec!["ra", "rb"],
                vec!["ta", "tb"],
                vec!["c"],
                vec!["y"],
            ]
            .into_iter()
            .map(|w| w.into_iter().collect::<Vec<_>>())
            .collect::<Vec<_>>()
        );
        assert_eq!(waves[5].batch, Some(Batch::Relu));
        assert_eq!(
            waves[6].batch,
            Some(Batch::Trunc {
                s: 12,
                nonneg: true
            })
        );
        assert_eq!(waves[3].batch, None);
    }

    #[test]
    fn every_instruction_once_in_a_topological_order() {
        let p = Program::parse(FIRE).expect("parses");
        let waves = schedule(&p, &nonneg(&p));
        let mut seen = vec![false; p.instrs().len()];
        for w in &waves {
            for &v in &w.members {
                for o in p.instr(v).op.operands() {
                    assert!(seen[o.index()], "operand of %{} not done", p.name(v));
                }
            }
            for &v in &w.members {
                assert!(!seen[v.index()]);
                seen[v.index()] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }
}
