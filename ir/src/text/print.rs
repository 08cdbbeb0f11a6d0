//! The printer of the text format.

use crate::backend::{Backend, OtKind};
use crate::id::ConstId;
use crate::ops::{Attr, Fields, Op, Scalar};
use crate::program::{Program, ValueId};
use crate::tensor::{Data, Tensor};
use crate::types::{ShapeDisplay, Type};
use std::convert::Infallible;
use std::fmt::Write;

/// Constant elements per line before the printer wraps.
const PER_LINE: usize = 16;

/// Prints `p` in the text format. Exact: parsing the result gives back `p`.
pub fn print(p: &Program) -> String {
    let mut out = String::new();
    let params = p.params();
    let _ = write!(
        out,
        "params mill_radix={} threads={}",
        params.mill_radix, params.threads
    );
    // OT, the default, is not printed (so OT programs print as before).
    if params.backend != Backend::Ot {
        let _ = write!(out, " linear={}", params.backend);
    }
    // Likewise IKNP, the IR text's default engine (sci-compile's, for an ONNX model, is
    // silent: its programs print `ot=silent`).
    if params.ot != OtKind::Iknp {
        let _ = write!(out, " ot={}", params.ot);
    }
    out.push('\n');
    for v in p.ids() {
        let i = p.instr(v);
        let _ = write!(out, "{}: {} = ", name(&i.name), i.ty);
        body(&mut out, p, &i.op);
        if let Some(b) = p.product_backend(v).filter(|&b| b != params.backend) {
            let _ = write!(out, " linear={b}");
        }
        // A secret product's backend where it is not the rule's.
        if let Some(b) = p
            .secret_product_backend(v)
            .filter(|&b| b != p.default_secret_backend(v))
        {
            let _ = write!(out, " linear={b}");
        }
        out.push('\n');
    }
    out
}

/// `%name`, quoted (`%"..."`) unless it only has the characters `[A-Za-z0-9_.-/]`.
fn name(n: &str) -> String {
    let plain = !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'));
    if plain {
        format!("%{n}")
    } else {
        format!("%\"{}\"", escape(n))
    }
}

/// Escapes `"`, `\` and control characters (as `\n`, `\r`, `\t` or `\u{hex}`).
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Shortest round-tripping decimal (Rust's `Debug` for f32: `1.0`, `-0.5`, `1e-7`,
/// `inf`), which parses back to the same bits.
fn f32_lit(x: f32) -> String {
    format!("{x:?}")
}

fn list(v: &[usize]) -> String {
    ShapeDisplay(v).to_string()
}

fn data(out: &mut String, t: &Tensor) {
    let items: Vec<String> = match t.data() {
        Data::F32(v) => v.iter().map(|&x| f32_lit(x)).collect(),
        Data::U64(v) => v
            .iter()
            .map(|&x| t.encoding().signed(x).to_string())
            .collect(),
    };
    out.push('[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
            if i % PER_LINE == 0 {
                out.push_str("\n    ");
            } else {
                out.push(' ');
            }
        }
        out.push_str(s);
    }
    out.push(']');
}

/// Writes an op's body (after its mnemonic) as the text format's reader expects it: the
/// operands, comma-separated, then each attribute as the op table's kind prints it.
struct Printer<'a> {
    out: &'a mut String,
    p: &'a Program,
    operands: usize,
}

impl Fields for Printer<'_> {
    type Error = Infallible;

    fn operand(&mut self, v: &mut ValueId) -> Result<(), Infallible> {
        self.out
            .push_str(if self.operands == 0 { " " } else { ", " });
        self.out.push_str(&name(self.p.name(*v)));
        self.operands += 1;
        Ok(())
    }
    fn optional(&mut self, v: &mut Option<ValueId>) -> Result<(), Infallible> {
        v.iter_mut().try_for_each(|v| self.operand(v))
    }
    fn operand_list(&mut self, v: &mut Vec<ValueId>) -> Result<(), Infallible> {
        v.iter_mut().try_for_each(|v| self.operand(v))
    }
    fn attr<T: Attr>(&mut self, key: &'static str, v: &mut T) -> Result<(), Infallible> {
        let _ = write!(self.out, " {key}={v}");
        Ok(())
    }
    fn flag(&mut self, key: &'static str, v: &mut bool) -> Result<(), Infallible> {
        if *v {
            let _ = write!(self.out, " {key}");
        }
        Ok(())
    }
    fn array<const N: usize>(
        &mut self,
        key: &'static str,
        v: &mut [usize; N],
    ) -> Result<(), Infallible> {
        let _ = write!(self.out, " {key}={}", list(v));
        Ok(())
    }
    fn list(&mut self, key: &'static str, v: &mut Vec<usize>) -> Result<(), Infallible> {
        let _ = write!(self.out, " {key}={}", list(v));
        Ok(())
    }
    fn int(&mut self, key: &'static str, v: &mut i64) -> Result<(), Infallible> {
        let _ = write!(self.out, " {key}={v}");
        Ok(())
    }
    fn float(&mut self, key: &'static str, v: &mut f32) -> Result<(), Infallible> {
        let _ = write!(self.out, " {key}={}", f32_lit(*v));
        Ok(())
    }
    fn label(&mut self, v: &mut String) -> Result<(), Infallible> {
        let _ = write!(self.out, " \"{}\"", escape(v));
        Ok(())
    }
    fn ty(&mut self, _: &mut Type) {}
    fn const_id(&mut self, v: &mut ConstId) -> Result<(), Infallible> {
        match self.p.const_data(*v) {
            Some(t) => {
                self.out.push(' ');
                data(self.out, t);
            }
            None => self.out.push_str(" withheld"),
        }
        Ok(())
    }
    fn fill(&mut self, key: &'static str, v: &mut Scalar, _: ValueId) -> Result<(), Infallible> {
        let v = match v {
            Scalar::F32(f) => f32_lit(*f),
            Scalar::Int(i) => i.to_string(),
        };
        let _ = write!(self.out, " {key}={v}");
        Ok(())
    }
}

/// The mnemonic, operands and attributes of `op`.
fn body(out: &mut String, p: &Program, op: &Op) {
    out.push_str(op.mnemonic());
    let mut printer = Printer {
        out,
        p,
        operands: 0,
    };
    // The walk takes `&mut` (shared with the readers); printing only reads.
    match op.clone().fields(&mut printer) {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_escapes() {
        assert_eq!(name("conv1.w"), "%conv1.w");
        assert_eq!(name("a/b-c_0"), "%a/b-c_0");
        assert_eq!(name("x:0"), "%\"x:0\"");
        assert_eq!(name(""), "%\"\"");
        assert_eq!(escape("a\"b\\c\nd\u{1}é"), "a\\\"b\\\\c\\nd\\u{1}é");
        for x in [
            1.0f32,
            -0.0,
            1e-7,
            f32::MAX,
            f32::MIN_POSITIVE,
            0.1,
            f32::INFINITY,
        ] {
            assert_eq!(f32_lit(x).parse::<f32>().unwrap().to_bits(), x.to_bits());
        }
    }
}
