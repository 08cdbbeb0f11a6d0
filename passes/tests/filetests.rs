//! The pass filetests (in the manner of Cranelift's `filetests`): every
//! `tests/filetests/<pass>/*.sir` file is a small IR program with a header naming
//! the pass(es) to run and the checks to make, and the expected output beside it.
//! Adding a pass test is adding a file; the format is described in
//! `passes/README.md`.
//!
//! For each file the runner parses the program, runs the passes, compares the
//! printed result with the file's `# ---- expect ----` section (or the program
//! itself for `# expect: unchanged`, or the error for `# error:`), and checks with
//! the reference interpreter that the rewrite preserved the result: bit for bit
//! (`same`), within a float tolerance (`close`), or within the quantization
//! error (`dequantized`). `SCI_BLESS=1` rewrites the expected sections from the
//! actual output (review the diff).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sci_ir::{Encoding, Program, Tensor, interp};
use sci_passes::{
    FnPass, Pass, PassError, Pipeline, Quantize, dce, fold_affine, fold_batchnorm, fold_constants,
    fuse_gelu, fuse_relu_trunc, nonneg, place_truncs, remove_identity, swap_relu_maxpool,
};
use sci_testkit::Lcg;

/// The line that starts a file's expected output.
const EXPECT: &str = "# ---- expect ----";

/// One parsed filetest.
struct FileTest {
    /// The passes to run, in order.
    steps: Vec<Step>,
    /// The interpreter checks.
    checks: Vec<Check>,
    /// Explicit inputs (by graph input name) checked besides the random ones.
    inputs: Vec<(String, Vec<f64>)>,
    /// What the passes must produce.
    expect: Expect,
    /// The file's text up to (and without) the expected section.
    head: String,
    /// The program under test.
    program: Program,
}

/// What a filetest expects of the passes.
enum Expect {
    /// This printed program (`None`: the file has no expected section yet).
    Text(Option<String>),
    /// The program unchanged (`# expect: unchanged`).
    Unchanged,
    /// An error whose `Debug` form contains `kind` (the `PassError` variant, if
    /// given) and whose message contains every one of `contains`.
    Error {
        kind: Option<String>,
        contains: Vec<String>,
    },
}

/// An interpreter check between the output and a reference program.
enum Check {
    /// Bit-identical outputs on `trials` random inputs; the reference is the input
    /// program, or the input program run through `against`.
    Same { trials: u64, against: Vec<Step> },
    /// Float outputs within `tol` (absolute plus relative) of the input program's.
    Close { trials: u64, tol: f32 },
    /// The fixed-point output, decoded, within `tol` of the float input program's.
    Dequantized { trials: u64, tol: f32 },
    /// The output passes `Program::check_secure`.
    Secure,
}

/// A pass without parameters.
type PassFn = fn(&Program) -> Result<Program, PassError>;

/// The passes without parameters, by name.
const SIMPLE_PASSES: &[(&str, PassFn)] = &[
    ("remove_identity", remove_identity::run),
    ("fold_constants", fold_constants::run),
    ("fold_batchnorm", fold_batchnorm::run),
    ("fold_affine", fold_affine::run),
    ("fuse_gelu", fuse_gelu::run),
    ("swap_relu_maxpool", swap_relu_maxpool::run),
    ("dce", dce::run),
    ("place_truncs", place_truncs::run),
    ("mark_nonneg", nonneg::run),
    ("fuse_relu_trunc", fuse_relu_trunc::run),
];

/// A step of a filetest: one pass, or a pipeline of the pass manager.
enum Step {
    /// A single pass.
    Pass(Box<dyn Pass>),
    /// A pipeline (`float_stage`, or `pipeline bits=ℓ scale=s`: the standard one).
    Pipeline(Pipeline),
}

impl Step {
    /// Parses `NAME [key=value ...]`: a pass of [`SIMPLE_PASSES`], `quantize bits=ℓ
    /// scale=s`, `float_stage` or `pipeline bits=ℓ scale=s`.
    fn parse(spec: &str) -> Result<Step, String> {
        let mut words = spec.split_whitespace();
        let name = words.next().ok_or("empty pass name")?;
        let args: Vec<&str> = words.collect();
        let arg = |key: &str| -> Result<u32, String> {
            args.iter()
                .find_map(|a| a.strip_prefix(key)?.strip_prefix('='))
                .ok_or(format!("pass `{name}` needs `{key}=N`"))?
                .parse()
                .map_err(|e| format!("pass `{name}`, `{key}`: {e}"))
        };
        let quantize = || -> Result<Quantize, String> {
            Ok(Quantize {
                bits: arg("bits")?,
                scale: arg("scale")?,
            })
        };
        Ok(match name {
            "quantize" => Step::Pass(Box::new(quantize()?)),
            "float_stage" => Step::Pipeline(Pipeline::float_stage()),
            "pipeline" => Step::Pipeline(Pipeline::standard(Some(quantize()?))),
            _ => {
                let &(name, f) = SIMPLE_PASSES
                    .iter()
                    .find(|(n, _)| *n == name)
                    .ok_or(format!("unknown pass `{name}`"))?;
                Step::Pass(Box::new(FnPass::new(name, f)))
            }
        })
    }

