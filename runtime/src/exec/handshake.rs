//! The handshake both parties run on lane 0 before any cryptography.
//!
//! Each party sends one [`Hello`] and then reads the peer's. Both therefore see the
//! same pair of messages and reach the same verdict ([`check`]): the run goes ahead
//! only if the magic bytes, the wire-protocol version, the plan format version and the
//! software version agree, the roles differ, the plans' public parts hash alike
//! ([`sci_ir::Plan::hash`]) and the thread counts and OT engines are equal. A party that cannot run
//! (e.g. the server was given the client's plan, or the client's input does not match
//! the plan) still connects and sends a hello with an [`Status::Abort`], so the peer
//! stops at once instead of waiting for a timeout.
//!
//! # Nothing secret in an abort
//! An abort carries only a fixed [`AbortReason`] ("input rejected", "plan rejected",
//! "server busy", "internal error"), never the text of the local error: that text can
//! name the client's files, shapes or even an input value. The details are printed
//! locally only.
//!
//! Wire format (integers little-endian), exactly [`HELLO_LEN`]` + sw_len` bytes:
//!
//! ```text
//! magic        8 bytes  "SCI-RUN\0"
//! version      u32      WIRE_VERSION
//! plan_format  u32      sci_ir::plan::FORMAT_VERSION
//! sw_len       u8       length of the software version string
//! party        u8       0 = server, 1 = client
//! threads      u32      number of TCP connections (lanes)
//! inferences   u32      client: how many inputs it expects to run in this session
//!                       (sizes the silent engine; the session runs as many as the
//!                       client starts, `exec::session`); server: 0
//! plan_hash    32 bytes
//! session      16 bytes the session id: fresh random from the listening side (the
//!                       server by default), zero from the connecting side; also
//!                       the public seed of the silent engine's LPN codes
//! ot           u8       the run's OT engine: 0 = IKNP, 1 = silent (Ferret)
//! status       u8       0 = ready, else the AbortReason code
//! software     sw_len bytes, UTF-8 (the crate version, e.g. "0.1.0")
//! ```
//!
//! The magic and version come first so that a peer speaking another version (or not
//! sci at all) is recognised before the rest of its message is interpreted.
//! Cost: `HELLO_LEN + sw_len` bytes each way, one round.

use crate::net::session::SessionId;
use crate::net::{Channel, NetError, Party};
use crate::ot::OtKind;
use std::fmt;

/// The first 8 bytes of a hello.
pub const MAGIC: [u8; 8] = *b"SCI-RUN\0";

/// Version of the messages exchanged by `sci-run` (handshake, lane set-up, executor,
/// protocols). Bump it whenever any message sequence changes; the test
/// `wire_version_is_pinned` pins it together with the hello's encoding.
///
/// History: 1 — first release; 2 — hellos carry the plan format version and abort
/// categories instead of free text; 3 — every connection starts with a lane preamble
/// ([`crate::net::session`]) and hellos carry the session id; 4 — the client's hello
/// carries the number of inferences of the session (batched inference); 5 — plans over
/// an HE field run their linear layers by HE (key set-up, ciphertexts; [`crate::he`]);
/// 6 — independent instructions run in waves (same-kind protocol steps of a level as
/// one call), and correlated-OT elements come from consecutive bit fields of the pad;
/// 7 — hellos carry the run's OT engine, which may be the silent one (Ferret, its LPN
/// set sized by the plan's OT demand: [`sci_ir::cost::ferret_params`]); 8 — the client
/// starts each inference with a control byte and ends the session with another
/// ([`super::session`]), so a session runs any number of inferences (the hello's count
/// only sizes the silent engine); 9 — the silent engine's LPN codes are keyed by the
/// session id and the iteration ([`crate::ot::ferret`]) instead of one constant code:
/// the same messages, but a peer of version 8 would compute with other codes, and the
/// correlations would silently not hold; 10 — the same plan runs other message sequences:
/// exp (inside sigmoid, tanh, softmax) looks its high digits up as one-bit OTs, a
/// narrow MaxPool runs as a columns pass and a rows pass
/// (`sci_ir::params::pool::separable`), and an RLWE plan's secret matmuls exchange RLWE
/// cross terms.
pub const WIRE_VERSION: u32 = 10;

/// The plan format version sent in the hello.
pub const PLAN_FORMAT: u32 = sci_ir::plan::FORMAT_VERSION;

/// The software version sent in the hello (the `sci-runtime` crate version).
pub const SOFTWARE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Size of the fixed part of a hello (everything but the software version).
pub const HELLO_LEN: usize = 8 + 4 + 4 + 1 + 1 + 4 + 4 + 32 + 16 + 1 + 1;

