//! Sessions over TCP: each connection says which session and lane it belongs to, and
//! an [`Acceptor`] routes the connections it accepts to their sessions.
//!
//! A session has `T` lanes (connections). The connecting side opens lane 0 with the
//! zero [`SessionId`]: that starts a new session. The listening side answers on lane 0
//! with a hello carrying a fresh random session id (the handshake above this layer);
//! the connecting side then opens lanes `1..T`, each presenting that id. Every
//! connection starts with a [`PREAMBLE_LEN`]-byte preamble, sent inside TLS when TLS
//! is on and not counted in the channel statistics:
//!
//! ```text
//! magic    8 bytes   "SCI-LANE"
//! session  16 bytes  the session id (zero on lane 0)
//! lane     u32       the lane's index, little-endian (0 on lane 0)
//! ```
//!
//! The acceptor accepts on a thread of its own and sets up each connection (TLS
//! handshake, preamble) on a short-lived thread, so a silent or slow connection holds
//! up nothing but itself. A connection whose preamble is malformed, whose session id
//! is not awaited, or whose lane index is out of range or already taken is dropped;
//! no session sees it. With TLS on, a connection that fails the TLS handshake (no TLS,
//! wrong or missing certificate) is reported through [`Acceptor::next`] as
//! [`Rejected`], so that a server waiting for its one peer can stop with a clear
//! message.
//!
//! # Bounded set-up
//! Each connection has one absolute set-up deadline, [`TcpConfig::setup_timeout`] from
//! its acceptance: its TLS handshake and preamble, and on a session's lane 0 also the
//! hello (`sci_runtime::exec::handshake`), must be done by then however slowly the peer
//! sends (the deadline is lifted with [`Incoming::setup`] once the hello is through;
//! a further lane's when its preamble is read). At most [`MAX_PENDING`] connections are
//! in set-up (TLS handshake, preamble) at once, at most [`MAX_PENDING_PER_SOURCE`] of
//! them from one IP address; a new connection beyond either limit is taken and the
//! *oldest* pending one (of its source, else of all) is closed instead, so that idle
//! connections cannot lock honest clients out: an attacker must open connections
//! faster than an honest client's set-up completes (a few milliseconds) to keep it
//! out. Each pending connection is set up on a thread of its own, and there are never
//! more than [`MAX_PENDING`] such threads alive: when a new connection evicts an old
//! one, the acceptor joins the evicted connection's thread (it wakes at once: its
//! socket is shut down) before it starts the new one's, however slowly the scheduler
//! runs the exiting threads. At most [`MAX_WAITING`] new sessions wait to be taken by
//! [`Acceptor::next`] (more are closed), so a server that takes no more (running its
//! one session) holds a bounded number of them.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::tcp::{self, End, SetupDeadline, TcpConfig};
use super::{Channel, NetError, Transport};
use crate::crypto::{RandomnessError, random_block};

/// The first 8 bytes of every connection of a session.
pub const LANE_MAGIC: [u8; 8] = *b"SCI-LANE";

/// Length of a lane's preamble.
pub const PREAMBLE_LEN: usize = 8 + 16 + 4;

/// Most connections in set-up (TLS handshake, preamble) at the same time.
pub const MAX_PENDING: usize = 64;

/// Most connections in set-up at the same time from one IP address.
pub const MAX_PENDING_PER_SOURCE: usize = 16;

/// Most new sessions' lanes 0 (and rejections) queued for [`Acceptor::next`]; more are
/// closed.
pub const MAX_WAITING: usize = 64;

/// A session's identifier: 16 random bytes chosen by the listening side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SessionId(pub [u8; 16]);

impl SessionId {
    /// The id of no session yet (what lane 0 presents).
    pub const NONE: SessionId = SessionId([0; 16]);

