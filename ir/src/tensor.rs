//! Concrete tensors: constant data in programs, inputs and outputs of the interpreter.
//!
//! A [`Tensor`] carries its encoding and shape; elements are stored row-major as `f32`
//! (for [`Encoding::Real`]) or as canonical representatives in `[0, modulus)` (`u64`) for
//! rings and fields. The invariant (data kind matches the encoding, element count matches
//! the shape, integers are reduced) holds for every `Tensor`: constructors check it.

use crate::types::{Encoding, TypeError, check_shape, numel};
use thiserror::Error;

/// Element storage of a [`Tensor`].
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `f32` elements of a `Real` tensor.
    F32(Vec<f32>),
    /// Canonical ring/field elements (`< 2^ℓ` or `< n`).
    U64(Vec<u64>),
}

impl Data {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::U64(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why tensor data is invalid.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum TensorError {
    /// The shape itself is invalid.
    #[error("invalid shape: {0}")]
    Shape(#[from] TypeError),
    /// Element count differs from the shape's.
    #[error("shape {shape:?} needs {expected} elements, found {found}")]
    Len {
        /// The shape.
        shape: Vec<usize>,
        /// Elements the shape needs.
        expected: usize,
        /// Elements given.
        found: usize,
    },
    /// Data kind does not match the encoding (f32 data for a ring, or integers for f32).
    #[error("{found} data given for encoding {encoding}")]
    Kind {
        /// The encoding.
        encoding: Encoding,
        /// "f32" or "integer".
        found: &'static str,
    },
    /// An integer element is outside the ring/field.
    #[error("element {index} = {value} does not fit encoding {encoding}")]
    Range {
        /// Position of the element (row-major).
        index: usize,
        /// The element.
        value: i128,
        /// The encoding.
        encoding: Encoding,
    },
}

/// A tensor of a given encoding and shape. See the module docs for the invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    encoding: Encoding,
    shape: Vec<usize>,
    data: Data,
}

impl Tensor {
    /// A tensor from raw data; checks the encoding, the shape, that the data kind matches
    /// the encoding, and that integer elements are canonical (`< modulus`).
    pub fn new(encoding: Encoding, shape: Vec<usize>, data: Data) -> Result<Tensor, TensorError> {
        encoding.validate()?;
        check_shape(&shape)?;
        let expected = numel(&shape);
        if data.len() != expected {
            return Err(TensorError::Len {
                shape,
                expected,
                found: data.len(),
            });
        }
        match (&data, encoding) {
            (Data::F32(_), Encoding::Real) => {}
            (Data::F32(_), _) => {
                return Err(TensorError::Kind {
                    encoding,
                    found: "f32",
                });
            }
            (Data::U64(_), Encoding::Real) => {
                return Err(TensorError::Kind {
                    encoding,
                    found: "integer",
                });
            }
            (Data::U64(v), _) => {
                let m = encoding.modulus().unwrap_or(u128::MAX);
                if let Some(index) = v.iter().position(|&x| u128::from(x) >= m) {
                    return Err(TensorError::Range {
                        index,
                        value: i128::from(v[index]),
                        encoding,
                    });
                }
            }
        }
        Ok(Tensor {
            encoding,
            shape,
            data,
        })
    }

    /// A `Real` tensor.
    pub fn real(shape: Vec<usize>, data: Vec<f32>) -> Result<Tensor, TensorError> {
        Tensor::new(Encoding::Real, shape, Data::F32(data))
    }

    /// A ring/field tensor from canonical elements (each `< modulus`).
    pub fn canonical(
        encoding: Encoding,
        shape: Vec<usize>,
        data: Vec<u64>,
    ) -> Result<Tensor, TensorError> {
        Tensor::new(encoding, shape, Data::U64(data))
    }

    /// A ring/field tensor from signed integers, each of which must lie in the encoding's
    /// signed range ([`Encoding::signed_range`]); no silent wrap-around.
    pub fn signed(
        encoding: Encoding,
        shape: Vec<usize>,
        data: &[i64],
    ) -> Result<Tensor, TensorError> {
        let Some((lo, hi)) = encoding.signed_range() else {
            return Err(TensorError::Kind {
                encoding,
                found: "integer",
            });
        };
        let mut out = Vec::with_capacity(data.len());
        for (index, &x) in data.iter().enumerate() {
            let x = i128::from(x);
            if x < lo || x > hi {
                return Err(TensorError::Range {
                    index,
                    value: x,
                    encoding,
                });
            }
            out.push(encoding.reduce(x));
        }
        Tensor::canonical(encoding, shape, out)
    }

    /// The all-zero tensor.
    pub fn zeros(encoding: Encoding, shape: Vec<usize>) -> Result<Tensor, TensorError> {
        check_shape(&shape)?;
        let n = numel(&shape);
        let data = if encoding.is_real() {
            Data::F32(vec![0.0; n])
        } else {
            Data::U64(vec![0; n])
        };
        Tensor::new(encoding, shape, data)
    }

    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.data.len()
    }

    /// The element storage.
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// Consumes the tensor, returning its storage.
    pub fn into_data(self) -> Data {
        self.data
    }

    /// The elements of a `Real` tensor.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match &self.data {
            Data::F32(v) => Some(v),
            Data::U64(_) => None,
        }
    }

    /// The canonical elements of a ring/field tensor.
    pub fn as_u64(&self) -> Option<&[u64]> {
        match &self.data {
            Data::U64(v) => Some(v),
            Data::F32(_) => None,
        }
    }

    /// The signed view of a ring/field tensor's elements ([`Encoding::signed`]).
    pub fn to_signed(&self) -> Option<Vec<i64>> {
        self.as_u64()
            .map(|v| v.iter().map(|&x| self.encoding.signed(x)).collect())
    }

    /// The same data with another shape of the same element count.
    pub fn reshaped(self, shape: Vec<usize>) -> Result<Tensor, TensorError> {
        Tensor::new(self.encoding, shape, self.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_check_invariants() {
        let r8 = Encoding::ring(8).unwrap();
        assert!(Tensor::canonical(r8, vec![2], vec![0, 255]).is_ok());
        assert!(matches!(
            Tensor::canonical(r8, vec![2], vec![0, 256]),
            Err(TensorError::Range { index: 1, .. })
        ));
        assert!(matches!(
            Tensor::canonical(r8, vec![3], vec![0, 1]),
            Err(TensorError::Len { .. })
        ));
        assert!(matches!(
            Tensor::real(vec![1], vec![1.0]).and_then(|t| Tensor::new(r8, vec![1], t.into_data())),
            Err(TensorError::Kind { .. })
        ));
        let t = Tensor::signed(r8, vec![3], &[-128, -1, 127]).unwrap();
        assert_eq!(t.as_u64().unwrap(), &[128, 255, 127]);
        assert_eq!(t.to_signed().unwrap(), vec![-128, -1, 127]);
        assert!(Tensor::signed(r8, vec![1], &[128]).is_err());
        assert!(Tensor::signed(r8, vec![1], &[-129]).is_err());
        let r64 = Encoding::ring(64).unwrap();
        let t = Tensor::signed(r64, vec![2], &[i64::MIN, i64::MAX]).unwrap();
        assert_eq!(t.to_signed().unwrap(), vec![i64::MIN, i64::MAX]);
        let f = Encoding::field(7).unwrap();
        assert!(Tensor::canonical(f, vec![1], vec![7]).is_err());
        assert_eq!(
            Tensor::signed(f, vec![2], &[-3, 3])
                .unwrap()
                .as_u64()
                .unwrap(),
            &[4, 3]
        );
        assert!(Tensor::signed(f, vec![1], &[4]).is_err());
    }
}
