//! Network time: how long a run's communication takes over a link of a given bandwidth
//! and round-trip time ([`NetProfile`]), from the bytes and rounds the cost model
//! predicts on every lane ([`LaneLoad`](super::predict::LaneLoad), kept by [`super::predict_program`]).
//!
//! # The formula
//! Both parties' links are full duplex: each direction carries `B` bytes per second,
//! shared by the lanes that send in that direction at the same time, and a message
//! arrives `RTT/2` after its last byte left. The executor runs the instructions one
//! after the other, each spread over the `T` lanes; a step (an instruction, or the OT
//! set-up) takes
//!
//! ```text
//! time = max(S, C, L) / B  +  H · RTT/2
//! ```
//!
//! * `S` and `C`: the bytes the server and the client send in the step (each direction
//!   carries its own at `B`, at the same time as the other);
//! * `L`: the largest number of bytes one lane must carry one flight after the other:
//!   on a lane whose flights alternate the bytes of both directions, `S_l + C_l`; on a
//!   full-duplex lane where an OT-based product pipelines its batches, less
//!   ([`super::linear::matmul_serial_bytes`]: about the larger direction when there are
//!   many batches, both directions when there is one). With one lane an alternating
//!   protocol therefore costs `(S + C)/B`; with lanes whose roles alternate (even lanes
//!   the server is `P0`, odd ones the client) both directions are busy at once and it
//!   costs about `max(S, C)/B`.
//! * `H`: the largest, over lanes, of the server's plus the client's rounds on that
//!   lane. A party counts a round each time it receives after having sent, i.e. each
//!   time the flow on the lane reverses direction; every reversal makes the receiver
//!   wait half a round trip for the first byte. A ping-pong of `k` exchanges has
//!   `H = 2k − 1 ≈ 2k` (`k` round trips); a one-way stream `H = 1`.
//!
//! When both parties' rounds are balanced, `H · RTT/2` is the familiar `rounds · RTT`.
//! A run takes the set-up's time plus the sum of its steps' (compute time comes on
//! top: the model is the network's share of the wall time, an exact transfer at `B`
//! with no congestion control or slow start).
//!
//! SCI_HE's products and key set-up are priced from the cost model's ciphertext bytes
//! ([`super::he`]); the key set-up is part of the set-up time. The homomorphic
//! computation itself is compute time, not in this model.

use super::Role;
use super::predict::{Cost, LaneLoad, Prediction, setup_transcript};
use crate::OtKind;
use std::fmt;
use std::str::FromStr;

/// A link: bandwidth each way and round-trip time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetProfile {
    /// Bytes per second in each direction (full duplex), shared by the lanes.
    pub bandwidth: f64,
    /// Round-trip time in seconds (a message arrives `rtt/2` after it is sent).
    pub rtt: f64,
}

/// Why a network profile was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetProfileError {
    /// Not `lan`, `wan` or `BANDWIDTH,RTT`.
    #[error(
        "network profile {0:?}: expected lan, wan or BANDWIDTH,RTT (e.g. 40MB/s,80ms; bandwidth units B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s, kbit/s, Mbit/s, Gbit/s; times s, ms, us)"
    )]
    Syntax(String),
    /// A bandwidth that is not a positive finite rate.
    #[error("network profile: bandwidth {0:?} must be a positive rate with a unit, e.g. 40MB/s")]
    Bandwidth(String),
    /// A round-trip time that is not a finite non-negative time.
    #[error(
        "network profile: round-trip time {0:?} must be a non-negative time with a unit, e.g. 80ms"
    )]
    Rtt(String),
}

impl NetProfile {
    /// The paper's LAN: 377 MB/s, 0.3 ms round trip (CrypTFlow2 §7).
    pub const LAN: NetProfile = NetProfile {
        bandwidth: 377e6,
        rtt: 0.3e-3,
    };

    /// The paper's WAN: 40 MB/s, 80 ms round trip (CrypTFlow2 §7).
    pub const WAN: NetProfile = NetProfile {
        bandwidth: 40e6,
        rtt: 80e-3,
    };

    /// Seconds to put `bytes` on the link in one direction.
    pub fn transfer(&self, bytes: u64) -> f64 {
        bytes as f64 / self.bandwidth
    }

    /// The time of one step from its per-lane loads (see the [module
    /// documentation](self)): `max(S, C, L)/B + H·RTT/2`.
    pub fn step_time(&self, loads: &[LaneLoad]) -> f64 {
        let (transfer, latency) = self.step_parts(loads);
        transfer + latency
    }