/// Why a party cannot run: the only thing an abort tells the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortReason {
    /// The client's input does not fit the plan (shape, dtype, file).
    InputRejected,
    /// This party's plan cannot be run (unreadable, not executable, no weights).
    PlanRejected,
    /// The server runs as many sessions as it may.
    Busy,
    /// Anything else.
    Internal,
}

impl AbortReason {
    /// The status byte on the wire (never 0, which is "ready").
    pub fn code(self) -> u8 {
        match self {
            AbortReason::InputRejected => 1,
            AbortReason::PlanRejected => 2,
            AbortReason::Busy => 3,
            AbortReason::Internal => 4,
        }
    }

    /// The reason with status byte `code`, if any.
    pub fn from_code(code: u8) -> Option<AbortReason> {
        [
            AbortReason::InputRejected,
            AbortReason::PlanRejected,
            AbortReason::Busy,
            AbortReason::Internal,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }
}

impl fmt::Display for AbortReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AbortReason::InputRejected => "input rejected",
            AbortReason::PlanRejected => "plan rejected",
            AbortReason::Busy => "server busy",
            AbortReason::Internal => "internal error",
        })
    }
}

/// Whether a party is ready to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Ready.
    Ready,
    /// This party cannot run, for this reason.
    Abort(AbortReason),
}

/// One party's handshake message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// [`WIRE_VERSION`] of the sender.
    pub version: u32,
    /// [`PLAN_FORMAT`] of the sender.
    pub plan_format: u32,
    /// Software version of the sender.
    pub software: String,
    /// The sender's role.
    pub party: Party,
    /// Number of lanes the sender will open.
    pub threads: u32,
    /// The client: inferences (input sets) it expects to run in this session, one
    /// after another (sizes the silent engine; it may run more or fewer,
    /// [`super::session`]); the server: 0.
    pub inferences: u32,
    /// [`sci_ir::Plan::hash`] of the sender's plan.
    pub plan_hash: [u8; 32],
    /// The session id (see the module docs).
    pub session: SessionId,
    /// The OT engine the sender runs (the plan's unless `sci-run --ot` overrides it).
    pub ot: OtKind,
    /// Whether the sender can run.
    pub status: Status,
}

/// Why the handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The channel failed while exchanging hellos.
    #[error("handshake: {0}")]
    Net(NetError),
    /// The peer is not a `sci-run` process.
    #[error("handshake: the peer is not a sci-run process (bad magic bytes {0:02x?})")]
    BadMagic([u8; 8]),
    /// The peer answered with TLS while this party speaks plain TCP.
    #[error("handshake: the peer uses TLS: give this party --key, --cert and --peer-cert too")]
    PeerUsesTls,
    /// The peer's message is malformed.
    #[error("handshake: malformed message from the peer: {0}")]
    Malformed(&'static str),
    /// Different wire, plan format or software versions.
    #[error(
        "version mismatch: this party runs sci {ours_sw} (wire version {ours}, plan format {ours_plan}), the peer runs sci {theirs_sw} (wire version {theirs}, plan format {theirs_plan}); both parties must run the same sci version"
    )]
    Version {
        /// Our wire version.
        ours: u32,
        /// The peer's wire version.
        theirs: u32,
        /// Our plan format version.
        ours_plan: u32,
        /// The peer's plan format version (0 if it was not read).
        theirs_plan: u32,
        /// Our software version.
        ours_sw: String,
        /// The peer's software version.
        theirs_sw: String,
    },
    /// Both parties claim the same role.
    #[error(
        "both parties are {role}: one must run `--party 0` (the server, with plan.bin) and the other `--party 1` (the client, with client.bin)"
    )]
    SameRole {
        /// The role both claim.
        role: Role,
    },
    /// Different plans.
    #[error(
        "plan mismatch: this party's plan has hash {ours}, the peer's has {theirs}; the client must use the client plan compiled together with the server's plan"
    )]
    PlanMismatch {
        /// Our plan hash (hex).
        ours: String,
        /// The peer's plan hash (hex).
        theirs: String,
    },
    /// Different OT engines.
    #[error(
        "OT engine mismatch: this party runs {ours}, the peer {theirs}; pass the same --ot to both (or none: the plan's)"
    )]
    OtEngine {
        /// Ours.
        ours: OtKind,
        /// The peer's.
        theirs: OtKind,
    },
    /// Different thread counts.
    #[error(
        "thread count mismatch: this party uses {ours} threads, the peer {theirs}; pass the same --threads to both"
    )]
    Threads {
        /// Ours.
        ours: u32,
        /// The peer's.
        theirs: u32,
    },
    /// The peer cannot run and said why (in a category).
    #[error("the peer stopped: {0}")]
    PeerAborted(AbortReason),
    /// This party had announced that it cannot run.
    #[error("this party stopped: {0}")]
    Aborted(AbortReason),
}

