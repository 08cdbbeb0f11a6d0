//! Labelled data sets for accuracy measurements and autotuning: an `.npz` file
//! (as written by `numpy.savez` or `numpy.savez_compressed`) or a directory, each
//! holding `x` (inputs, first axis = sample) and `y` (integer labels).
//!
//! `.npz` is a ZIP archive of `.npy` members. The reader here handles what
//! numpy writes: stored or deflated members (deflate by `miniz_oxide`), ZIP64
//! sizes and offsets, CRC-32 checked; every offset and length is checked against
//! the file, so a corrupt archive is an error, never a panic.

use std::path::{Path, PathBuf};

use crate::npy::{Array, Elements, NpyError};
use crate::tensor::{Tensor, TensorError};

/// Why a data set cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The `.npz` archive is malformed.
    #[error("{path}: malformed .npz archive: {msg}")]
    Zip {
        /// The archive.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// A member array is malformed.
    #[error("{path}: array '{name}': {source}")]
    Npy {
        /// The file.
        path: PathBuf,
        /// The array (`x` or `y`).
        name: String,
        /// The problem.
        source: NpyError,
    },
    /// The arrays are inconsistent (sample counts, label type, ...).
    #[error("{path}: {msg}")]
    Invalid {
        /// The data set.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
}

/// A labelled data set: `x` has one sample per index of its first axis, `y` one
/// integer label per sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The inputs, `[N, ...]`.
    pub x: Array,
    /// The labels, `N` integers.
    pub y: Vec<i64>,
}