    /// The two terms of [`Self::step_time`]: the transfer `max(S, C, L)/B` and the
    /// latency `H·RTT/2`.
    pub fn step_parts(&self, loads: &[LaneLoad]) -> (f64, f64) {
        let s: u64 = loads.iter().map(|l| l.cost.server_bytes).sum();
        let c: u64 = loads.iter().map(|l| l.cost.client_bytes).sum();
        let serial = loads.iter().map(|l| l.serial_bytes).max().unwrap_or(0);
        let half_trips = loads
            .iter()
            .map(|l| l.cost.server_rounds + l.cost.client_rounds)
            .max()
            .unwrap_or(0);
        (
            self.transfer(s.max(c).max(serial)),
            half_trips as f64 * self.rtt / 2.0,
        )
    }

    /// The time of the OT set-up of `threads` lanes on engine `kind` (all lanes at
    /// once, after the handshake; the handshake's round trip and the TCP connections
    /// before it are not included).
    pub fn setup_time(&self, threads: usize, kind: OtKind) -> f64 {
        let (transfer, latency) = self.setup_parts(threads, kind);
        transfer + latency
    }

    /// The two terms of [`Self::setup_time`].
    pub fn setup_parts(&self, threads: usize, kind: OtKind) -> (f64, f64) {
        let t = setup_transcript(kind);
        let lane = LaneLoad {
            cost: Cost {
                server_bytes: t.sent(Role::P0),
                client_bytes: t.sent(Role::P1),
                server_rounds: t.rounds(Role::P0),
                client_rounds: t.rounds(Role::P1),
            },
            serial_bytes: t.sent(Role::P0) + t.sent(Role::P1),
        };
        self.step_parts(&vec![lane; threads.max(1)])
    }
}

impl FromStr for NetProfile {
    type Err = NetProfileError;

    /// `lan`, `wan`, or `BANDWIDTH,RTT` such as `40MB/s,80ms` (decimal prefixes are
    /// powers of 10, binary ones of 2; `bit` rates are divided by 8).
    fn from_str(s: &str) -> Result<NetProfile, NetProfileError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lan" => return Ok(NetProfile::LAN),
            "wan" => return Ok(NetProfile::WAN),
            _ => {}
        }
        let (bw, rtt) = s
            .split_once(',')
            .ok_or_else(|| NetProfileError::Syntax(s.to_string()))?;
        let bandwidth = parse_rate(bw.trim())
            .filter(|b| b.is_finite() && *b > 0.0)
            .ok_or_else(|| NetProfileError::Bandwidth(bw.trim().to_string()))?;
        let rtt_s = parse_time(rtt.trim())
            .filter(|t| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| NetProfileError::Rtt(rtt.trim().to_string()))?;
        Ok(NetProfile {
            bandwidth,
            rtt: rtt_s,
        })
    }
}

impl fmt::Display for NetProfile {
    /// E.g. `40 MB/s, 80 ms RTT`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} MB/s, {} ms RTT",
            self.bandwidth / 1e6,
            self.rtt * 1e3
        )
    }
}

/// Splits `s` into its number and its unit.
fn number_unit(s: &str) -> Option<(f64, &str)> {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E'))
        .unwrap_or(s.len());
    let (n, unit) = s.split_at(end);
    Some((n.parse().ok()?, unit.trim()))
}

/// A rate such as `40MB/s`, in bytes per second.
fn parse_rate(s: &str) -> Option<f64> {
    let (n, unit) = number_unit(s)?;
    let scale = match unit {
        "B/s" => 1.0,
        "kB/s" | "KB/s" => 1e3,
        "MB/s" => 1e6,
        "GB/s" => 1e9,
        "KiB/s" => 1024.0,
        "MiB/s" => 1024.0 * 1024.0,
        "GiB/s" => 1024.0 * 1024.0 * 1024.0,
        "kbit/s" | "Kbit/s" => 1e3 / 8.0,
        "Mbit/s" => 1e6 / 8.0,
        "Gbit/s" => 1e9 / 8.0,
        _ => return None,
    };
    Some(n * scale)
}

/// A time such as `80ms`, in seconds.
fn parse_time(s: &str) -> Option<f64> {
    let (n, unit) = number_unit(s)?;
    let scale = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        _ => return None,
    };
    Some(n * scale)
}

/// Predicted network time of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timing {
    /// The OT set-up ([`NetProfile::setup_time`]) and, for SCI_HE, the key set-up.
    pub setup: f64,
    /// One entry per instruction, in program order ([`NetProfile::step_time`]).
    pub instrs: Vec<f64>,
    /// The set-up plus every instruction.
    pub total: f64,
    /// The part of `total` spent transferring bytes (the `max(S, C, L)/B` terms).
    pub transfer: f64,
    /// The part of `total` spent waiting for round trips (the `H·RTT/2` terms).
    pub latency: f64,
}

