//! `sci-run` processes that listen on `127.0.0.1:0`: the address the operating system
//! bound is read from the line `sci-run: listening on ADDR` that `sci-run` prints, so
//! tests never guess a free port (a guessed port can be taken by another process
//! between the guess and the bind).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{OnceLock, mpsc};
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

/// The path of a freshly built `sci-run`, for the workspace's end-to-end tests.
///
/// Cargo gives a test the path of a binary only for the binaries of its own package
/// (`CARGO_BIN_EXE_*`), and `sci-run` belongs to `sci-runtime`. So this builds it with
/// the cargo and profile the test kit was built with (`cargo build -p sci-cli --bin
/// sci-run`, a no-op when up to date, as under `cargo test --workspace`) and takes the
/// executable's path from cargo's JSON messages: a test never runs a stale binary and
/// does not depend on the target directory's layout. Built once per test process.
pub fn sci_run() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "sci-cli", "--bin", "sci-run"])
            .arg("--message-format=json");
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let out = cmd
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stderr(Stdio::inherit())
            .output()
            .expect("running cargo build");
        assert!(
            out.status.success(),
            "cargo build -p sci-cli --bin sci-run failed"
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "sci-run")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo reported the sci-run executable")
    })
}