    /// Runs the step; an error is given as its message and its `Debug` form.
    fn run(&self, p: &Program) -> Result<Program, (String, String)> {
        match self {
            Step::Pass(pass) => pass.run(p).map_err(|e| (e.to_string(), format!("{e:?}"))),
            Step::Pipeline(pl) => pl.run(p).map_err(|e| (e.to_string(), format!("{e:?}"))),
        }
    }
}

/// Runs `steps` in order.
fn run_steps(steps: &[Step], p: &Program) -> Result<Program, (String, String)> {
    steps.iter().try_fold(p.clone(), |cur, s| s.run(&cur))
}

impl FileTest {
    /// Parses a filetest: the `#` header directives, the program, and the expected
    /// section after [`EXPECT`].
    fn parse(text: &str) -> Result<FileTest, String> {
        let (head, expected) = match text.split_once(&format!("\n{EXPECT}\n")) {
            Some((h, e)) => (h, Some(e.to_string())),
            None => (text.trim_end(), None),
        };
        let mut steps = Vec::new();
        let mut checks = Vec::new();
        let mut inputs = Vec::new();
        let mut unchanged = false;
        let (mut kind, mut contains) = (None, Vec::new());
        for line in head.lines().map_while(|l| l.strip_prefix('#')) {
            let Some((key, value)) = line.trim().split_once(':') else {
                continue;
            };
            let value = value.trim();
            match key {
                "pass" => steps.push(Step::parse(value)?),
                "check" => checks.push(Check::parse(value)?),
                "input" => inputs.push(parse_input(value)?),
                "expect" if value == "unchanged" => unchanged = true,
                "expect" => return Err(format!("`# expect: {value}`: only `unchanged` is known")),
                "error" => contains.push(value.to_string()),
                "error-kind" => kind = Some(value.to_string()),
                _ => {}
            }
        }
        if steps.is_empty() {
            return Err("the header names no `# pass:`".into());
        }
        let expect = match (unchanged, kind.is_some() || !contains.is_empty()) {
            (false, false) => Expect::Text(expected.map(|e| e.trim_end().to_string())),
            (true, false) if expected.is_none() => Expect::Unchanged,
            (false, true) if expected.is_none() => Expect::Error { kind, contains },
            _ => {
                return Err(format!(
                    "a file expects one of: a `{EXPECT}` section, `# expect: unchanged`, `# error:`"
                ));
            }
        };
        match expect {
            Expect::Error { .. } if !checks.is_empty() => {
                return Err("a file expecting an error has no `# check:`".into());
            }
            Expect::Text(_) if checks.is_empty() => {
                return Err("a rewrite needs a `# check:` of the interpreter's result".into());
            }
            _ => {}
        }
        let program = Program::parse(head).map_err(|e| format!("the program: {e}"))?;
        Ok(FileTest {
            steps,
            checks,
            inputs,
            expect,
            head: head.to_string(),
            program,
        })
    }

    /// Runs the test. With `bless`, a differing expected section is replaced by the
    /// actual output, returned as the file's new text.
    fn run(&self, bless: bool) -> Result<Option<String>, String> {
        let actual = run_steps(&self.steps, &self.program);
        let out = match (&self.expect, actual) {
            (Expect::Error { kind, contains }, Err((msg, debug))) => {
                if let Some(k) = kind
                    && !debug.contains(k.as_str())
                {
                    return Err(format!("expected a {k} error, got {debug}"));
                }
                if let Some(c) = contains.iter().find(|c| !msg.contains(c.as_str())) {
                    return Err(format!("the error does not mention '{c}': {msg}"));
                }
                return Ok(None);
            }
            (Expect::Error { .. }, Ok(p)) => {
                return Err(format!("expected an error, got\n{}", p.to_text()));
            }
            (_, Err((msg, _))) => return Err(format!("the passes failed: {msg}")),
            (_, Ok(out)) => out,
        };
        let mut blessed = None;
        match &self.expect {
            Expect::Unchanged if out != self.program => {
                return Err(format!("expected no change, got\n{}", out.to_text()));
            }
            Expect::Text(expected) => {
                let text = out.to_text();
                if expected.as_deref() != Some(text.trim_end()) {
                    if !bless {
                        return Err(format!(
                            "output differs from the expected section (SCI_BLESS=1 rewrites it):\n\
                             ---- expected\n{}\n---- actual\n{text}",
                            expected.as_deref().unwrap_or("(none)")
                        ));
                    }
                    blessed = Some(format!(
                        "{}\n\n{EXPECT}\n{}\n",
                        self.head.trim_end(),
                        text.trim_end()
                    ));
                }
            }
            _ => {}
        }
        for check in &self.checks {
            check.run(&self.program, &out, &self.inputs)?;
        }
        Ok(blessed)
    }
}