/// The network time of the run `prediction` describes, on `profile`.
pub fn predict_time(prediction: &Prediction, threads: usize, profile: &NetProfile) -> Timing {
    let (ot_transfer, ot_latency) = profile.setup_parts(threads, prediction.ot);
    let (keys_transfer, keys_latency) = if prediction.he_keys_load.is_empty() {
        (0.0, 0.0)
    } else {
        profile.step_parts(&prediction.he_keys_load)
    };
    let setup = (ot_transfer + keys_transfer, ot_latency + keys_latency);
    let parts: Vec<(f64, f64)> = std::iter::once(setup)
        .chain(prediction.loads.iter().map(|l| profile.step_parts(l)))
        .collect();
    let transfer = parts.iter().map(|p| p.0).sum();
    let latency = parts.iter().map(|p| p.1).sum();
    let mut times = parts.iter().map(|(t, l)| t + l);
    Timing {
        setup: times.next().unwrap_or(0.0),
        instrs: times.collect(),
        total: transfer + latency,
        transfer,
        latency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(s: u64, c: u64, rs: u64, rc: u64, serial: u64) -> LaneLoad {
        LaneLoad {
            cost: Cost {
                server_bytes: s,
                client_bytes: c,
                server_rounds: rs,
                client_rounds: rc,
            },
            serial_bytes: serial,
        }
    }

    #[test]
    fn profiles_parse() {
        assert_eq!("lan".parse::<NetProfile>(), Ok(NetProfile::LAN));
        assert_eq!("WAN".parse::<NetProfile>(), Ok(NetProfile::WAN));
        let p: NetProfile = "40MB/s,80ms".parse().unwrap();
        assert_eq!(p, NetProfile::WAN);
        let p: NetProfile = "1 MiB/s, 500us".parse().unwrap();
        assert_eq!(p.bandwidth, 1048576.0);
        assert!((p.rtt - 5e-4).abs() < 1e-12);
        assert_eq!(
            "100Mbit/s,0s".parse::<NetProfile>().unwrap().bandwidth,
            12.5e6
        );
        assert_eq!(NetProfile::WAN.to_string(), "40 MB/s, 80 ms RTT");
        for bad in ["", "fast", "40MB/s", "40,80ms", "0MB/s,1ms", "-1MB/s,1ms"] {
            assert!(bad.parse::<NetProfile>().is_err(), "{bad:?}");
        }
        let e = "40MB/s,80".parse::<NetProfile>().unwrap_err();
        assert!(e.to_string().contains("80ms"), "{e}");
    }

    #[test]
    fn step_time_is_bandwidth_plus_latency() {
        let p = NetProfile {
            bandwidth: 1000.0,
            rtt: 0.1,
        };
        // One lane, alternating: both directions one after the other; a ping-pong
        // of 3 exchanges is 6 flights, 5 reversals plus the first arrival.
        let one = [load(2000, 1000, 3, 3, 3000)];
        assert!((p.step_time(&one) - (3.0 + 0.3)).abs() < 1e-9);
        // Two lanes with opposite roles: the directions overlap.
        let two = [load(1000, 500, 3, 3, 1500), load(500, 1000, 3, 3, 1500)];
        assert!((p.step_time(&two) - (1.5 + 0.3)).abs() < 1e-9);
        // A streamed product: the larger direction.
        let streamed = [load(4000, 1000, 1, 1, 4000)];
        assert!((p.step_time(&streamed) - (4.0 + 0.1)).abs() < 1e-9);
        assert_eq!(p.step_time(&[LaneLoad::default()]), 0.0);
    }

    #[test]
    fn setup_costs_its_flights() {
        let p = NetProfile {
            bandwidth: 1e12,
            rtt: 1.0,
        };
        // Four base-OT runs alternating senders, two flights each, consecutive
        // flights of one party merged: 5 flights, each a reversal after the
        // handshake: 5 half round trips.
        let t = p.setup_time(2, OtKind::Iknp);
        assert!((t - 2.5).abs() < 1e-6, "{t}");
        // Ferret's bootstrapping each way: base OTs, extension rows, the first
        // iteration, the second direction's base OTs merged into the first's last
        // flight: 7 flights.
        let t = p.setup_time(2, OtKind::Silent);
        assert!((t - 3.5).abs() < 1e-5, "{t}");
    }
}
