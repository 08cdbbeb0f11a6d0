//! Reading and writing NumPy `.npy` arrays (format versions 1.0, 2.0 and 3.0, as
//! specified in `numpy/lib/format.py`): model inputs, outputs and validation sets.
//!
//! A file is the magic `\x93NUMPY`, a version, a little-endian header length, a
//! Python dict literal `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`,
//! then the raw elements. Every field and length is checked, so a truncated or
//! malformed file is an error, never a panic (and never a huge allocation: the data
//! must be present before it is decoded).
//!
//! Supported element types: `f2`, `f4`, `f8`, `i1`, `i2`, `i4`, `i8`, `u1`, `u2`,
//! `u4`, `u8`, `b1`, either byte order; C or Fortran order (converted to C order).

use std::io::{Read, Write};
use std::path::Path;

use crate::tensor::{Tensor, TensorError};
use thiserror::Error;

/// Why an `.npy` file cannot be read or written.
#[derive(Debug, Error)]
pub enum NpyError {
    /// The file could not be read or written.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not a valid `.npy` file.
    #[error("malformed .npy file: {0}")]
    Malformed(String),
    /// The element type is not supported.
    #[error(
        "unsupported .npy element type '{0}' (supported: f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8, b1)"
    )]
    DType(String),
    /// The array cannot be converted as requested.
    #[error("{0}")]
    Convert(String),
}

/// The elements of an array, row-major (C order).
#[derive(Debug, Clone, PartialEq)]
pub enum Elements {
    /// Floating-point elements (`f2`, `f4`, `f8`), widened exactly to `f64`.
    Float(Vec<f64>),
    /// Integer and boolean elements.
    Int(Vec<i64>),
}

/// A NumPy array: shape, the element type it was stored with, and its elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The shape (empty for a scalar).
    pub shape: Vec<usize>,
    /// The NumPy type string without byte order (`f4`, `i8`, ...).
    pub dtype: String,
    /// The elements in C order.
    pub elements: Elements,
}

impl Array {
    /// A `float32` array; errors if `data` does not fill `shape`.
    pub fn from_f32(shape: Vec<usize>, data: &[f32]) -> Result<Array, NpyError> {
        check_len(&shape, data.len())?;
        Ok(Array {
            shape,
            dtype: "f4".into(),
            elements: Elements::Float(data.iter().map(|&v| f64::from(v)).collect()),
        })
    }

