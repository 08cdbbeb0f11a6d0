//! `sci-keygen`: writes a TLS key and a self-signed certificate for `sci-run`.
//!
//! ```text
//! sci-keygen --out DIR [--name NAME]      # DIR/NAME.key (secret) and DIR/NAME.crt
//! ```
//!
//! Give `NAME.key` and `NAME.crt` to this party (`sci-run --key … --cert …`) and
//! `NAME.crt` to the peer (`sci-run --peer-cert …`); compare the printed fingerprint
//! with the one the peer's `sci-run` prints. The key is an ECDSA P-256 key (rcgen with
//! ring); the key file is created readable by its owner only. Existing files are not
//! overwritten. Exit status: 0 on success, 1 on any error.

use anyhow::{Context, Result, bail};
use clap::Parser;
use sci_runtime::net::tls;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "sci-keygen",
    version,
    about = "Write a TLS key and self-signed certificate for sci-run"
)]
struct Cli {
    /// Directory to write NAME.key and NAME.crt into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Base name of the files.
    #[arg(long, default_value = "sci")]
    name: String,
}

fn main() {
    if let Err(e) = run(&Cli::parse()) {
        eprintln!("sci-keygen: error: {e:#}");
        std::process::exit(1);
    }
}

/// Creates `path` (which must not exist) with `text`, readable by its owner only if
/// `secret`.
fn create(path: &Path, text: &str, secret: bool) -> Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

fn run(cli: &Cli) -> Result<()> {
    std::fs::create_dir_all(&cli.out)
        .with_context(|| format!("creating the directory {}", cli.out.display()))?;
    let key = cli.out.join(format!("{}.key", cli.name));
    let cert = cli.out.join(format!("{}.crt", cli.name));
    for p in [&key, &cert] {
        if p.exists() {
            bail!("{} exists: not overwriting it", p.display());
        }
    }
    let id = tls::keygen()?;
    create(&key, &id.key_pem, true)?;
    create(&cert, &id.cert_pem, false)?;
    println!("wrote {} (secret) and {}", key.display(), cert.display());
    println!("fingerprint {}", id.fingerprint);
    Ok(())
}