impl From<NetError> for HandshakeError {
    fn from(e: NetError) -> Self {
        HandshakeError::Net(e)
    }
}

/// A party's role, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Role(pub Party);

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Party::Server => f.write_str("the server (party 0)"),
            Party::Client => f.write_str("the client (party 1)"),
        }
    }
}

/// Cuts `s` to at most `max` bytes at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Hello {
    /// This build's hello for `party` with `threads` lanes on OT engine `ot` and the
    /// given plan hash, with no session id (the listening side sets one per session).
    pub fn new(
        party: Party,
        threads: u32,
        ot: OtKind,
        plan_hash: [u8; 32],
        status: Status,
    ) -> Hello {
        Hello {
            ot,
            version: WIRE_VERSION,
            plan_format: PLAN_FORMAT,
            software: SOFTWARE_VERSION.to_string(),
            party,
            threads,
            inferences: u32::from(party == Party::Client),
            plan_hash,
            session: SessionId::NONE,
            status,
        }
    }

    /// The wire encoding (see the module docs); an over-long software string is cut.
    pub fn to_bytes(&self) -> Vec<u8> {
        let sw = cut(&self.software, 255);
        let mut out = Vec::with_capacity(HELLO_LEN + sw.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&self.plan_format.to_le_bytes());
        out.push(sw.len() as u8);
        out.push(self.party.index() as u8);
        out.extend_from_slice(&self.threads.to_le_bytes());
        out.extend_from_slice(&self.inferences.to_le_bytes());
        out.extend_from_slice(&self.plan_hash);
        out.extend_from_slice(&self.session.0);
        out.push(self.ot.code());
        out.push(match self.status {
            Status::Ready => 0,
            Status::Abort(r) => r.code(),
        });
        out.extend_from_slice(sw.as_bytes());
        out
    }

    /// Reads a hello from the channel. Only the magic is read before it is checked, then
    /// the versions; a peer with another wire version is reported as a version mismatch
    /// without interpreting the rest.
    pub fn read(ch: &mut Channel) -> Result<Hello, HandshakeError> {
        let mut magic = [0u8; 8];
        // The first 3 bytes alone: a TLS alert record (type 21, version 3.x) is only
        // 7 bytes long.
        ch.recv(&mut magic[..3])?;
        if matches!(magic[..2], [21 | 22, 3]) {
            return Err(HandshakeError::PeerUsesTls);
        }
        ch.recv(&mut magic[3..])?;
        if magic != MAGIC {
            return Err(HandshakeError::BadMagic(magic));
        }
        let mut v = [0u8; 8];
        ch.recv(&mut v)?;
        let version = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
        let plan_format = u32::from_le_bytes([v[4], v[5], v[6], v[7]]);
        if version != WIRE_VERSION {
            return Err(HandshakeError::Version {
                ours: WIRE_VERSION,
                theirs: version,
                ours_plan: PLAN_FORMAT,
                theirs_plan: plan_format,
                ours_sw: SOFTWARE_VERSION.to_string(),
                theirs_sw: "(unknown)".to_string(),
            });
        }
        let mut rest = [0u8; HELLO_LEN - 16];
        ch.recv(&mut rest)?;
        let sw_len = usize::from(rest[0]);
        let party = match rest[1] {
            0 => Party::Server,
            1 => Party::Client,
            _ => return Err(HandshakeError::Malformed("party is neither 0 nor 1")),
        };
        let threads = u32::from_le_bytes([rest[2], rest[3], rest[4], rest[5]]);
        let inferences = u32::from_le_bytes([rest[6], rest[7], rest[8], rest[9]]);
        let mut plan_hash = [0u8; 32];
        plan_hash.copy_from_slice(&rest[10..42]);
        let mut session = SessionId::NONE;
        session.0.copy_from_slice(&rest[42..58]);
        let ot =
            OtKind::from_code(rest[58]).ok_or(HandshakeError::Malformed("unknown OT engine"))?;
        let status = match rest[59] {
            0 => Status::Ready,
            c => Status::Abort(
                AbortReason::from_code(c)
                    .ok_or(HandshakeError::Malformed("unknown status byte"))?,
            ),
        };
        let software = String::from_utf8(ch.recv_vec(sw_len)?)
            .map_err(|_| HandshakeError::Malformed("software version is not UTF-8"))?;
        Ok(Hello {
            version,
            plan_format,
            software,
            party,
            threads,
            inferences,
            plan_hash,
            session,
            ot,
            status,
        })
    }
}

