//! The container of a plan file: magic, version, the sections byte, the length-prefixed
//! public and secret parts, and the SHA-256 checksum (the layout is in the [`crate::plan`]
//! docs). It frames bytes; what the parts hold is `codec.rs`'s business.

use super::error::PlanError;
use sha2::{Digest, Sha256};

/// The first 8 bytes of every plan file.
pub const MAGIC: [u8; 8] = *b"SCI-PLAN";

/// The format version this build writes and reads.
///
/// History: 1, the first; 2, the backend (OT or HE with its BFV parameters) in the
/// public part and per instruction; 3, an output's `logits` flag (the input of a
/// dropped trailing Softmax); 4, the OT engine (IKNP or silent) in the public part.
pub const FORMAT_VERSION: u32 = 4;

const HEADER_LEN: usize = 8 + 4 + 1;
const CHECKSUM_LEN: usize = 32;

/// The file bytes of a public part and, unless `None` (a client view), a secret part.
/// Cost: one pass over the bytes (the checksum).
pub(super) fn seal(public: &[u8], secret: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(public.len() + 64);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.push(u8::from(secret.is_some()));
    out.extend_from_slice(&(public.len() as u64).to_le_bytes());
    out.extend_from_slice(public);
    if let Some(s) = secret {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    }
    let sum: [u8; 32] = Sha256::digest(&out).into();
    out.extend_from_slice(&sum);
    out
}

/// The public part and the secret part (if any) of file `bytes`, after checking, in
/// order, length, magic, version, the sections byte, lengths and the checksum.
pub(super) fn open(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), PlanError> {
    if bytes.len() < 8 {
        return Err(PlanError::Truncated { what: "header" });
    }
    if bytes[..8] != MAGIC {
        return Err(PlanError::BadMagic);
    }
    let mut r = Reader { bytes, pos: 8 };
    let version = u32::from_le_bytes(r.array("format version")?);
    if version > FORMAT_VERSION {
        return Err(PlanError::NewerVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if version < FORMAT_VERSION {
        return Err(PlanError::OldVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if bytes.len() < HEADER_LEN + 8 + CHECKSUM_LEN {
        return Err(PlanError::Truncated { what: "header" });
    }
    let sections = r.array::<1>("sections")?[0];
    let public = r.section("public part")?;
    let secret = match sections {
        0 => None,
        1 => Some(r.section("secret part")?),
        n => {
            return Err(PlanError::Invalid {
                index: 0,
                reason: format!("unknown sections byte {n}"),
            });
        }
    };
    let body_end = r.pos;
    let sum: [u8; 32] = r.array("checksum")?;
    if bytes.len() > r.pos {
        return Err(PlanError::Trailing(bytes.len() - r.pos));
    }
    let want: [u8; 32] = Sha256::digest(&bytes[..body_end]).into();
    if sum != want {
        return Err(PlanError::Checksum);
    }
    Ok((public, secret))
}

/// SHA-256("sci-plan-public\0" ‖ FORMAT_VERSION ‖ public part).
pub(super) fn public_hash(public: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"sci-plan-public\0");
    h.update(FORMAT_VERSION.to_le_bytes());
    h.update(public);
    h.finalize().into()
}

/// Reads the container's fields in order.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], PlanError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(PlanError::Truncated { what })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], PlanError> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn section(&mut self, what: &'static str) -> Result<&'a [u8], PlanError> {
        let len = u64::from_le_bytes(self.array(what)?);
        let len = usize::try_from(len).map_err(|_| PlanError::Truncated { what })?;
        self.take(len, what)
    }
}
