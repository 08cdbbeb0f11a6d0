//! Loading an ONNX model: protobuf decoding, version checks, and the graph view
//! the lowering works on.
//!
//! Versions: ONNX IR version 3 and up; default-domain (`""`/`"ai.onnx"`) opset 1
//! to 21 (the op functions branch on the opset where an op's signature changed;
//! before opset 6 the only differences for the supported ops are the ignored
//! `consumed_inputs` attribute, `Cast.to` as a string, `Concat`'s optional axis
//! and `Pad`'s `paddings`). Initializers that are also listed as graph inputs (old-style models,
//! IR < 4) are weights, not client inputs. Nodes of other domains are kept and
//! only rejected if the requested outputs need them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use prost::Message;

use crate::error::{FrontendError, NodeDesc, Result};
use crate::pb::{self, AttributeProto, ModelProto, TensorProto};
use crate::tensor::{DType, Tensor};

/// The lowest supported default-domain opset.
pub const MIN_OPSET: i64 = 1;
/// The highest supported default-domain opset: the newest of onnx 1.23 (the
/// pinned generator version, `onnx.defs.onnx_opset_version()`). Every supported
/// op's versions up to it are handled: after 21 they only widen type lists
/// (bfloat16 at 22; float4, float8e8m0, int2, float6 from 23) except `Cast`'s
/// `round_mode` (24, float8e8m0 targets only, which are rejected) and `Range`'s
/// `stash_type` (27, float16/bfloat16 inputs).
pub const MAX_OPSET: i64 = 28;
/// The lowest supported ONNX IR version.
pub const MIN_IR_VERSION: i64 = 3;

/// One ONNX node, as the lowering sees it.
#[derive(Debug, Clone)]
pub struct Node {
    /// Name, index, op type and domain, for error messages.
    pub desc: NodeDesc,
    /// Input tensor names; `""` marks an omitted optional input.
    pub inputs: Vec<String>,
    /// Output tensor names; `""` marks an unused optional output.
    pub outputs: Vec<String>,
    /// The node's attributes (read through `Node::attr_int` and the other helpers).
    pub attributes: Vec<AttributeProto>,
}

impl Node {
    /// The op type.
    pub fn op_type(&self) -> &str {
        &self.desc.op_type
    }

    /// Whether the node belongs to the default ONNX domain.
    pub fn is_default_domain(&self) -> bool {
        self.desc.domain.is_empty() || self.desc.domain == "ai.onnx"
    }
}

/// One dimension of a graph input's declared shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// A known size.
    Known(usize),
    /// A symbolic (`dim_param`) or absent size.
    Unknown(Option<String>),
}

/// A graph input that is not an initializer: what the client provides.
#[derive(Debug, Clone)]
pub struct GraphInput {
    /// The tensor's name.
    pub name: String,
    /// The declared element type (ONNX `TensorProto.DataType` code), if any.
    pub elem_type: Option<i32>,
    /// The declared shape, or `None` if the model gives none.
    pub dims: Option<Vec<Dim>>,
}

/// A loaded ONNX model: versions, nodes, initializers and graph interface.
#[derive(Debug, Clone)]
pub struct Model {
    /// The ONNX IR version of the file.
    pub ir_version: i64,
    /// The default-domain opset version the model imports.
    pub opset: i64,
    /// The exporter (`producer_name producer_version`), for messages.
    pub producer: String,
    /// The graph's nodes, in file order.
    pub nodes: Vec<Node>,
    /// Initializers by name (decoded on use, see [`Model::initializer`]).
    initializers: HashMap<String, TensorProto>,
    /// Client inputs: graph inputs that are not initializers.
    pub inputs: Vec<GraphInput>,
    /// The graph's declared output names.
    pub outputs: Vec<String>,
    /// Directory of the model file, for external data.
    dir: Option<PathBuf>,
}

