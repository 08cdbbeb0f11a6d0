//! The compilation driver: model → float IR → passes (with autotuning) → final program.

use sci_frontend::FrontendError;
use sci_ir::dataset::{Dataset, DatasetError};
use sci_ir::{Backend, Encoding, OtKind, Params, Program};
use sci_passes::autotune::{AutotuneConfig, AutotuneError, Tuning, autotune};
use sci_passes::{FnPass, HeField, Pass, Pipeline, PipelineError, Quantize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Default ring bit width when neither `--bits` nor a validation set is given.
pub const DEFAULT_BITS: u32 = 32;
/// Default scale when neither `--scale` nor a validation set is given.
pub const DEFAULT_SCALE: u32 = 12;

/// How to choose (ℓ, s).
#[derive(Clone, Debug, PartialEq)]
pub enum Quantization {
    /// Given bit width and scale; `None` means the default ([`DEFAULT_BITS`],
    /// [`DEFAULT_SCALE`]).
    Fixed {
        /// ℓ.
        bits: Option<u32>,
        /// s.
        scale: Option<u32>,
    },
    /// Autotune on a validation set (a directory with `x.npy`/`y.npy` or an `.npz`).
    Autotune {
        /// The validation data.
        data: PathBuf,
        /// Candidates, tolerance, margin.
        config: AutotuneConfig,
    },
}

/// What to compile and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// The model: `.onnx`, or an IR text file (float-stage or already quantized).
    pub model: PathBuf,
    /// ONNX tensors to compile up to (empty: the graph outputs).
    pub outputs: Vec<String>,
    /// How to choose (ℓ, s) (ignored for an already-quantized IR file, where giving
    /// `--bits`/`--scale`/`--validation` is an error).
    pub quantization: Quantization,
    /// The millionaires' radix m (default: the program's when the engine stays, else
    /// the recorded engine's [`sci_ir::cost::radix::default_radix`] — so for an ONNX
    /// model on the default silent engine, silent's for its ℓ; see
    /// [`with_run_params`]).
    pub mill_radix: Option<u32>,
    /// The OT engine recorded in the plan (default: [`OtKind::Silent`] for an ONNX
    /// model, the IR file's own for an IR file; IKNP stays for the paper's figures).
    pub ot: Option<OtKind>,
    /// The runtime's thread count (default: the program's, 1 for a new one).
    pub threads: Option<u32>,
    /// SCI_OT (shares in `Z_{2^ℓ}`), SCI_HE (shares in the HE field of width ℓ,
    /// [`sci_ir::backend`]) or RLWE (shares in `Z_{2^ℓ}`, [`with_rlwe`]); OT and HE are
    /// ignored for an already-quantized IR file, which keeps its own; RLWE applies to
    /// one on the ring too.
    pub backend: Backend,
    /// Inputs per inference: the leading (batch) dimension of every ONNX client input
    /// that declares it dynamic (≥ 1; 1 is one input per inference). A batch of N runs
    /// every protocol once over all N inputs: the rounds of one inference, about N
    /// times its bytes. See [`load`] for what the model must declare.
    pub batch: usize,
}

/// How the final (ℓ, s) was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// `--bits`/`--scale` given.
    Flags,
    /// Documented defaults (ℓ = 32, s = 12): no validation set, nothing checked.
    Default,
    /// Autotuned on a validation set.
    Autotuned,
    /// The input was an already-quantized IR file.
    InputIr,
}

/// The result of a compilation.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The final program (server view: weights included).
    pub program: Program,
    /// The program as loaded (float stage for ONNX).
    pub input: Program,
    /// `onnx` or `ir`.
    pub format: &'static str,
    /// The frontend's notes (dropped Softmax, batch dimension set to 1, ...).
    pub notes: Vec<String>,
    /// The passes run, in order.
    pub passes: Vec<&'static str>,
    /// ℓ (for a field encoding: the bit length of the modulus).
    pub bits: u32,
    /// s (the scale of the client input).
    pub scale: u32,
    /// How (ℓ, s) was chosen.
    pub choice: Choice,
    /// The autotuning result, if autotuned.
    pub tuning: Option<Tuning>,
    /// Every pass's output, in order (only when asked for with `keep_dumps`).
    pub dumps: Vec<(&'static str, Program)>,
}

