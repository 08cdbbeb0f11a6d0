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
//! order), then its protocol steps: those of the same [`Step`] that [`Step::batches`]
//! run as **one** protocol call, so their rounds are those of one call; every other
//! protocol step (pooling, reveals) runs alone. Waves of a level run in the order of
//! their first member. Every operand of a level-`s` step is done by level `s`, so the
//! order is a topological one.
//!
//! * Elementwise steps (`relu`; `trunc` by the same shift; `div_public` by the same
//!   divisor) run as one call over the concatenation of their operands (the outputs
//!   are split again). Its transcript is that of one call on the summed length: its
//!   bytes are at most the members' sum (bit-packed messages are rounded up once
//!   instead of once per member, and lanes split the sum), its rounds those of one
//!   member.
//! * Products by the server's weights ([`Step::Product`]: `conv2d`, `matmul`, `mul`,
//!   any shapes, the same backend) run as one call of the backend: SCI_OT, on each
//!   lane one streamed correlated-OT call over that lane's chunk of rows of every
//!   product; SCI_HE, the client's ciphertexts of every layer in one flight and the
//!   server's answers in one. Bytes: exactly the members' sum; rounds: those of one
//!   product. A fire module's two expand convolutions, or a ResNet block's projection
//!   shortcut beside its branch's first convolution, share one round.
//! * Products of two secret operands ([`Step::SecretProduct`]: `mul`, `matmul`) run as
//!   one `secmul` call: on each lane the lane's chunk of rows of every product, roles
//!   alternating across lanes. Bytes: the lanes' chunks' sum; rounds: those of one
//!   product.
//!
//! The cost of a wave is recorded on its first member (in program order); the other
//! members record zero ([`crate::cost::predict_program`] and the runtime's report
//! alike).

use super::Step;
use crate::{Op, Program, ValueId};

/// Instructions run as one step: a local instruction, one protocol step, or several
/// independent instructions of the same batching [`Step`] run as one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wave {
    /// The instructions, in program order (more than one only if `step` batches).
    pub members: Vec<ValueId>,
    /// The step of every member ([`Step::of`]).
    pub step: Step,
}

impl Wave {
    /// Whether the wave runs several instructions as one call.
    pub fn is_batched(&self) -> bool {
        self.members.len() > 1
    }
}

/// One level's local instructions and protocol steps (with their [`Step`]).
type Level = (Vec<ValueId>, Vec<(ValueId, Step)>);

