//! `sci-net`: what the two parties' messages travel on and are made of — channels
//! (this module: TCP, TLS 1.3, in memory, sessions, the LAN/WAN emulator), the
//! symmetric crypto (`crypto`: fixed-key AES PRG and hashes, OS randomness) and exact
//! bit packing (`pack`). The OT engines (`sci-ot`), the HE backends (`sci-he`,
//! `sci-cheetah`) and the protocols (`sci-runtime`) are built on it.
//!
//! Channels: byte streams between the two parties, with explicit flush and
//! counters of bytes and rounds.
//!
//! A [`Channel`] wraps a [`Transport`] (TCP or TLS over TCP in [`tcp`], an
//! in-memory pipe in [`mem`]; [`session`] routes TCP connections to sessions;
//! [`emulate`] paces and delays a party's sending as over a LAN or WAN) and
//! adds
//! - **buffered, explicit flushing**: [`Channel::send`] only buffers;
//!   [`Channel::flush`] pushes the data out. A [`Channel::recv`] first flushes
//!   whatever this side still holds, so a protocol cannot deadlock by waiting
//!   for an answer to a message that is still sitting in its own buffer.
//! - **counters** ([`Stats`]): bytes sent, bytes received, and rounds.
//!
//! # What a round is
//! A *round* is counted by a party each time it receives after having sent:
//! a `recv` that follows at least one byte sent since this party's previous
//! `recv` increments `rounds` (the data is flushed first, and the read then has
//! to wait for the peer's answer). So a party's `rounds` is the number of
//! round trips it waits for, i.e. its latency in units of the network
//! round-trip time. Examples: a two-message protocol (A sends, B answers) costs
//! A one round and B zero; `k` such protocols run back to back cost A `k`
//! rounds and B `k - 1` (B's receive in protocol `i + 1` follows its send in
//! protocol `i`). The count is a deterministic function of the sequence of
//! `send`/`recv` calls, never of timing, so tests can pin it.
//!
//! # Deadlock freedom
//! The in-memory transport buffers without bound: both sides may send any
//! amount before reading. A TCP link holds only what the kernel socket buffers
//! hold (a few MiB); the protocols of this crate therefore never have both
//! parties of one channel sending large data at the same time: on each
//! channel the messages of a protocol strictly alternate (one side talks, the
//! other listens). Protocols built on top must keep that discipline (or use
//! separate channels, as `sci_runtime::ot::session::Session` does per thread),
//! or read and write from two threads at once over a full-duplex transport
//! ([`Channel::duplex`]), so that their reads drain the peer's writes.
//!
//! # Errors
//! A peer that disconnects or sends short data gives a [`NetError`] whose
//! [`kind`](NetError::kind) is [`io::ErrorKind::UnexpectedEof`]; a read that
//! waits longer than the configured timeout gives [`io::ErrorKind::TimedOut`].
//! After an error a channel must not be used again (the stream position is
//! undefined).
//!
//! # Typed helpers
//! Ring elements are sent bit-packed at exactly `bits` bits each (see
//! [`pack`]), so communication on the wire matches the paper's formulas:
//! `n` elements of `bits` bits take `⌈n·bits/8⌉` bytes.

pub mod crypto;
pub mod emulate;
pub mod mem;
pub mod pack;
pub mod replay;
pub mod session;
pub mod tcp;
pub mod tls;

use std::fmt;
use std::io;
use std::ops::{Add, AddAssign, Sub};

use crate::crypto::Block;

/// The two real parties of a run: the server (`--party 0`, holding the
/// model) and the client (`--party 1`, holding the input). Not to be confused
/// with the paper's protocol roles `P0`/`P1` (`sci_runtime::proto::Role`), which
/// alternate between the real parties from lane to lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Party {
    /// Party 0, the server (model owner).
    Server,
    /// Party 1, the client (input owner).
    Client,
}

impl Party {
    /// The other party.
    pub fn other(self) -> Party {
        match self {
            Party::Server => Party::Client,
            Party::Client => Party::Server,
        }
    }

    /// 0 for the server, 1 for the client (the CLI's `--party` number).
    pub fn index(self) -> usize {
        match self {
            Party::Server => 0,
            Party::Client => 1,
        }
    }
}