/// Why a compilation failed.
#[derive(Debug, Error)]
pub enum CompileError {
    /// The model file cannot be read.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The ONNX frontend rejected the model.
    #[error("{path}")]
    Frontend {
        /// The file.
        path: PathBuf,
        /// The error.
        source: FrontendError,
    },
    /// The IR text does not parse or type-check.
    #[error("{path}: not an ONNX model (no .onnx extension) and not valid IR text")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The error.
        source: sci_ir::ParseError,
    },
    /// Inconsistent options.
    #[error("{0}")]
    Options(String),
    /// A pass failed.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// The validation set cannot be read. (Its message includes the cause, so it is not
    /// chained as a `source`.)
    #[error("validation set: {0}")]
    Dataset(DatasetError),
    /// Autotuning failed.
    #[error("autotuning")]
    Autotune(#[from] AutotuneError),
    /// The final program cannot be executed securely.
    #[error("the compiled program cannot run securely")]
    Insecure(#[from] sci_ir::SecureError),
    /// Invalid protocol parameters.
    #[error(transparent)]
    Params(#[from] sci_ir::ParamsError),
    /// `--batch N` cannot be applied to a client input.
    #[error(
        "--batch {batch}: graph input '{input}' has {found}; --batch needs a leading dimension that is dynamic (symbolic), 1, or {batch}"
    )]
    Batch {
        /// The graph input.
        input: String,
        /// What its leading dimension is.
        found: String,
        /// The requested batch.
        batch: usize,
    },
}

