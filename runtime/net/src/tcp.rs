//! TCP channels: `TCP_NODELAY`, large buffered reads and writes, read and
//! write timeouts, a per-connection deadline, optional TLS 1.3 ([`super::tls`]),
//! optional link emulation ([`super::emulate`]), connect with retry, and `T`
//! connections per party pair.
//!
//! The first four bytes on each connection opened by [`connect_many`] are the
//! connection's index (u32, little-endian), so [`accept_many`] pairs the
//! connections in the same order on both sides whatever order the kernel
//! accepts them in. These bytes are not counted in the channel statistics.
//! (`sci-run` opens its lanes through [`super::session`] instead.)

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustls::{ConnectionCommon, SideData, StreamOwned};

use super::emulate::{self, Link};
use super::tls::{self, Tls};
use super::{Channel, Incoming, NetError, Outgoing, Transport};

/// Settings of TCP channels.
#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// Longest wait for a read (and for a write to make progress); `None`:
    /// forever.
    pub timeout: Option<Duration>,
    /// How long [`connect`] retries a refused connection (the peer may not be
    /// listening yet) and how long [`accept`] waits.
    pub connect_timeout: Duration,
    /// Size of the read and write buffers, in bytes.
    pub buffer: usize,
    /// Longest life of a connection: reads and writes fail with `TimedOut` this long
    /// after it was opened (a per-session deadline, besides the per-read `timeout`);
    /// `None`: no limit.
    pub session_timeout: Option<Duration>,
    /// The listening side's deadline for a connection's set-up, from its acceptance:
    /// TLS handshake, lane preamble and, on a session's lane 0, the hello
    /// ([`super::session`]); one absolute deadline, not a per-read timeout, so that a
    /// peer dripping bytes cannot hold a connection open longer.
    pub setup_timeout: Duration,
    /// TLS 1.3 with pinned peer certificates on every connection ([`super::tls`]);
    /// `None`: plain TCP.
    pub tls: Option<Arc<Tls>>,
    /// Emulate a LAN or WAN on this party's sending ([`super::emulate`]): every
    /// connection made with this configuration paces and delays its sending on this
    /// one link (plain TCP only). `None`: the real link.
    pub link: Option<Link>,
}

impl TcpConfig {
    /// The same settings with an idle link of its own (if emulating), for the second
    /// party of a process that runs both: each party paces its own direction.
    pub fn with_fresh_link(&self) -> TcpConfig {
        TcpConfig {
            link: self.link.as_ref().map(Link::fresh),
            ..self.clone()
        }
    }
}

impl Default for TcpConfig {
    /// 60 s I/O timeout, 30 s to connect, 5 s to set a connection up, 1 MiB buffers,
    /// no session limit, plain TCP, no emulation.
    fn default() -> Self {
        TcpConfig {
            timeout: Some(Duration::from_secs(60)),
            connect_timeout: Duration::from_secs(30),
            buffer: 1 << 20,
            session_timeout: None,
            setup_timeout: Duration::from_secs(5),
            tls: None,
            link: None,
        }
    }
}

/// Which end of a connection this side is (the TLS server or client).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Accepted the connection.
    Listening,
    /// Opened the connection.
    Connecting,
}

/// The clock of one connection, shared by its reading and writing handles: the
/// per-read timeout, the session deadline, the set-up deadline (until lifted) and the
/// socket timeout last applied (the socket's options are shared by both handles).
#[derive(Debug)]
struct Clock {
    timeout: Option<Duration>,
    session: Option<Instant>,
    setup: Option<Instant>,
    applied: Option<Duration>,
}

/// The set-up deadline of one connection ([`transport_until`]): reads and writes fail
/// with `TimedOut` once it has passed, until [`SetupDeadline::lift`] is called.
#[derive(Clone, Debug)]
pub struct SetupDeadline(Arc<Mutex<Clock>>);

impl SetupDeadline {
    /// Lifts the set-up deadline (set-up is done): from now on only the per-read
    /// timeout and the session deadline apply.
    pub fn lift(&self) {
        lock(&self.0).setup = None;
    }
}