    /// A fresh random id (from the operating system).
    pub fn fresh() -> Result<SessionId, RandomnessError> {
        Ok(SessionId(random_block()?.to_bytes()))
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The preamble of lane `lane` of session `id`.
pub fn preamble(id: SessionId, lane: u32) -> [u8; PREAMBLE_LEN] {
    let mut p = [0u8; PREAMBLE_LEN];
    p[..8].copy_from_slice(&LANE_MAGIC);
    p[8..24].copy_from_slice(&id.0);
    p[24..].copy_from_slice(&lane.to_le_bytes());
    p
}

/// The session id and lane of a preamble, if it is one.
pub fn parse_preamble(p: &[u8; PREAMBLE_LEN]) -> Option<(SessionId, u32)> {
    if p[..8] != LANE_MAGIC {
        return None;
    }
    let mut id = [0u8; 16];
    id.copy_from_slice(&p[8..24]);
    let lane = u32::from_le_bytes([p[24], p[25], p[26], p[27]]);
    Some((SessionId(id), lane))
}

fn opened(mut t: Box<dyn Transport>, id: SessionId, lane: u32) -> Result<Channel, NetError> {
    t.write_all(&preamble(id, lane))
        .and_then(|()| t.flush())
        .map_err(|e| NetError::new("sending the lane preamble", e))?;
    Ok(Channel::new(t))
}

/// Opens lane 0 of a new session to the peer listening at `addr` (retrying refused
/// connections for `cfg.connect_timeout`).
pub fn connect_first(addr: &str, cfg: &TcpConfig) -> Result<Channel, NetError> {
    opened(tcp::connect_transport(addr, cfg)?, SessionId::NONE, 0)
}

/// Opens lanes `1..=n` of session `id` to the peer listening at `addr`.
pub fn connect_lanes(
    addr: &str,
    id: SessionId,
    n: usize,
    cfg: &TcpConfig,
) -> Result<Vec<Channel>, NetError> {
    (1..=n)
        .map(|i| opened(tcp::connect_transport(addr, cfg)?, id, i as u32))
        .collect()
}

/// A new session's lane 0, as the [`Acceptor`] hands it out.
#[derive(Debug)]
pub struct Incoming {
    /// Lane 0, preamble consumed.
    pub channel: Channel,
    /// The peer's address.
    pub peer: SocketAddr,
    /// Lane 0's set-up deadline, still running: the hello must be exchanged before it
    /// ([`TcpConfig::setup_timeout`] from the connection's acceptance); lift it then.
    pub setup: SetupDeadline,
}

/// A connection that failed TLS authentication (wrong or missing peer certificate).
#[derive(Debug, thiserror::Error)]
#[error("connection from {peer}: {error}")]
pub struct Rejected {
    /// The peer's address.
    pub peer: SocketAddr,
    /// What failed.
    pub error: NetError,
}

type LaneSender = Sender<(u32, Channel)>;

/// The connections in set-up, by age (key: order of acceptance), each with its source
/// address and a handle to close it by.
#[derive(Default)]
struct PendingTable {
    next: u64,
    conns: BTreeMap<u64, (IpAddr, TcpStream)>,
}

impl PendingTable {
    /// Takes in a connection from `ip` (`s`: a handle to close it by); if that source
    /// already has [`MAX_PENDING_PER_SOURCE`] connections pending, closes its oldest,
    /// else if [`MAX_PENDING`] are pending, the oldest of all. The new connection's key
    /// and whether one was closed.
    fn admit(&mut self, ip: IpAddr, s: TcpStream) -> (u64, bool) {
        let mut same = self.conns.iter().filter(|(_, (i, _))| *i == ip);
        let oldest_same = same.next().map(|(k, _)| *k);
        let evict = if same.count() + 1 >= MAX_PENDING_PER_SOURCE {
            oldest_same
        } else if self.conns.len() >= MAX_PENDING {
            self.conns.keys().next().copied()
        } else {
            None
        };
        if let Some((_, old)) = evict.and_then(|k| self.conns.remove(&k)) {
            let _ = old.shutdown(Shutdown::Both);
        }
        let key = self.next;
        self.next += 1;
        self.conns.insert(key, (ip, s));
        (key, evict.is_some())
    }

    /// Ends connection `key`'s set-up; `false` if it was closed to make room.
    fn finish(&mut self, key: u64) -> bool {
        self.conns.remove(&key).is_some()
    }
}

struct Shared {
    cfg: TcpConfig,
    stop: AtomicBool,
    pending: Mutex<PendingTable>,
    dropped: AtomicU64,
    awaited: Mutex<HashMap<SessionId, LaneSender>>,
    new_sessions: Mutex<SyncSender<Result<Incoming, Rejected>>>,
}

/// Locks a mutex, going on with the data if a holder panicked (the maps stay valid).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// Queues a new session's lane 0 (or a rejection) for [`Acceptor::next`]; with
    /// [`MAX_WAITING`] queued already (nobody takes them: a single-session server
    /// running its session) it is dropped instead.
    fn hand_out(&self, r: Result<Incoming, Rejected>) {
        if lock(&self.new_sessions).try_send(r).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Sets up one accepted connection (pending as `key`, accepted at `accepted`) and
    /// routes it.
    fn route(&self, stream: TcpStream, peer: SocketAddr, key: u64, accepted: Instant) {
        let cfg = &self.cfg;
        // (A connection closed to make room was counted then.)
        let drop_it = || {
            if lock(&self.pending).finish(key) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        };
        let reject = |error| {
            if lock(&self.pending).finish(key) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                self.hand_out(Err(Rejected { peer, error }));
            }
        };
        let deadline = accepted + cfg.setup_timeout;
        let (mut t, setup) = match tcp::transport_until(stream, End::Listening, cfg, deadline) {
            Ok(t) => t,
            // With TLS on, a failed handshake is reported (wrong, missing or no key).
            Err(e) if cfg.tls.is_some() => return reject(e),
            Err(_) => return drop_it(),
        };
        let mut p = [0u8; PREAMBLE_LEN];
        let read = t.read_exact(&mut p);
        // A connection closed to make room while its preamble came in stays closed.
        if read.is_ok() && !lock(&self.pending).finish(key) {
            return;
        }
        match (read, parse_preamble(&p)) {
            (Ok(()), Some((SessionId::NONE, 0))) => {
                let inc = Incoming {
                    channel: Channel::new(t),
                    peer,
                    setup,
                };
                self.hand_out(Ok(inc));
            }
            (Ok(()), Some((id, lane))) if lane > 0 => {
                setup.lift();
                let tx = lock(&self.awaited).get(&id).cloned();
                if tx.is_none_or(|tx| tx.send((lane, Channel::new(t))).is_err()) {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            // A TLS ClientHello (record type 22) on a plain listener.
            (Ok(()), None) if cfg.tls.is_none() && p[0] == 0x16 => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                self.hand_out(Err(Rejected {
                    peer,
                    error: NetError::new(
                        "receiving the lane preamble",
                        io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            "the peer uses TLS: give this party --key, --cert and --peer-cert too",
                        ),
                    ),
                }));
            }
            (Ok(()), _) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            (Err(_), _) => drop_it(),
        }
    }
}

/// Accepts connections on a listener and routes them: new sessions to
/// [`Acceptor::next`], further lanes to the session that awaits them
/// ([`Acceptor::expect`]). Stops accepting when dropped.
pub struct Acceptor {
    shared: Arc<Shared>,
    new_sessions: Mutex<Receiver<Result<Incoming, Rejected>>>,
    local: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for Acceptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acceptor")
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

impl Acceptor {
    /// Listens on `addr` (port 0: an ephemeral port, see [`Acceptor::local_addr`]) and
    /// starts accepting, setting connections up as `cfg` says.
    pub fn bind(addr: impl ToSocketAddrs, cfg: &TcpConfig) -> Result<Acceptor, NetError> {
        let listener = tcp::listen(addr)?;
        Acceptor::new(listener, cfg)
    }