/// The waves of `program` in execution order (module docs); every instruction is in
/// exactly one wave. `nonneg` is [`crate::analysis::nonneg::nonneg`] of `program`.
/// Linear in the program's size (plus a search of each level's waves per step).
pub fn waves(program: &Program, nonneg: &[bool]) -> Vec<Wave> {
    let n = program.instrs().len();
    let mut done = vec![0usize; n];
    // Per level: its local instructions, and its protocol steps with their step.
    let mut levels: Vec<Level> = Vec::new();
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
        let step = Step::of(program, nonneg, v);
        done[v.index()] = start + usize::from(step.communicates());
        if levels.len() <= start {
            levels.resize_with(start + 1, Default::default);
        }
        let (locals, steps) = &mut levels[start];
        if step.communicates() {
            steps.push((v, step));
        } else {
            locals.push(v);
        }
    }
    let mut waves = Vec::with_capacity(n);
    for (locals, steps) in levels {
        waves.extend(locals.into_iter().map(|v| Wave {
            members: vec![v],
            step: Step::Local,
        }));
        let mut level: Vec<Wave> = Vec::new();
        for (v, step) in steps {
            match level.iter_mut().find(|w| step.batches() && w.step == step) {
                Some(w) => w.members.push(v),
                None => level.push(Wave {
                    members: vec![v],
                    step,
                }),
            }
        }
        waves.extend(level);
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Backend;
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
        let waves = waves(&p, &nonneg(&p));
        let names = |w: &Wave| -> Vec<&str> { w.members.iter().map(|&v| p.name(v)).collect() };
        let got: Vec<Vec<&str>> = waves.iter().map(names).collect();
        assert_eq!(
            got,
            vec![
                vec!["x"],
                vec!["w1"],
                vec!["w2"],
                vec!["a", "b"],
                vec!["ra", "rb"],
                vec!["ta", "tb"],
                vec!["c"],
                vec!["y"],
            ]
            .into_iter()
            .map(|w| w.into_iter().collect::<Vec<_>>())
            .collect::<Vec<_>>()
        );
        assert_eq!(
            waves[3].step,
            Step::Product {
                backend: Backend::Ot
            }
        );
        assert_eq!(waves[4].step, Step::Relu);
        assert_eq!(
            waves[5].step,
            Step::Trunc {
                s: 12,
                nonneg: true
            }
        );
        assert_eq!(waves[6].step, Step::Local);
    }

    /// Two SqueezeNet fire modules: a squeeze convolution and its ReLU, then two expand
    /// convolutions (1×1 and 3×3) reading it, their ReLUs, concatenated.
    fn fire_modules() -> String {
        let fire = |i: usize, input: &str| {
            format!(
                "%s{i}.w: server i32.12[2,4,1,1] = const [1,2,3,4,5,6,7,8]
%s{i}: shared i32.24[1,2,4,4] = conv2d %{input}, %s{i}.w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%s{i}.t: shared i32.12[1,2,4,4] = trunc %s{i} s=12
%s{i}.r: shared i32.12[1,2,4,4] = relu %s{i}.t
%e{i}a.w: server i32.12[2,2,1,1] = const [1,2,3,4]
%e{i}a: shared i32.24[1,2,4,4] = conv2d %s{i}.r, %e{i}a.w strides=[1,1] pads=[0,0,0,0] dilations=[1,1] groups=1
%e{i}b.w: server i32.12[2,2,3,3] = const [-5, 2, -2, 5, 1, -3, 4, 0, -4, 3, -1, -5, 2, -2, 5, 1, -3, 4, 0, -4, 3, -1, -5, 2, -2, 5, 1, -3, 4, 0, -4, 3, -1, -5, 2, -2]
%e{i}b: shared i32.24[1,2,4,4] = conv2d %s{i}.r, %e{i}b.w strides=[1,1] pads=[1,1,1,1] dilations=[1,1] groups=1
%e{i}a.r: shared i32.24[1,2,4,4] = relu %e{i}a
%e{i}b.r: shared i32.24[1,2,4,4] = relu %e{i}b
%f{i}: shared i32.24[1,4,4,4] = concat %e{i}a.r, %e{i}b.r axis=1
%f{i}.t: shared i32.12[1,4,4,4] = trunc %f{i} s=12 nonneg
"
            )
        };
        format!(
            "%x: client i32.12[1,4,4,4] = input \"x\"\n{}{}%y: client i32.12[1,4,4,4] = output %f1.t \"y\"\n",
            fire(0, "x"),
            fire(1, "f0.t")
        )
    }

    #[test]
    fn a_fire_modules_expand_convolutions_run_as_one_wave() {
        let p = Program::parse(&fire_modules()).expect("parses");
        let waves = waves(&p, &nonneg(&p));
        let products: Vec<Vec<&str>> = waves
            .iter()
            .filter(|w| w.members.iter().any(|&v| p.is_secure_product(v)))
            .map(|w| w.members.iter().map(|&v| p.name(v)).collect())
            .collect();
        assert_eq!(
            products,
            vec![
                vec!["s0"],
                vec!["e0a", "e0b"],
                vec!["s1"],
                vec!["e1a", "e1b"]
            ]
        );
        for w in waves.iter().filter(|w| w.members.len() > 1) {
            let product = w.members.iter().all(|&v| p.is_secure_product(v));
            assert_eq!(
                w.step
                    == Step::Product {
                        backend: Backend::Ot
                    },
                product
            );
        }
    }

    #[test]
    fn every_instruction_once_in_a_topological_order() {
        let p = Program::parse(FIRE).expect("parses");
        let waves = waves(&p, &nonneg(&p));
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
