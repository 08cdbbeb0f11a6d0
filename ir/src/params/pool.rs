//! MaxPool and ArgMax (CrypTFlow2 §5.2.2): what each level's multiplexer carries. Its
//! price: `cost::pool`.

use super::Modulus;

/// The multiplexer's fields: the value, the index (ArgMax), the sign (exact mode).
pub fn fields(md: Modulus, index: bool, exact: bool) -> Vec<Modulus> {
    let mut f = vec![md];
    if index {
        f.push(md);
    }
    if exact {
        f.push(Modulus::Pow2(1));
    }
    f
}