    /// Starts accepting on `listener`.
    pub fn new(listener: TcpListener, cfg: &TcpConfig) -> Result<Acceptor, NetError> {
        let ctx = |e| NetError::new("configuring listener", e);
        let local = listener.local_addr().map_err(ctx)?;
        listener.set_nonblocking(true).map_err(ctx)?;
        let (tx, rx) = mpsc::sync_channel(MAX_WAITING);
        let shared = Arc::new(Shared {
            cfg: cfg.clone(),
            stop: AtomicBool::new(false),
            pending: Mutex::new(PendingTable::default()),
            dropped: AtomicU64::new(0),
            awaited: Mutex::new(HashMap::new()),
            new_sessions: Mutex::new(tx),
        });
        let sh = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("sci-accept".into())
            .spawn(move || accept_loop(&listener, &sh))
            .map_err(|e| NetError::new("starting the accept thread", e))?;
        Ok(Acceptor {
            shared,
            new_sessions: Mutex::new(rx),
            local,
            thread: Some(thread),
        })
    }

    /// The address listened on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Connections dropped so far (malformed, unknown session, failed or evicted
    /// set-up).
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Connections in set-up now (TLS handshake, preamble).
    pub fn pending(&self) -> usize {
        lock(&self.shared.pending).conns.len()
    }

    /// The next new session's lane 0, waiting at most `wait` (then `TimedOut`). A
    /// connection that failed TLS authentication is returned as `Err(Rejected)` in
    /// `Ok` so the caller can report it and wait on.
    pub fn next(&self, wait: Duration) -> Result<Result<Incoming, Rejected>, NetError> {
        lock(&self.new_sessions)
            .recv_timeout(wait)
            .map_err(|e| match e {
                RecvTimeoutError::Timeout => NetError::new(
                    "accepting connection",
                    io::Error::new(io::ErrorKind::TimedOut, "no peer connected"),
                ),
                RecvTimeoutError::Disconnected => NetError::new(
                    "accepting connection",
                    io::Error::other("the accept thread stopped"),
                ),
            })
    }

