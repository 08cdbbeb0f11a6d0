//! Program ↔ protobuf messages: types, instructions (through the opcode table,
//! `opcode.rs`), constant data in the public or the secret part by owner, and the
//! decoder's checks (every constant id used once, its data in the section of its owner,
//! stored types equal to the inferred ones).

use super::error::{PlanError, invalid};
use super::messages::{ConstMsg, InstrMsg, PublicMsg, SecretMsg, TypeMsg};
use super::opcode;
use crate::backend::{Backend, HE_DEGREE, HE_MODULI, OtKind};
use crate::id::{ConstId, ValueId};
use crate::ops::Op;
use crate::program::{Builder, Params, Program};
use crate::tensor::{Data, Tensor};
use crate::types::{Encoding, Owner, Type};
use prost::Message;

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

pub(super) fn encode_public(p: &Program) -> Vec<u8> {
    let backend = p.params().backend;
    let he = backend == Backend::He;
    PublicMsg {
        mill_radix: p.params().mill_radix,
        threads: p.params().threads,
        ot: u32::from(p.params().ot.code()),
        instrs: p
            .ids()
            .map(|v| {
                let i = p.instr(v);
                InstrMsg {
                    name: i.name.clone(),
                    ty: Some(type_msg(&i.ty)),
                    op: Some(opcode::encode(&i.op)),
                    backend: instr_backend(p, v),
                }
            })
            .collect(),
        consts: consts_of(p, Owner::Public),
        backend: backend_code(backend),
        he_degree: if he { HE_DEGREE } else { 0 },
        he_moduli: if he { HE_MODULI.to_vec() } else { Vec::new() },
    }
    .encode_to_vec()
}

/// [`PublicMsg::backend`]'s code of `b` (one less than [`InstrMsg::backend`]'s).
fn backend_code(b: Backend) -> u32 {
    match b {
        Backend::Ot => 0,
        Backend::He => 1,
        Backend::Rlwe => 2,
    }
}

/// [`InstrMsg::backend`] of instruction `v`: a product with the server's weights,
/// its backend's code plus one; a secret product run by RLWE, RLWE's; 0 otherwise (a
/// secret product run by OT writes 0, as plans did before secret products had a
/// backend, so OT plans are unchanged).
fn instr_backend(p: &Program, v: ValueId) -> u32 {
    match (p.product_backend(v), p.secret_product_backend(v)) {
        (Some(b), _) => backend_code(b) + 1,
        (None, Some(Backend::Rlwe)) => backend_code(Backend::Rlwe) + 1,
        _ => 0,
    }
}

/// The backend of code `code` ([`backend_code`]).
fn backend_of(code: u32) -> Option<Backend> {
    Backend::ALL.into_iter().find(|&b| backend_code(b) == code)
}

/// Records each product's backend from [`InstrMsg::backend`] ([`instr_backend`]: 0
/// for an instruction that is no product with the server's weights, else the
/// backend's code plus one; for a product of two secret operands 0 or OT's code is
/// OT, RLWE's is RLWE), refusing a code where none belongs, a missing one, or a
/// backend that does not mix with the program's or does not run the product.
fn decode_instr_backends(p: &mut Program, instrs: &[InstrMsg]) -> Result<(), PlanError> {
    let ids: Vec<ValueId> = p.ids().collect();
    for (v, ins) in ids.into_iter().zip(instrs) {
        let code = ins.backend;
        let backend = code.checked_sub(1).map(backend_of);
        let set = match (p.is_secure_product(v), p.is_secret_product(v), backend) {
            (false, false, None) => None,
            (true, _, Some(Some(b))) => Some(b),
            // 0: OT, a record only where the rule says otherwise.
            (false, true, None) => {
                (p.secret_product_backend(v) != Some(Backend::Ot)).then_some(Backend::Ot)
            }
            (false, true, Some(Some(b))) => Some(b),
            (product, _, _) => {
                return Err(invalid(
                    v.index(),
                    format!(
                        "per-instruction backend {code} on {} (0: no product with the server's weights, 1: OT, 2: HE, 3: RLWE)",
                        if product {
                            "a product with the server's weights"
                        } else {
                            "an instruction that is no such product"
                        }
                    ),
                ));
            }
        };
        if let Some(b) = set {
            p.set_product_backend(v, b)
                .map_err(|e| invalid(v.index(), format!("per-instruction backend {code}: {e}")))?;
        }
    }
    Ok(())
}

/// The backend of a public part, with its BFV parameters checked against this build's.
fn decode_backend(m: &PublicMsg) -> Result<Backend, PlanError> {
    let section = |reason: String| invalid(m.instrs.len(), reason);
    match backend_of(m.backend) {
        Some(b) if b.on_ring() && m.he_degree == 0 && m.he_moduli.is_empty() => Ok(b),
        Some(b) if b.on_ring() => Err(section(format!(
            "HE parameters in an {} plan",
            b.name().to_uppercase()
        ))),
        Some(b) if m.he_degree == HE_DEGREE && m.he_moduli == HE_MODULI => Ok(b),
        Some(_) => Err(section(format!(
            "the plan's HE parameters (N = {}, moduli {:?}) differ from this build's (N = {HE_DEGREE}, moduli {HE_MODULI:?}): compile the plan with this version of sci",
            m.he_degree, m.he_moduli
        ))),
        None => Err(section(format!("unknown backend {}", m.backend))),
    }
}

pub(super) fn encode_secret(p: &Program) -> SecretMsg {
    SecretMsg {
        consts: consts_of(p, Owner::Server),
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

/// The data of a constant of type `ty`: `ints` for rings and fields, `floats` for f32.
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

pub(super) fn decode_program(
    public: PublicMsg,
    secret: Option<SecretMsg>,
) -> Result<Program, PlanError> {
    let backend = decode_backend(&public)?;
    let ot = u8::try_from(public.ot)
        .ok()
        .and_then(OtKind::from_code)
        .ok_or_else(|| {
            invalid(
                public.instrs.len(),
                format!("unknown OT engine {}", public.ot),
            )
        })?;
    let mut b = Builder::with_params(Params {
        mill_radix: public.mill_radix,
        threads: public.threads,
        backend,
        ot,
    });
    let n_instrs = public.instrs.len();
    // Constant data by table id, with the section it came from (true: public).
    let n_consts = public
        .instrs
        .iter()
        .filter(|i| i.op.as_ref().is_some_and(|o| o.opcode == opcode::CONST))
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
        let op = opcode::decode(index, m, &ty, &mut konst, &mut b)?;
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
    let mut p = b.finish()?;
    decode_instr_backends(&mut p, &public.instrs)?;
    Ok(p)
}
