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
//! The protobuf schema is written by hand with `prost` derives (no build-time codegen);
//! each instruction is an opcode with operands and its op's attributes in a fixed order
//! (documented on [`OpMsg`]). Changing anything here requires bumping
//! [`FORMAT_VERSION`]; the golden file `tests/golden/lenet_ring37.plan` makes a silent
//! change fail the tests.

use crate::check::CheckError;
use crate::ops::{Op, Pool2d, Scalar};
use crate::program::{Builder, ConstId, Params, ParamsError, Program, ValueId};
use crate::tensor::{Data, Tensor};
use crate::types::{Encoding, Owner, Type};
use prost::Message;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The first 8 bytes of every plan file.
pub const MAGIC: [u8; 8] = *b"SCI-PLAN";

/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

const HEADER_LEN: usize = 8 + 4 + 1;
const CHECKSUM_LEN: usize = 32;

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

// ---- Schema ---------------------------------------------------------------------------

/// The public part of a plan.
#[derive(Clone, PartialEq, Message)]
pub struct PublicMsg {
    /// [`Params::mill_radix`].
    #[prost(uint32, tag = "1")]
    pub mill_radix: u32,
    /// [`Params::threads`].
    #[prost(uint32, tag = "2")]
    pub threads: u32,
    /// The instructions, in program order.
    #[prost(message, repeated, tag = "3")]
    pub instrs: Vec<InstrMsg>,
    /// Data of the public constants.
    #[prost(message, repeated, tag = "4")]
    pub consts: Vec<ConstMsg>,
}

/// The secret part of a plan: data of the server's constants.
#[derive(Clone, PartialEq, Message)]
pub struct SecretMsg {
    /// Data of the server-owned constants.
    #[prost(message, repeated, tag = "1")]
    pub consts: Vec<ConstMsg>,
}

/// A value type.
#[derive(Clone, PartialEq, Message)]
pub struct TypeMsg {
    /// 0: f32, 1: ring, 2: field.
    #[prost(uint32, tag = "1")]
    pub encoding: u32,
    /// Ring bit width or field modulus.
    #[prost(uint64, tag = "2")]
    pub param: u64,
    /// Scale.
    #[prost(uint32, tag = "3")]
    pub scale: u32,
    /// Shape.
    #[prost(uint64, repeated, tag = "4")]
    pub shape: Vec<u64>,
    /// 0: public, 1: server, 2: client, 3: shared.
    #[prost(uint32, tag = "5")]
    pub owner: u32,
}

/// One instruction.
#[derive(Clone, PartialEq, Message)]
pub struct InstrMsg {
    /// The value's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// The value's type (declared for inputs and constants; checked against the
    /// inferred type for the others).
    #[prost(message, optional, tag = "2")]
    pub ty: Option<TypeMsg>,
    /// The op and its attributes.
    #[prost(message, optional, tag = "3")]
    pub op: Option<OpMsg>,
}

/// An op: opcode, operands (value indices) and attributes.
///
/// | opcode | op | operands | `attrs` | other fields |
/// |---|---|---|---|---|
/// | 0 | input | — | — | `label` = external name |
/// | 1 | const | — | `[const id]` | |
/// | 2 | conv2d | x, w[, bias] | strides(2), pads(4), dilations(2), groups | |
/// | 3 | matmul | a, b[, bias] | — | |
/// | 4, 5, 6 | add, sub, mul | a, b | — | |
/// | 7 | mul_public | x | — | `int` = k |
/// | 8 | scale_up | x | `[k]` | |
/// | 9 | trunc | x | `[s, nonneg]` | |
/// | 10 | div_public | x | `[d]` | |
/// | 11 | relu | x | — | |
/// | 12 | maxpool | x | kernel(2), strides(2), pads(4), ceil_mode | |
/// | 13 | avgpool | x | kernel(2), strides(2), pads(4), ceil_mode, count_include_pad | |
/// | 14 | global_avgpool | x | — | |
/// | 15 | argmax | x | `[axis, keepdims]` | |
/// | 16 | reshape | x | shape | |
/// | 17 | flatten | x | `[axis]` | |
/// | 18 | transpose | x | perm | |
/// | 19 | concat | xs… | `[axis]` | |
/// | 20 | pad | x | pads | `int` (ring/field) or `float` (f32) = value |
/// | 21 | output | x | — | `label` = external name |
/// | 22 | batchnorm | x, scale, bias, mean, var | — | `float` = epsilon |
/// | 23 | identity | x | — | |
///
/// Booleans are 0/1.
#[derive(Clone, PartialEq, Message)]
pub struct OpMsg {
    /// The opcode (table above).
    #[prost(uint32, tag = "1")]
    pub opcode: u32,
    /// Operand value indices.
    #[prost(uint32, repeated, tag = "2")]
    pub operands: Vec<u32>,
    /// Integer attributes, in the order of the table.
    #[prost(uint64, repeated, tag = "3")]
    pub attrs: Vec<u64>,
    /// A signed attribute.
    #[prost(sint64, tag = "4")]
    pub int: i64,
    /// A float attribute.
    #[prost(float, tag = "5")]
    pub float: f32,
    /// An external name.
    #[prost(string, tag = "6")]
    pub label: String,
}

