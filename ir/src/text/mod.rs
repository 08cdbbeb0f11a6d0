//! The textual IR: a printer and a lalrpop parser that round-trip exactly
//! (print → parse → print is the identity, and parse ∘ print gives back an equal
//! [`Program`]), constant data included.
//!
//! One line per instruction, in program order, `%name: type = op operands attributes`;
//! a `params` header carries the protocol parameters. The grammar is in
//! `grammar.lalrpop`; `ir/README.md` documents it with an example. Parse errors carry a
//! line, a column and what was expected; a well-formed file whose program does not
//! type-check reports the type checker's error at the offending instruction.

mod ast;
mod print;

use crate::id::ConstId;
use crate::ops::{Attr, Fields, OPCODES, Op, Scalar};
use crate::program::{Builder, Params, Program, ValueId};
use crate::tensor::{Data, Tensor};
use crate::types::Type;
use ast::{ActionError, Arg, Body, Name, Num, RawProgram, Value};
use lalrpop_util::lalrpop_mod;
use std::collections::HashMap;
use std::fmt;
use thiserror::Error;

pub use print::print;

lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused, missing_docs)]
    grammar,
    "/text/grammar.rs"
);

/// A text-format error: position (1-based line and column, in characters) and message.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("line {line}, column {col}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
    /// What went wrong (for syntax errors, what was found and what was expected).
    pub message: String,
}

impl Program {
    /// Parses the text format ([`crate::text`]) into a type-checked program.
    pub fn parse(src: &str) -> Result<Program, ParseError> {
        parse(src)
    }

    /// Prints the program in the text format ([`crate::text`]).
    pub fn to_text(&self) -> String {
        print(self)
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print(self))
    }
}

/// Parses the text format into a type-checked program.
pub fn parse(src: &str) -> Result<Program, ParseError> {
    // Building the parser compiles its lexer's regular expressions (about 0.8 ms, more
    // than parsing a small program): once per process.
    static PARSER: std::sync::OnceLock<grammar::ProgramParser> = std::sync::OnceLock::new();
    let raw = PARSER
        .get_or_init(grammar::ProgramParser::new)
        .parse(src)
        .map_err(|e| syntax_error(src, e))?;
    resolve(src, raw)
}

fn at(src: &str, loc: usize, message: String) -> ParseError {
    let before = src.get(..loc).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    ParseError { line, col, message }
}

/// A readable name for a terminal of the grammar, as lalrpop reports it.
fn describe_terminal(t: &str) -> String {
    if t.starts_with("r#\"") || t.starts_with("r\"") {
        if t.contains('%') {
            "a value name (%name)".into()
        } else if t.contains("i[0-9]") {
            "a ring type (i<bits>.<scale>)".into()
        } else if t.contains("z[0-9]") {
            "a field type (z<modulus>.<scale>)".into()
        } else if t.contains("\"(") {
            "a string".into()
        } else if t.contains("[a-z_]") {
            "a word (an op or an attribute)".into()
        } else {
            "a number".into()
        }
    } else {
        format!("`{}`", t.trim_matches('"'))
    }
}

fn expected_list(expected: &[String]) -> String {
    let mut v: Vec<String> = expected.iter().map(|t| describe_terminal(t)).collect();
    v.dedup();
    match v.len() {
        0 => String::new(),
        1 => format!(", expected {}", v[0]),
        _ => format!(", expected one of {}", v.join(", ")),
    }
}

