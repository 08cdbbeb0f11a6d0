//! `sci.compile`'s and `sci.load`'s result, [`Plan`]: saving, the client's view, the
//! compile report, the cost model's prediction, and running it in the clear or with both
//! parties in this process.

use crate::arrays::{self, Inputs};
use crate::errors::{CompileError, InputError, PlanError, chain, exec_err};
use pyo3::prelude::*;
use pyo3::types::PyAny;
use sci_compiler::report::Report;
use sci_compiler::{Options, Quantization, auto};
use sci_ir::cost::{Lanes, NetProfile, SessionPredictor, predict_time};
use sci_ir::{Backend, OtKind};
use sci_passes::autotune::AutotuneConfig;
use sci_runtime::net::tcp::TcpConfig;
use std::path::PathBuf;
use std::str::FromStr;

/// A compiled plan: the public program and, unless this is the client's view, the
/// server's weights.
#[pyclass(module = "sci._sci", frozen)]
pub struct Plan {
    pub(crate) plan: sci_ir::Plan,
    /// The compile report (JSON), for a plan compiled in this process.
    report: Option<String>,
}

impl Plan {
    /// A plan without a compile report.
    pub(crate) fn of(plan: sci_ir::Plan) -> Plan {
        Plan { plan, report: None }
    }
}

/// `json` as a Python object (`json.loads`).
pub(crate) fn json_to_py(py: Python<'_>, json: &str) -> PyResult<Py<PyAny>> {
    Ok(py.import("json")?.call_method1("loads", (json,))?.unbind())
}

/// A `--net` profile from its text.
pub(crate) fn profile(net: &str) -> PyResult<NetProfile> {
    NetProfile::from_str(net).map_err(|e| pyo3::exceptions::PyValueError::new_err(chain(&e)))
}

fn parse<T: FromStr>(what: &str, s: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    s.parse()
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("{what}={s:?}: {e}")))
}

#[pymethods]
impl Plan {
    /// Writes the plan to `path` (the format `sci-run` reads).
    fn save(&self, path: PathBuf) -> PyResult<()> {
        self.plan
            .save(&path)
            .map_err(|e| PlanError::new_err(chain(&e)))
    }

    /// The client's view: the same program without the server's weights (what the
    /// client is given; `sci-compile --client-plan`).
    fn client_view(&self) -> Plan {
        Plan::of(self.plan.client_view())
    }

    /// Whether this is a client's view (no weights).
    #[getter]
    fn is_client_view(&self) -> bool {
        self.plan.is_client_view()
    }

    /// The hash of the public part (hex), which both parties compare in the handshake.
    #[getter]
    fn hash(&self) -> String {
        self.plan.hash_hex()
    }

    /// The plan's inputs: name and shape, in order.
    #[getter]
    fn inputs(&self) -> Vec<(String, Vec<usize>)> {
        let p = self.plan.program();
        sci_runtime::exec::io::input_names(p)
            .into_iter()
            .zip(p.inputs())
            .map(|(n, v)| (n, p.ty(v).shape().to_vec()))
            .collect()
    }

    /// The plan's outputs: name and shape, in order.
    #[getter]
    fn outputs(&self) -> Vec<(String, Vec<usize>)> {
        let p = self.plan.program();
        sci_runtime::exec::io::output_names(p)
            .into_iter()
            .zip(p.outputs())
            .map(|(n, v)| (n, p.ty(v).shape().to_vec()))
            .collect()
    }

    /// The compile report as a dict (what `sci-compile --report` writes: passes,
    /// (ℓ, s) and how they were chosen, per layer the protocol calls and the predicted
    /// bytes and rounds); `None` for a plan loaded from a file.
    #[getter]
    fn report(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.report
            .as_deref()
            .map(|j| json_to_py(py, j))
            .transpose()
    }