/// An I/O failure on a channel, with what the channel was doing.
#[derive(Debug, thiserror::Error)]
#[error("{context}: {source}")]
pub struct NetError {
    context: String,
    #[source]
    source: io::Error,
}

impl NetError {
    /// Wraps an I/O error with a description of the operation that failed.
    pub fn new(context: impl Into<String>, source: io::Error) -> Self {
        NetError {
            context: context.into(),
            source,
        }
    }

    /// The kind of the underlying I/O error: `UnexpectedEof` when the peer
    /// disconnected or sent short data, `TimedOut` when a read timed out.
    pub fn kind(&self) -> io::ErrorKind {
        self.source.kind()
    }
}

/// Communication counters of a channel (or a sum over channels).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes handed to [`Channel::send`] (and its typed helpers).
    pub bytes_sent: u64,
    /// Bytes returned by [`Channel::recv`] (and its typed helpers).
    pub bytes_recv: u64,
    /// Rounds, as defined in the [module documentation](self).
    pub rounds: u64,
}

impl Stats {
    /// Bytes in both directions.
    pub fn bytes(&self) -> u64 {
        self.bytes_sent + self.bytes_recv
    }
}

impl Add for Stats {
    type Output = Stats;
    fn add(self, o: Stats) -> Stats {
        Stats {
            bytes_sent: self.bytes_sent + o.bytes_sent,
            bytes_recv: self.bytes_recv + o.bytes_recv,
            rounds: self.rounds + o.rounds,
        }
    }
}

impl AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        *self = *self + o;
    }
}

impl Sub for Stats {
    type Output = Stats;
    /// Counter difference (`later - earlier`), for measuring one protocol.
    fn sub(self, o: Stats) -> Stats {
        Stats {
            bytes_sent: self.bytes_sent.saturating_sub(o.bytes_sent),
            bytes_recv: self.bytes_recv.saturating_sub(o.bytes_recv),
            rounds: self.rounds.saturating_sub(o.rounds),
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sent {} B, received {} B, {} rounds",
            self.bytes_sent, self.bytes_recv, self.rounds
        )
    }
}

/// A reliable, ordered byte stream to the peer. Implemented by [`tcp`] (plain TCP
/// or TLS 1.3, [`tls`]) and [`mem`].
///
/// Implementations must report a peer that went away during a read as
/// `UnexpectedEof` and an expired read timeout as `TimedOut`.
pub trait Transport: Send {
    /// Queues `data` for sending (may send some of it already).
    fn write_all(&mut self, data: &[u8]) -> io::Result<()>;
    /// Sends everything queued.
    fn flush(&mut self) -> io::Result<()>;
    /// Fills `buf` completely from the stream.
    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()>;
    /// The two directions as halves that two threads may use at once (full
    /// duplex), for [`Channel::duplex`]; `None` (the default) if the
    /// transport cannot write while a read waits.
    fn halves(&mut self) -> Option<(&mut dyn Outgoing, &mut dyn Incoming)> {
        None
    }
}

/// The sending direction of a full-duplex [`Transport`].
pub trait Outgoing: Send {
    /// As [`Transport::write_all`].
    fn write_all(&mut self, data: &[u8]) -> io::Result<()>;
    /// As [`Transport::flush`].
    fn flush(&mut self) -> io::Result<()>;
}

/// The receiving direction of a full-duplex [`Transport`].
pub trait Incoming: Send {
    /// As [`Transport::read_exact`].
    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()>;
}

/// Where a protocol step sends: a [`Channel`] or the sending half [`Tx`] of
/// one in a [`Channel::duplex`] section.
pub trait Outbox {
    /// Buffers `data` for the peer ([`Channel::send`]).
    fn send(&mut self, data: &[u8]) -> Result<(), NetError>;
    /// Pushes the buffered data out ([`Channel::flush`]).
    fn flush(&mut self) -> Result<(), NetError>;
}

/// Where a protocol step receives: a [`Channel`] or the receiving half
/// [`Rx`] of one in a [`Channel::duplex`] section.
pub trait Inbox {
    /// Fills `buf` with the next bytes from the peer ([`Channel::recv`]).
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), NetError>;
}

