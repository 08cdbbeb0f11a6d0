//! What a run cost: per instruction its op, shape, seconds, bytes sent and received and
//! rounds, the set-up before the first instruction, and totals.
//!
//! Bytes are differences of the lanes' channel counters taken around each step, summed
//! over lanes, so the steps' bytes add up exactly to the counters: for a session's first
//! run [`PartyReport::totals`] *is* the counters at the end (set-up included; later runs
//! on the same session count their own difference), and the tests check the sum. Rounds
//! of a step are the largest difference over lanes (lanes run in parallel, so that is the
//! step's latency in round trips); the totals have the lanes' largest total
//! ([`crate::ot::Session::stats`]), which equals the sum of the steps' rounds when one
//! lane carries every round, e.g. with one thread.
//!
//! Beside the measured figures, `sci-run` records the cost model's ([`Predicted`],
//! [`PartyReport::add_prediction`]): bytes and rounds, and with `--net` the network
//! time on that profile ([`sci_ir::cost::net`]).

use crate::net::{Party, Stats};
use sci_ir::Program;
use sci_ir::cost::predict::Prediction;
use sci_ir::cost::{Cost as ModelCost, Timing};
use serde::Serialize;

/// The cost of one step (an instruction or the set-up).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Cost {
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Bytes this party sent.
    pub bytes_sent: u64,
    /// Bytes this party received.
    pub bytes_recv: u64,
    /// Rounds (see the module docs).
    pub rounds: u64,
}

impl Cost {
    /// The cost between two counter snapshots of every lane, taking `seconds`.
    pub fn between(before: &[Stats], after: &[Stats], seconds: f64) -> Cost {
        let mut c = Cost {
            seconds,
            ..Cost::default()
        };
        for (b, a) in before.iter().zip(after) {
            let d = *a - *b;
            c.bytes_sent += d.bytes_sent;
            c.bytes_recv += d.bytes_recv;
            c.rounds = c.rounds.max(d.rounds);
        }
        c
    }

    /// The counters of a session as a cost taking `seconds`.
    pub fn from_stats(s: Stats, seconds: f64) -> Cost {
        Cost {
            seconds,
            bytes_sent: s.bytes_sent,
            bytes_recv: s.bytes_recv,
            rounds: s.rounds,
        }
    }
}

/// The cost model's prediction of a step, from one party's side.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Predicted {
    /// Bytes this party sends.
    pub bytes_sent: u64,
    /// Bytes this party receives.
    pub bytes_recv: u64,
    /// Rounds this party waits for.
    pub rounds: u64,
    /// Network time on the `--net` profile, in seconds (`None` without one).
    pub seconds: Option<f64>,
}

impl Predicted {
    /// `cost` from `party`'s side, taking `seconds` on the network.
    pub fn of(cost: &ModelCost, party: Party, seconds: Option<f64>) -> Predicted {
        let (sent, recv, rounds) = match party {
            Party::Server => (cost.server_bytes, cost.client_bytes, cost.server_rounds),
            Party::Client => (cost.client_bytes, cost.server_bytes, cost.client_rounds),
        };
        Predicted {
            bytes_sent: sent,
            bytes_recv: recv,
            rounds,
            seconds,
        }
    }
}

/// The record of one instruction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstrRecord {
    /// Position in the program.
    pub index: usize,
    /// The value's name.
    pub name: String,
    /// The op's mnemonic (`conv2d`, `relu`, ...).
    pub op: &'static str,
    /// The value's shape.
    pub shape: Vec<usize>,
    /// What it cost this party (`None` in a cleartext run, which is not timed per
    /// instruction).
    #[serde(flatten)]
    pub cost: Option<Cost>,
    /// The cost model's prediction (`None` until [`PartyReport::add_prediction`]).
    pub predicted: Option<Predicted>,
}

