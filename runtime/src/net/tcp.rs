//! TCP channels: `TCP_NODELAY`, large buffered reads and writes, read and
//! write timeouts, connect with retry, and `T` connections per party pair.
//!
//! The first four bytes on each connection opened by [`connect_many`] are the
//! connection's index (u32, little-endian), so [`accept_many`] pairs the
//! connections in the same order on both sides whatever order the kernel
//! accepts them in. These bytes are not counted in the channel statistics.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

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
}

impl Default for TcpConfig {
    /// 60 s I/O timeout, 30 s to connect, 1 MiB buffers.
    fn default() -> Self {
        TcpConfig {
            timeout: Some(Duration::from_secs(60)),
            connect_timeout: Duration::from_secs(30),
            buffer: 1 << 20,
        }
    }
}

struct TcpTransport {
    w: BufWriter<TcpStream>,
    r: BufReader<TcpStream>,
}

impl Drop for TcpTransport {
    fn drop(&mut self) {
        // Best effort: send what is buffered, then tell the peer we are gone.
        let _ = Write::flush(&mut self.w);
        let _ = self.w.get_ref().shutdown(Shutdown::Both);
    }
}

/// Maps the platform's timeout kinds (`WouldBlock` on Unix) to `TimedOut`.
fn timeout_kind(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            io::Error::new(io::ErrorKind::TimedOut, "timed out")
        }
        _ => e,
    }
}

impl Outgoing for BufWriter<TcpStream> {
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        Write::write_all(self, data).map_err(timeout_kind)
    }

    fn flush(&mut self) -> io::Result<()> {
        Write::flush(self).map_err(timeout_kind)
    }
}

impl Incoming for BufReader<TcpStream> {
    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        Read::read_exact(self, buf).map_err(|e| match e.kind() {
            // A reset connection is a vanished peer too.
            io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
                io::Error::new(io::ErrorKind::UnexpectedEof, e)
            }
            _ => timeout_kind(e),
        })
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

fn configure(stream: &TcpStream, cfg: &TcpConfig) -> io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(cfg.timeout)?;
    stream.set_write_timeout(cfg.timeout)?;
    Ok(())
}

/// Wraps a connected stream into a [`Channel`].
pub fn channel(stream: TcpStream, cfg: &TcpConfig) -> Result<Channel, NetError> {
    configure(&stream, cfg).map_err(|e| NetError::new("configuring TCP socket", e))?;
    let r = stream
        .try_clone()
        .map_err(|e| NetError::new("cloning TCP socket", e))?;
    Ok(Channel::new(Box::new(TcpTransport {
        w: BufWriter::with_capacity(cfg.buffer, stream),
        r: BufReader::with_capacity(cfg.buffer, r),
    })))
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
    let addrs = resolve(addr)?;
    channel(connect_stream(&addrs, cfg)?, cfg)
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
    channel(accept_stream(listener, cfg)?, cfg)
}

/// Opens `t` connections to a peer running [`accept_many`] with the same `t`;
/// channel `i` of each side is connected to channel `i` of the other.
pub fn connect_many(
    addr: impl ToSocketAddrs,
    t: usize,
    cfg: &TcpConfig,
) -> Result<Vec<Channel>, NetError> {
    let addrs = resolve(addr)?;
    (0..t)
        .map(|i| {
            let mut s = connect_stream(&addrs, cfg)?;
            configure(&s, cfg).map_err(|e| NetError::new("configuring TCP socket", e))?;
            s.write_all(&(i as u32).to_le_bytes())
                .map_err(|e| NetError::new("sending connection index", e))?;
            channel(s, cfg)
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
        let mut s = accept_stream(listener, cfg)?;
        configure(&s, cfg).map_err(|e| NetError::new("configuring TCP socket", e))?;
        let mut idx = [0u8; 4];
        s.read_exact(&mut idx)
            .map_err(|e| NetError::new("receiving connection index", timeout_kind(e)))?;
        let i = u32::from_le_bytes(idx) as usize;
        let bad = |m: &str| {
            NetError::new(
                "receiving connection index",
                io::Error::new(io::ErrorKind::InvalidData, format!("{m} {i}")),
            )
        };
        match slots.get_mut(i) {
            Some(slot @ None) => *slot = Some(channel(s, cfg)?),
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
    std::thread::scope(|s| {
        let acc = s.spawn(|| accept_many(&listener, t, cfg));
        let con = connect_many(addr, t, cfg);
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