fn lock(m: &Mutex<Clock>) -> MutexGuard<'_, Clock> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A socket with deadlines: each read or write waits at most until the earlier of the
/// session and set-up deadlines (and at most the per-read timeout), and fails with
/// `TimedOut` once one has passed.
struct Sock {
    s: TcpStream,
    clock: Arc<Mutex<Clock>>,
}

impl Sock {
    fn new(s: TcpStream, cfg: &TcpConfig, setup: Option<Instant>) -> Sock {
        let clock = Clock {
            timeout: cfg.timeout,
            session: cfg.session_timeout.map(|d| Instant::now() + d),
            setup,
            // What `configure` set.
            applied: cfg.timeout,
        };
        Sock {
            s,
            clock: Arc::new(Mutex::new(clock)),
        }
    }

    fn try_clone(&self) -> io::Result<Sock> {
        Ok(Sock {
            s: self.s.try_clone()?,
            clock: Arc::clone(&self.clock),
        })
    }

    /// Sets the socket's timeouts to the time left before the nearer deadline (or back
    /// to the per-read timeout), if that changes them.
    fn arm(&self) -> io::Result<()> {
        let mut c = lock(&self.clock);
        let (deadline, what) = match (c.session, c.setup) {
            (Some(s), Some(u)) if u < s => (Some(u), "set-up"),
            (None, Some(u)) => (Some(u), "set-up"),
            (s, _) => (s, "session"),
        };
        let want = match deadline {
            None => c.timeout,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("the {what} deadline has passed"),
                    ));
                }
                match c.timeout {
                    Some(t) if t <= left => Some(t),
                    _ => Some(left),
                }
            }
        };
        if want != c.applied {
            self.s.set_read_timeout(want)?;
            self.s.set_write_timeout(want)?;
            c.applied = want;
        }
        Ok(())
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.arm()?;
        self.s.read(buf)
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.arm()?;
        self.s.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.s.flush()
    }
}

/// The sending half of a connection.
struct TcpWriter(BufWriter<Sock>);

impl Drop for TcpWriter {
    fn drop(&mut self) {
        // Best effort: send what is buffered, then tell the peer we are gone.
        let _ = Write::flush(&mut self.0);
        let _ = self.0.get_ref().s.shutdown(Shutdown::Both);
    }
}

struct TcpTransport {
    w: TcpWriter,
    r: BufReader<Sock>,
}

/// Maps the platform's timeout kind (`WouldBlock` on Unix) to `TimedOut`, a reset
/// connection to `UnexpectedEof` (a vanished peer) and TLS failures to messages.
fn io_kind(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock => io::Error::new(io::ErrorKind::TimedOut, "timed out"),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
            io::Error::new(io::ErrorKind::UnexpectedEof, e)
        }
        _ => tls::explain(e),
    }
}

impl Outgoing for TcpWriter {
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        Write::write_all(&mut self.0, data).map_err(io_kind)
    }

    fn flush(&mut self) -> io::Result<()> {
        Write::flush(&mut self.0).map_err(io_kind)
    }
}

impl Incoming for BufReader<Sock> {
    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        Read::read_exact(self, buf).map_err(io_kind)
    }
}

/// Reads and writes go through two handles of the socket: full duplex.
impl Transport for TcpTransport {
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        Outgoing::write_all(&mut self.w, data)
    }

    fn flush(&mut self) -> io::Result<()> {
        Outgoing::flush(&mut self.w)
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        Incoming::read_exact(&mut self.r, buf)
    }

    fn halves(&mut self) -> Option<(&mut dyn Outgoing, &mut dyn Incoming)> {
        Some((&mut self.w, &mut self.r))
    }
}

/// A TLS stream; writes are collected (up to the buffer size) and encrypted on flush,
/// so that many small sends make few records.
struct TlsTransport<C> {
    s: StreamOwned<C, Sock>,
    wbuf: Vec<u8>,
    cap: usize,
}