/// One party's report of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartyReport {
    /// `"server"`, `"client"` or `"cleartext"`.
    pub party: &'static str,
    /// Lanes (TCP connections).
    pub threads: usize,
    /// The OT engine of the run: `"iknp"` or `"silent"` (`None` for the cleartext run).
    pub ot: Option<&'static str>,
    /// Connection, handshake and OT set-up (base OTs of every lane, or Ferret's
    /// bootstrapping).
    pub setup: Cost,
    /// The control byte that started this inference (one byte from the client on lane
    /// 0, [`super::session`]; zero when the executor was called without one).
    pub control: Cost,
    /// SCI_HE's key set-up (the client's public and Galois keys to the server), when
    /// this run made it (the first run of a session of an HE plan).
    pub he_keys: Option<Cost>,
    /// One record per instruction, in program order.
    pub instructions: Vec<InstrRecord>,
    /// Set-up plus control byte plus this run: the channel counters at the end for a
    /// session's first run (bytes); the total wall time.
    pub totals: Cost,
    /// The cost model's prediction of the totals (`None` until
    /// [`PartyReport::add_prediction`]): the OT set-up's bytes plus the control byte's
    /// and the instructions', the control byte's and the instructions' rounds (the
    /// set-up's are not predicted), and the network time of the set-up and the
    /// instructions.
    pub predicted: Option<Predicted>,
}

impl PartyReport {
    /// Sum of the bytes of the set-up and every instruction, `(sent, received)`: equal to
    /// the totals' (checked by the tests).
    pub fn summed_bytes(&self) -> (u64, u64) {
        let steps = [&self.setup, &self.control]
            .into_iter()
            .chain(&self.he_keys)
            .chain(self.instructions.iter().filter_map(|i| i.cost.as_ref()));
        steps.fold((0, 0), |(s, r), c| (s + c.bytes_sent, r + c.bytes_recv))
    }
}

impl PartyReport {
    /// Records the cost model's prediction `p` (of this report's program, lanes and
    /// inference, [`sci_ir::cost::predict_session`]; on either OT engine) beside the
    /// measured figures, from `party`'s side, with the network time `timing` if a
    /// profile was given ([`sci_ir::cost::SessionPredictor`]: exact for every inference
    /// of a session, bytes and rounds).
    pub fn add_prediction(&mut self, party: Party, p: &Prediction, timing: Option<&Timing>) {
        for (i, rec) in self.instructions.iter_mut().enumerate() {
            if let Some(c) = p.instrs.get(i) {
                let secs = timing.and_then(|t| t.instrs.get(i).copied());
                rec.predicted = Some(Predicted::of(c, party, secs));
            }
        }
        let total = ModelCost {
            server_bytes: p.setup.server_bytes + p.total.server_bytes,
            client_bytes: p.setup.client_bytes + p.total.client_bytes,
            ..p.total
        } + p.control;
        self.predicted = Some(Predicted::of(&total, party, timing.map(|t| t.total)));
    }

    /// A text table of the costs of every instruction that communicated or took at least
    /// a millisecond, then the set-up and the totals: seconds, KiB sent and received,
    /// rounds.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let kib = |b: u64| b as f64 / 1024.0;
        let mut out = String::new();
        let line = |out: &mut String, what: &str, shape: &str, c: &Cost| {
            let _ = writeln!(
                out,
                "{what:<34} {shape:<16} {:>9.1} {:>11.1} {:>11.1} {:>7}",
                c.seconds * 1e3,
                kib(c.bytes_sent),
                kib(c.bytes_recv),
                c.rounds
            );
        };
        let _ = writeln!(
            out,
            "{:<34} {:<16} {:>9} {:>11} {:>11} {:>7}",
            "instruction", "shape", "ms", "sent KiB", "recv KiB", "rounds"
        );
        line(
            &mut out,
            "(connection, handshake, OT set-up)",
            "",
            &self.setup,
        );
        if let Some(k) = &self.he_keys {
            line(&mut out, "(HE key set-up)", "", k);
        }
        for i in &self.instructions {
            let Some(c) = &i.cost else { continue };
            if c.bytes_sent + c.bytes_recv == 0 && c.seconds < 1e-3 {
                continue;
            }
            let what = format!("%{} = {}", i.name, i.op);
            let shape = format!("{:?}", i.shape);
            line(&mut out, &what, &shape, c);
        }
        line(&mut out, "total", "", &self.totals);
        out
    }
}

