//! The handshake both parties run on lane 0 before any cryptography.
//!
//! Each party sends one [`Hello`] and then reads the peer's. Both therefore see the
//! same pair of messages and reach the same verdict ([`check`]): the run goes ahead
//! only if the magic bytes, the wire-protocol version and the software version agree,
//! the roles differ, the plans' public parts hash alike ([`sci_ir::Plan::hash`]) and the
//! thread counts are equal. A party that cannot run (e.g. the server was given the
//! client's plan, or the client's input does not match the plan) still connects and
//! sends a hello with an [`Status::Abort`] message, so the peer stops at once with that
//! message instead of waiting for a timeout.
//!
//! Wire format (integers little-endian), at most [`MAX_HELLO`] bytes:
//!
//! ```text
//! magic        8 bytes  "SCI-RUN\0"
//! version      u32      WIRE_VERSION
//! sw_len       u8       length of the software version string
//! party        u8       0 = server, 1 = client
//! threads      u32      number of TCP connections (lanes)
//! plan_hash    32 bytes
//! status       u8       0 = ready, 1 = abort
//! msg_len      u16      length of the abort message (0 when ready)
//! software     sw_len bytes, UTF-8 (the crate version, e.g. "0.1.0")
//! message      msg_len bytes, UTF-8
//! ```
//!
//! The magic and version come first so that a peer speaking another version (or not
//! sci at all) is recognised before the rest of its message is interpreted.
//! Cost: `52 + sw_len + msg_len` bytes each way, one round.

use crate::net::{Channel, NetError, Party};
use std::fmt;

/// The first 8 bytes of a hello.
pub const MAGIC: [u8; 8] = *b"SCI-RUN\0";

/// Version of the messages exchanged by `sci-run` (handshake, executor, protocols).
/// Bump it whenever the parties' message sequence changes.
pub const WIRE_VERSION: u32 = 1;

/// The software version sent in the hello (the `sci-runtime` crate version).
pub const SOFTWARE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Longest abort message sent (longer ones are cut at a character boundary).
pub const MAX_MESSAGE: usize = 4096;

/// Size of the fixed part of a hello.
const FIXED: usize = 8 + 4 + 1 + 1 + 4 + 32 + 1 + 2;

/// Largest hello on the wire.
pub const MAX_HELLO: usize = FIXED + 255 + MAX_MESSAGE;

/// Whether a party is ready to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Ready.
    Ready,
    /// This party cannot run; the message says why.
    Abort(String),
}

/// One party's handshake message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// [`WIRE_VERSION`] of the sender.
    pub version: u32,
    /// Software version of the sender.
    pub software: String,
    /// The sender's role.
    pub party: Party,
    /// Number of lanes the sender will open.
    pub threads: u32,
    /// [`sci_ir::Plan::hash`] of the sender's plan.
    pub plan_hash: [u8; 32],
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
    /// The peer's message is malformed.
    #[error("handshake: malformed message from the peer: {0}")]
    Malformed(&'static str),
    /// Different wire or software versions.
    #[error(
        "version mismatch: this party runs sci {ours_sw} (wire version {ours}), the peer runs sci {theirs_sw} (wire version {theirs}); both parties must run the same sci version"
    )]
    Version {
        /// Our wire version.
        ours: u32,
        /// The peer's wire version.
        theirs: u32,
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
    /// The peer cannot run and said why.
    #[error("the peer stopped: {0}")]
    PeerAborted(String),
    /// This party had announced that it cannot run.
    #[error("{0}")]
    Aborted(String),
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
    /// This build's hello for `party` with `threads` lanes and the given plan hash.
    pub fn new(party: Party, threads: u32, plan_hash: [u8; 32], status: Status) -> Hello {
        Hello {
            version: WIRE_VERSION,
            software: SOFTWARE_VERSION.to_string(),
            party,
            threads,
            plan_hash,
            status,
        }
    }

    /// The wire encoding (see the module docs); over-long strings are cut.
    pub fn to_bytes(&self) -> Vec<u8> {
        let sw = cut(&self.software, 255);
        let msg = match &self.status {
            Status::Ready => "",
            Status::Abort(m) => cut(m, MAX_MESSAGE),
        };
        let mut out = Vec::with_capacity(FIXED + sw.len() + msg.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.push(sw.len() as u8);
        out.push(self.party.index() as u8);
        out.extend_from_slice(&self.threads.to_le_bytes());
        out.extend_from_slice(&self.plan_hash);
        out.push(u8::from(matches!(self.status, Status::Abort(_))));
        out.extend_from_slice(&(msg.len() as u16).to_le_bytes());
        out.extend_from_slice(sw.as_bytes());
        out.extend_from_slice(msg.as_bytes());
        out
    }

    /// Reads a hello from the channel. Only the magic is read before it is checked, then
    /// the version; a peer with another version is reported as a version mismatch
    /// without interpreting the rest.
    pub fn read(ch: &mut Channel) -> Result<Hello, HandshakeError> {
        let mut magic = [0u8; 8];
        ch.recv(&mut magic)?;
        if magic != MAGIC {
            return Err(HandshakeError::BadMagic(magic));
        }
        let mut v = [0u8; 4];
        ch.recv(&mut v)?;
        let version = u32::from_le_bytes(v);
        if version != WIRE_VERSION {
            return Err(HandshakeError::Version {
                ours: WIRE_VERSION,
                theirs: version,
                ours_sw: SOFTWARE_VERSION.to_string(),
                theirs_sw: "(unknown)".to_string(),
            });
        }
        let mut rest = [0u8; FIXED - 12];
        ch.recv(&mut rest)?;
        let sw_len = usize::from(rest[0]);
        let party = match rest[1] {
            0 => Party::Server,
            1 => Party::Client,
            _ => return Err(HandshakeError::Malformed("party is neither 0 nor 1")),
        };
        let threads = u32::from_le_bytes([rest[2], rest[3], rest[4], rest[5]]);
        let mut plan_hash = [0u8; 32];
        plan_hash.copy_from_slice(&rest[6..38]);
        let abort = match rest[38] {
            0 => false,
            1 => true,
            _ => return Err(HandshakeError::Malformed("status is neither 0 nor 1")),
        };
        let msg_len = usize::from(u16::from_le_bytes([rest[39], rest[40]]));
        if msg_len > MAX_MESSAGE || (!abort && msg_len != 0) {
            return Err(HandshakeError::Malformed("bad message length"));
        }
        let software = String::from_utf8(ch.recv_vec(sw_len)?)
            .map_err(|_| HandshakeError::Malformed("software version is not UTF-8"))?;
        let msg = String::from_utf8(ch.recv_vec(msg_len)?)
            .map_err(|_| HandshakeError::Malformed("message is not UTF-8"))?;
        Ok(Hello {
            version,
            software,
            party,
            threads,
            plan_hash,
            status: if abort {
                Status::Abort(msg)
            } else {
                Status::Ready
            },
        })
    }
}

fn hex(h: &[u8; 32]) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}

