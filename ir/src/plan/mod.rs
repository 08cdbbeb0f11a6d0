//! Plan files: the versioned binary form of a program, as written by `sci-compile` and
//! read by `sci-run`.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! magic      8 bytes  "SCI-PLAN"
//! version    u32      FORMAT_VERSION
//! sections   u8       0: public part only (the client's file), 1: public + secret
//! public_len u64      then the public part: a `PublicMsg` (protobuf, via prost)
//! secret_len u64      then the secret part: a `SecretMsg` (only if sections = 1)
//! checksum   32 bytes SHA-256 of every byte before it
//! ```
//!
//! The **public part** holds the protocol parameters, every instruction (name, type,
//! opcode, operands, attributes) and the data of public constants. The **secret part**
//! holds the data of server-owned constants (the quantized weights). A plan without the
//! secret part is the client's view ([`Plan::client_view`]): the same program with the
//! server's constants withheld.
//!
//! [`Plan::hash`] = SHA-256("sci-plan-public\0" ‖ version ‖ public part) identifies the
//! program; it is equal for a plan and its client view, and the runtime handshake
//! compares it.
//!
//! Loading checks, in order: length, magic, version (a newer one is refused with a clear
//! error), checksum (so corruption anywhere is reported as such), the protobuf messages,
//! and finally the program itself, rebuilt through the [`Builder`] (so it type-checks,
//! and its stored types must equal the inferred ones). Every failure is a [`PlanError`];
//! no input makes the decoder panic (fuzzed by proptest in `tests/plan.rs`).
//!
//! Modules: `messages.rs`, the protobuf schema, written by hand with `prost` derives (no
//! build-time codegen); `opcode.rs`, the opcode table: each instruction is an opcode with
//! operands and its op's attributes in a fixed order, given once for both the encoder
//! and the decoder (documented on [`OpMsg`]); `codec.rs`, program ↔ messages;
//! `container.rs`, the file framing above. Changing anything here requires bumping
//! [`FORMAT_VERSION`]; the golden file `tests/golden/lenet_ring37.plan` makes a silent
//! change fail the tests.

mod codec;
mod container;
mod error;
mod messages;
mod opcode;

pub use container::{FORMAT_VERSION, MAGIC};
pub use error::PlanError;
pub use messages::{ConstMsg, InstrMsg, OpMsg, PublicMsg, SecretMsg, TypeMsg};

use crate::ops::Op;
use crate::program::Program;
use crate::types::Owner;
use prost::Message;
use std::path::Path;

/// A program ready to be written to (or read from) a plan file.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    program: Program,
}

impl Plan {
    /// Wraps a program.
    pub fn new(program: Program) -> Plan {
        Plan { program }
    }

    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Unwraps the program.
    pub fn into_program(self) -> Program {
        self.program
    }

    /// The client's view: the same program with every server constant withheld.
    pub fn client_view(&self) -> Plan {
        Plan::new(self.program.client_view())
    }

    /// Whether some server constant is withheld (a client view, or partial data).
    pub fn is_client_view(&self) -> bool {
        self.program.has_withheld_consts()
    }

    /// The program's identity: SHA-256("sci-plan-public\0" ‖ version ‖ public part).
    /// Equal for a plan and its client view.
    pub fn hash(&self) -> [u8; 32] {
        container::public_hash(&codec::encode_public(&self.program))
    }

    /// [`Plan::hash`] in lowercase hex.
    pub fn hash_hex(&self) -> String {
        self.hash().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The file bytes. The secret section is written unless every server constant is
    /// withheld (then the file is a client view). Cost: linear in the program's size.
    pub fn to_bytes(&self) -> Vec<u8> {
        let public = codec::encode_public(&self.program);
        let secret = codec::encode_secret(&self.program);
        let all_withheld = self
            .program
            .instrs()
            .iter()
            .any(|i| matches!(&i.op, Op::Const { ty, .. } if ty.owner() == Owner::Server))
            && secret.consts.is_empty();
        let secret = (!all_withheld).then(|| secret.encode_to_vec());
        container::seal(&public, secret.as_deref())
    }

    /// Decodes plan bytes (see the module docs for what is checked). Cost: linear in
    /// the file's size plus type-checking the program.
    pub fn from_bytes(bytes: &[u8]) -> Result<Plan, PlanError> {
        let (public, secret) = container::open(bytes)?;
        let public = PublicMsg::decode(public).map_err(|source| PlanError::Decode {
            section: "public",
            source,
        })?;
        let secret = secret
            .map(SecretMsg::decode)
            .transpose()
            .map_err(|source| PlanError::Decode {
                section: "secret",
                source,
            })?;
        codec::decode_program(public, secret).map(Plan::new)
    }

    /// Writes the plan to `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), PlanError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_bytes()).map_err(|source| PlanError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads a plan from `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Plan, PlanError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| PlanError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Plan::from_bytes(&bytes)
    }
}