    /// The cost model's prediction for a session of `inferences` inferences over
    /// `threads` lanes (default: the plan's) on plain TCP: per inference the bytes each
    /// party sends and the rounds each waits for (set-up, control byte, per instruction,
    /// totals), exact as `sci-run --report` measures them; with `net` (`"lan"`, `"wan"`
    /// or `"BANDWIDTH,RTT"` such as `"40MB/s,80ms"`) the predicted network time too.
    #[pyo3(signature = (net=None, *, threads=None, inferences=1))]
    fn predict_cost(
        &self,
        py: Python<'_>,
        net: Option<&str>,
        threads: Option<u32>,
        inferences: u64,
    ) -> PyResult<Py<PyAny>> {
        let program = self.plan.program();
        let profile = net.map(profile).transpose()?;
        let lanes = Lanes {
            threads: threads.unwrap_or(program.params().threads).max(1) as usize,
            ..Lanes::of(program)
        };
        let mut predictor = SessionPredictor::new(program, lanes, inferences);
        let cost = |c: &sci_ir::cost::Cost| {
            serde_json::json!({
                "server_bytes": c.server_bytes,
                "client_bytes": c.client_bytes,
                "server_rounds": c.server_rounds,
                "client_rounds": c.client_rounds,
            })
        };
        let runs: Vec<serde_json::Value> = (0..inferences.max(1))
            .map(|_| {
                let p = predictor.next_inference(program);
                let timing = profile.map(|n| predict_time(&p, lanes.threads, &n));
                serde_json::json!({
                    "setup": cost(&p.setup),
                    "control": cost(&p.control),
                    "he_keys": cost(&p.he_keys),
                    "total": cost(&p.total),
                    "instructions": program.instrs().iter().zip(&p.instrs).enumerate().map(|(i, (ins, c))| {
                        let mut v = cost(c);
                        v["index"] = i.into();
                        v["name"] = ins.name.clone().into();
                        v["op"] = ins.op.mnemonic().into();
                        if let Some(t) = &timing {
                            v["seconds"] = t.instrs.get(i).copied().into();
                        }
                        v
                    }).collect::<Vec<_>>(),
                    "seconds": timing.as_ref().map(|t| t.total),
                })
            })
            .collect();
        let out = serde_json::json!({
            "ot": program.params().ot.name(),
            "threads": lanes.threads,
            "net": profile.map(|p| p.to_string()),
            "inferences": runs,
        });
        json_to_py(py, &out.to_string())
    }