impl<C, S> TlsTransport<C>
where
    C: DerefMut + Deref<Target = ConnectionCommon<S>>,
    S: SideData,
{
    /// Completes the TLS handshake (this side's part of it). On failure rustls has
    /// written its alert; this side then [`linger`]s so the peer can read it.
    fn new(mut conn: C, mut sock: Sock, cap: usize) -> io::Result<Self> {
        while conn.is_handshaking() {
            if let Err(e) = conn.complete_io(&mut sock) {
                linger(&sock.s);
                return Err(e);
            }
        }
        Ok(TlsTransport {
            s: StreamOwned::new(conn, sock),
            wbuf: Vec::new(),
            cap,
        })
    }

    fn push(&mut self) -> io::Result<()> {
        if !self.wbuf.is_empty() {
            self.s.write_all(&self.wbuf)?;
            self.wbuf.clear();
        }
        Ok(())
    }
}

/// How long a side that failed a TLS handshake keeps reading before it closes.
const LINGER: Duration = Duration::from_millis(500);

/// Closes this side's writing and reads what the peer still sends (at most
/// [`LINGER`]), so that closing the socket does not reset the connection: a reset
/// can destroy the alert just written before the peer has read it (the peer, having
/// finished its part of the handshake, may already be sending its first message).
fn linger(s: &TcpStream) {
    let _ = s.shutdown(Shutdown::Write);
    let deadline = Instant::now() + LINGER;
    let mut buf = [0u8; 4096];
    let mut r = s;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

impl<C> Drop for TlsTransport<C> {
    fn drop(&mut self) {
        let _ = self.s.sock.s.shutdown(Shutdown::Both);
    }
}

impl<C, S> Transport for TlsTransport<C>
where
    C: DerefMut + Deref<Target = ConnectionCommon<S>> + Send,
    S: SideData,
{
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.wbuf.extend_from_slice(data);
        if self.wbuf.len() >= self.cap {
            self.push().map_err(io_kind)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.push().and_then(|()| self.s.flush()).map_err(io_kind)
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.s.read_exact(buf).map_err(io_kind)
    }
}

fn configure(stream: &TcpStream, cfg: &TcpConfig) -> io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(cfg.timeout)?;
    stream.set_write_timeout(cfg.timeout)?;
    Ok(())
}

/// The transport over a connected stream: plain, or TLS (handshake done) if
/// `cfg.tls` is set, with this side as the TLS server if it is the listening `end`;
/// its sending emulated on `cfg.link` if set (plain TCP only).
pub fn transport(
    stream: TcpStream,
    end: End,
    cfg: &TcpConfig,
) -> Result<Box<dyn Transport>, NetError> {
    transport_with(stream, end, cfg, None).map(|(t, _)| t)
}

/// As [`transport`], with every read and write (the TLS handshake's too) failing once
/// `setup` has passed, until the deadline returned is lifted: one absolute deadline
/// for a connection's set-up, however slowly its peer sends.
pub fn transport_until(
    stream: TcpStream,
    end: End,
    cfg: &TcpConfig,
    setup: Instant,
) -> Result<(Box<dyn Transport>, SetupDeadline), NetError> {
    transport_with(stream, end, cfg, Some(setup))
}

fn transport_with(
    stream: TcpStream,
    end: End,
    cfg: &TcpConfig,
    setup: Option<Instant>,
) -> Result<(Box<dyn Transport>, SetupDeadline), NetError> {
    configure(&stream, cfg).map_err(|e| NetError::new("configuring TCP socket", e))?;
    let sock = Sock::new(stream, cfg, setup);
    let deadline = SetupDeadline(Arc::clone(&sock.clock));
    let t = transport_over(sock, end, cfg)?;
    Ok((t, deadline))
}

