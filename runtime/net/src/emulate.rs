//! A link emulator for benchmarks and tests: a party's outgoing data paced to a
//! bandwidth and delivered half a round trip late, as over a LAN or a WAN
//! ([`NetProfile`]: `--net lan|wan|BANDWIDTH,RTT` on `sci-run` and `sci-bench`).
//!
//! This is an *emulation* inside the process, not the kernel's: each party paces its
//! own sending. A [`Link`] is one party's outgoing direction, shared by all its lanes
//! (the bandwidth of a direction is shared by the lanes, and the two directions are
//! independent: full duplex). An emulated transport ([`wrap`]) cuts what a lane sends
//! into messages — each flush, and every [`FRAME`] bytes of a long one — and books
//! each on the link: it leaves when the link is free and takes `len / bandwidth`, then
//! a delivery thread of the lane hands it to the real transport `rtt / 2` after its
//! last byte left. A round trip therefore costs `rtt`, and `n` bytes `n / bandwidth`,
//! so a run takes about what the cost model's network time predicts
//! ([`sci_ir::cost::net`]) plus its compute time. The sender is never held up by the
//! latency; it waits only when it is more than [`BACKLOG`] bytes ahead of its link (a
//! bounded send queue, as a network interface has).
//!
//! Not emulated: congestion control, slow start, loss, and the latency of opening a
//! TCP connection (only bytes on open connections are delayed). The pacing uses the
//! operating system's sleep, which oversleeps by some tens of microseconds: emulated
//! rounds are slightly longer than the RTT, which matters only for very short RTTs.
//! The kernel's `netem` qdisc is not available on the machines this project runs on;
//! `tc qdisc add dev lo root tbf rate R burst B latency L` inside `unshare -n` can
//! cross-check the bandwidth (runtime/README.md, "Network emulation").
//!
//! Zero cost when not asked for: a transport is wrapped only when a link is given
//! ([`super::tcp::TcpConfig::link`], [`super::mem::emulated_pairs`]).

use std::io;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use sci_ir::cost::NetProfile;

use super::{Incoming, Outgoing, Transport};

/// Largest message booked on the link at once: a longer one leaves in pieces of this
/// size, each delivered when its last byte has crossed (a stream, not one burst).
pub const FRAME: usize = 64 * 1024;

/// How far (in bytes of link time) a sender may run ahead of its link before it waits.
pub const BACKLOG: usize = 4 << 20;

/// Messages a lane's delivery thread may hold (bounds its memory with [`FRAME`]).
const QUEUE: usize = 64;

/// One party's outgoing direction: the profile and when the link is next free. Cloning
/// shares the link (all the lanes of a party use one).
#[derive(Clone, Debug)]
pub struct Link {
    profile: NetProfile,
    free_at: Arc<Mutex<Instant>>,
}

impl Link {
    /// A new, idle link with `profile`.
    pub fn new(profile: NetProfile) -> Link {
        Link {
            profile,
            free_at: Arc::new(Mutex::new(Instant::now())),
        }
    }

    /// The link's profile.
    pub fn profile(&self) -> NetProfile {
        self.profile
    }

    /// Another, idle link with the same profile (for the other party of a process that
    /// runs both).
    pub fn fresh(&self) -> Link {
        Link::new(self.profile)
    }

    /// Books `len` bytes sent now: returns when they are delivered and how long the
    /// sender should wait first (when it is more than [`BACKLOG`] ahead of the link).
    fn book(&self, len: usize) -> (Instant, Duration) {
        let now = Instant::now();
        let mut free = self.free_at.lock().unwrap_or_else(PoisonError::into_inner);
        let start = (*free).max(now);
        let end = start + Duration::from_secs_f64(self.profile.transfer(len as u64));
        *free = end;
        drop(free);
        let ahead = Duration::from_secs_f64(self.profile.transfer(BACKLOG as u64));
        let wait = end.saturating_duration_since(now).saturating_sub(ahead);
        (end + Duration::from_secs_f64(self.profile.rtt / 2.0), wait)
    }
}

/// A message on its way: its bytes and when they arrive.
struct Message {
    at: Instant,
    data: Vec<u8>,
}

/// The sending half of an emulated transport: collects writes into messages, books
/// them on the link and queues them for the delivery thread.
struct PacedOut {
    link: Link,
    buf: Vec<u8>,
    queue: Option<SyncSender<Message>>,
    thread: Option<JoinHandle<()>>,
    /// The delivery thread's error, if it stopped on one.
    failed: Arc<Mutex<Option<io::Error>>>,
}

impl PacedOut {
    fn new(mut out: Box<dyn Outgoing>, link: Link) -> io::Result<PacedOut> {
        let (tx, rx) = sync_channel(QUEUE);
        let failed = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&failed);
        let thread = std::thread::Builder::new()
            .name("sci-net-emulate".into())
            .spawn(move || {
                if let Err(e) = deliver(out.as_mut(), &rx) {
                    *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                }
            })?;
        Ok(PacedOut {
            link,
            buf: Vec::new(),
            queue: Some(tx),
            thread: Some(thread),
            failed,
        })
    }

    /// Books what is buffered on the link and queues it for delivery.
    fn push(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let data = std::mem::take(&mut self.buf);
        let (at, wait) = self.link.book(data.len());
        let sent = self
            .queue
            .as_ref()
            .is_some_and(|q| q.send(Message { at, data }).is_ok());
        if !sent {
            let e = self
                .failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            return Err(e.unwrap_or_else(|| {
                io::Error::new(io::ErrorKind::BrokenPipe, "the emulated link stopped")
            }));
        }
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        Ok(())
    }
}

/// The delivery thread: each message to the real transport at its time.
fn deliver(out: &mut dyn Outgoing, queue: &Receiver<Message>) -> io::Result<()> {
    for m in queue {
        let left = m.at.saturating_duration_since(Instant::now());
        if !left.is_zero() {
            std::thread::sleep(left);
        }
        out.write_all(&m.data)?;
        out.flush()?;
    }
    Ok(())
}

impl Outgoing for PacedOut {
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        let mut data = data;
        while !data.is_empty() {
            let k = (FRAME - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..k]);
            data = &data[k..];
            if self.buf.len() == FRAME {
                self.push()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.push()
    }
}

impl Drop for PacedOut {
    /// Sends what is buffered and waits until the delivery thread has handed
    /// everything over (as a dropped TCP transport flushes).
    fn drop(&mut self) {
        let _ = self.push();
        self.queue = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// An emulated transport: paced, delayed sending; receiving as the real transport.
struct Emulated {
    out: PacedOut,
    inc: Box<dyn Incoming>,
}

impl Transport for Emulated {
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.out.write_all(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inc.read_exact(buf)
    }

    fn halves(&mut self) -> Option<(&mut dyn Outgoing, &mut dyn Incoming)> {
        Some((&mut self.out, self.inc.as_mut()))
    }
}

/// The full-duplex transport made of the halves `out` and `inc`, whose sending is
/// paced and delayed as `link` says (one delivery thread per transport).
pub fn wrap(
    out: Box<dyn Outgoing>,
    inc: Box<dyn Incoming>,
    link: &Link,
) -> io::Result<Box<dyn Transport>> {
    Ok(Box::new(Emulated {
        out: PacedOut::new(out, link.clone())?,
        inc,
    }))
}