fn syntax_error<T: fmt::Display>(
    src: &str,
    e: lalrpop_util::ParseError<usize, T, ActionError>,
) -> ParseError {
    use lalrpop_util::ParseError as E;
    match e {
        E::InvalidToken { location } => {
            let rest = src.get(location..).unwrap_or_default();
            let word: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let found = if word.is_empty() {
                rest.chars().next().map(String::from).unwrap_or_default()
            } else {
                word
            };
            at(src, location, format!("invalid token `{found}`"))
        }
        E::UnrecognizedEof { location, expected } => at(
            src,
            location,
            format!("unexpected end of input{}", expected_list(&expected)),
        ),
        E::UnrecognizedToken {
            token: (l, tok, _),
            expected,
        } => at(
            src,
            l,
            format!("unexpected `{tok}`{}", expected_list(&expected)),
        ),
        E::ExtraToken { token: (l, tok, _) } => at(src, l, format!("unexpected extra `{tok}`")),
        E::User { error } => at(src, error.loc, error.message),
    }
}

/// Turns the parse tree into a program through the [`Builder`] (which type-checks).
fn resolve(src: &str, raw: RawProgram) -> Result<Program, ParseError> {
    let mut b = Builder::new();
    if let Some((mill_radix, threads, backend, ot)) = raw.params {
        b.set_params(Params {
            mill_radix,
            threads,
            backend,
            ot,
        });
    }
    let mut ids: HashMap<String, ValueId> = HashMap::new();
    let mut linear = Vec::new();
    for ins in raw.instrs {
        let (name, loc) = ins.name;
        let lookup = |(n, l): &(String, usize)| {
            ids.get(n)
                .copied()
                .ok_or_else(|| at(src, *l, format!("unknown value %{n}")))
        };
        let op: Op = match ins.body {
            Body::Const(data) => {
                let data = data
                    .map(|nums| const_data(src, &ins.ty, &nums))
                    .transpose()?;
                Op::Const {
                    id: b.add_const(data),
                    ty: ins.ty.clone(),
                }
            }
            Body::Op {
                mnemonic,
                operands,
                args,
            } => {
                let operands = operands.iter().map(lookup).collect::<Result<_, _>>()?;
                read_op(src, &mnemonic, operands, args, &ins.ty)?
            }
        };
        let v = b.push(&name, op).map_err(|e| at(src, loc, e.to_string()))?;
        if b.ty(v) != &ins.ty {
            return Err(at(
                src,
                loc,
                format!(
                    "%{name} is written with type {}, but its op produces {}",
                    ins.ty,
                    b.ty(v)
                ),
            ));
        }
        if let Some(backend) = ins.linear {
            linear.push((v, backend, loc));
        }
        ids.insert(name, v);
    }
    let mut p = b.finish().map_err(|e| at(src, 0, e.to_string()))?;
    for (v, backend, loc) in linear {
        p.set_product_backend(v, backend)
            .map_err(|e| at(src, loc, e.to_string()))?;
    }
    Ok(p)
}

/// The op `mnemonic` of an instruction of type `ty` from its resolved operands and
/// its attributes as written: the op table's walk ([`Fields`]) over the op's template,
/// taking each field from what was written. Errors name the op and the field: an
/// unknown op, too few or too many operands, a missing, malformed or unknown attribute.
fn read_op(
    src: &str,
    mnemonic: &Name,
    operands: Vec<ValueId>,
    args: Vec<Arg>,
    ty: &Type,
) -> Result<Op, ParseError> {
    let (m, loc) = mnemonic;
    // `const` never gets here: the grammar reads its data literal itself.
    let code = OPCODES.iter().find(|&&(_, n)| n == m).map(|&(c, _)| c);
    let mut op = code.and_then(|c| Op::template(c, ty)).ok_or_else(|| {
        let ops: Vec<&str> = OPCODES.iter().map(|&(_, n)| n).collect();
        at(
            src,
            *loc,
            format!("unknown op `{m}` (the ops: {})", ops.join(", ")),
        )
    })?;
    let mut r = Reader {
        src,
        op: m,
        loc: *loc,
        operands,
        next: 0,
        args: args.into_iter().map(Some).collect(),
        ty,
    };
    op.fields(&mut r)?;
    r.finish()?;
    Ok(op)
}