fn hex(h: &[u8; 32]) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}

/// The verdict on a pair of hellos (ours, the peer's); both parties reach the same one
/// up to the point of view. Aborts come first (ours, then the peer's), then versions,
/// roles, plans, thread counts and OT engines.
pub fn check(ours: &Hello, theirs: &Hello) -> Result<(), HandshakeError> {
    if let Status::Abort(r) = ours.status {
        return Err(HandshakeError::Aborted(r));
    }
    if let Status::Abort(r) = theirs.status {
        return Err(HandshakeError::PeerAborted(r));
    }
    if ours.version != theirs.version
        || ours.plan_format != theirs.plan_format
        || ours.software != theirs.software
    {
        return Err(HandshakeError::Version {
            ours: ours.version,
            theirs: theirs.version,
            ours_plan: ours.plan_format,
            theirs_plan: theirs.plan_format,
            ours_sw: ours.software.clone(),
            theirs_sw: theirs.software.clone(),
        });
    }
    if ours.party == theirs.party {
        return Err(HandshakeError::SameRole {
            role: Role(ours.party),
        });
    }
    if ours.plan_hash != theirs.plan_hash {
        return Err(HandshakeError::PlanMismatch {
            ours: hex(&ours.plan_hash),
            theirs: hex(&theirs.plan_hash),
        });
    }
    if ours.threads != theirs.threads {
        return Err(HandshakeError::Threads {
            ours: ours.threads,
            theirs: theirs.threads,
        });
    }
    if ours.ot != theirs.ot {
        return Err(HandshakeError::OtEngine {
            ours: ours.ot,
            theirs: theirs.ot,
        });
    }
    Ok(())
}

