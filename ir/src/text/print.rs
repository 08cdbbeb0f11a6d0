//! The printer of the text format.

use crate::backend::{Backend, OtKind};
use crate::ops::{Op, Pool2d, Scalar};
use crate::program::{Program, ValueId};
use crate::tensor::{Data, Tensor};
use crate::types::ShapeDisplay;
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

fn pool(out: &mut String, p: &Pool2d) {
    let _ = write!(
        out,
        " kernel={} strides={} pads={}",
        list(&p.kernel),
        list(&p.strides),
        list(&p.pads)
    );
    if p.ceil_mode {
        out.push_str(" ceil_mode");
    }
}

fn body(out: &mut String, p: &Program, op: &Op) {
    let n = |v: &ValueId| name(p.name(*v));
    let names = |vs: &[&ValueId]| vs.iter().map(|v| n(v)).collect::<Vec<_>>().join(", ");
    out.push_str(op.mnemonic());
    match op {
        Op::Input { name: ext, .. } => {
            let _ = write!(out, " \"{}\"", escape(ext));
        }
        Op::Const { id, .. } => match p.const_data(*id) {
            Some(t) => {
                out.push(' ');
                data(out, t);
            }
            None => out.push_str(" withheld"),
        },
        Op::Conv2d { conv, .. } => {
            let _ = write!(
                out,
                " {} strides={} pads={} dilations={} groups={}",
                names(&op.operands()),
                list(&conv.strides),
                list(&conv.pads),
                list(&conv.dilations),
                conv.groups
            );
        }
        Op::MatMul { .. }
        | Op::Add { .. }
        | Op::Sub { .. }
        | Op::Mul { .. }
        | Op::Relu { .. }
        | Op::Sigmoid { .. }
        | Op::Tanh { .. }
        | Op::Rsqrt { .. }
        | Op::GlobalAvgPool { .. }
        | Op::Identity { .. } => {
            let _ = write!(out, " {}", names(&op.operands()));
        }
        Op::MulPublic { x, k } => {
            let _ = write!(out, " {} k={k}", n(x));
        }
        Op::ScaleUp { x, k } => {
            let _ = write!(out, " {} k={k}", n(x));
        }
        Op::Trunc { x, s, nonneg } => {
            let _ = write!(out, " {} s={s}", n(x));
            if *nonneg {
                out.push_str(" nonneg");
            }
        }
        Op::DivPublic { x, d } => {
            let _ = write!(out, " {} d={d}", n(x));
        }
        Op::MaxPool { x, pool: pl } => {
            let _ = write!(out, " {}", n(x));
            pool(out, pl);
        }
        Op::AvgPool {
            x,
            pool: pl,
            count_include_pad,
        } => {
            let _ = write!(out, " {}", n(x));
            pool(out, pl);
            if *count_include_pad {
                out.push_str(" count_include_pad");
            }
        }
        Op::ArgMax { x, axis, keepdims } => {
            let _ = write!(out, " {} axis={axis}", n(x));
            if *keepdims {
                out.push_str(" keepdims");
            }
        }
        Op::Reshape { x, shape } => {
            let _ = write!(out, " {} shape={}", n(x), list(shape));
        }
        Op::Flatten { x, axis } | Op::Softmax { x, axis } => {
            let _ = write!(out, " {} axis={axis}", n(x));
        }
        Op::Transpose { x, perm } => {
            let _ = write!(out, " {} perm={}", n(x), list(perm));
        }
        Op::Gather { x, axis, indices } => {
            let _ = write!(out, " {} axis={axis} indices={}", n(x), list(indices));
        }
        Op::Concat { axis, .. } => {
            let _ = write!(out, " {} axis={axis}", names(&op.operands()));
        }
        Op::Pad { x, pads, value } => {
            let v = match value {
                Scalar::F32(f) => f32_lit(*f),
                Scalar::Int(i) => i.to_string(),
            };
            let _ = write!(out, " {} pads={} value={v}", n(x), list(pads));
        }
        Op::Output {
            x,
            name: ext,
            logits,
        } => {
            let _ = write!(out, " {} \"{}\"", n(x), escape(ext));
            if *logits {
                out.push_str(" logits");
            }
        }
        Op::BatchNorm { epsilon, .. } => {
            let _ = write!(
                out,
                " {} epsilon={}",
                names(&op.operands()),
                f32_lit(*epsilon)
            );
        }
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