/// Fills an op's fields from the operands and attributes written for it (see
/// [`read_op`]); each attribute is taken once.
struct Reader<'a> {
    src: &'a str,
    /// The op's mnemonic and its position.
    op: &'a str,
    loc: usize,
    operands: Vec<ValueId>,
    next: usize,
    /// The attributes not taken yet.
    args: Vec<Option<Arg>>,
    ty: &'a Type,
}

impl Reader<'_> {
    fn error(&self, loc: usize, message: String) -> ParseError {
        at(self.src, loc, message)
    }

    /// Takes the attribute `key` (`key=value` or `key`), if written.
    fn take(&mut self, key: &str) -> Option<Arg> {
        self.args
            .iter_mut()
            .find(|a| a.as_ref().and_then(Arg::key).is_some_and(|k| k.0 == key))
            .and_then(Option::take)
    }

    /// The value of `key=value`; an error if missing or written as a flag.
    fn value(&mut self, key: &'static str) -> Result<(Value, usize), ParseError> {
        match self.take(key) {
            Some(Arg::Value { key: (_, l), value }) => Ok((value, l)),
            Some(a) => Err(self.error(a.loc(), format!("`{key}` needs a value: `{key}=…`"))),
            None => Err(self.error(self.loc, format!("`{}` needs `{key}=…`", self.op))),
        }
    }

    /// `key=n` with a non-negative integer `n`.
    fn natural(&self, key: &str, n: &Num) -> Result<u64, ParseError> {
        if n.neg || !n.is_int() {
            return Err(self.error(
                n.loc,
                format!("`{key}` takes a non-negative integer, found {}", n.text),
            ));
        }
        n.text
            .parse()
            .map_err(|_| self.error(n.loc, format!("integer {} is out of range here", n.text)))
    }

    /// `key=[n, …]` of non-negative integers.
    fn naturals(&mut self, key: &'static str) -> Result<(Vec<usize>, usize), ParseError> {
        match self.value(key)? {
            (Value::List { items, loc }, _) => {
                let v = items
                    .iter()
                    .map(|n| {
                        let v = self.natural(key, n)?;
                        usize::try_from(v).map_err(|_| {
                            self.error(n.loc, format!("integer {} is out of range here", n.text))
                        })
                    })
                    .collect::<Result<_, _>>()?;
                Ok((v, loc))
            }
            (Value::Num(n), _) => Err(self.error(
                n.loc,
                format!("`{key}` takes a list `[…]`, found {}", n.text),
            )),
        }
    }

    /// `key=n`, a single number.
    fn number(&mut self, key: &'static str) -> Result<Num, ParseError> {
        match self.value(key)? {
            (Value::Num(n), _) => Ok(n),
            (Value::List { loc, .. }, _) => {
                Err(self.error(loc, format!("`{key}` takes a number, not a list")))
            }
        }
    }

    /// Errors unless every operand and attribute was taken.
    fn finish(&self) -> Result<(), ParseError> {
        if self.next < self.operands.len() {
            return Err(self.error(
                self.loc,
                format!(
                    "`{}` takes {} operands, {} written",
                    self.op,
                    self.next,
                    self.operands.len()
                ),
            ));
        }
        match self.args.iter().flatten().next() {
            Some(a) => Err(self.error(
                a.loc(),
                match a.key() {
                    Some((k, _)) => {
                        format!("`{}` has no attribute `{k}` (or it is repeated)", self.op)
                    }
                    None => format!("`{}` takes no (further) string", self.op),
                },
            )),
            None => Ok(()),
        }
    }
}