/// Sends `ours`, reads the peer's hello and checks the pair ([`check`]). Returns the
/// peer's hello on success.
///
/// If sending fails (the peer may already have closed the connection, e.g. after a TLS
/// alert rejecting this party's certificate), whatever the peer did send is still read:
/// its error, if it says more than "connection closed", is returned.
pub fn handshake(ch: &mut Channel, ours: &Hello) -> Result<Hello, HandshakeError> {
    if let Err(sent) = ch.send(&ours.to_bytes()).and_then(|()| ch.flush()) {
        ch.abandon_sends();
        return Err(match Hello::read(ch) {
            Err(HandshakeError::Net(r)) if r.kind() != std::io::ErrorKind::PermissionDenied => {
                HandshakeError::Net(sent)
            }
            Ok(_) => HandshakeError::Net(sent),
            Err(e) => e,
        });
    }
    let theirs = Hello::read(ch)?;
    check(ours, &theirs)?;
    Ok(theirs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::mem;
    use std::time::Duration;

    fn both(a: Hello, b: Hello) -> (Result<Hello, HandshakeError>, Result<Hello, HandshakeError>) {
        let (mut c0, mut c1) = mem::pair(Some(Duration::from_secs(5)));
        std::thread::scope(|s| {
            let t = s.spawn(move || handshake(&mut c1, &b));
            let r0 = handshake(&mut c0, &a);
            (r0, t.join().expect("handshake thread"))
        })
    }

    fn hello(party: Party) -> Hello {
        Hello::new(party, 2, OtKind::Iknp, [7; 32], Status::Ready)
    }

    /// Changing the hello's encoding or any message sequence must bump [`WIRE_VERSION`]
    /// (and then this test's figures).
    #[test]
    fn wire_version_is_pinned() {
        assert_eq!(WIRE_VERSION, 10);
        let mut h = Hello::new(Party::Client, 3, OtKind::Silent, [9; 32], Status::Ready);
        h.software = "0.1.0".into();
        h.plan_format = 1;
        h.session = SessionId([0xee; 16]);
        h.inferences = 360;
        let bytes = h.to_bytes();
        assert_eq!(bytes.len(), HELLO_LEN + 5);
        assert_eq!(
            &bytes[..28],
            b"SCI-RUN\0\x0a\0\0\0\x01\0\0\0\x05\x01\x03\0\0\0\x68\x01\0\0\x09\x09"
        );
        assert_eq!(&bytes[58..74], &[0xee; 16]);
        assert_eq!(&bytes[74..], b"\x01\x000.1.0");
    }

    #[test]
    fn round_trip_and_success() {
        for status in [
            Status::Ready,
            Status::Abort(AbortReason::InputRejected),
            Status::Abort(AbortReason::PlanRejected),
            Status::Abort(AbortReason::Busy),
            Status::Abort(AbortReason::Internal),
        ] {
            let h = Hello::new(Party::Client, 3, OtKind::Silent, [9; 32], status);
            let (mut c0, mut c1) = mem::pair(Some(Duration::from_secs(5)));
            c0.send(&h.to_bytes()).unwrap();
            c0.flush().unwrap();
            assert_eq!(Hello::read(&mut c1).unwrap(), h);
        }
        let (a, b) = both(hello(Party::Server), hello(Party::Client));
        assert_eq!(a.unwrap().party, Party::Client);
        assert_eq!(b.unwrap().party, Party::Server);
    }

    #[test]
    fn mismatches_stop_both_parties() {
        let (a, b) = both(hello(Party::Server), hello(Party::Server));
        assert!(matches!(a, Err(HandshakeError::SameRole { .. })));
        assert!(matches!(b, Err(HandshakeError::SameRole { .. })));
        let mut other = hello(Party::Client);
        other.plan_hash[0] = 1;
        let (a, b) = both(hello(Party::Server), other);
        let msg = a.unwrap_err().to_string();
        assert!(msg.contains("plan mismatch"), "{msg}");
        assert!(matches!(b, Err(HandshakeError::PlanMismatch { .. })));
        let mut other = hello(Party::Client);
        other.threads = 4;
        let (a, b) = both(hello(Party::Server), other);
        assert!(matches!(
            a,
            Err(HandshakeError::Threads { ours: 2, theirs: 4 })
        ));
        assert!(matches!(
            b,
            Err(HandshakeError::Threads { ours: 4, theirs: 2 })
        ));
        let mut other = hello(Party::Client);
        other.ot = OtKind::Silent;
        let (a, b) = both(hello(Party::Server), other);
        let msg = a.unwrap_err().to_string();
        assert!(
            msg.contains("this party runs iknp, the peer silent"),
            "{msg}"
        );
        assert!(matches!(
            b,
            Err(HandshakeError::OtEngine {
                ours: OtKind::Silent,
                theirs: OtKind::Iknp
            })
        ));
        let mut other = hello(Party::Client);
        other.software = "9.9.9".into();
        let (a, b) = both(hello(Party::Server), other);
        assert!(matches!(a, Err(HandshakeError::Version { .. })));
        assert!(matches!(b, Err(HandshakeError::Version { .. })));
        let mut other = hello(Party::Client);
        other.version = 99;
        let (a, b) = both(hello(Party::Server), other);
        assert!(matches!(a, Err(HandshakeError::Version { theirs: 99, .. })));
        assert!(matches!(b, Err(HandshakeError::Version { ours: 99, .. })));
        let mut other = hello(Party::Client);
        other.plan_format = 77;
        let (a, b) = both(hello(Party::Server), other);
        let msg = a.unwrap_err().to_string();
        assert!(
            msg.contains(&format!("plan format {PLAN_FORMAT}")) && msg.contains("plan format 77"),
            "{msg}"
        );
        assert!(matches!(
            b,
            Err(HandshakeError::Version { ours_plan: 77, .. })
        ));
        let other = Hello::new(
            Party::Client,
            2,
            OtKind::Iknp,
            [7; 32],
            Status::Abort(AbortReason::InputRejected),
        );
        let (a, b) = both(hello(Party::Server), other);
        assert_eq!(
            a.unwrap_err().to_string(),
            "the peer stopped: input rejected"
        );
        assert!(matches!(
            b,
            Err(HandshakeError::Aborted(AbortReason::InputRejected))
        ));
    }

    #[test]
    fn garbage_is_an_error() {
        for bytes in [
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            {
                let mut h = hello(Party::Server).to_bytes();
                h[17] = 7; // party byte
                h
            },
            {
                let mut h = hello(Party::Server).to_bytes();
                h[75] = 9; // status byte
                h
            },
            {
                let mut h = hello(Party::Server).to_bytes();
                h[74] = 2; // OT engine byte
                h
            },
            hello(Party::Server).to_bytes()[..20].to_vec(),
        ] {
            let (mut c0, mut c1) = mem::pair(Some(Duration::from_secs(5)));
            c0.send(&bytes).unwrap();
            c0.flush().unwrap();
            drop(c0);
            assert!(Hello::read(&mut c1).is_err());
        }
    }
}