impl Check {
    /// Parses `same N [against SPEC, ...]`, `close N TOL`, `dequantized N TOL` or
    /// `secure`.
    fn parse(spec: &str) -> Result<Check, String> {
        let (spec, against) = match spec.split_once(" against ") {
            Some((s, a)) => (s, Some(a)),
            None => (spec, None),
        };
        let words: Vec<&str> = spec.split_whitespace().collect();
        let num = |i: usize| -> Result<&str, String> {
            words
                .get(i)
                .copied()
                .ok_or(format!("`# check: {spec}` lacks argument {i}"))
        };
        let trials = || num(1)?.parse::<u64>().map_err(|e| format!("trials: {e}"));
        let tol = || {
            num(2)?
                .parse::<f32>()
                .map_err(|e| format!("tolerance: {e}"))
        };
        let check = match words.first().copied() {
            Some("same") => Check::Same {
                trials: trials()?,
                against: against
                    .into_iter()
                    .flat_map(|a| a.split(','))
                    .map(Step::parse)
                    .collect::<Result<_, _>>()?,
            },
            Some("close") => Check::Close {
                trials: trials()?,
                tol: tol()?,
            },
            Some("dequantized") => Check::Dequantized {
                trials: trials()?,
                tol: tol()?,
            },
            Some("secure") => Check::Secure,
            _ => return Err(format!("unknown check `{spec}`")),
        };
        if against.is_some() && !matches!(check, Check::Same { .. }) {
            return Err("only `same` takes `against`".into());
        }
        Ok(check)
    }

    /// Checks `out` (the passes' output) against the reference (`input`, the file's
    /// program, or `input` run through `against`) on random inputs for the
    /// reference and the file's explicit `inputs`.
    fn run(
        &self,
        input: &Program,
        out: &Program,
        explicit: &[(String, Vec<f64>)],
    ) -> Result<(), String> {
        let trials = match *self {
            Check::Secure => return out.check_secure().map_err(|e| format!("not secure: {e}")),
            Check::Same { trials, .. }
            | Check::Close { trials, .. }
            | Check::Dequantized { trials, .. } => trials,
        };
        let reference = match self {
            Check::Same { against, .. } if !against.is_empty() => run_steps(against, input)
                .map_err(|(msg, _)| format!("the `against` passes failed: {msg}"))?,
            _ => input.clone(),
        };
        let mut cases: Vec<(String, Vec<Tensor>)> = (1..=trials)
            .map(|seed| {
                (
                    format!("random inputs of seed {seed}"),
                    random_inputs(&reference, seed),
                )
            })
            .collect();
        if !explicit.is_empty() {
            let x = explicit_inputs(&reference, explicit)?;
            cases.push(("the `# input:` values".into(), x));
        }
        let run = |p: &Program, x: &[Tensor]| interp::run(p, x).map_err(|e| e.to_string());
        for (what, x) in &cases {
            let expected = run(&reference, x)?;
            let diff = match *self {
                Check::Same { .. } => {
                    let actual = run(out, x)?;
                    (actual != expected).then(|| format!("{actual:?} != {expected:?}"))
                }
                Check::Close { tol, .. } => close(&run(out, x)?, &expected, tol),
                Check::Dequantized { tol, .. } => {
                    let encoded = x
                        .iter()
                        .zip(out.inputs())
                        .map(|(t, v)| {
                            let ty = out.ty(v);
                            sci_ir::fixed::encode_tensor(t, ty.scale(), ty.encoding())
                                .map_err(|e| e.to_string())
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    let decoded: Vec<Tensor> = run(out, &encoded)?
                        .iter()
                        .zip(out.outputs())
                        .map(|(t, v)| sci_ir::fixed::decode_tensor(t, out.ty(v).scale()))
                        .collect();
                    close(&decoded, &expected, tol)
                }
                Check::Secure => None,
            };
            if let Some(d) = diff {
                return Err(format!("the interpreter's outputs differ on {what}: {d}"));
            }
        }
        Ok(())
    }
}

/// `None` if the float outputs `a` and `b` agree within `tol` (absolute plus
/// relative), else where they differ.
fn close(a: &[Tensor], b: &[Tensor], tol: f32) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{} outputs vs {}", a.len(), b.len()));
    }
    for (k, (ta, tb)) in a.iter().zip(b).enumerate() {
        if ta.shape() != tb.shape() {
            return Some(format!(
                "output {k}: shape {:?} vs {:?}",
                ta.shape(),
                tb.shape()
            ));
        }
        let (Some(xa), Some(xb)) = (ta.as_f32(), tb.as_f32()) else {
            return Some(format!("output {k} is not a float tensor"));
        };
        if let Some((x, y)) = xa
            .iter()
            .zip(xb)
            .find(|(x, y)| (*x - *y).abs() > tol * (1.0 + y.abs()))
        {
            return Some(format!("output {k}: {x} vs {y} (tolerance {tol})"));
        }
    }
    None
}