impl Dataset {
    /// Reads `path`: a directory with `x.npy` and `y.npy`, or an `.npz` archive with
    /// members `x` and `y`.
    pub fn load(path: impl AsRef<Path>) -> Result<Dataset, DatasetError> {
        let path = path.as_ref();
        let (x, y) = if path.is_dir() {
            let read = |name: &str| {
                let file = path.join(format!("{name}.npy"));
                Array::read(&file).map_err(|source| DatasetError::Npy {
                    path: file,
                    name: name.into(),
                    source,
                })
            };
            (read("x")?, read("y")?)
        } else {
            let bytes = std::fs::read(path).map_err(|source| DatasetError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            let members = npz_members(&bytes).map_err(|msg| DatasetError::Zip {
                path: path.to_path_buf(),
                msg,
            })?;
            let get = |name: &str| {
                let data = members
                    .iter()
                    .find(|(n, _)| n == &format!("{name}.npy"))
                    .map(|(_, d)| d)
                    .ok_or_else(|| DatasetError::Invalid {
                        path: path.to_path_buf(),
                        msg: format!(
                            "the archive has no array '{name}' (members: {})",
                            names(&members)
                        ),
                    })?;
                Array::from_bytes(data).map_err(|source| DatasetError::Npy {
                    path: path.to_path_buf(),
                    name: name.into(),
                    source,
                })
            };
            (get("x")?, get("y")?)
        };
        let invalid = |msg: String| DatasetError::Invalid {
            path: path.to_path_buf(),
            msg,
        };
        let labels = y.to_i64().map_err(|e| invalid(format!("labels y: {e}")))?;
        let n = x
            .shape
            .first()
            .copied()
            .ok_or_else(|| invalid("x is a scalar, expected [N, ...]".into()))?;
        if labels.len() != n || y.shape.len() != 1 {
            return Err(invalid(format!(
                "x has {n} samples but y has shape {:?}",
                y.shape
            )));
        }
        Ok(Dataset { x, y: labels })
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Sample `i` as a `Real` tensor of shape `shape` (a model input shape such
    /// as `[1, 1, 8, 8]`, or `[1, 64]` for flattened samples): the sample's
    /// elements in row-major order, which must number as many as `shape` holds.
    pub fn sample(&self, i: usize, shape: &[usize]) -> Result<Tensor, TensorError> {
        let per: usize = self.x.shape.iter().skip(1).product();
        let range = i
            .checked_mul(per)
            .and_then(|s| Some(s..s.checked_add(per)?));
        let data: Vec<f32> = match (&self.x.elements, range) {
            (Elements::Float(v), Some(r)) => {
                v.get(r).map(|s| s.iter().map(|&x| x as f32).collect())
            }
            (Elements::Int(v), Some(r)) => v.get(r).map(|s| s.iter().map(|&x| x as f32).collect()),
            (_, None) => None,
        }
        .unwrap_or_default();
        Tensor::real(shape.to_vec(), data)
    }
}

fn names(members: &[(String, Vec<u8>)]) -> String {
    members
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `len` bytes at `at`, if the archive has them.
fn bytes_at(b: &[u8], at: usize, len: usize) -> Result<&[u8], String> {
    at.checked_add(len)
        .and_then(|end| b.get(at..end))
        .ok_or_else(|| format!("truncated at byte {at}"))
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, String> {
    bytes_at(b, at, 2).map(|s| u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, String> {
    bytes_at(b, at, 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, String> {
    bytes_at(b, at, 8).map(|s| u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]))
}

fn to_usize(v: u64) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("offset {v} too large"))
}

/// The members of a ZIP archive: name and uncompressed bytes (PKWARE APPNOTE
/// 6.3: end of central directory, ZIP64 end record, central directory entries
/// with ZIP64 extra fields, local headers).
///
/// Each member is inflated once: a name that appears twice in the central
/// directory, or two entries that point at the same local header, are errors
/// (numpy writes neither; a hostile archive would use them to make a small file
/// inflate the same data many times over). The uncompressed sizes the directory
/// declares must add up to at most [`MAX_NPZ_BYTES`], checked before anything is
/// inflated, and each member inflates to exactly its declared size.
pub fn npz_members(b: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    // End of central directory: signature PK\5\6, searched backwards (the comment
    // after it is at most 65535 bytes).
    let min_start = b.len().saturating_sub(22 + 65535);
    let eocd = (min_start..=b.len().saturating_sub(22))
        .rev()
        .find(|&i| b.get(i..i + 4) == Some(b"PK\x05\x06"))
        .ok_or("no end of central directory record (not a ZIP/.npz file)")?;
    let mut count = u64::from(u16_at(b, eocd + 10)?);
    let mut cd_offset = u64::from(u32_at(b, eocd + 16)?);
    if (count == 0xFFFF || cd_offset == 0xFFFF_FFFF)
        && eocd >= 20
        && u32_at(b, eocd - 20)? == 0x0706_4b50
    {
        // ZIP64 end of central directory locator → record.
        let rec = to_usize(u64_at(b, eocd - 20 + 8)?)?;
        if u32_at(b, rec)? != 0x0606_4b50 {
            return Err("bad ZIP64 end of central directory record".into());
        }
        count = u64_at(b, rec + 32)?;
        cd_offset = u64_at(b, rec + 48)?;
    }
    let mut at = to_usize(cd_offset)?;
    let mut entries: Vec<(String, u16, u32, u64, u64, usize)> = Vec::new();
    let mut locals = std::collections::HashMap::new();
    let mut total = 0u64;
    for _ in 0..count {
        if u32_at(b, at)? != 0x0201_4b50 {
            return Err(format!("bad central directory entry at byte {at}"));
        }
        let method = u16_at(b, at + 10)?;
        let crc = u32_at(b, at + 16)?;
        let mut csize = u64::from(u32_at(b, at + 20)?);
        let mut usize_ = u64::from(u32_at(b, at + 24)?);
        let name_len = usize::from(u16_at(b, at + 28)?);
        let extra_len = usize::from(u16_at(b, at + 30)?);
        let comment_len = usize::from(u16_at(b, at + 32)?);
        let mut local = u64::from(u32_at(b, at + 42)?);
        let name_bytes = bytes_at(b, at + 46, name_len)?;
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        // ZIP64 extra field (id 1): the 64-bit values of the fields set to 0xFFFFFFFF, in order.
        let extra = bytes_at(b, at + 46 + name_len, extra_len)?;
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = u16_at(extra, e)?;
            let len = usize::from(u16_at(extra, e + 2)?);
            if id == 1 {
                let mut p = e + 4;
                for field in [&mut usize_, &mut csize, &mut local] {
                    if *field == 0xFFFF_FFFF {
                        *field = u64_at(extra, p)?;
                        p += 8;
                    }
                }
            }
            e += 4 + len;
        }
        at += 46 + name_len + extra_len + comment_len;

        let local = to_usize(local)?;
        if entries.iter().any(|e| e.0 == name) {
            return Err(format!("member '{name}' appears twice"));
        }
        if let Some(first) = locals.insert(local, name.clone()) {
            return Err(format!(
                "members '{first}' and '{name}' share their data (local header at byte {local})"
            ));
        }
        total = total.saturating_add(usize_);
        if total > MAX_NPZ_BYTES {
            return Err(format!(
                "the members declare more than {MAX_NPZ_BYTES} bytes uncompressed in all \
                 (at member '{name}'): too large for an input archive"
            ));
        }
        entries.push((name, method, crc, csize, usize_, local));
    }
    let mut members = Vec::with_capacity(entries.len());
    for (name, method, crc, csize, usize_, local) in entries {
        if u32_at(b, local)? != 0x0403_4b50 {
            return Err(format!("member '{name}': bad local header"));
        }
        let start =
            local + 30 + usize::from(u16_at(b, local + 26)?) + usize::from(u16_at(b, local + 28)?);
        let raw = bytes_at(b, start, to_usize(csize)?)
            .map_err(|_| format!("member '{name}' is truncated"))?;
        let data = match method {
            0 => raw.to_vec(),
            8 => miniz_oxide::inflate::decompress_to_vec_with_limit(raw, to_usize(usize_)?)
                .map_err(|e| format!("member '{name}': deflate error: {e:?}"))?,
            m => {
                return Err(format!(
                    "member '{name}': compression method {m} (supported: stored, deflate)"
                ));
            }
        };
        if data.len() as u64 != usize_ {
            return Err(format!(
                "member '{name}': {} bytes, the directory says {usize_}",
                data.len()
            ));
        }
        if crc32(&data) != crc {
            return Err(format!("member '{name}': CRC-32 mismatch"));
        }
        members.push((name, data));
    }
    Ok(members)
}

/// The most bytes an `.npz` archive may inflate to, all members together (4 GiB):
/// a few kilobytes of deflate can claim gigabytes.
pub const MAX_NPZ_BYTES: u64 = 4 << 30;

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as ZIP uses.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_known_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }
}