/// The sending half of a channel in a [`Channel::duplex`] section (counted
/// into the channel's statistics when the section ends).
pub struct Tx<'a> {
    out: &'a mut dyn Outgoing,
    sent: u64,
}

impl Outbox for Tx<'_> {
    fn send(&mut self, data: &[u8]) -> Result<(), NetError> {
        self.out
            .write_all(data)
            .map_err(|e| NetError::new(format!("sending {} bytes", data.len()), e))?;
        self.sent += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), NetError> {
        self.out.flush().map_err(|e| NetError::new("flushing", e))
    }
}

/// The receiving half of a channel in a [`Channel::duplex`] section.
pub struct Rx<'a> {
    inc: &'a mut dyn Incoming,
    received: u64,
}

impl Inbox for Rx<'_> {
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), NetError> {
        self.inc
            .read_exact(buf)
            .map_err(|e| NetError::new(format!("receiving {} bytes", buf.len()), e))?;
        self.received += buf.len() as u64;
        Ok(())
    }
}

impl Outbox for Channel {
    fn send(&mut self, data: &[u8]) -> Result<(), NetError> {
        Channel::send(self, data)
    }

    fn flush(&mut self) -> Result<(), NetError> {
        Channel::flush(self)
    }
}

impl Inbox for Channel {
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), NetError> {
        Channel::recv(self, buf)
    }
}

/// A counted, buffered byte channel to the peer. See the
/// [module documentation](self) for flushing, rounds and errors.
pub struct Channel {
    transport: Box<dyn Transport>,
    stats: Stats,
    /// Bytes were sent since the last `recv` (the next `recv` is a round).
    sent_since_recv: bool,
    /// Bytes were sent since the last flush.
    unflushed: bool,
    /// In a [`Channel::streamed`] section: whether it has received yet.
    streaming: Option<bool>,
}

