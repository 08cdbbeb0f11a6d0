//! `sci-run` processes that listen on `127.0.0.1:0`: the address the operating system
//! bound is read from the line `sci-run: listening on ADDR` that `sci-run` prints, so
//! tests never guess a free port (a guessed port can be taken by another process
//! between the guess and the bind).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The line prefix before the bound address.
pub const LISTENING: &str = "sci-run: listening on ";

/// A spawned listening process, its bound address, and its stderr being collected.
#[derive(Debug)]
pub struct Listening {
    /// The process.
    pub child: Child,
    /// The address it bound, e.g. `127.0.0.1:40123`.
    pub addr: String,
    stderr: JoinHandle<String>,
}

impl Listening {
    /// Spawns `cmd` (which must make `sci-run` listen, e.g. `--listen 127.0.0.1:0`)
    /// with stderr piped and waits (at most 20 s) for the address it prints.
    ///
    /// # Panics
    /// If it cannot be spawned or prints no address in time (its stderr is in the
    /// message).
    pub fn spawn(mut cmd: Command) -> Listening {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning the listening process");
        let err = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        let stderr = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(err).lines() {
                let line = line.unwrap_or_default();
                if let Some(a) = line.strip_prefix(LISTENING) {
                    let _ = tx.send(a.trim().to_string());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(addr) => Listening {
                child,
                addr,
                stderr,
            },
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the process printed no address: {}",
                    stderr.join().unwrap_or_default()
                );
            }
        }
    }

    /// Waits (at most `limit`) for the process to exit: whether it succeeded, and
    /// everything it wrote to stderr.
    ///
    /// # Panics
    /// If it is still running after `limit` (it is killed first).
    pub fn wait(mut self, limit: Duration) -> (bool, String) {
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().expect("waiting for the process") {
                return (st.success(), self.stderr.join().unwrap_or_default());
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "still running after {limit:?}: {}",
                    self.stderr.join().unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
