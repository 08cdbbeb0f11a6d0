//! TLS 1.3 on every lane, with pinned peer certificates (no certificate authority).
//!
//! Each party has a key and a self-signed certificate ([`keygen`], the `sci-keygen`
//! binary) and is given the other party's certificate (`--peer-cert`): SSH-style known
//! keys. A handshake succeeds only if the peer presents exactly that certificate (byte
//! for byte) and proves it holds its key; both directions are checked (mutual TLS), so
//! neither side talks to anyone but its pinned peer. The listening side of a lane is
//! the TLS server, the connecting side the TLS client; the server name is not used.
//!
//! The crypto backend is *ring* ([`rustls::crypto::ring`]): it builds with a C compiler
//! alone, whereas rustls' default backend, aws-lc-rs, also needs CMake. Only TLS 1.3 is
//! offered. The channel counters count the plaintext, so byte and round counts are the
//! same with and without TLS.
//!
//! Errors: a failed authentication is reported with [`io::ErrorKind::PermissionDenied`]
//! and a message saying which side rejected which certificate ([`explain`]).

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    AlertDescription, CertificateError, ClientConfig, DigitallySignedStruct, DistinguishedName,
    ServerConfig, SignatureScheme,
};
use sha2::{Digest, Sha256};

/// Why TLS could not be set up from the given files.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A key or certificate file could not be read or parsed.
    #[error("{path}: {what}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        what: String,
    },
    /// rustls refused the configuration (e.g. a key that does not match the certificate).
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
    /// Generating a key or certificate failed.
    #[error("generating the key: {0}")]
    Keygen(#[from] rcgen::Error),
}

/// A party's TLS identity and its pinned peer: everything needed to secure its lanes.
pub struct Tls {
    server: Arc<ServerConfig>,
    client: Arc<ClientConfig>,
    ours: String,
    peer: String,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("ours", &self.ours)
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

/// The SHA-256 fingerprint of a certificate (hex, colon-separated pairs), as
/// `sci-keygen` prints it.
pub fn fingerprint(cert: &[u8]) -> String {
    let d = Sha256::digest(cert);
    d.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A freshly generated identity ([`keygen`]).
#[derive(Clone, Debug)]
pub struct Generated {
    /// The private key, PEM (secret).
    pub key_pem: String,
    /// The self-signed certificate, PEM.
    pub cert_pem: String,
    /// The certificate's [`fingerprint`].
    pub fingerprint: String,
}

/// A fresh ECDSA P-256 key and a self-signed certificate for it. Costs one key
/// generation and one signature.
pub fn keygen() -> Result<Generated, TlsError> {
    let ck = rcgen::generate_simple_self_signed(vec!["sci".to_string()])?;
    Ok(Generated {
        key_pem: ck.signing_key.serialize_pem(),
        cert_pem: ck.cert.pem(),
        fingerprint: fingerprint(ck.cert.der()),
    })
}

fn read_cert(path: &Path) -> Result<CertificateDer<'static>, TlsError> {
    CertificateDer::from_pem_file(path).map_err(|e| TlsError::File {
        path: path.display().to_string(),
        what: format!("not a PEM certificate ({e})"),
    })
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| TlsError::File {
        path: path.display().to_string(),
        what: format!("not a PEM private key ({e})"),
    })
}

/// Accepts exactly one certificate, checking the handshake signatures with the
/// provider's algorithms. Serves both as the client's and the server's verifier.
#[derive(Debug)]
struct Pinned {
    cert: CertificateDer<'static>,
    algs: WebPkiSupportedAlgorithms,
}

