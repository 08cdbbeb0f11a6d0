//! The protobuf schema of a plan's two parts, written by hand with `prost` derives (no
//! build-time codegen). Which opcode each op has and the order of its operands and
//! attributes is the opcode table (`opcode.rs`).

use prost::Message;

/// The public part of a plan.
#[derive(Clone, PartialEq, Message)]
pub struct PublicMsg {
    /// [`crate::Params::mill_radix`].
    #[prost(uint32, tag = "1")]
    pub mill_radix: u32,
    /// [`crate::Params::threads`].
    #[prost(uint32, tag = "2")]
    pub threads: u32,
    /// The instructions, in program order.
    #[prost(message, repeated, tag = "3")]
    pub instrs: Vec<InstrMsg>,
    /// Data of the public constants.
    #[prost(message, repeated, tag = "4")]
    pub consts: Vec<ConstMsg>,
    /// [`crate::Params::backend`]: 0 OT, 1 HE, 2 RLWE.
    #[prost(uint32, tag = "5")]
    pub backend: u32,
    /// For HE: the BFV degree `N` ([`crate::backend::HE_DEGREE`]); 0 for OT.
    #[prost(uint64, tag = "6")]
    pub he_degree: u64,
    /// For HE: the BFV ciphertext primes ([`crate::backend::HE_MODULI`]); empty for OT.
    #[prost(uint64, repeated, tag = "7")]
    pub he_moduli: Vec<u64>,
    /// [`crate::Params::ot`]: 0 IKNP, 1 silent (Ferret).
    #[prost(uint32, tag = "8")]
    pub ot: u32,
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
    /// How this instruction's product with the server's weights runs
    /// ([`crate::Program::product_backend`]): 0 for an instruction that is no such
    /// product ([`crate::Program::is_secure_product`]), 1 OT, 2 HE, 3 RLWE; OT and RLWE
    /// mix in a plan on the ring (the plan's backend is the default of its products).
    /// A product of two secret operands ([`crate::Program::secret_product_backend`]):
    /// 0 (or 1) OT, 3 RLWE.
    #[prost(uint32, tag = "4")]
    pub backend: u32,
}

/// An op: opcode, operands (value indices) and attributes. Each op's opcode and the
/// order of its fields are its row of the op table ([`crate::ops`]; the kinds of fields
/// and where each is stored: `crate::ops::table`): operands in `operands`, integer and
/// boolean (0/1) attributes in `attrs` in the row's order, a signed attribute in `int`, a
/// float one in `float`, an external name in `label`.
#[derive(Clone, PartialEq, Message)]
pub struct OpMsg {
    /// The opcode (the op table's).
    #[prost(uint32, tag = "1")]
    pub opcode: u32,
    /// Operand value indices.
    #[prost(uint32, repeated, tag = "2")]
    pub operands: Vec<u32>,
    /// Integer attributes, in the order of the op's row.
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