    /// An `int64` array; errors if `data` does not fill `shape`.
    pub fn from_i64(shape: Vec<usize>, data: Vec<i64>) -> Result<Array, NpyError> {
        check_len(&shape, data.len())?;
        Ok(Array {
            shape,
            dtype: "i8".into(),
            elements: Elements::Int(data),
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.elements {
            Elements::Float(v) => v.len(),
            Elements::Int(v) => v.len(),
        }
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as `f32` (rounded to nearest).
    pub fn to_f32(&self) -> Vec<f32> {
        match &self.elements {
            Elements::Float(v) => v.iter().map(|&x| x as f32).collect(),
            Elements::Int(v) => v.iter().map(|&x| x as f32).collect(),
        }
    }

    /// The elements as `f64` (integers beyond 2^53 rounded).
    pub fn to_f64(&self) -> Vec<f64> {
        match &self.elements {
            Elements::Float(v) => v.clone(),
            Elements::Int(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// The elements as integers: integer arrays as stored, float arrays only if
    /// every element is integral (e.g. labels saved as floats).
    pub fn to_i64(&self) -> Result<Vec<i64>, NpyError> {
        match &self.elements {
            Elements::Int(v) => Ok(v.clone()),
            Elements::Float(v) => v
                .iter()
                .map(|&x| {
                    if x.fract() == 0.0 && x.abs() < 9.0e15 {
                        Ok(x as i64)
                    } else {
                        Err(NpyError::Convert(format!(
                            "element {x} of a {} array is not an integer",
                            self.dtype
                        )))
                    }
                })
                .collect(),
        }
    }

    /// A `Real` (f32) tensor of the same shape.
    pub fn to_real_tensor(&self) -> Result<Tensor, TensorError> {
        Tensor::real(self.shape.clone(), self.to_f32())
    }

    /// Reads an array from `.npy` bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Array, NpyError> {
        parse(bytes)
    }

    /// Reads an `.npy` file.
    pub fn read(path: impl AsRef<Path>) -> Result<Array, NpyError> {
        let mut bytes = Vec::new();
        std::fs::File::open(path)?.read_to_end(&mut bytes)?;
        parse(&bytes)
    }

    /// Writes the array as `.npy` (version 1.0, little-endian, C order) with its
    /// stored element type for `f4`/`f8`/`i8`; other float types are written as
    /// `f4`, other integer types as `i8`.
    pub fn write_to(&self, mut w: impl Write) -> Result<(), NpyError> {
        let descr = match (&self.elements, self.dtype.as_str()) {
            (Elements::Float(_), "f8") => "<f8",
            (Elements::Float(_), _) => "<f4",
            (Elements::Int(_), _) => "<i8",
        };
        let shape = match self.shape.as_slice() {
            [d] => format!("({d},)"),
            s => format!(
                "({})",
                s.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        // Pad with spaces so that the data starts at a multiple of 64 bytes, end with '\n'.
        let unpadded = 10 + header.len() + 1;
        header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
        header.push('\n');
        let len = u16::try_from(header.len())
            .map_err(|_| NpyError::Convert("shape too long for a .npy header".into()))?;
        w.write_all(b"\x93NUMPY\x01\x00")?;
        w.write_all(&len.to_le_bytes())?;
        w.write_all(header.as_bytes())?;
        let mut buf = Vec::with_capacity(self.len() * 8);
        match (&self.elements, descr) {
            (Elements::Float(v), "<f8") => v
                .iter()
                .for_each(|x| buf.extend_from_slice(&x.to_le_bytes())),
            (Elements::Float(v), _) => v
                .iter()
                .for_each(|&x| buf.extend_from_slice(&(x as f32).to_le_bytes())),
            (Elements::Int(v), _) => v
                .iter()
                .for_each(|x| buf.extend_from_slice(&x.to_le_bytes())),
        }
        w.write_all(&buf)?;
        Ok(())
    }

    /// Writes the array to an `.npy` file (see [`Array::write_to`]).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), NpyError> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        self.write_to(&mut f)?;
        f.flush()?;
        Ok(())
    }
}

fn check_len(shape: &[usize], len: usize) -> Result<(), NpyError> {
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if n == Some(len) {
        Ok(())
    } else {
        Err(NpyError::Convert(format!(
            "shape {shape:?} does not hold {len} elements"
        )))
    }
}

fn malformed(msg: impl Into<String>) -> NpyError {
    NpyError::Malformed(msg.into())
}

/// Parses a whole `.npy` file.
fn parse(bytes: &[u8]) -> Result<Array, NpyError> {
    let rest = bytes
        .strip_prefix(b"\x93NUMPY")
        .ok_or_else(|| malformed("missing the \\x93NUMPY magic"))?;
    let (&major, rest) = rest
        .split_first()
        .ok_or_else(|| malformed("truncated version"))?;
    let (_minor, rest) = rest
        .split_first()
        .ok_or_else(|| malformed("truncated version"))?;
    let (header_len, rest) = match major {
        1 => {
            let (l, r) = rest
                .split_at_checked(2)
                .ok_or_else(|| malformed("truncated header length"))?;
            (usize::from(u16::from_le_bytes([l[0], l[1]])), r)
        }
        2 | 3 => {
            let (l, r) = rest
                .split_at_checked(4)
                .ok_or_else(|| malformed("truncated header length"))?;
            let n = u32::from_le_bytes([l[0], l[1], l[2], l[3]]);
            (
                usize::try_from(n).map_err(|_| malformed("header too long"))?,
                r,
            )
        }
        v => return Err(malformed(format!("unsupported format version {v}"))),
    };
    let (header, data) = rest
        .split_at_checked(header_len)
        .ok_or_else(|| malformed("truncated header"))?;
    let header = std::str::from_utf8(header).map_err(|_| malformed("header is not UTF-8"))?;
    let dict = parse_dict(header)?;
    let descr = dict
        .descr
        .ok_or_else(|| malformed("header has no 'descr'"))?;
    let fortran = dict
        .fortran_order
        .ok_or_else(|| malformed("header has no 'fortran_order'"))?;
    let shape = dict
        .shape
        .ok_or_else(|| malformed("header has no 'shape'"))?;

    let (order, ty) = match descr.as_bytes().first() {
        Some(b'<' | b'|' | b'=') => (Endian::Little, &descr[1..]),
        Some(b'>') => (Endian::Big, &descr[1..]),
        _ => (Endian::Little, descr.as_str()),
    };
    let size = match ty {
        "f2" | "i2" | "u2" => 2,
        "f4" | "i4" | "u4" => 4,
        "f8" | "i8" | "u8" => 8,
        "i1" | "u1" | "b1" => 1,
        _ => return Err(NpyError::DType(descr.clone())),
    };
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| malformed(format!("shape {shape:?} overflows")))?;
    let nbytes = n
        .checked_mul(size)
        .ok_or_else(|| malformed("data size overflows"))?;
    if data.len() < nbytes {
        return Err(malformed(format!(
            "data has {} bytes, the shape {shape:?} of {ty} needs {nbytes}",
            data.len()
        )));
    }
    let chunks = data[..nbytes].chunks_exact(size);
    let word = |c: &[u8]| -> u64 {
        let mut b = [0u8; 8];
        match order {
            Endian::Little => b[..size].copy_from_slice(c),
            Endian::Big => c.iter().rev().enumerate().for_each(|(i, &x)| b[i] = x),
        }
        u64::from_le_bytes(b)
    };
    let elements = match ty {
        "f2" => Elements::Float(chunks.map(|c| f16_to_f64(word(c) as u16)).collect()),
        "f4" => Elements::Float(
            chunks
                .map(|c| f64::from(f32::from_bits(word(c) as u32)))
                .collect(),
        ),
        "f8" => Elements::Float(chunks.map(|c| f64::from_bits(word(c))).collect()),
        "i1" => Elements::Int(chunks.map(|c| i64::from(word(c) as u8 as i8)).collect()),
        "i2" => Elements::Int(chunks.map(|c| i64::from(word(c) as u16 as i16)).collect()),
        "i4" => Elements::Int(chunks.map(|c| i64::from(word(c) as u32 as i32)).collect()),
        "i8" => Elements::Int(chunks.map(|c| word(c) as i64).collect()),
        "u1" | "u2" | "u4" => Elements::Int(chunks.map(|c| word(c) as i64).collect()),
        "b1" => Elements::Int(chunks.map(|c| i64::from(word(c) != 0)).collect()),
        _ => Elements::Int(
            chunks
                .map(|c| {
                    i64::try_from(word(c))
                        .map_err(|_| NpyError::Convert("u8 element above 2^63-1".into()))
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    let elements = if fortran && shape.len() > 1 {
        fortran_to_c(elements, &shape)
    } else {
        elements
    };
    Ok(Array {
        shape,
        dtype: ty.to_string(),
        elements,
    })
}

#[derive(Clone, Copy)]
enum Endian {
    Little,
    Big,
}

/// IEEE binary16 to f64 (exact).
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f64::from(h & 0x3ff);
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Reorders column-major elements into row-major order.
fn fortran_to_c(elements: Elements, shape: &[usize]) -> Elements {
    let n: usize = shape.iter().product();
    // Fortran strides: the first index varies fastest.
    let mut fstrides = vec![1usize; shape.len()];
    for i in 1..shape.len() {
        fstrides[i] = fstrides[i - 1] * shape[i - 1];
    }
    let mut idx = vec![0usize; shape.len()];
    let mut src = Vec::with_capacity(n);
    for _ in 0..n {
        src.push(idx.iter().zip(&fstrides).map(|(i, s)| i * s).sum::<usize>());
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    match elements {
        Elements::Float(v) => Elements::Float(src.iter().map(|&i| v[i]).collect()),
        Elements::Int(v) => Elements::Int(src.iter().map(|&i| v[i]).collect()),
    }
}

/// The three keys of an `.npy` header dict.
#[derive(Default)]
struct HeaderDict {
    descr: Option<String>,
    fortran_order: Option<bool>,
    shape: Option<Vec<usize>>,
}

/// Parses the header's Python dict literal (string keys; string, bool and
/// integer-tuple values).
fn parse_dict(s: &str) -> Result<HeaderDict, NpyError> {
    let mut p = Lexer {
        s: s.trim().as_bytes(),
        i: 0,
    };
    let mut dict = HeaderDict::default();
    p.expect(b'{')?;
    loop {
        p.skip_ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.skip_ws();
        p.expect(b':')?;
        p.skip_ws();
        match key.as_str() {
            "descr" => dict.descr = Some(p.string()?),
            "fortran_order" => dict.fortran_order = Some(p.boolean()?),
            "shape" => dict.shape = Some(p.tuple()?),
            other => return Err(malformed(format!("unexpected header key '{other}'"))),
        }
        p.skip_ws();
        if !p.eat(b',') {
            p.skip_ws();
            p.expect(b'}')?;
            break;
        }
    }
    Ok(dict)
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> Result<(), NpyError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(malformed(format!(
                "header: expected '{}' at byte {}",
                c as char, self.i
            )))
        }
    }
    fn string(&mut self) -> Result<String, NpyError> {
        let q = self
            .peek()
            .filter(|&c| c == b'\'' || c == b'"')
            .ok_or_else(|| malformed("header: expected a string"))?;
        self.i += 1;
        let start = self.i;
        while self.peek().is_some_and(|c| c != q) {
            self.i += 1;
        }
        let end = self.i;
        self.expect(q)?;
        String::from_utf8(self.s[start..end].to_vec())
            .map_err(|_| malformed("header: invalid string"))
    }
    fn boolean(&mut self) -> Result<bool, NpyError> {
        for (word, v) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if self.s[self.i..].starts_with(word) {
                self.i += word.len();
                return Ok(v);
            }
        }
        Err(malformed("header: expected True or False"))
    }
    fn tuple(&mut self) -> Result<Vec<usize>, NpyError> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            self.skip_ws();
            if self.eat(b')') {
                return Ok(dims);
            }
            let start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
            let digits = std::str::from_utf8(&self.s[start..self.i])
                .map_err(|_| malformed("header: bad shape"))?;
            // Python 2 era files may write long integers as `3L`.
            self.eat(b'L');
            dims.push(
                digits
                    .parse()
                    .map_err(|_| malformed(format!("header: bad dimension '{digits}'")))?,
            );
            self.skip_ws();
            if !self.eat(b',') {
                self.skip_ws();
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let header = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}\n",
            if fortran { "True" } else { "False" }
        );
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend_from_slice(&(header.len() as u16).to_le_bytes());
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn roundtrip_f32_and_i64() {
        let a = Array::from_f32(vec![2, 3], &[1.0, -2.5, 3.0, 0.0, 1e-8, 7.0]).unwrap();
        let mut buf = Vec::new();
        a.write_to(&mut buf).unwrap();
        assert_eq!((buf.len() - 6 * 4) % 64, 0, "data is 64-byte aligned");
        assert_eq!(Array::from_bytes(&buf).unwrap(), a);
        let b = Array::from_i64(vec![3], vec![1, -1, 1 << 40]).unwrap();
        let mut buf = Vec::new();
        b.write_to(&mut buf).unwrap();
        assert_eq!(Array::from_bytes(&buf).unwrap(), b);
        let s = Array::from_f32(vec![], &[4.0]).unwrap();
        let mut buf = Vec::new();
        s.write_to(&mut buf).unwrap();
        assert_eq!(Array::from_bytes(&buf).unwrap().shape, Vec::<usize>::new());
    }

    #[test]
    fn types_orders_and_endianness() {
        let be: Vec<u8> = [1i32, -2].iter().flat_map(|v| v.to_be_bytes()).collect();
        let a = Array::from_bytes(&npy(">i4", false, "(2,)", &be)).unwrap();
        assert_eq!(a.to_i64().unwrap(), vec![1, -2]);
        let f: Vec<u8> = [1u8, 2, 3, 4, 5, 6].to_vec();
        let a = Array::from_bytes(&npy("|u1", true, "(2, 3)", &f)).unwrap();
        // Column-major [[1,3,5],[2,4,6]].
        assert_eq!(a.to_i64().unwrap(), vec![1, 3, 5, 2, 4, 6]);
        let h: Vec<u8> = [0x3c00u16, 0xc000]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            Array::from_bytes(&npy("<f2", false, "(2,)", &h))
                .unwrap()
                .to_f32(),
            vec![1.0, -2.0]
        );
        let b = Array::from_bytes(&npy("|b1", false, "(2,)", &[0, 1])).unwrap();
        assert_eq!(b.to_i64().unwrap(), vec![0, 1]);
        assert!(Array::from_f32(vec![1], &[0.5]).unwrap().to_i64().is_err());
    }

    #[test]
    fn malformed_files_are_errors() {
        let good = npy("<f4", false, "(2,)", &[0; 8]);
        for cut in 0..good.len() {
            assert!(Array::from_bytes(&good[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Array::from_bytes(&npy("<U3", false, "(1,)", &[0; 12])).is_err());
        assert!(Array::from_bytes(&npy("<f4", false, "(99999999999, 99999999999)", &[])).is_err());
        assert!(Array::from_bytes(&npy("<f4", false, "(18446744073709551615, 3)", &[])).is_err());
        assert!(Array::from_bytes(b"\x93NUMPY\x09\x00").is_err());
        assert!(Array::from_bytes(&npy("<f4", false, "[2]", &[0; 8])).is_err());
    }
}