impl fmt::Debug for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Channel")
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Channel {
    /// A channel over the given transport, with zeroed counters.
    pub fn new(transport: Box<dyn Transport>) -> Self {
        Channel {
            transport,
            stats: Stats::default(),
            sent_since_recv: false,
            unflushed: false,
            streaming: None,
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Buffers `data` for the peer. Costs `data.len()` bytes.
    pub fn send(&mut self, data: &[u8]) -> Result<(), NetError> {
        if data.is_empty() {
            return Ok(());
        }
        self.transport
            .write_all(data)
            .map_err(|e| NetError::new(format!("sending {} bytes", data.len()), e))?;
        self.stats.bytes_sent += data.len() as u64;
        self.sent_since_recv = true;
        self.unflushed = true;
        Ok(())
    }

    /// Pushes all buffered data to the peer.
    pub fn flush(&mut self) -> Result<(), NetError> {
        if self.unflushed {
            self.transport
                .flush()
                .map_err(|e| NetError::new("flushing", e))?;
            self.unflushed = false;
        }
        Ok(())
    }

    /// Gives up on the buffered sends after a failed [`Self::send`] or
    /// [`Self::flush`]: a following [`Self::recv`] then reads what the peer sent
    /// (e.g. why it closed the connection) instead of failing on the flush again.
    pub fn abandon_sends(&mut self) {
        self.unflushed = false;
    }

    /// Fills `buf` with the next bytes from the peer, flushing pending sends
    /// first. Counts a round if this side sent since its previous `recv`.
    pub fn recv(&mut self, buf: &mut [u8]) -> Result<(), NetError> {
        if buf.is_empty() {
            return Ok(());
        }
        self.flush()?;
        // In a streamed section only its first receive can wait for an answer.
        let counts = self.streaming != Some(true);
        if let Some(started) = &mut self.streaming {
            *started = true;
        }
        if self.sent_since_recv {
            self.stats.rounds += u64::from(counts);
            self.sent_since_recv = false;
        }
        self.transport
            .read_exact(buf)
            .map_err(|e| NetError::new(format!("receiving {} bytes", buf.len()), e))?;
        self.stats.bytes_recv += buf.len() as u64;
        Ok(())
    }

    /// Whether the transport is full duplex ([`Transport::halves`]), so
    /// that [`Channel::duplex`] runs.
    pub fn full_duplex(&mut self) -> bool {
        self.transport.halves().is_some()
    }

    /// Runs `f` with the channel cut into its sending and receiving halves,
    /// which two threads may use at once: a pipeline can keep both
    /// directions busy, with no deadlock on bounded buffers as long as one
    /// thread keeps reading. `None` (and `f` not run) if the transport is not
    /// full duplex. Pending sends are flushed first; `f` must flush what it
    /// sends. Rounds: the section counts one if it receives and this side
    /// sent before or in it — the pipeline's latency is one round trip, its
    /// later receives answering data sent ahead.
    pub fn duplex<T>(
        &mut self,
        f: impl FnOnce(&mut Tx<'_>, &mut Rx<'_>) -> T,
    ) -> Result<Option<T>, NetError> {
        self.flush()?;
        let Some((out, inc)) = self.transport.halves() else {
            return Ok(None);
        };
        let (mut tx, mut rx) = (Tx { out, sent: 0 }, Rx { inc, received: 0 });
        let r = f(&mut tx, &mut rx);
        let (sent, received) = (tx.sent, rx.received);
        self.stats.bytes_sent += sent;
        self.stats.bytes_recv += received;
        let sent_before = self.sent_since_recv || sent > 0;
        if received > 0 {
            self.stats.rounds += u64::from(sent_before && self.streaming != Some(true));
            if let Some(started) = &mut self.streaming {
                *started = true;
            }
        }
        self.sent_since_recv = sent_before && received == 0;
        Ok(Some(r))
    }

    /// Runs `f` as one streamed exchange, the peer's side of a
    /// [`Channel::duplex`] pipeline: the peer sends its messages ahead, so
    /// of `f`'s receives only the first can wait for an answer to what this
    /// side sent, and the section counts at most that one round.
    pub fn streamed<T>(&mut self, f: impl FnOnce(&mut Channel) -> T) -> T {
        let outer = self.streaming.replace(false);
        let r = f(self);
        self.streaming = outer;
        r
    }

    /// Receives exactly `n` bytes into a new vector.
    pub fn recv_vec(&mut self, n: usize) -> Result<Vec<u8>, NetError> {
        let mut v = vec![0u8; n];
        self.recv(&mut v)?;
        Ok(v)
    }

    /// Sends ring elements bit-packed at `bits` bits each (values are reduced
    /// mod `2^bits`). Costs `⌈values.len()·bits/8⌉` bytes. `bits` in 1..=64.
    pub fn send_u64s(&mut self, values: &[u64], bits: u32) -> Result<(), NetError> {
        let bytes = pack::pack_u64s(values, bits);
        self.send(&bytes)
    }

    /// Receives `n` ring elements sent by [`Channel::send_u64s`] with the same
    /// `bits`.
    pub fn recv_u64s(&mut self, n: usize, bits: u32) -> Result<Vec<u64>, NetError> {
        let bytes = self.recv_vec(pack::packed_len(n, bits))?;
        Ok(pack::unpack_u64s(&bytes, n, bits))
    }

    /// Sends 128-bit blocks (16 bytes each, little-endian).
    pub fn send_blocks(&mut self, blocks: &[Block]) -> Result<(), NetError> {
        let mut bytes = Vec::with_capacity(blocks.len() * 16);
        for b in blocks {
            bytes.extend_from_slice(&b.to_bytes());
        }
        self.send(&bytes)
    }

    /// Receives `n` blocks sent by [`Channel::send_blocks`].
    pub fn recv_blocks(&mut self, n: usize) -> Result<Vec<Block>, NetError> {
        let bytes = self.recv_vec(n * 16)?;
        Ok(bytes
            .as_chunks::<16>()
            .0
            .iter()
            .map(|c| Block::from_bytes(*c))
            .collect())
    }

    /// Sends a bit vector packed 8 bits per byte (`⌈bits.len()/8⌉` bytes).
    pub fn send_bits(&mut self, bits: &[bool]) -> Result<(), NetError> {
        self.send(&pack::pack_bits(bits))
    }

    /// Receives `n` bits sent by [`Channel::send_bits`].
    pub fn recv_bits(&mut self, n: usize) -> Result<Vec<bool>, NetError> {
        let bytes = self.recv_vec(n.div_ceil(8))?;
        Ok(pack::unpack_bits(&bytes, n))
    }
}
