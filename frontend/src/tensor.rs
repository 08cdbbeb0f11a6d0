//! Constant tensors and the decoding of ONNX `TensorProto`s.
//!
//! A `TensorProto` stores its elements in one of three places (ONNX `onnx.proto`,
//! message `TensorProto`): `raw_data` (little-endian, packed, for every fixed-size
//! type), a typed repeated field (`float_data`, `int32_data` for all types of 32
//! bits or fewer, `int64_data`, `double_data`, `uint64_data` for uint32/uint64),
//! or, when `data_location = EXTERNAL`, a file beside the model named by the
//! `external_data` entries `location`, `offset` and `length`. All three are
//! decoded here, with every length checked against the declared dims, so a
//! truncated or inconsistent tensor is an error and never a panic.
//!
//! Values are kept in two storage classes: floating-point types as `f64` (exact
//! for float16, bfloat16, float and double) and integer/boolean types as `i64`.
//! Results of constant folding are rounded back to their element type
//! ([`Tensor::round_to_dtype`]) so folding matches an f32 runtime.

use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path};

use crate::error::{FrontendError, Result};
use crate::pb::{TensorProto, tensor_proto};

/// Element type of a constant tensor (a subset of ONNX `TensorProto.DataType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
    /// IEEE binary32 (ONNX `FLOAT`).
    F32,
    /// IEEE binary64 (ONNX `DOUBLE`).
    F64,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer (values above `i64::MAX` are rejected).
    U64,
    /// Boolean (stored as 0/1).
    Bool,
}

/// The data types accepted in tensors, for error messages.
pub const SUPPORTED_DTYPES: &str = "FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOL";

impl DType {
    /// The `DType` of an ONNX `TensorProto.DataType` code, or an error naming the
    /// tensor (or value) `what` and the type.
    pub fn from_onnx(code: i32, what: &str) -> Result<DType> {
        use tensor_proto::DataType as D;
        let dtype = match D::try_from(code) {
            Ok(D::Float) => DType::F32,
            Ok(D::Double) => DType::F64,
            Ok(D::Float16) => DType::F16,
            Ok(D::Bfloat16) => DType::BF16,
            Ok(D::Int8) => DType::I8,
            Ok(D::Uint8) => DType::U8,
            Ok(D::Int16) => DType::I16,
            Ok(D::Uint16) => DType::U16,
            Ok(D::Int32) => DType::I32,
            Ok(D::Uint32) => DType::U32,
            Ok(D::Int64) => DType::I64,
            Ok(D::Uint64) => DType::U64,
            Ok(D::Bool) => DType::Bool,
            Ok(other) => {
                return Err(FrontendError::UnsupportedDType {
                    tensor: what.to_string(),
                    dtype: other.as_str_name().to_string(),
                    supported: SUPPORTED_DTYPES.to_string(),
                });
            }
            Err(_) => {
                return Err(FrontendError::UnsupportedDType {
                    tensor: what.to_string(),
                    dtype: format!("<unknown code {code}>"),
                    supported: SUPPORTED_DTYPES.to_string(),
                });
            }
        };
        Ok(dtype)
    }

    /// The ONNX `TensorProto.DataType` code of this type.
    pub fn onnx_code(self) -> i32 {
        use tensor_proto::DataType as D;
        let d = match self {
            DType::F16 => D::Float16,
            DType::BF16 => D::Bfloat16,
            DType::F32 => D::Float,
            DType::F64 => D::Double,
            DType::I8 => D::Int8,
            DType::U8 => D::Uint8,
            DType::I16 => D::Int16,
            DType::U16 => D::Uint16,
            DType::I32 => D::Int32,
            DType::U32 => D::Uint32,
            DType::I64 => D::Int64,
            DType::U64 => D::Uint64,
            DType::Bool => D::Bool,
        };
        d as i32
    }