impl Fields for Reader<'_> {
    type Error = ParseError;

    fn operand(&mut self, v: &mut ValueId) -> Result<(), ParseError> {
        *v = *self.operands.get(self.next).ok_or_else(|| {
            self.error(
                self.loc,
                format!(
                    "`{}` takes more operands than the {} written",
                    self.op,
                    self.operands.len()
                ),
            )
        })?;
        self.next += 1;
        Ok(())
    }
    fn optional(&mut self, v: &mut Option<ValueId>) -> Result<(), ParseError> {
        *v = self.operands.get(self.next).copied();
        self.next += usize::from(v.is_some());
        Ok(())
    }
    fn operand_list(&mut self, v: &mut Vec<ValueId>) -> Result<(), ParseError> {
        *v = self.operands.get(self.next..).unwrap_or_default().to_vec();
        if v.is_empty() {
            return Err(self.error(
                self.loc,
                format!("`{}` takes at least one operand", self.op),
            ));
        }
        self.next = self.operands.len();
        Ok(())
    }
    fn attr<T: Attr>(&mut self, key: &'static str, v: &mut T) -> Result<(), ParseError> {
        let n = self.number(key)?;
        let raw = self.natural(key, &n)?;
        *v = T::from_u64(raw)
            .ok_or_else(|| self.error(n.loc, format!("integer {} is out of range here", n.text)))?;
        Ok(())
    }
    fn flag(&mut self, key: &'static str, v: &mut bool) -> Result<(), ParseError> {
        *v = match self.take(key) {
            None => false,
            Some(Arg::Flag(_)) => true,
            Some(a) => {
                return Err(self.error(
                    a.loc(),
                    format!("`{key}` is a flag: write `{key}` alone, or nothing"),
                ));
            }
        };
        Ok(())
    }
    fn array<const N: usize>(
        &mut self,
        key: &'static str,
        v: &mut [usize; N],
    ) -> Result<(), ParseError> {
        let (items, loc) = self.naturals(key)?;
        *v = items.try_into().map_err(|items: Vec<usize>| {
            self.error(
                loc,
                format!("`{key}` takes {N} entries, found {}", items.len()),
            )
        })?;
        Ok(())
    }
    fn list(&mut self, key: &'static str, v: &mut Vec<usize>) -> Result<(), ParseError> {
        *v = self.naturals(key)?.0;
        Ok(())
    }
    fn int(&mut self, key: &'static str, v: &mut i64) -> Result<(), ParseError> {
        let n = self.number(key)?;
        if !n.is_int() {
            return Err(self.error(n.loc, format!("`{key}` takes an integer, found {}", n.text)));
        }
        let i = signed_int(&n).map_err(|e| at(self.src, e.loc, e.message))?;
        *v = i64::try_from(i)
            .map_err(|_| self.error(n.loc, format!("integer {i} does not fit 64 bits")))?;
        Ok(())
    }
    fn float(&mut self, key: &'static str, v: &mut f32) -> Result<(), ParseError> {
        let n = self.number(key)?;
        *v = parse_f32(&n).map_err(|e| at(self.src, e.loc, e.message))?;
        Ok(())
    }
    fn label(&mut self, v: &mut String) -> Result<(), ParseError> {
        let label = self
            .args
            .iter_mut()
            .find(|a| matches!(a, Some(Arg::Label { .. })))
            .and_then(Option::take);
        match label {
            Some(Arg::Label { text, .. }) => {
                *v = text;
                Ok(())
            }
            _ => Err(self.error(self.loc, format!("`{}` needs a string \"…\"", self.op))),
        }
    }
    fn ty(&mut self, v: &mut Type) {
        v.clone_from(self.ty);
    }
    fn const_id(&mut self, _: &mut ConstId) -> Result<(), ParseError> {
        Err(self.error(
            self.loc,
            "`const` takes its data `[…]` or `withheld`".into(),
        ))
    }
    fn fill(&mut self, key: &'static str, v: &mut Scalar, _: ValueId) -> Result<(), ParseError> {
        let n = self.number(key)?;
        *v = scalar(self.src, &n)?;
        Ok(())
    }
}