fn transport_over(sock: Sock, end: End, cfg: &TcpConfig) -> Result<Box<dyn Transport>, NetError> {
    let Some(tls) = &cfg.tls else {
        let r = sock
            .try_clone()
            .map_err(|e| NetError::new("cloning TCP socket", e))?;
        let w = TcpWriter(BufWriter::with_capacity(cfg.buffer, sock));
        let r = BufReader::with_capacity(cfg.buffer, r);
        return match &cfg.link {
            None => Ok(Box::new(TcpTransport { w, r })),
            Some(link) => emulate::wrap(Box::new(w), Box::new(r), link)
                .map_err(|e| NetError::new("starting the link emulator", e)),
        };
    };
    if cfg.link.is_some() {
        return Err(NetError::new(
            "emulating a link",
            io::Error::new(
                io::ErrorKind::Unsupported,
                "the link emulator runs over plain TCP only, not TLS",
            ),
        ));
    }
    let ctx = |e: io::Error| {
        let e = match e.kind() {
            io::ErrorKind::UnexpectedEof => io::Error::new(
                io::ErrorKind::PermissionDenied,
                "TLS: the peer closed the connection during the handshake (it may have \
                 rejected this party's certificate: is its --peer-cert this party's certificate?)",
            ),
            _ => io_kind(e),
        };
        NetError::new("TLS handshake", e)
    };
    Ok(match end {
        End::Listening => {
            Box::new(TlsTransport::new(tls.server().map_err(ctx)?, sock, cfg.buffer).map_err(ctx)?)
        }
        End::Connecting => {
            Box::new(TlsTransport::new(tls.client().map_err(ctx)?, sock, cfg.buffer).map_err(ctx)?)
        }
    })
}

/// Wraps a connected stream into a [`Channel`] (see [`transport`]).
pub fn channel(stream: TcpStream, end: End, cfg: &TcpConfig) -> Result<Channel, NetError> {
    Ok(Channel::new(transport(stream, end, cfg)?))
}

fn resolve(addr: impl ToSocketAddrs) -> Result<Vec<SocketAddr>, NetError> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| NetError::new("resolving address", e))?
        .collect();
    if addrs.is_empty() {
        return Err(NetError::new(
            "resolving address",
            io::Error::new(io::ErrorKind::InvalidInput, "no address"),
        ));
    }
    Ok(addrs)
}