    /// Whether the type is a floating-point type (stored as `f64`).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// Size in bytes of one element in `raw_data`.
    fn byte_size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            DType::F16 => "FLOAT16",
            DType::BF16 => "BFLOAT16",
            DType::F32 => "FLOAT",
            DType::F64 => "DOUBLE",
            DType::I8 => "INT8",
            DType::U8 => "UINT8",
            DType::I16 => "INT16",
            DType::U16 => "UINT16",
            DType::I32 => "INT32",
            DType::U32 => "UINT32",
            DType::I64 => "INT64",
            DType::U64 => "UINT64",
            DType::Bool => "BOOL",
        };
        f.write_str(name)
    }
}

/// The elements of a tensor, in row-major order.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// Floating-point elements (any float [`DType`]).
    Float(Vec<f64>),
    /// Integer or boolean elements.
    Int(Vec<i64>),
}

impl Data {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::Float(v) => v.len(),
            Data::Int(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A constant tensor: element type, shape and row-major data.
///
/// Invariant: `data.len()` is the product of `shape`, and the storage class of
/// `data` matches `dtype` (float types in [`Data::Float`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    dtype: DType,
    shape: Vec<usize>,
    data: Data,
}

/// Product of dimensions, or `None` on overflow.
pub fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

impl Tensor {
    /// A tensor of the given type and shape; errors if the element count or the
    /// storage class do not match.
    pub fn new(dtype: DType, shape: Vec<usize>, data: Data) -> std::result::Result<Tensor, String> {
        let numel = checked_numel(&shape).ok_or("element count overflows")?;
        if numel != data.len() {
            return Err(format!(
                "shape {shape:?} has {numel} elements but {} values are given",
                data.len()
            ));
        }
        if dtype.is_float() != matches!(data, Data::Float(_)) {
            return Err(format!("{dtype} data stored in the wrong class"));
        }
        let mut t = Tensor { dtype, shape, data };
        t.round_to_dtype();
        Ok(t)
    }

    /// A float tensor (`FLOAT`) from `f32` values.
    pub fn from_f32(shape: Vec<usize>, values: &[f32]) -> std::result::Result<Tensor, String> {
        let data = Data::Float(values.iter().map(|&v| f64::from(v)).collect());
        Tensor::new(DType::F32, shape, data)
    }