/// Data of one constant: `ints` (signed view, for rings and fields) or `floats`.
#[derive(Clone, PartialEq, Message)]
pub struct ConstMsg {
    /// Index in the constant table.
    #[prost(uint32, tag = "1")]
    pub id: u32,
    /// Elements of a ring/field constant, as signed integers.
    #[prost(sint64, repeated, tag = "2")]
    pub ints: Vec<i64>,
    /// Elements of an f32 constant.
    #[prost(float, repeated, tag = "3")]
    pub floats: Vec<f32>,
}

// ---- Plan -----------------------------------------------------------------------------

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
        public_hash(&encode_public(&self.program))
    }

    /// [`Plan::hash`] in lowercase hex.
    pub fn hash_hex(&self) -> String {
        self.hash().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The file bytes. The secret section is written unless every server constant is
    /// withheld (then the file is a client view).
    pub fn to_bytes(&self) -> Vec<u8> {
        let public = encode_public(&self.program);
        let secret = encode_secret(&self.program);
        let all_withheld = self
            .program
            .instrs()
            .iter()
            .any(|i| matches!(&i.op, Op::Const { ty, .. } if ty.owner() == Owner::Server))
            && secret.consts.is_empty();
        let mut out = Vec::with_capacity(public.len() + 64);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.push(u8::from(!all_withheld));
        out.extend_from_slice(&(public.len() as u64).to_le_bytes());
        out.extend_from_slice(&public);
        if !all_withheld {
            let s = secret.encode_to_vec();
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(&s);
        }
        let sum: [u8; 32] = Sha256::digest(&out).into();
        out.extend_from_slice(&sum);
        out
    }

    /// Decodes plan bytes (see the module docs for what is checked).
    pub fn from_bytes(bytes: &[u8]) -> Result<Plan, PlanError> {
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
        decode_program(public, secret).map(Plan::new)
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

/// SHA-256("sci-plan-public\0" ‖ FORMAT_VERSION ‖ public part).
fn public_hash(public: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"sci-plan-public\0");
    h.update(FORMAT_VERSION.to_le_bytes());
    h.update(public);
    h.finalize().into()
}

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

// ---- Encoding -------------------------------------------------------------------------

fn type_msg(t: &Type) -> TypeMsg {
    let (encoding, param) = match t.encoding() {
        Encoding::Real => (0, 0),
        Encoding::Ring { bits } => (1, u64::from(bits)),
        Encoding::Field { modulus } => (2, modulus),
    };
    TypeMsg {
        encoding,
        param,
        scale: t.scale(),
        shape: t.shape().iter().map(|&d| d as u64).collect(),
        owner: match t.owner() {
            Owner::Public => 0,
            Owner::Server => 1,
            Owner::Client => 2,
            Owner::Shared => 3,
        },
    }
}

fn sizes(v: &[usize]) -> impl Iterator<Item = u64> + '_ {
    v.iter().map(|&x| x as u64)
}