    /// Awaits the further lanes of session `id`: from now on, connections presenting
    /// `id` are kept for it (call this before the peer can learn `id`).
    pub fn expect(&self, id: SessionId) -> Lanes {
        let (tx, rx) = mpsc::channel();
        lock(&self.shared.awaited).insert(id, tx);
        Lanes {
            shared: Arc::clone(&self.shared),
            id,
            rx,
        }
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut setups = Vec::with_capacity(MAX_PENDING);
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let accepted = Instant::now();
                let handle = match stream
                    .set_nonblocking(false)
                    .and_then(|()| stream.try_clone())
                {
                    Ok(h) => h,
                    Err(_) => {
                        shared.dropped.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                };
                let (key, evicted) = lock(&shared.pending).admit(peer.ip(), handle);
                if evicted {
                    shared.dropped.fetch_add(1, Ordering::Relaxed);
                }
                if !spawn_setup(shared, &mut setups, (stream, peer), key, accepted) {
                    lock(&shared.pending).finish(key);
                    shared.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                reap(&mut setups);
                std::thread::sleep(Duration::from_millis(5));
            }
            // A connection that went away before it was accepted, or too many open
            // files: wait a little and go on.
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Joins the set-up threads that have finished (so that they are gone, not just
/// done); the ones still running stay in `setups`.
fn reap(setups: &mut Vec<JoinHandle<()>>) {
    let mut i = 0;
    while i < setups.len() {
        if setups[i].is_finished() {
            let _ = setups.swap_remove(i).join();
        } else {
            i += 1;
        }
    }
}

/// Starts the set-up thread of connection `key` once fewer than [`MAX_PENDING`] are
/// alive (`setups`, joined as they finish): with as many pending connections as
/// threads, the one [`PendingTable::admit`] just closed to make room (or one that just
/// finished) is exiting, so the wait is short; it ends early if the acceptor stops.
/// `false` if the thread did not start.
fn spawn_setup(
    shared: &Arc<Shared>,
    setups: &mut Vec<JoinHandle<()>>,
    (stream, peer): (TcpStream, SocketAddr),
    key: u64,
    accepted: Instant,
) -> bool {
    loop {
        reap(setups);
        if setups.len() < MAX_PENDING {
            break;
        }
        if shared.stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let sh = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("sci-lane-setup".into())
        .spawn(move || sh.route(stream, peer, key, accepted));
    match spawned {
        Ok(h) => {
            setups.push(h);
            true
        }
        Err(_) => false,
    }
}

/// The further lanes of one session, awaited by an [`Acceptor`]; stops awaiting them
/// when dropped.
pub struct Lanes {
    shared: Arc<Shared>,
    id: SessionId,
    rx: Receiver<(u32, Channel)>,
}

impl fmt::Debug for Lanes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lanes").field("id", &self.id).finish()
    }
}

impl Lanes {
    /// The session's id.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// Lanes `1..=n` in order, waiting at most `wait` for all of them (then
    /// `TimedOut`). A lane index out of range or seen before is dropped.
    pub fn collect(self, n: usize, wait: Duration) -> Result<Vec<Channel>, NetError> {
        let deadline = Instant::now() + wait;
        let mut slots: Vec<Option<Channel>> = (0..n).map(|_| None).collect();
        let mut have = 0;
        while have < n {
            let left = deadline.saturating_duration_since(Instant::now());
            let (lane, ch) = self.rx.recv_timeout(left).map_err(|_| {
                NetError::new(
                    format!("waiting for lanes ({have} of {n} arrived)"),
                    io::Error::new(io::ErrorKind::TimedOut, "the peer opened too few lanes"),
                )
            })?;
            match slots.get_mut((lane as usize).wrapping_sub(1)) {
                Some(slot @ None) => {
                    *slot = Some(ch);
                    have += 1;
                }
                _ => {
                    self.shared.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Ok(slots.into_iter().flatten().collect())
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        lock(&self.shared.awaited).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preambles_round_trip() {
        let id = SessionId([5; 16]);
        assert_eq!(parse_preamble(&preamble(id, 3)), Some((id, 3)));
        let mut bad = preamble(id, 3);
        bad[0] = b'X';
        assert_eq!(parse_preamble(&bad), None);
        assert_ne!(SessionId::fresh().unwrap(), SessionId::fresh().unwrap());
        assert_eq!(SessionId([0xab; 16]).to_string(), "ab".repeat(16));
    }
}
