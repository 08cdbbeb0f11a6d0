//! In-memory channel pair for tests: two threads, one [`Channel`] each.
//!
//! Each direction is an unbounded `std::sync::mpsc` queue of byte chunks, so
//! both sides may send any amount before reading (no deadlock). Writes are
//! collected locally and pushed as one chunk on flush (or every 1 MiB), so the
//! pipe behaves like a buffered stream: chunk boundaries are invisible to the
//! reader. Dropping one end makes the other end's reads fail with
//! `UnexpectedEof` once the queued data is consumed; reads honour an optional
//! timeout (`TimedOut`).

use std::io;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use super::emulate::{self, Link, NetProfile};
use super::{Channel, Incoming, Outgoing, Transport};

/// Chunks larger than this are pushed to the peer without waiting for flush.
const CHUNK: usize = 1 << 20;

struct MemWriter {
    tx: Sender<Vec<u8>>,
    wbuf: Vec<u8>,
}

struct MemReader {
    rx: Receiver<Vec<u8>>,
    rbuf: Vec<u8>,
    rpos: usize,
    timeout: Option<Duration>,
}

/// The two directions are independent queues: full duplex.
struct MemTransport {
    w: MemWriter,
    r: MemReader,
}

impl MemWriter {
    fn push(&mut self) -> io::Result<()> {
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.wbuf);
        self.tx
            .send(chunk)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "peer channel closed"))
    }
}

impl Outgoing for MemWriter {
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.wbuf.extend_from_slice(data);
        if self.wbuf.len() >= CHUNK {
            self.push()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.push()
    }
}

impl Incoming for MemReader {
    fn read_exact(&mut self, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            if self.rpos == self.rbuf.len() {
                let next = match self.timeout {
                    Some(t) => self.rx.recv_timeout(t).map_err(|e| match e {
                        RecvTimeoutError::Timeout => {
                            io::Error::new(io::ErrorKind::TimedOut, "read timed out")
                        }
                        RecvTimeoutError::Disconnected => peer_gone(),
                    })?,
                    None => self.rx.recv().map_err(|_| peer_gone())?,
                };
                self.rbuf = next;
                self.rpos = 0;
                continue;
            }
            let k = buf.len().min(self.rbuf.len() - self.rpos);
            let (head, tail) = buf.split_at_mut(k);
            head.copy_from_slice(&self.rbuf[self.rpos..self.rpos + k]);
            self.rpos += k;
            buf = tail;
        }
        Ok(())
    }
}

impl Transport for MemTransport {
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.w.write_all(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.r.read_exact(buf)
    }

    fn halves(&mut self) -> Option<(&mut dyn Outgoing, &mut dyn Incoming)> {
        Some((&mut self.w, &mut self.r))
    }
}

fn peer_gone() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed the channel")
}

/// The two ends' halves of a connected pipe.
fn halves(timeout: Option<Duration>) -> [(MemWriter, MemReader); 2] {
    let (tx_a, rx_b) = channel();
    let (tx_b, rx_a) = channel();
    let mk = |tx, rx| {
        (
            MemWriter {
                tx,
                wbuf: Vec::new(),
            },
            MemReader {
                rx,
                rbuf: Vec::new(),
                rpos: 0,
                timeout,
            },
        )
    };
    [mk(tx_a, rx_a), mk(tx_b, rx_b)]
}

/// Two connected in-memory channels; reads wait at most `timeout` (`None`:
/// forever).
pub fn pair(timeout: Option<Duration>) -> (Channel, Channel) {
    let [a, b] = halves(timeout).map(|(w, r)| Channel::new(Box::new(MemTransport { w, r })));
    (a, b)
}

/// `t` connected pairs as [`pairs`] returns them, each party's sending emulated on a
/// link of its own with `profile` ([`emulate`]; one delivery thread per channel).
pub fn emulated_pairs(
    t: usize,
    timeout: Option<Duration>,
    profile: NetProfile,
) -> io::Result<(Vec<Channel>, Vec<Channel>)> {
    let links = [Link::new(profile), Link::new(profile)];
    let (mut a, mut b) = (Vec::with_capacity(t), Vec::with_capacity(t));
    for _ in 0..t {
        let [(wa, ra), (wb, rb)] = halves(timeout);
        a.push(Channel::new(emulate::wrap(
            Box::new(wa),
            Box::new(ra),
            &links[0],
        )?));
        b.push(Channel::new(emulate::wrap(
            Box::new(wb),
            Box::new(rb),
            &links[1],
        )?));
    }
    Ok((a, b))
}

/// `t` independent connected pairs, as `(party 0's channels, party 1's)`.
pub fn pairs(t: usize, timeout: Option<Duration>) -> (Vec<Channel>, Vec<Channel>) {
    (0..t).map(|_| pair(timeout)).unzip()
}