/// The totals of a session's inferences (seconds, bytes and rounds added up).
pub fn sum_totals(reports: &[PartyReport]) -> Cost {
    reports.iter().fold(Cost::default(), |a, r| Cost {
        seconds: a.seconds + r.totals.seconds,
        bytes_sent: a.bytes_sent + r.totals.bytes_sent,
        bytes_recv: a.bytes_recv + r.totals.bytes_recv,
        rounds: a.rounds + r.totals.rounds,
    })
}

/// A one-line summary of a party's costs (a session's inferences added up), `who`
/// naming the party.
pub fn cost_line(who: &str, reports: &[PartyReport]) -> String {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let t = sum_totals(reports);
    let setup = reports.first().map_or(0.0, |r| r.setup.seconds);
    let engine = reports
        .first()
        .and_then(|r| r.ot)
        .map_or(String::new(), |e| format!("{e} OT "));
    let n = match reports.len() {
        1 => String::new(),
        n => format!(" for {n} inferences"),
    };
    format!(
        "{who}: {:.3} s{n} ({engine}set-up {setup:.3} s), sent {:.3} MiB, received {:.3} MiB, {} rounds",
        t.seconds,
        mib(t.bytes_sent),
        mib(t.bytes_recv),
        t.rounds
    )
}

/// The report written by `sci-run --report`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// `"server"`, `"client"`, `"local"` or `"cleartext"`.
    pub mode: &'static str,
    /// The plan's hash (hex).
    pub plan_hash: String,
    /// The emulated network (`--net`), if any, e.g. `40 MB/s, 80 ms RTT`.
    pub net: Option<String>,
    /// Wall time of the whole run, loading included.
    pub wall_seconds: f64,
    /// One report per party run by this process (two for `--local`).
    pub parties: Vec<PartyReport>,
    /// The plan's outputs and what they hold.
    pub outputs: Vec<OutputRecord>,
}

/// A plan output in the reports: its name and whether it holds logits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutputRecord {
    /// The external (ONNX) name.
    pub name: String,
    /// The compiler dropped a trailing Softmax/LogSoftmax before this output (it is
    /// monotone, so the argmax is unchanged): the output holds the logits
    /// (pre-softmax), not the probabilities the ONNX tensor holds.
    pub logits: bool,
}

impl OutputRecord {
    /// The records of `program`'s outputs, in order.
    pub fn of(program: &Program) -> Vec<OutputRecord> {
        program
            .output_names()
            .into_iter()
            .map(|(name, logits)| OutputRecord {
                name: name.to_string(),
                logits,
            })
            .collect()
    }

    /// The name as users should read it: `NAME (logits, pre-softmax)` for logits.
    pub fn label(&self) -> String {
        if self.logits {
            format!("{} (logits, pre-softmax)", self.name)
        } else {
            self.name.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_sum_bytes_and_take_the_slowest_lane() {
        let s = |a, b, r| Stats {
            bytes_sent: a,
            bytes_recv: b,
            rounds: r,
        };
        let c = Cost::between(&[s(1, 2, 3), s(0, 0, 0)], &[s(11, 2, 5), s(5, 7, 1)], 0.5);
        assert_eq!(
            c,
            Cost {
                seconds: 0.5,
                bytes_sent: 15,
                bytes_recv: 7,
                rounds: 2
            }
        );
        let json = serde_json::to_value(InstrRecord {
            index: 0,
            name: "c".into(),
            op: "conv2d",
            shape: vec![1, 2],
            cost: Some(c),
            predicted: Some(Predicted {
                bytes_sent: 15,
                bytes_recv: 7,
                rounds: 2,
                seconds: None,
            }),
        })
        .unwrap();
        assert_eq!(json["bytes_sent"], 15);
        assert_eq!(json["op"], "conv2d");
        assert_eq!(json["predicted"]["bytes_sent"], 15);
        assert!(json["predicted"]["seconds"].is_null());
    }
}
