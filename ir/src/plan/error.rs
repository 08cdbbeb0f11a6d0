//! [`PlanError`]: why a plan file cannot be read or written.

use crate::error::CheckError;
use crate::program::ParamsError;
use std::path::PathBuf;
use thiserror::Error;

/// Why a plan could not be loaded or saved.
#[derive(Debug, Error)]
pub enum PlanError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not a plan file.
    #[error("not a sci plan file (bad magic bytes)")]
    BadMagic,
    /// Written by a newer sci.
    #[error(
        "plan format version {found} is newer than the supported version {supported}: use a newer sci"
    )]
    NewerVersion {
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// An old, unsupported version.
    #[error(
        "plan format version {found} is no longer supported (this build reads version {supported})"
    )]
    OldVersion {
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// The file ends early.
    #[error("truncated plan file: {what}")]
    Truncated {
        /// What was being read.
        what: &'static str,
    },
    /// The checksum does not match the content.
    #[error("plan file corrupted: checksum mismatch")]
    Checksum,
    /// Bytes after the checksum.
    #[error("{0} unexpected bytes after the end of the plan")]
    Trailing(usize),
    /// A section is not a valid protobuf message.
    #[error("{section} section: {source}")]
    Decode {
        /// Which section.
        section: &'static str,
        /// The protobuf error.
        source: prost::DecodeError,
    },
    /// A structurally invalid field.
    #[error("instruction {index}: {reason}")]
    Invalid {
        /// Instruction index (or the count, for section-level problems).
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// The program does not type-check.
    #[error("the plan's program does not type-check: {0}")]
    Program(#[from] CheckError),
    /// Invalid protocol parameters.
    #[error("the plan's parameters are invalid: {0}")]
    Params(#[from] ParamsError),
}

/// A structurally invalid field of instruction `index` ([`PlanError::Invalid`]).
pub(super) fn invalid(index: usize, reason: impl Into<String>) -> PlanError {
    PlanError::Invalid {
        index,
        reason: reason.into(),
    }
}