    /// A 1-D or scalar `INT64` tensor.
    pub fn from_i64(shape: Vec<usize>, values: Vec<i64>) -> std::result::Result<Tensor, String> {
        Tensor::new(DType::I64, shape, Data::Int(values))
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements.
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The elements converted to `f64` (integers converted exactly up to 2^53).
    pub fn to_f64(&self) -> Vec<f64> {
        match &self.data {
            Data::Float(v) => v.clone(),
            Data::Int(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// The elements as `f32` (the element type of the lowered program).
    pub fn to_f32(&self) -> Vec<f32> {
        match &self.data {
            Data::Float(v) => v.iter().map(|&x| x as f32).collect(),
            Data::Int(v) => v.iter().map(|&x| x as f32).collect(),
        }
    }

    /// The elements as integers; `None` for float tensors.
    pub fn as_ints(&self) -> Option<&[i64]> {
        match &self.data {
            Data::Int(v) => Some(v),
            Data::Float(_) => None,
        }
    }

    /// The same data with another shape of equal element count.
    pub fn reshaped(&self, shape: Vec<usize>) -> std::result::Result<Tensor, String> {
        Tensor::new(self.dtype, shape, self.data.clone())
    }

    /// Converts to `dtype` with ONNX `Cast` semantics: float to integer truncates
    /// toward zero (saturating at the `i64` range), integer results wrap to the
    /// target width, float results round to the target precision, bool is `x != 0`.
    pub fn cast(&self, dtype: DType) -> Tensor {
        let data = match (&self.data, dtype.is_float()) {
            (Data::Float(v), true) => Data::Float(v.clone()),
            (Data::Int(v), true) => Data::Float(v.iter().map(|&x| x as f64).collect()),
            (Data::Float(v), false) => Data::Int(
                v.iter()
                    .map(|&x| {
                        if dtype == DType::Bool {
                            i64::from(x != 0.0)
                        } else {
                            x.trunc() as i64
                        }
                    })
                    .collect(),
            ),
            (Data::Int(v), false) => Data::Int(v.clone()),
        };
        let mut t = Tensor {
            dtype,
            shape: self.shape.clone(),
            data,
        };
        t.round_to_dtype();
        t
    }

    /// Rounds every element to what `dtype` can represent: floats to the type's
    /// precision (round to nearest even), integers wrapped to the type's width,
    /// booleans to 0/1.
    pub fn round_to_dtype(&mut self) {
        match (&mut self.data, self.dtype) {
            (Data::Float(v), DType::F32) => v.iter_mut().for_each(|x| *x = f64::from(*x as f32)),
            (Data::Float(v), DType::F16) => v
                .iter_mut()
                .for_each(|x| *x = half::f16::from_f64(*x).to_f64()),
            (Data::Float(v), DType::BF16) => v
                .iter_mut()
                .for_each(|x| *x = half::bf16::from_f64(*x).to_f64()),
            (Data::Int(v), dtype) => v.iter_mut().for_each(|x| {
                *x = match dtype {
                    DType::I8 => i64::from(*x as i8),
                    DType::U8 => i64::from(*x as u8),
                    DType::I16 => i64::from(*x as i16),
                    DType::U16 => i64::from(*x as u16),
                    DType::I32 => i64::from(*x as i32),
                    DType::U32 => i64::from(*x as u32),
                    DType::Bool => i64::from(*x != 0),
                    _ => *x,
                }
            }),
            _ => {}
        }
    }

    /// Decodes a `TensorProto`. `model_dir` is the directory of the model file,
    /// used to resolve external data (`None` when the model came from bytes).
    pub fn from_proto(proto: &TensorProto, model_dir: Option<&Path>) -> Result<Tensor> {
        let name = proto.name.clone().unwrap_or_default();
        let err = |msg: String| FrontendError::Tensor {
            tensor: name.clone(),
            msg,
        };
        let dtype = DType::from_onnx(proto.data_type.unwrap_or(0), &name)?;
        if proto.segment.is_some() {
            return Err(err("segmented tensors are not supported".into()));
        }
        let shape = proto
            .dims
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| err(format!("negative dimension {d}"))))
            .collect::<Result<Vec<usize>>>()?;
        let numel = checked_numel(&shape).ok_or_else(|| err("element count overflows".into()))?;

        let external = proto.data_location == Some(tensor_proto::DataLocation::External as i32);
        let raw: Option<Vec<u8>> = if external {
            Some(read_external(proto, model_dir, numel, dtype).map_err(err)?)
        } else {
            proto.raw_data.clone()
        };

        let data = if let Some(raw) = raw {
            decode_raw(&raw, dtype, numel).map_err(err)?
        } else {
            decode_typed(proto, dtype, numel).map_err(err)?
        };
        let mut t = Tensor { dtype, shape, data };
        t.round_to_dtype();
        Ok(t)
    }
}

/// Expected byte length of `numel` elements of `dtype`, or an error on overflow.
fn byte_len(numel: usize, dtype: DType) -> std::result::Result<usize, String> {
    numel
        .checked_mul(dtype.byte_size())
        .ok_or_else(|| "byte size overflows".to_string())
}

/// Decodes packed little-endian `raw_data`.
fn decode_raw(raw: &[u8], dtype: DType, numel: usize) -> std::result::Result<Data, String> {
    let expected = byte_len(numel, dtype)?;
    if raw.len() != expected {
        return Err(format!(
            "raw_data has {} bytes, expected {expected} for {numel} {dtype} elements",
            raw.len()
        ));
    }
    let size = dtype.byte_size();
    let chunks = raw.chunks_exact(size);
    let data = match dtype {
        DType::F32 => Data::Float(
            chunks
                .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        DType::F64 => Data::Float(chunks.map(|c| f64::from_le_bytes(le8(c))).collect()),
        DType::F16 => Data::Float(
            chunks
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
        ),
        DType::BF16 => Data::Float(
            chunks
                .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())
                .collect(),
        ),
        DType::I8 => Data::Int(chunks.map(|c| i64::from(c[0] as i8)).collect()),
        DType::U8 => Data::Int(chunks.map(|c| i64::from(c[0])).collect()),
        DType::Bool => Data::Int(chunks.map(|c| i64::from(c[0] != 0)).collect()),
        DType::I16 => Data::Int(
            chunks
                .map(|c| i64::from(i16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        DType::U16 => Data::Int(
            chunks
                .map(|c| i64::from(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        DType::I32 => Data::Int(
            chunks
                .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        DType::U32 => Data::Int(
            chunks
                .map(|c| i64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
        DType::I64 => Data::Int(chunks.map(|c| i64::from_le_bytes(le8(c))).collect()),
        DType::U64 => Data::Int(
            chunks
                .map(|c| i64::try_from(u64::from_le_bytes(le8(c))))
                .collect::<std::result::Result<Vec<i64>, _>>()
                .map_err(|_| "UINT64 value above 2^63-1".to_string())?,
        ),
    };
    Ok(data)
}

/// The first 8 bytes of an 8-byte chunk (from `chunks_exact(8)`).
fn le8(c: &[u8]) -> [u8; 8] {
    let mut b = [0u8; 8];
    b.copy_from_slice(&c[..8]);
    b
}

/// Decodes the typed repeated fields (`float_data`, `int32_data`, ...).
fn decode_typed(
    proto: &TensorProto,
    dtype: DType,
    numel: usize,
) -> std::result::Result<Data, String> {
    let check = |field: &str, len: usize| {
        if len == numel {
            Ok(())
        } else {
            Err(format!(
                "{field} has {len} values, expected {numel} for shape {:?}",
                proto.dims
            ))
        }
    };
    let data = match dtype {
        DType::F32 => {
            check("float_data", proto.float_data.len())?;
            Data::Float(proto.float_data.iter().map(|&v| f64::from(v)).collect())
        }
        DType::F64 => {
            check("double_data", proto.double_data.len())?;
            Data::Float(proto.double_data.clone())
        }
        DType::F16 | DType::BF16 => {
            check("int32_data", proto.int32_data.len())?;
            // The 16 bits of each value are stored in the low half of an int32.
            Data::Float(
                proto
                    .int32_data
                    .iter()
                    .map(|&v| {
                        let bits = v as u16;
                        if dtype == DType::F16 {
                            half::f16::from_bits(bits).to_f64()
                        } else {
                            half::bf16::from_bits(bits).to_f64()
                        }
                    })
                    .collect(),
            )
        }
        DType::I8 | DType::U8 | DType::I16 | DType::U16 | DType::I32 | DType::Bool => {
            check("int32_data", proto.int32_data.len())?;
            Data::Int(proto.int32_data.iter().map(|&v| i64::from(v)).collect())
        }
        DType::I64 => {
            check("int64_data", proto.int64_data.len())?;
            Data::Int(proto.int64_data.clone())
        }
        DType::U32 => {
            check("uint64_data", proto.uint64_data.len())?;
            Data::Int(
                proto
                    .uint64_data
                    .iter()
                    .map(|&v| i64::from(v as u32))
                    .collect(),
            )
        }
        DType::U64 => {
            check("uint64_data", proto.uint64_data.len())?;
            Data::Int(
                proto
                    .uint64_data
                    .iter()
                    .map(|&v| i64::try_from(v))
                    .collect::<std::result::Result<Vec<i64>, _>>()
                    .map_err(|_| "UINT64 value above 2^63-1".to_string())?,
            )
        }
    };
    Ok(data)
}

/// Reads the bytes of an external-data tensor from the file named by its
/// `location` entry, relative to `model_dir`. Absolute paths and paths that
/// leave the model's directory (`..`, or a symlink pointing outside) are rejected.
fn read_external(
    proto: &TensorProto,
    model_dir: Option<&Path>,
    numel: usize,
    dtype: DType,
) -> std::result::Result<Vec<u8>, String> {
    let mut location = None;
    let mut offset: u64 = 0;
    let mut length: Option<u64> = None;
    for entry in &proto.external_data {
        let key = entry.key.as_deref().unwrap_or("");
        let value = entry.value.as_deref().unwrap_or("");
        match key {
            "location" => location = Some(value.to_string()),
            "offset" => {
                offset = value
                    .parse()
                    .map_err(|_| format!("bad external offset '{value}'"))?
            }
            "length" => {
                length = Some(
                    value
                        .parse()
                        .map_err(|_| format!("bad external length '{value}'"))?,
                )
            }
            _ => {}
        }
    }
    let location = location.ok_or("external data without a 'location'")?;
    let dir = model_dir.ok_or(
        "external data needs the model's directory (load the model from a file, not from bytes)",
    )?;
    let rel = Path::new(&location);
    if rel.as_os_str().is_empty()
        || !rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "external data location '{location}' must be a relative path inside the model's directory"
        ));
    }
    let canon_dir = dir
        .canonicalize()
        .map_err(|e| format!("cannot resolve model directory {}: {e}", dir.display()))?;
    let path = canon_dir.join(rel);
    let canon = path
        .canonicalize()
        .map_err(|e| format!("cannot open external data file {}: {e}", path.display()))?;
    if !canon.starts_with(&canon_dir) {
        return Err(format!(
            "external data location '{location}' resolves outside the model's directory"
        ));
    }
    let expected = byte_len(numel, dtype)?;
    if let Some(len) = length
        && len != expected as u64
    {
        return Err(format!(
            "external data length {len} does not match the {expected} bytes of the tensor"
        ));
    }
    let mut file = std::fs::File::open(&canon)
        .map_err(|e| format!("cannot open external data file {}: {e}", canon.display()))?;
    let file_len = file
        .metadata()
        .map_err(|e| format!("cannot stat {}: {e}", canon.display()))?
        .len();
    let end = offset
        .checked_add(expected as u64)
        .ok_or("external data offset overflows")?;
    if end > file_len {
        return Err(format!(
            "external data file {} has {file_len} bytes, the tensor needs bytes {offset}..{end}",
            canon.display()
        ));
    }
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| format!("cannot seek in {}: {e}", canon.display()))?;
    let mut buf = vec![0u8; expected];
    file.read_exact(&mut buf)
        .map_err(|e| format!("cannot read {}: {e}", canon.display()))?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::StringStringEntryProto;

    fn proto(dtype: i32, dims: Vec<i64>) -> TensorProto {
        TensorProto {
            name: Some("t".into()),
            data_type: Some(dtype),
            dims,
            ..Default::default()
        }
    }

    #[test]
    fn raw_float_little_endian() {
        let mut p = proto(1, vec![2]);
        p.raw_data = Some([1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat());
        let t = Tensor::from_proto(&p, None).unwrap();
        assert_eq!(t.shape(), &[2]);
        assert_eq!(t.to_f32(), vec![1.5, -2.0]);
    }

    #[test]
    fn typed_fields() {
        let mut p = proto(7, vec![3]);
        p.int64_data = vec![1, -1, 1 << 40];
        assert_eq!(
            Tensor::from_proto(&p, None).unwrap().as_ints().unwrap(),
            &[1, -1, 1 << 40]
        );
        let mut p = proto(3, vec![2]);
        p.int32_data = vec![-128, 127];
        assert_eq!(
            Tensor::from_proto(&p, None).unwrap().as_ints().unwrap(),
            &[-128, 127]
        );
        let mut p = proto(3, vec![2]);
        p.raw_data = Some(vec![0x80, 0x7f]);
        assert_eq!(
            Tensor::from_proto(&p, None).unwrap().as_ints().unwrap(),
            &[-128, 127]
        );
        let mut p = proto(12, vec![1]);
        p.uint64_data = vec![4_000_000_000];
        assert_eq!(
            Tensor::from_proto(&p, None).unwrap().as_ints().unwrap(),
            &[4_000_000_000]
        );
        let mut p = proto(10, vec![2]);
        p.int32_data = vec![0x3c00, 0xc000]; // 1.0, -2.0 in binary16
        assert_eq!(
            Tensor::from_proto(&p, None).unwrap().to_f64(),
            vec![1.0, -2.0]
        );
        let mut p = proto(11, vec![]);
        p.double_data = vec![0.1];
        let t = Tensor::from_proto(&p, None).unwrap();
        assert_eq!((t.shape(), t.to_f64()), (&[][..], vec![0.1]));
    }

    #[test]
    fn length_mismatch_is_an_error() {
        let mut p = proto(1, vec![3]);
        p.raw_data = Some(vec![0; 11]);
        let e = Tensor::from_proto(&p, None).unwrap_err().to_string();
        assert!(e.contains("'t'") && e.contains("11 bytes"), "{e}");
        let mut p = proto(1, vec![2]);
        p.float_data = vec![1.0];
        assert!(Tensor::from_proto(&p, None).is_err());
        let p = proto(1, vec![-1]);
        assert!(
            Tensor::from_proto(&p, None)
                .unwrap_err()
                .to_string()
                .contains("negative")
        );
        let p = proto(1, vec![1 << 40, 1 << 40]);
        assert!(Tensor::from_proto(&p, None).is_err());
    }

    #[test]
    fn unsupported_dtype_names_tensor_and_type() {
        let p = proto(8, vec![1]);
        let e = Tensor::from_proto(&p, None).unwrap_err().to_string();
        assert!(
            e.contains("'t'") && e.contains("STRING") && e.contains("FLOAT"),
            "{e}"
        );
        let e = Tensor::from_proto(&proto(99, vec![1]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown code 99"), "{e}");
    }

    fn ext(p: &mut TensorProto, kv: &[(&str, &str)]) {
        p.data_location = Some(1);
        p.external_data = kv
            .iter()
            .map(|(k, v)| StringStringEntryProto {
                key: Some(k.to_string()),
                value: Some(v.to_string()),
            })
            .collect();
    }

    #[test]
    fn external_data() {
        let dir = std::env::temp_dir().join(format!("sci-frontend-ext-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let bytes: Vec<u8> = [7i64, -3].iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(dir.join("sub/w.bin"), [vec![0xAA; 5], bytes].concat()).unwrap();

        let mut p = proto(7, vec![2]);
        ext(
            &mut p,
            &[("location", "sub/w.bin"), ("offset", "5"), ("length", "16")],
        );
        assert_eq!(
            Tensor::from_proto(&p, Some(&dir))
                .unwrap()
                .as_ints()
                .unwrap(),
            &[7, -3]
        );
        // No model directory.
        assert!(Tensor::from_proto(&p, None).is_err());
        // Past the end of the file.
        ext(&mut p, &[("location", "sub/w.bin"), ("offset", "6")]);
        assert!(
            Tensor::from_proto(&p, Some(&dir))
                .unwrap_err()
                .to_string()
                .contains("needs bytes")
        );
        // Escaping the directory, absolute paths, missing files.
        for bad in ["../w.bin", "sub/../../x", "/etc/passwd", "missing.bin", ""] {
            ext(&mut p, &[("location", bad)]);
            assert!(
                Tensor::from_proto(&p, Some(&dir.join("sub"))).is_err(),
                "{bad}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cast_and_rounding() {
        let t = Tensor::new(DType::F64, vec![3], Data::Float(vec![1.9, -1.9, 0.1])).unwrap();
        assert_eq!(t.cast(DType::I64).as_ints().unwrap(), &[1, -1, 0]);
        assert_eq!(t.cast(DType::Bool).as_ints().unwrap(), &[1, 1, 1]);
        assert_eq!(t.cast(DType::F32).to_f64()[2], f64::from(0.1f32));
        let i = Tensor::new(DType::I64, vec![1], Data::Int(vec![300])).unwrap();
        assert_eq!(i.cast(DType::U8).as_ints().unwrap(), &[44]);
    }
}