fn op_msg(op: &Op) -> OpMsg {
    let mut m = OpMsg {
        operands: op.operands().iter().map(|v| v.0).collect(),
        ..OpMsg::default()
    };
    let pool_attrs = |p: &Pool2d| {
        let mut a: Vec<u64> = sizes(&p.kernel).collect();
        a.extend(sizes(&p.strides));
        a.extend(sizes(&p.pads));
        a.push(u64::from(p.ceil_mode));
        a
    };
    m.opcode = match op {
        Op::Input { name, .. } => {
            m.label = name.clone();
            0
        }
        Op::Const { id, .. } => {
            m.attrs = vec![u64::from(id.0)];
            1
        }
        Op::Conv2d {
            strides,
            pads,
            dilations,
            groups,
            ..
        } => {
            m.attrs = sizes(strides)
                .chain(sizes(pads))
                .chain(sizes(dilations))
                .chain([*groups as u64])
                .collect();
            2
        }
        Op::MatMul { .. } => 3,
        Op::Add { .. } => 4,
        Op::Sub { .. } => 5,
        Op::Mul { .. } => 6,
        Op::MulPublic { k, .. } => {
            m.int = *k;
            7
        }
        Op::ScaleUp { k, .. } => {
            m.attrs = vec![u64::from(*k)];
            8
        }
        Op::Trunc { s, nonneg, .. } => {
            m.attrs = vec![u64::from(*s), u64::from(*nonneg)];
            9
        }
        Op::DivPublic { d, .. } => {
            m.attrs = vec![*d];
            10
        }
        Op::Relu { .. } => 11,
        Op::MaxPool { pool, .. } => {
            m.attrs = pool_attrs(pool);
            12
        }
        Op::AvgPool {
            pool,
            count_include_pad,
            ..
        } => {
            m.attrs = pool_attrs(pool);
            m.attrs.push(u64::from(*count_include_pad));
            13
        }
        Op::GlobalAvgPool { .. } => 14,
        Op::ArgMax { axis, keepdims, .. } => {
            m.attrs = vec![*axis as u64, u64::from(*keepdims)];
            15
        }
        Op::Reshape { shape, .. } => {
            m.attrs = sizes(shape).collect();
            16
        }
        Op::Flatten { axis, .. } => {
            m.attrs = vec![*axis as u64];
            17
        }
        Op::Transpose { perm, .. } => {
            m.attrs = sizes(perm).collect();
            18
        }
        Op::Concat { axis, .. } => {
            m.attrs = vec![*axis as u64];
            19
        }
        Op::Pad { pads, value, .. } => {
            m.attrs = sizes(pads).collect();
            match value {
                Scalar::Int(i) => m.int = *i,
                Scalar::F32(f) => m.float = *f,
            }
            20
        }
        Op::Output { name, .. } => {
            m.label = name.clone();
            21
        }
        Op::BatchNorm { epsilon, .. } => {
            m.float = *epsilon;
            22
        }
        Op::Identity { .. } => 23,
    };
    m
}

fn const_msg(id: ConstId, t: &Tensor) -> ConstMsg {
    let mut m = ConstMsg {
        id: id.0,
        ..ConstMsg::default()
    };
    match t.data() {
        Data::F32(v) => m.floats = v.clone(),
        Data::U64(v) => m.ints = v.iter().map(|&x| t.encoding().signed(x)).collect(),
    }
    m
}

/// Constants of `p` with the given owner, in table order.
fn consts_of(p: &Program, owner: Owner) -> Vec<ConstMsg> {
    p.instrs()
        .iter()
        .filter_map(|i| match &i.op {
            Op::Const { id, ty } if ty.owner() == owner => {
                p.const_data(*id).map(|t| const_msg(*id, t))
            }
            _ => None,
        })
        .collect()
}

fn encode_public(p: &Program) -> Vec<u8> {
    PublicMsg {
        mill_radix: p.params().mill_radix,
        threads: p.params().threads,
        instrs: p
            .instrs()
            .iter()
            .map(|i| InstrMsg {
                name: i.name.clone(),
                ty: Some(type_msg(&i.ty)),
                op: Some(op_msg(&i.op)),
            })
            .collect(),
        consts: consts_of(p, Owner::Public),
    }
    .encode_to_vec()
}

fn encode_secret(p: &Program) -> SecretMsg {
    SecretMsg {
        consts: consts_of(p, Owner::Server),
    }
}

// ---- Decoding -------------------------------------------------------------------------

fn invalid(index: usize, reason: impl Into<String>) -> PlanError {
    PlanError::Invalid {
        index,
        reason: reason.into(),
    }
}

fn decode_type(index: usize, m: &TypeMsg) -> Result<Type, PlanError> {
    let encoding = match m.encoding {
        0 => Encoding::Real,
        1 => Encoding::Ring {
            bits: u32::try_from(m.param).map_err(|_| invalid(index, "ring width out of range"))?,
        },
        2 => Encoding::Field { modulus: m.param },
        e => return Err(invalid(index, format!("unknown encoding {e}"))),
    };
    let owner = match m.owner {
        0 => Owner::Public,
        1 => Owner::Server,
        2 => Owner::Client,
        3 => Owner::Shared,
        o => return Err(invalid(index, format!("unknown owner {o}"))),
    };
    let shape = m
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| invalid(index, "dimension out of range"))?;
    Type::new(encoding, m.scale, shape, owner).map_err(|e| invalid(index, e.to_string()))
}