impl Model {
    /// Reads and decodes an `.onnx` file. External data are resolved relative to
    /// the file's directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| FrontendError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let dir = match path.parent() {
            Some(p) if p.as_os_str().is_empty() => PathBuf::from("."),
            Some(p) => p.to_path_buf(),
            None => PathBuf::from("."),
        };
        Model::from_bytes(&bytes, Some(dir))
    }

    /// Decodes a model from bytes. `dir` is where external data files live
    /// (`None`: a model with external data is an error).
    pub fn from_bytes(bytes: &[u8], dir: Option<PathBuf>) -> Result<Model> {
        let proto = ModelProto::decode(bytes)
            .map_err(|e| FrontendError::Malformed(format!("protobuf decoding failed: {e}")))?;
        Model::from_proto(proto, dir)
    }

    fn from_proto(proto: ModelProto, dir: Option<PathBuf>) -> Result<Model> {
        let ir_version = proto.ir_version.ok_or_else(|| {
            FrontendError::Malformed("ir_version is missing (is this an ONNX model?)".into())
        })?;
        if ir_version < MIN_IR_VERSION {
            return Err(FrontendError::UnsupportedVersion(format!(
                "ONNX IR version {ir_version} (supported: {MIN_IR_VERSION} and up)"
            )));
        }
        let opset = default_opset(&proto.opset_import)?;
        let graph = proto
            .graph
            .ok_or_else(|| FrontendError::Malformed("the model has no graph".into()))?;
        let initializers = initializer_table(&graph.sparse_initializer, graph.initializer)?;
        let inputs = graph
            .input
            .iter()
            .filter_map(|vi| {
                let name = vi.name.clone().unwrap_or_default();
                (!initializers.contains_key(&name)).then(|| graph_input(name, vi))
            })
            .collect();
        let outputs = graph
            .output
            .iter()
            .map(|vi| vi.name.clone().unwrap_or_default())
            .collect();
        let nodes = graph
            .node
            .into_iter()
            .enumerate()
            .map(|(index, n)| Node {
                desc: NodeDesc {
                    name: n.name.filter(|s| !s.is_empty()),
                    index,
                    op_type: n.op_type.unwrap_or_default(),
                    domain: n.domain.unwrap_or_default(),
                },
                inputs: n.input,
                outputs: n.output,
                attributes: n.attribute,
            })
            .collect();
        let producer = format!(
            "{} {}",
            proto.producer_name.unwrap_or_default(),
            proto.producer_version.unwrap_or_default()
        )
        .trim()
        .to_string();
        Ok(Model {
            ir_version,
            opset,
            producer,
            nodes,
            initializers,
            inputs,
            outputs,
            dir,
        })
    }

    /// Decodes the initializer `name`, if there is one.
    pub fn initializer(&self, name: &str) -> Option<Result<Tensor>> {
        self.initializers
            .get(name)
            .map(|p| Tensor::from_proto(p, self.dir.as_deref()))
    }

    /// Whether `name` is an initializer.
    pub fn is_initializer(&self, name: &str) -> bool {
        self.initializers.contains_key(name)
    }

    /// The directory external data are read from.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }
}

fn graph_input(name: String, vi: &pb::ValueInfoProto) -> GraphInput {
    use pb::type_proto::Value;
    let tensor_type = match vi.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(Value::TensorType(t)) => Some(t),
        _ => None,
    };
    let elem_type = tensor_type.and_then(|t| t.elem_type);
    let dims = tensor_type.and_then(|t| t.shape.as_ref()).map(|s| {
        s.dim
            .iter()
            .map(|d| {
                use pb::tensor_shape_proto::dimension::Value as V;
                match &d.value {
                    Some(V::DimValue(v)) if *v > 0 => usize::try_from(*v)
                        .map(Dim::Known)
                        .unwrap_or(Dim::Unknown(None)),
                    Some(V::DimParam(p)) if !p.is_empty() => Dim::Unknown(Some(p.clone())),
                    _ => Dim::Unknown(None),
                }
            })
            .collect()
    });
    GraphInput {
        name,
        elem_type,
        dims,
    }
}

impl GraphInput {
    /// The element type, checked to be `FLOAT` or `DOUBLE`. A DOUBLE input (PyTorch
    /// double-precision exports) is read by the client as float64 and encoded into fixed
    /// point from it; the float-stage program computes in f32 (a note says so). FLOAT16
    /// and BFLOAT16 inputs are rejected: no client file format for them is defined.
    pub fn float_dtype(&self) -> Result<DType> {
        let code = self.elem_type.ok_or_else(|| FrontendError::Input {
            input: self.name.clone(),
            msg: "the model declares no tensor type for it".into(),
        })?;
        let dtype = DType::from_onnx(code, &self.name)?;
        if matches!(dtype, DType::F32 | DType::F64) {
            Ok(dtype)
        } else {
            Err(FrontendError::UnsupportedDType {
                tensor: self.name.clone(),
                dtype: dtype.to_string(),
                supported: "FLOAT, DOUBLE (graph inputs)".into(),
            })
        }
    }
}

/// The default-domain opset the model imports, checked against the supported range.
fn default_opset(imports: &[pb::OperatorSetIdProto]) -> Result<i64> {
    let opset = imports
        .iter()
        .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
        .and_then(|o| o.version)
        .ok_or_else(|| {
            FrontendError::Malformed("no opset import for the default ONNX domain".into())
        })?;
    if !(MIN_OPSET..=MAX_OPSET).contains(&opset) {
        return Err(FrontendError::UnsupportedVersion(format!(
            "default-domain opset {opset} (supported: {MIN_OPSET} to {MAX_OPSET})"
        )));
    }
    Ok(opset)
}

/// The graph's initializers by name (each name once); sparse initializers are
/// not supported.
fn initializer_table(
    sparse: &[pb::SparseTensorProto],
    initializer: Vec<TensorProto>,
) -> Result<HashMap<String, TensorProto>> {
    if let Some(s) = sparse.first() {
        let name = s
            .values
            .as_ref()
            .and_then(|v| v.name.clone())
            .unwrap_or_default();
        return Err(FrontendError::Tensor {
            tensor: name,
            msg: "sparse initializers are not supported".into(),
        });
    }
    let mut initializers = HashMap::new();
    for t in initializer {
        let name = t.name.clone().unwrap_or_default();
        if name.is_empty() {
            return Err(FrontendError::Malformed(
                "an initializer has no name".into(),
            ));
        }
        if initializers.insert(name.clone(), t).is_some() {
            return Err(FrontendError::Malformed(format!(
                "initializer '{name}' is defined twice"
            )));
        }
    }
    Ok(initializers)
}