/// Opens a raw connection, retrying refused connections until
/// `cfg.connect_timeout` has passed.
fn connect_stream(addrs: &[SocketAddr], cfg: &TcpConfig) -> Result<TcpStream, NetError> {
    let deadline = Instant::now() + cfg.connect_timeout;
    loop {
        let mut last = None;
        for a in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            match TcpStream::connect_timeout(a, left.max(Duration::from_millis(1))) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        let e = last.unwrap_or_else(|| io::Error::from(io::ErrorKind::InvalidInput));
        let retry = matches!(
            e.kind(),
            io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
        );
        if !retry || Instant::now() >= deadline {
            return Err(NetError::new(format!("connecting to {}", addrs[0]), e));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Connects to a listening peer (retrying while it is not yet listening).
pub fn connect(addr: impl ToSocketAddrs, cfg: &TcpConfig) -> Result<Channel, NetError> {
    Ok(Channel::new(connect_transport(addr, cfg)?))
}

/// Like [`connect`], returning the transport (for bytes sent before the counted
/// channel starts, such as a lane's preamble).
pub fn connect_transport(
    addr: impl ToSocketAddrs,
    cfg: &TcpConfig,
) -> Result<Box<dyn Transport>, NetError> {
    let addrs = resolve(addr)?;
    transport(connect_stream(&addrs, cfg)?, End::Connecting, cfg)
}

/// Whether every address `addr` resolves to is a loopback address (plain TCP to or from
/// any other address is refused unless the user allows it: `sci-run
/// --insecure-plaintext`, the Python package's `insecure_plaintext=True`).
pub fn is_loopback(addr: &str) -> Result<bool, NetError> {
    let addrs: Vec<_> = addr
        .to_socket_addrs()
        .map_err(|e| NetError::new(format!("resolving {addr}"), e))?
        .collect();
    Ok(addrs.iter().all(|a| a.ip().is_loopback()))
}

/// Binds a listener (use port 0 for an ephemeral port, then `local_addr`).
pub fn listen(addr: impl ToSocketAddrs) -> Result<TcpListener, NetError> {
    TcpListener::bind(addr).map_err(|e| NetError::new("binding listener", e))
}

/// Accepts one raw connection, waiting at most `cfg.connect_timeout`.
fn accept_stream(listener: &TcpListener, cfg: &TcpConfig) -> Result<TcpStream, NetError> {
    let ctx = |e| NetError::new("accepting connection", e);
    listener.set_nonblocking(true).map_err(ctx)?;
    let deadline = Instant::now() + cfg.connect_timeout;
    let res = loop {
        match listener.accept() {
            Ok((s, _)) => break Ok(s),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    break Err(io::Error::new(io::ErrorKind::TimedOut, "no peer connected"));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => break Err(e),
        }
    };
    listener.set_nonblocking(false).map_err(ctx)?;
    let s = res.map_err(ctx)?;
    s.set_nonblocking(false).map_err(ctx)?;
    Ok(s)
}

/// Accepts one peer connection (waiting at most `cfg.connect_timeout`).
pub fn accept(listener: &TcpListener, cfg: &TcpConfig) -> Result<Channel, NetError> {
    channel(accept_stream(listener, cfg)?, End::Listening, cfg)
}

/// Opens `t` connections to a peer running [`accept_many`] with the same `t`;
/// channel `i` of each side is connected to channel `i` of the other. (A raw set of
/// lanes, for benchmarks: `sci-run` opens the lanes of a session with
/// [`super::session`], which authenticates them.)
pub fn connect_many(
    addr: impl ToSocketAddrs,
    t: usize,
    cfg: &TcpConfig,
) -> Result<Vec<Channel>, NetError> {
    let addrs = resolve(addr)?;
    (0..t)
        .map(|i| {
            let mut tr = transport(connect_stream(&addrs, cfg)?, End::Connecting, cfg)?;
            tr.write_all(&(i as u32).to_le_bytes())
                .and_then(|()| tr.flush())
                .map_err(|e| NetError::new("sending connection index", e))?;
            Ok(Channel::new(tr))
        })
        .collect()
}

/// Accepts the `t` connections of a peer running [`connect_many`], returned
/// in the peer's order.
pub fn accept_many(
    listener: &TcpListener,
    t: usize,
    cfg: &TcpConfig,
) -> Result<Vec<Channel>, NetError> {
    let mut slots: Vec<Option<Channel>> = (0..t).map(|_| None).collect();
    for _ in 0..t {
        let mut tr = transport(accept_stream(listener, cfg)?, End::Listening, cfg)?;
        let mut idx = [0u8; 4];
        tr.read_exact(&mut idx)
            .map_err(|e| NetError::new("receiving connection index", e))?;
        let i = u32::from_le_bytes(idx) as usize;
        let bad = |m: &str| {
            NetError::new(
                "receiving connection index",
                io::Error::new(io::ErrorKind::InvalidData, format!("{m} {i}")),
            )
        };
        match slots.get_mut(i) {
            Some(slot @ None) => *slot = Some(Channel::new(tr)),
            Some(Some(_)) => return Err(bad("duplicate connection index")),
            None => return Err(bad("connection index out of range:")),
        }
    }
    slots
        .into_iter()
        .map(|c| {
            c.ok_or_else(|| {
                NetError::new(
                    "accepting connections",
                    io::Error::new(io::ErrorKind::InvalidData, "missing connection"),
                )
            })
        })
        .collect()
}

/// `t` connected TCP channel pairs over 127.0.0.1 on an ephemeral port, as
/// `(party 0's channels, party 1's)`. For tests and the benchmark.
pub fn loopback_pairs(t: usize, cfg: &TcpConfig) -> Result<(Vec<Channel>, Vec<Channel>), NetError> {
    let listener = listen("127.0.0.1:0")?;
    let addr = listener
        .local_addr()
        .map_err(|e| NetError::new("reading listener address", e))?;
    // Each party sends on a link of its own (if emulating).
    let ccfg = cfg.with_fresh_link();
    std::thread::scope(|s| {
        let acc = s.spawn(|| accept_many(&listener, t, cfg));
        let con = connect_many(addr, t, &ccfg);
        let acc = acc.join().unwrap_or_else(|_| {
            Err(NetError::new(
                "accepting connections",
                io::Error::other("accept thread panicked"),
            ))
        });
        Ok((acc?, con?))
    })
}

/// One connected TCP channel pair over 127.0.0.1 (see [`loopback_pairs`]).
pub fn loopback_pair(cfg: &TcpConfig) -> Result<(Channel, Channel), NetError> {
    let (mut a, mut b) = loopback_pairs(1, cfg)?;
    match (a.pop(), b.pop()) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(NetError::new(
            "opening loopback pair",
            io::Error::other("no connection"),
        )),
    }
}