/// Reads attributes in order, failing on a missing or out-of-range one.
struct Attrs<'a> {
    index: usize,
    v: &'a [u64],
    pos: usize,
}

impl Attrs<'_> {
    fn u64(&mut self) -> Result<u64, PlanError> {
        let x = self
            .v
            .get(self.pos)
            .copied()
            .ok_or_else(|| invalid(self.index, "missing attribute"))?;
        self.pos += 1;
        Ok(x)
    }
    fn usize(&mut self) -> Result<usize, PlanError> {
        let x = self.u64()?;
        usize::try_from(x).map_err(|_| invalid(self.index, "attribute out of range"))
    }
    fn u32(&mut self) -> Result<u32, PlanError> {
        let x = self.u64()?;
        u32::try_from(x).map_err(|_| invalid(self.index, "attribute out of range"))
    }
    fn bool(&mut self) -> Result<bool, PlanError> {
        match self.u64()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(invalid(self.index, "boolean attribute is not 0 or 1")),
        }
    }
    fn arr<const N: usize>(&mut self) -> Result<[usize; N], PlanError> {
        let mut a = [0; N];
        for x in &mut a {
            *x = self.usize()?;
        }
        Ok(a)
    }
    fn rest(&mut self) -> Result<Vec<usize>, PlanError> {
        let mut v = Vec::new();
        while self.pos < self.v.len() {
            v.push(self.usize()?);
        }
        Ok(v)
    }
    fn pool(&mut self) -> Result<Pool2d, PlanError> {
        Ok(Pool2d {
            kernel: self.arr()?,
            strides: self.arr()?,
            pads: self.arr()?,
            ceil_mode: self.bool()?,
        })
    }
    fn done(&self) -> Result<(), PlanError> {
        if self.pos == self.v.len() {
            Ok(())
        } else {
            Err(invalid(self.index, "too many attributes"))
        }
    }
}

fn decode_op(
    index: usize,
    m: &OpMsg,
    ty: &Type,
    konst: &mut dyn FnMut(&mut Builder, usize) -> Result<ConstId, PlanError>,
    b: &mut Builder,
) -> Result<Op, PlanError> {
    let ops: Vec<ValueId> = m.operands.iter().map(|&i| ValueId(i)).collect();
    let n = ops.len();
    let arity = |want: &[usize]| {
        if want.contains(&n) {
            Ok(())
        } else {
            Err(invalid(
                index,
                format!("opcode {} with {n} operands", m.opcode),
            ))
        }
    };
    let mut a = Attrs {
        index,
        v: &m.attrs,
        pos: 0,
    };
    let opt = |i: usize| ops.get(i).copied();
    let op = match m.opcode {
        0 => {
            arity(&[0])?;
            Op::Input {
                name: m.label.clone(),
                ty: ty.clone(),
            }
        }
        1 => {
            arity(&[0])?;
            let raw = a.usize()?;
            Op::Const {
                id: konst(b, raw)?,
                ty: ty.clone(),
            }
        }
        2 => {
            arity(&[2, 3])?;
            Op::Conv2d {
                x: ops[0],
                w: ops[1],
                bias: opt(2),
                strides: a.arr()?,
                pads: a.arr()?,
                dilations: a.arr()?,
                groups: a.usize()?,
            }
        }
        3 => {
            arity(&[2, 3])?;
            Op::MatMul {
                a: ops[0],
                b: ops[1],
                bias: opt(2),
            }
        }
        4..=6 => {
            arity(&[2])?;
            let (x, y) = (ops[0], ops[1]);
            match m.opcode {
                4 => Op::Add { a: x, b: y },
                5 => Op::Sub { a: x, b: y },
                _ => Op::Mul { a: x, b: y },
            }
        }
        19 => Op::Concat {
            xs: ops.clone(),
            axis: a.usize()?,
        },
        22 => {
            arity(&[5])?;
            Op::BatchNorm {
                x: ops[0],
                scale: ops[1],
                bias: ops[2],
                mean: ops[3],
                var: ops[4],
                epsilon: m.float,
            }
        }
        7..=18 | 20 | 21 | 23 => {
            arity(&[1])?;
            let x = ops[0];
            match m.opcode {
                7 => Op::MulPublic { x, k: m.int },
                8 => Op::ScaleUp { x, k: a.u32()? },
                9 => Op::Trunc {
                    x,
                    s: a.u32()?,
                    nonneg: a.bool()?,
                },
                10 => Op::DivPublic { x, d: a.u64()? },
                11 => Op::Relu { x },
                12 => Op::MaxPool { x, pool: a.pool()? },
                13 => Op::AvgPool {
                    x,
                    pool: a.pool()?,
                    count_include_pad: a.bool()?,
                },
                14 => Op::GlobalAvgPool { x },
                15 => Op::ArgMax {
                    x,
                    axis: a.usize()?,
                    keepdims: a.bool()?,
                },
                16 => Op::Reshape {
                    x,
                    shape: a.rest()?,
                },
                17 => Op::Flatten {
                    x,
                    axis: a.usize()?,
                },
                18 => Op::Transpose { x, perm: a.rest()? },
                20 => {
                    let value = match b.get_ty(x).map(|t| t.encoding().is_real()) {
                        Some(true) => Scalar::F32(m.float),
                        _ => Scalar::Int(m.int),
                    };
                    Op::Pad {
                        x,
                        pads: a.rest()?,
                        value,
                    }
                }
                21 => Op::Output {
                    x,
                    name: m.label.clone(),
                },
                _ => Op::Identity { x },
            }
        }
        c => return Err(invalid(index, format!("unknown opcode {c}"))),
    };
    a.done()?;
    Ok(op)
}