impl Pinned {
    fn check(&self, presented: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        if presented.as_ref() == self.cert.as_ref() {
            Ok(())
        } else {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn tls13(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algs)
    }
}

/// Only TLS 1.3 is offered, so a TLS 1.2 signature is never asked for.
fn no_tls12() -> Result<HandshakeSignatureValid, rustls::Error> {
    Err(rustls::Error::General("TLS 1.2 is not offered".into()))
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.check(end_entity)
            .map(|()| ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        no_tls12()
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

impl ClientCertVerifier for Pinned {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.check(end_entity)
            .map(|()| ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        no_tls12()
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

impl Tls {
    /// The identity in `key`/`cert` (PEM files, as [`keygen`] writes them) pinning the
    /// peer certificate in `peer_cert`. Fails if a file is unreadable or the key does
    /// not match the certificate.
    pub fn from_files(key: &Path, cert: &Path, peer_cert: &Path) -> Result<Tls, TlsError> {
        let key = read_key(key)?;
        let cert = read_cert(cert)?;
        let peer = read_cert(peer_cert)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let pinned = Arc::new(Pinned {
            cert: peer.clone(),
            algs: provider.signature_verification_algorithms,
        });
        let versions = &[&rustls::version::TLS13];
        let server = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(versions)?
            .with_client_cert_verifier(pinned.clone())
            .with_single_cert(vec![cert.clone()], key.clone_key())?;
        let client = ClientConfig::builder_with_provider(provider as Arc<CryptoProvider>)
            .with_protocol_versions(versions)?
            .dangerous()
            .with_custom_certificate_verifier(pinned)
            .with_client_auth_cert(vec![cert.clone()], key)?;
        Ok(Tls {
            server: Arc::new(server),
            client: Arc::new(client),
            ours: fingerprint(&cert),
            peer: fingerprint(&peer),
        })
    }

    /// The fingerprint of this party's certificate.
    pub fn fingerprint(&self) -> &str {
        &self.ours
    }

    /// The fingerprint of the pinned peer certificate.
    pub fn peer_fingerprint(&self) -> &str {
        &self.peer
    }

    /// A server-side connection (for the listening side of a lane).
    pub fn server(&self) -> io::Result<rustls::ServerConnection> {
        rustls::ServerConnection::new(Arc::clone(&self.server)).map_err(io::Error::other)
    }

    /// A client-side connection (for the connecting side of a lane).
    pub fn client(&self) -> io::Result<rustls::ClientConnection> {
        let name = ServerName::try_from("sci").map_err(io::Error::other)?;
        rustls::ClientConnection::new(Arc::clone(&self.client), name).map_err(io::Error::other)
    }
}

/// Turns a TLS failure inside an I/O error into a message for the user; an
/// authentication failure gets the kind [`io::ErrorKind::PermissionDenied`]. Other
/// errors are returned unchanged.
pub fn explain(e: io::Error) -> io::Error {
    let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
        return e;
    };
    let denied = |m: &str| io::Error::new(io::ErrorKind::PermissionDenied, format!("TLS: {m}"));
    match tls {
        rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented => denied(
            "the peer's certificate is not the one pinned by --peer-cert (wrong peer, or wrong --peer-cert)",
        ),
        rustls::Error::AlertReceived(
            AlertDescription::BadCertificate
            | AlertDescription::CertificateUnknown
            | AlertDescription::CertificateRequired
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::DecryptError
            | AlertDescription::AccessDenied,
        ) => denied(
            "the peer rejected this party's certificate (its --peer-cert is not this party's certificate)",
        ),
        rustls::Error::InvalidMessage(_) => {
            denied("the peer does not speak TLS (give it --key, --cert and --peer-cert too)")
        }
        other => io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_load_and_mismatched_keys_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str| {
            let g = keygen().unwrap();
            let kp = dir.path().join(format!("{name}.key"));
            let cp = dir.path().join(format!("{name}.crt"));
            std::fs::write(&kp, g.key_pem).unwrap();
            std::fs::write(&cp, g.cert_pem).unwrap();
            (kp, cp, g.fingerprint)
        };
        let (ka, ca, _) = write("a");
        let (kb, cb, fb) = write("b");
        let t = Tls::from_files(&ka, &ca, &cb).unwrap();
        assert_eq!(t.peer_fingerprint(), fb);
        assert_eq!(t.fingerprint().len(), 32 * 3 - 1);
        // b's key with a's certificate.
        assert!(matches!(
            Tls::from_files(&kb, &ca, &cb),
            Err(TlsError::Config(_))
        ));
        // A certificate where the key should be.
        assert!(matches!(
            Tls::from_files(&ca, &ca, &cb),
            Err(TlsError::File { .. })
        ));
    }
}