/// The verdict on a pair of hellos (ours, the peer's); both parties reach the same one
/// up to the point of view. Aborts come first (ours, then the peer's), then versions,
/// roles, plans and thread counts.
pub fn check(ours: &Hello, theirs: &Hello) -> Result<(), HandshakeError> {
    if let Status::Abort(m) = &ours.status {
        return Err(HandshakeError::Aborted(m.clone()));
    }
    if let Status::Abort(m) = &theirs.status {
        return Err(HandshakeError::PeerAborted(m.clone()));
    }
    if ours.version != theirs.version || ours.software != theirs.software {
        return Err(HandshakeError::Version {
            ours: ours.version,
            theirs: theirs.version,
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
    Ok(())
}

/// Sends `ours`, reads the peer's hello and checks the pair ([`check`]). Returns the
/// peer's hello on success.
pub fn handshake(ch: &mut Channel, ours: &Hello) -> Result<Hello, HandshakeError> {
    ch.send(&ours.to_bytes())?;
    ch.flush()?;
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
        Hello::new(party, 2, [7; 32], Status::Ready)
    }

    #[test]
    fn round_trip_and_success() {
        let h = Hello::new(
            Party::Client,
            3,
            [9; 32],
            Status::Abort("bad input é".into()),
        );
        let (mut c0, mut c1) = mem::pair(Some(Duration::from_secs(5)));
        c0.send(&h.to_bytes()).unwrap();
        c0.flush().unwrap();
        assert_eq!(Hello::read(&mut c1).unwrap(), h);
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
        other.software = "9.9.9".into();
        let (a, b) = both(hello(Party::Server), other);
        assert!(matches!(a, Err(HandshakeError::Version { .. })));
        assert!(matches!(b, Err(HandshakeError::Version { .. })));
        let mut other = hello(Party::Client);
        other.version = 99;
        let (a, b) = both(hello(Party::Server), other);
        assert!(matches!(a, Err(HandshakeError::Version { theirs: 99, .. })));
        assert!(matches!(b, Err(HandshakeError::Version { ours: 99, .. })));
        let other = Hello::new(
            Party::Client,
            2,
            [7; 32],
            Status::Abort("input x: wrong shape".into()),
        );
        let (a, b) = both(hello(Party::Server), other);
        assert_eq!(
            a.unwrap_err().to_string(),
            "the peer stopped: input x: wrong shape"
        );
        assert!(matches!(b, Err(HandshakeError::Aborted(_))));
    }

    #[test]
    fn garbage_is_an_error() {
        for bytes in [
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            {
                let mut h = hello(Party::Server).to_bytes();
                h[13] = 7; // party byte
                h
            },
            {
                let mut h = hello(Party::Server).to_bytes();
                h[50] = 2; // status byte
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

    #[test]
    fn long_messages_are_cut() {
        let long = "é".repeat(MAX_MESSAGE);
        let h = Hello::new(Party::Client, 1, [0; 32], Status::Abort(long));
        let bytes = h.to_bytes();
        assert!(bytes.len() <= MAX_HELLO);
        let (mut c0, mut c1) = mem::pair(Some(Duration::from_secs(5)));
        c0.send(&bytes).unwrap();
        c0.flush().unwrap();
        let back = Hello::read(&mut c1).unwrap();
        let Status::Abort(m) = back.status else {
            panic!("abort expected")
        };
        assert_eq!(m.len(), MAX_MESSAGE);
    }
}