/// A pad value: integer syntax gives an integer scalar, float syntax an f32.
fn scalar(src: &str, n: &Num) -> Result<Scalar, ParseError> {
    if n.is_int() {
        signed_int(n)
            .and_then(|v| {
                i64::try_from(v).map_err(|_| ActionError {
                    loc: n.loc,
                    message: format!("integer {v} does not fit 64 bits"),
                })
            })
            .map(Scalar::Int)
    } else {
        parse_f32(n).map(Scalar::F32)
    }
    .map_err(|e| at(src, e.loc, e.message))
}

fn signed_int(n: &Num) -> Result<i128, ActionError> {
    let v: i128 = n.text.parse().map_err(|_| ActionError {
        loc: n.loc,
        message: format!("integer {} is too large", n.text),
    })?;
    Ok(if n.neg { -v } else { v })
}

/// An f32 literal (integer or float syntax, `inf`, `NaN`).
pub(crate) fn parse_f32(n: &Num) -> Result<f32, ActionError> {
    let v: f32 = n.text.parse().map_err(|_| ActionError {
        loc: n.loc,
        message: format!("invalid number {}", n.text),
    })?;
    Ok(if n.neg { -v } else { v })
}

/// Constant data written for type `ty`: f32 literals for `Real`, signed integers in the
/// encoding's signed range otherwise (no wrap-around).
fn const_data(src: &str, ty: &crate::Type, nums: &[Num]) -> Result<Tensor, ParseError> {
    let enc = ty.encoding();
    let shape = ty.shape().to_vec();
    let data = match enc.signed_range() {
        None => Data::F32(
            nums.iter()
                .map(|n| parse_f32(n).map_err(|e| at(src, e.loc, e.message)))
                .collect::<Result<_, _>>()?,
        ),
        Some((lo, hi)) => Data::U64(
            nums.iter()
                .map(|n| {
                    if !n.is_int() {
                        return Err(at(
                            src,
                            n.loc,
                            format!("expected an integer element of {enc}, found {}", n.text),
                        ));
                    }
                    let v = signed_int(n).map_err(|e| at(src, e.loc, e.message))?;
                    if v < lo || v > hi {
                        return Err(at(
                            src,
                            n.loc,
                            format!("{v} is outside the signed range [{lo}, {hi}] of {enc}"),
                        ));
                    }
                    Ok(enc.reduce(v))
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    let loc = nums.first().map_or(0, |n| n.loc);
    Tensor::new(enc, shape, data).map_err(|e| at(src, loc, format!("constant data: {e}")))
}

/// Splits `"<a>.<b>"` (after the encoding letter) into numbers.
pub(crate) fn split_enc<N: std::str::FromStr, T>(
    s: &str,
    loc: usize,
) -> Result<(N, u32), lalrpop_util::ParseError<usize, T, ActionError>> {
    let err = || lalrpop_util::ParseError::User {
        error: ActionError {
            loc,
            message: format!("invalid encoding parameters {s}"),
        },
    };
    let (a, b) = s.split_once('.').ok_or_else(err)?;
    Ok((a.parse().map_err(|_| err())?, b.parse().map_err(|_| err())?))
}

/// The error for an integer literal that does not fit its attribute.
pub(crate) fn too_big<T>(loc: usize, s: &str) -> lalrpop_util::ParseError<usize, T, ActionError> {
    lalrpop_util::ParseError::User {
        error: ActionError {
            loc,
            message: format!("integer {s} is out of range here"),
        },
    }
}

/// Undoes [`print::escape`]: `\"`, `\\`, `\n`, `\r`, `\t`, `\u{hex}`.
pub(crate) fn unescape(s: &str, loc: usize) -> Result<String, ActionError> {
    let err = |m: &str| ActionError {
        loc,
        message: m.to_string(),
    };
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') => {
                if it.next() != Some('{') {
                    return Err(err("expected `{` after `\\u`"));
                }
                let hex: String = it.by_ref().take_while(|&c| c != '}').collect();
                let c = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| err("invalid `\\u{…}` escape"))?;
                out.push(c);
            }
            _ => return Err(err("invalid escape sequence")),
        }
    }
    Ok(out)
}