fn decode_data(index: usize, m: &ConstMsg, ty: &Type) -> Result<Tensor, PlanError> {
    let shape = ty.shape().to_vec();
    let t = if ty.encoding().is_real() {
        if !m.ints.is_empty() {
            return Err(invalid(index, "integer data for an f32 constant"));
        }
        Tensor::real(shape, m.floats.clone())
    } else {
        if !m.floats.is_empty() {
            return Err(invalid(index, "f32 data for a fixed-point constant"));
        }
        Tensor::signed(ty.encoding(), shape, &m.ints)
    };
    t.map_err(|e| invalid(index, format!("constant data: {e}")))
}

fn decode_program(public: PublicMsg, secret: Option<SecretMsg>) -> Result<Program, PlanError> {
    let mut b = Builder::with_params(Params {
        mill_radix: public.mill_radix,
        threads: public.threads,
    });
    let n_instrs = public.instrs.len();
    // Constant data by table id, with the section it came from (true: public).
    let n_consts = public
        .instrs
        .iter()
        .filter(|i| i.op.as_ref().is_some_and(|o| o.opcode == 1))
        .count();
    let mut data: Vec<Option<(&ConstMsg, bool)>> = vec![None; n_consts];
    let secret_consts = secret.as_ref().map_or(&[][..], |s| &s.consts[..]);
    let tagged = public
        .consts
        .iter()
        .map(|c| (c, true))
        .chain(secret_consts.iter().map(|c| (c, false)));
    for (c, is_public) in tagged {
        let slot = data
            .get_mut(c.id as usize)
            .ok_or_else(|| invalid(n_instrs, format!("data for unknown constant id {}", c.id)))?;
        if slot.replace((c, is_public)).is_some() {
            return Err(invalid(
                n_instrs,
                format!("two data entries for constant id {}", c.id),
            ));
        }
    }
    let mut used = vec![false; n_consts];
    for (index, ins) in public.instrs.iter().enumerate() {
        let ty = decode_type(
            index,
            ins.ty
                .as_ref()
                .ok_or_else(|| invalid(index, "missing type"))?,
        )?;
        let m = ins
            .op
            .as_ref()
            .ok_or_else(|| invalid(index, "missing op"))?;
        let mut konst = |b: &mut Builder, raw: usize| -> Result<ConstId, PlanError> {
            if raw >= n_consts || std::mem::replace(&mut used[raw], true) {
                return Err(invalid(
                    index,
                    format!("constant id {raw} out of range or reused"),
                ));
            }
            let tensor = match data[raw] {
                None => None,
                Some((c, is_public)) => {
                    if is_public != (ty.owner() == Owner::Public) {
                        return Err(invalid(
                            index,
                            "constant data is in the wrong section for its owner",
                        ));
                    }
                    Some(decode_data(index, c, &ty)?)
                }
            };
            Ok(b.add_const(tensor))
        };
        let op = decode_op(index, m, &ty, &mut konst, &mut b)?;
        let v = b.push(&ins.name, op)?;
        if b.ty(v) != &ty {
            return Err(invalid(
                index,
                format!(
                    "stored type {ty} differs from the inferred type {}",
                    b.ty(v)
                ),
            ));
        }
    }
    Ok(b.finish()?)
}