    /// The reference interpreter on `x` (no cryptography): the fixed-point result the
    /// secure runs reproduce bit for bit, as float32 arrays. `x`: one array (a
    /// single-input plan) or a dict of arrays by input name, each of the input's shape,
    /// or with a leading batch axis (the outputs then have it too). Needs the weights.
    fn run_cleartext(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let program = self.plan.program();
        if self.plan.is_client_view() {
            return Err(PlanError::new_err(
                "the client's view has no weights: the reference interpreter needs the full plan",
            ));
        }
        let Inputs { sets, stacked } = arrays::input_sets(program, x)?;
        let outs = py
            .detach(|| {
                sets.iter()
                    .map(|s| sci_ir::interp::run(program, s))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| {
                InputError::new_err(format!("the reference interpreter: {}", chain(&e)))
            })?;
        arrays::outputs(py, program, &outs, stacked)
    }

    /// Both parties in this process, on threads over loopback TCP, exactly as a
    /// `Server` and a `Client` would run (one session for a batch): the client's
    /// outputs, equal to [`run_cleartext`]'s bit for bit. Needs the weights. The GIL
    /// is released while the protocols run.
    #[pyo3(signature = (x, *, threads=None, ot=None))]
    fn run_local(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        threads: Option<u32>,
        ot: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let program = self.plan.program();
        let Inputs { sets, stacked } = arrays::input_sets(program, x)?;
        let threads = threads.unwrap_or(program.params().threads);
        let ot = match ot {
            Some(o) => parse::<OtKind>("ot", o)?,
            None => program.params().ot,
        };
        let cfg = TcpConfig {
            timeout: Some(std::time::Duration::from_secs(600)),
            ..TcpConfig::default()
        };
        let run = py
            .detach(|| {
                sci_runtime::exec::run_pair_on(&self.plan, sets, (threads, ot), &cfg, &mut |_| {})
            })
            .map_err(|e| exec_err(&e.error))?;
        arrays::outputs(py, program, &run.outputs, stacked)
    }

    fn __repr__(&self) -> String {
        let p = self.plan.program();
        format!(
            "<sci.Plan {} instructions, {}, ot {}, {} thread(s), hash {}{}>",
            p.instrs().len(),
            p.params().backend,
            p.params().ot.name(),
            p.params().threads,
            &self.plan.hash_hex()[..16],
            if self.plan.is_client_view() {
                ", client view"
            } else {
                ""
            }
        )
    }
}

/// Compiles the model at `path` (ONNX or IR text) as `sci-compile` does with the same
/// options; the plan, with its compile report. `backend="auto"` needs `net`.
#[pyfunction]
#[pyo3(signature = (path, *, validation=None, bits=None, scale=None, backend="rlwe", net=None, batch=1, threads=None, ot=None, mill_radix=None, outputs=Vec::new(), tolerance=0.5))]
#[allow(clippy::too_many_arguments)]
pub fn compile_file(
    py: Python<'_>,
    path: PathBuf,
    validation: Option<PathBuf>,
    bits: Option<u32>,
    scale: Option<u32>,
    backend: &str,
    net: Option<&str>,
    batch: usize,
    threads: Option<u32>,
    ot: Option<&str>,
    mill_radix: Option<u32>,
    outputs: Vec<String>,
    tolerance: f64,
) -> PyResult<Plan> {
    let quantization = match validation {
        Some(data) => {
            if bits.is_some() || scale.is_some() {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "give either validation (autotuning) or bits/scale, not both",
                ));
            }
            Quantization::Autotune {
                data,
                config: AutotuneConfig {
                    tolerance,
                    ..AutotuneConfig::default()
                },
            }
        }
        None => Quantization::Fixed { bits, scale },
    };
    let auto = backend == "auto";
    let profile = net.map(profile).transpose()?;
    let opts = Options {
        model: path.clone(),
        outputs,
        quantization,
        mill_radix,
        ot: ot.map(|o| parse::<OtKind>("ot", o)).transpose()?,
        threads,
        backend: if auto {
            Backend::Ot
        } else {
            parse::<Backend>("backend", backend)?
        },
        batch,
    };
    let err = |e: sci_compiler::CompileError| {
        CompileError::new_err(format!("compiling {}: {}", path.display(), chain(&e)))
    };
    let (compiled, choice) = py.detach(|| match (auto, &profile) {
        (false, _) => sci_compiler::compile(&opts, false).map(|c| (c, None)).map_err(err),
        (true, Some(p)) => auto::choose(&opts, p, false)
            .map(|(c, ch)| (c, Some(ch)))
            .map_err(err),
        (true, None) => Err(pyo3::exceptions::PyValueError::new_err(
            "backend=\"auto\" chooses the backend from the network: give net=\"lan\", \"wan\" or \"BANDWIDTH,RTT\"",
        )),
    })?;
    let mut report = Report::new(&path, &compiled, profile.as_ref());
    report.backend_choice = choice;
    Ok(Plan {
        plan: sci_ir::Plan::new(compiled.program),
        report: Some(report.to_json()),
    })
}

/// Loads a plan written by `sci-compile` or `Plan.save`.
#[pyfunction]
pub fn load(path: PathBuf) -> PyResult<Plan> {
    sci_ir::Plan::load(&path)
        .map(Plan::of)
        .map_err(|e| PlanError::new_err(chain(&e)))
}