/// Loads a model: `.onnx` through the frontend (up to `outputs`), anything else as IR
/// text. Returns the program, its format and the frontend's notes.
///
/// `batch` (≥ 1) becomes the leading dimension of every ONNX client input whose first
/// dimension is dynamic (symbolic) or 1 (exporters often fix the batch dimension to
/// the example input's 1; a note says so); any other fixed first dimension must equal
/// it (else [`CompileError::Batch`]). A node whose shapes do not follow (e.g. a
/// `Reshape` to a constant shape that bakes in the batch of 1) is the frontend's error
/// naming that node. An IR file is taken as it is, so `batch` must be 1 for one.
pub fn load(
    path: &Path,
    outputs: &[String],
    batch: usize,
) -> Result<(Program, &'static str, Vec<String>), CompileError> {
    let is_onnx = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("onnx"));
    if is_onnx {
        let frontend = |source| CompileError::Frontend {
            path: path.to_path_buf(),
            source,
        };
        let mut model = sci_frontend::load(path).map_err(frontend)?;
        let batch_notes = set_batch(&mut model, batch)?;
        let (p, notes) = model
            .lower((!outputs.is_empty()).then_some(outputs))
            .map_err(frontend)?;
        let notes = batch_notes
            .into_iter()
            .chain(notes.iter().map(ToString::to_string))
            .collect();
        Ok((p, "onnx", notes))
    } else {
        if !outputs.is_empty() {
            return Err(CompileError::Options(
                "--output selects ONNX graph outputs; it does not apply to an IR file".into(),
            ));
        }
        if batch != 1 {
            return Err(CompileError::Options(
                "--batch sets the batch dimension of ONNX inputs; it does not apply to an IR file (whose shapes are fixed)".into(),
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|source| CompileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let p = Program::parse(&text).map_err(|source| CompileError::Parse {
            path: path.to_path_buf(),
            source,
        })?;
        Ok((p, "ir", Vec::new()))
    }
}

/// Sets the leading dimension of every client input of `model` that declares it
/// dynamic or 1 to `batch` (see [`load`]); returns a note for each fixed 1 replaced.
fn set_batch(model: &mut sci_frontend::Model, batch: usize) -> Result<Vec<String>, CompileError> {
    use sci_frontend::model::Dim;
    if batch == 0 {
        return Err(CompileError::Options("--batch must be at least 1".into()));
    }
    let mut notes = Vec::new();
    if batch == 1 {
        return Ok(notes);
    }
    for input in &mut model.inputs {
        match input.dims.as_mut().and_then(|d| d.first_mut()) {
            Some(d @ Dim::Unknown(_)) => *d = Dim::Known(batch),
            Some(d @ Dim::Known(1)) => {
                *d = Dim::Known(batch);
                notes.push(format!(
                    "graph input '{}': fixed leading dimension 1 taken as the batch dimension, set to {batch} (--batch)",
                    input.name
                ));
            }
            Some(Dim::Known(n)) if *n == batch => {}
            first => {
                return Err(CompileError::Batch {
                    input: input.name.clone(),
                    found: match first {
                        Some(Dim::Known(n)) => format!("a fixed leading dimension {n}"),
                        _ => "no declared shape".into(),
                    },
                    batch,
                });
            }
        }
    }
    Ok(notes)
}

/// `program` run on OT engine `ot`, with millionaires' radix `mill_radix` (default: the
/// program's if the engine does not change, else `ot`'s
/// [`sci_ir::cost::radix::default_radix`] for the program's modulus) and `threads` lanes
/// (default: the program's). The instructions do not change; only the parameters, which
/// the plan records and its hash covers.
pub fn with_run_params(
    program: Program,
    ot: OtKind,
    mill_radix: Option<u32>,
    threads: Option<u32>,
) -> Result<Program, CompileError> {
    let old = *program.params();
    if mill_radix.is_none() && threads.is_none() && ot == old.ot {
        return Ok(program);
    }
    let radix = if ot == old.ot {
        old.mill_radix
    } else {
        sci_ir::cost::radix::default_radix(ot, sci_ir::cost::predict::modulus(&program))
    };
    let params = Params {
        mill_radix: mill_radix.unwrap_or(radix),
        threads: threads.unwrap_or(old.threads),
        ot,
        ..old
    };
    params.validate()?;
    let mut b = program.to_builder();
    b.set_params(params);
    Ok(b.finish()?)
}

/// `program` (on the ring) with RLWE as its backend: every product with the server's
/// weights runs by RLWE where RLWE can ([`sci_ir::rlwe::runnable`]: a kind it
/// runs, a layout that floods it at the program's width) and is recorded as OT
/// otherwise (e.g. an elementwise `mul` by a full weight tensor); likewise every
/// `matmul` of two secret operands ([`sci_ir::rlwe::secret_runnable`]: its cross
/// terms flooded), while an elementwise secret `mul` stays on OT (the rule of
/// [`Program::secret_product_backend`]).
pub fn with_rlwe(program: Program) -> Result<Program, CompileError> {
    if !matches!(program.encoding(), Some(Encoding::Ring { .. })) {
        return Err(CompileError::Options(
            "--backend rlwe needs a program over a ring Z_2^ℓ".into(),
        ));
    }
    let mut b = program.to_builder();
    b.set_params(Params {
        backend: Backend::Rlwe,
        ..*program.params()
    });
    let mut p = b.finish()?;
    let fallback: Vec<_> = p
        .ids()
        .filter(|&v| {
            (p.is_secure_product(v) && sci_ir::rlwe::runnable(&p, v).is_err())
                || (p.secret_product_backend(v) == Some(Backend::Rlwe)
                    && sci_ir::rlwe::secret_runnable(&p, v).is_err())
        })
        .collect();
    for v in fallback {
        p.set_product_backend(v, Backend::Ot)
            .map_err(|e| CompileError::Options(e.to_string()))?;
    }
    Ok(p)
}

/// Compiles `opts.model`; with `keep_dumps`, also keeps every pass's output.
///
/// With `opts.batch` = N > 1 and autotuning, (ℓ, s) are tuned on the model lowered for
/// one input (the validation samples are single inputs) and then applied to the
/// program for N inputs: both run the same passes at the same (ℓ, s), so every input of
/// a batch gets exactly the output it gets alone.
pub fn compile(opts: &Options, keep_dumps: bool) -> Result<Compiled, CompileError> {
    let (input, format, notes) = load(&opts.model, &opts.outputs, opts.batch)?;
    let mut dumps = Vec::new();
    let mut observe = |name: &'static str, p: &Program| {
        if keep_dumps {
            dumps.push((name, p.clone()));
        }
    };
    let quantized = input.encoding().is_some_and(|e| !e.is_real());
    let float_stage = Pipeline::float_stage();
    let (fixed_quant, choice) = if quantized {
        let given = match &opts.quantization {
            Quantization::Fixed { bits, scale } => bits.is_some() || scale.is_some(),
            Quantization::Autotune { .. } => true,
        };
        if given {
            return Err(CompileError::Options(
                "the IR file is already quantized: --bits, --scale and --validation do not apply"
                    .into(),
            ));
        }
        (None, Choice::InputIr)
    } else {
        match &opts.quantization {
            Quantization::Fixed { bits, scale } => {
                let choice = if bits.is_some() || scale.is_some() {
                    Choice::Flags
                } else {
                    Choice::Default
                };
                let q = Quantize {
                    bits: bits.unwrap_or(DEFAULT_BITS),
                    scale: scale.unwrap_or(DEFAULT_SCALE),
                };
                (Some(q), choice)
            }
            Quantization::Autotune { .. } => (None, Choice::Autotuned),
        }
    };
    let mut passes = Vec::new();
    let float = run_observed(&float_stage, &input, &mut observe, &mut passes)?;
    let (fixed_quant, tuning) = match (&opts.quantization, quantized) {
        (Quantization::Autotune { data, config }, false) => {
            let data = Dataset::load(data).map_err(CompileError::Dataset)?;
            let mut t = if opts.batch == 1 {
                autotune(&float, &data, config)?
            } else {
                let (one, _, _) = load(&opts.model, &opts.outputs, 1)?;
                autotune(&float_stage.run(&one)?, &data, config)?
            };
            if opts.backend == Backend::He {
                t.bits = he_width(t.bits, config.margin_bits)?;
            }
            (
                Some(Quantize {
                    bits: t.bits,
                    scale: t.scale,
                }),
                Some(t),
            )
        }
        _ => (fixed_quant, None),
    };
    if let (Backend::He, Some(q)) = (opts.backend, &fixed_quant) {
        // Refuse a width without an HE field before running the passes.
        opts.backend
            .encoding(q.bits)
            .map_err(|e| CompileError::Options(format!("--backend he: {e}")))?;
    }
    let fixed_stage = Pipeline::fixed_stage(fixed_quant);
    let mut program = run_observed(&fixed_stage, &float, &mut observe, &mut passes)?;
    if opts.backend == Backend::He && !quantized {
        program = HeField.run(&program).map_err(|error| PipelineError {
            pass: HeField.name(),
            error: Box::new(error),
        })?;
        passes.push(HeField.name());
        observe(HeField.name(), &program);
    }
    if opts.backend != Backend::He {
        // Over a ring (every backend but SCI_HE's field): a ReLU and the non-negative
        // truncation after it become one `relu_trunc` (fewer rounds, the same bits).
        let fuse = FnPass::new("fuse_relu_trunc", sci_passes::fuse_relu_trunc::run);
        program = fuse.run(&program).map_err(|error| PipelineError {
            pass: fuse.name(),
            error: Box::new(error),
        })?;
        passes.push(fuse.name());
        observe(fuse.name(), &program);
    }
    let ot = opts.ot.unwrap_or(match format {
        "onnx" => OtKind::Silent,
        _ => program.params().ot,
    });
    program = with_run_params(program, ot, opts.mill_radix, opts.threads)?;
    if opts.backend == Backend::Rlwe {
        program = with_rlwe(program)?;
    }
    program.check_secure()?;
    let scale = program
        .inputs()
        .first()
        .map_or(0, |&i| program.ty(i).scale());
    let bits = match program.encoding() {
        Some(Encoding::Ring { bits }) => bits,
        Some(Encoding::Field { modulus }) => 64 - modulus.leading_zeros(),
        _ => 0,
    };
    Ok(Compiled {
        program,
        input,
        format,
        notes,
        passes,
        bits,
        scale,
        choice,
        tuning,
        dumps,
    })
}

/// The HE field width for an autotuned ring width `bits` chosen with `margin` spare
/// bits: at least one spare bit (so every value seen fits the field's signed range,
/// [`sci_passes::he_field`]), at least the smallest HE width, and a width that has an
/// HE field.
fn he_width(bits: u32, margin: u32) -> Result<u32, CompileError> {
    let lo = (bits + u32::from(margin == 0)).max(*sci_ir::backend::HE_BITS.start());
    (lo..=*sci_ir::backend::HE_BITS.end())
        .find(|&b| sci_ir::backend::he_prime(b).is_ok())
        .ok_or_else(|| {
            CompileError::Options(format!(
                "--backend he: the validation set needs a {bits}-bit ring (margin {margin}), more than the HE backend's widest field ({} bits)",
                sci_ir::backend::HE_BITS.end()
            ))
        })
}

fn run_observed(
    pipeline: &Pipeline,
    p: &Program,
    observe: &mut dyn FnMut(&'static str, &Program),
    passes: &mut Vec<&'static str>,
) -> Result<Program, CompileError> {
    passes.extend(pipeline.names());
    Ok(pipeline.run_observed(p, observe)?)
}