/// Parses `NAME = [v, ...]`.
fn parse_input(spec: &str) -> Result<(String, Vec<f64>), String> {
    let (name, values) = spec
        .split_once('=')
        .ok_or(format!("`# input: {spec}`: expected `NAME = [v, ...]`"))?;
    let values = values
        .trim()
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .ok_or(format!("`# input: {spec}`: the values must be in brackets"))?;
    let values = values
        .split(',')
        .map(|v| v.trim().parse::<f64>().map_err(|e| format!("`{v}`: {e}")))
        .collect::<Result<_, _>>()?;
    Ok((name.trim().to_string(), values))
}

/// The explicit inputs of `p`, in its input order: floats for a float input, the
/// integers (ring elements) themselves for a fixed-point one.
fn explicit_inputs(p: &Program, explicit: &[(String, Vec<f64>)]) -> Result<Vec<Tensor>, String> {
    p.inputs()
        .into_iter()
        .map(|v| {
            let sci_ir::Op::Input { name, ty } = &p.instr(v).op else {
                unreachable!("Program::inputs returns inputs");
            };
            let (_, values) = explicit
                .iter()
                .find(|(n, _)| n == name)
                .ok_or(format!("`# input:` gives no value for input '{name}'"))?;
            let shape = ty.shape().to_vec();
            match ty.encoding() {
                Encoding::Real => Tensor::real(shape, values.iter().map(|&x| x as f32).collect()),
                enc => Tensor::signed(
                    enc,
                    shape,
                    &values.iter().map(|&x| x as i64).collect::<Vec<_>>(),
                ),
            }
            .map_err(|e| format!("input '{name}': {e}"))
        })
        .collect()
}

/// Random inputs for every input of `p`: f32 in [-1, 1), or integers of magnitude at
/// most `2^(s+1)` for a fixed-point input at scale `s` (i.e. reals in [-2, 2]).
fn random_inputs(p: &Program, seed: u64) -> Vec<Tensor> {
    let mut rng = Lcg(seed);
    p.inputs()
        .iter()
        .map(|&i| {
            let ty = p.ty(i);
            let n = ty.numel();
            match ty.encoding() {
                Encoding::Real => {
                    Tensor::real(ty.shape().to_vec(), (0..n).map(|_| rng.f32()).collect()).unwrap()
                }
                enc => {
                    let m = 1i64 << (ty.scale() + 1);
                    let v: Vec<i64> = (0..n).map(|_| rng.int(m)).collect();
                    Tensor::signed(enc, ty.shape().to_vec(), &v).unwrap()
                }
            }
        })
        .collect()
}

/// Every `.sir` file under `dir`, sorted.
fn sir_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "sir") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The directory of the filetests.
fn filetests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests")
}

/// Runs every filetest and reports all failures at once.
#[test]
fn filetests() {
    let bless = std::env::var_os("SCI_BLESS").is_some_and(|v| v == "1");
    let files = sir_files(&filetests_dir());
    assert!(!files.is_empty(), "no .sir files under tests/filetests");
    let mut failures = String::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        match FileTest::parse(&text).and_then(|t| t.run(bless)) {
            Ok(Some(new_text)) => std::fs::write(path, new_text).unwrap(),
            Ok(None) => {}
            Err(e) => writeln!(failures, "{}: {e}\n", path.display()).unwrap(),
        }
    }
    assert!(failures.is_empty(), "filetests failed:\n{failures}");
}

/// The standard pipeline reports each of its passes, in order, to the observer
/// (what `sci-compile --dump-ir` prints), on the program of `pipeline/small_cnn.sir`.
#[test]
fn pipeline_observer_sees_every_pass() {
    let text = std::fs::read_to_string(filetests_dir().join("pipeline/small_cnn.sir")).unwrap();
    let test = FileTest::parse(&text).unwrap();
    let pipeline = Pipeline::standard(Some(Quantize { bits: 24, scale: 8 }));
    let mut seen = Vec::new();
    pipeline
        .run_observed(&test.program, &mut |name, _| seen.push(name.to_string()))
        .unwrap();
    assert_eq!(seen, pipeline.names());
}
