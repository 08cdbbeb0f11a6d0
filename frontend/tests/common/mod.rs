//! A small builder of ONNX models for tests (protobuf types from `sci_frontend::pb`).

#![allow(dead_code)]

use prost::Message;
use sci_frontend::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto, attribute_proto::AttributeType,
    tensor_shape_proto, type_proto,
};

/// A graph under construction.
pub struct Graph {
    pub opset: i64,
    pub ir_version: i64,
    pub graph: GraphProto,
    pub extra_opsets: Vec<(String, i64)>,
}

/// A dimension of a graph input: known, or symbolic.
pub enum D {
    N(i64),
    P(&'static str),
}

impl Graph {
    pub fn new(opset: i64) -> Graph {
        Graph {
            opset,
            ir_version: 8,
            graph: GraphProto {
                name: Some("g".into()),
                ..Default::default()
            },
            extra_opsets: vec![],
        }
    }

    pub fn input(&mut self, name: &str, dims: &[D]) -> &mut Self {
        self.input_typed(name, 1, dims)
    }

    pub fn input_typed(&mut self, name: &str, elem_type: i32, dims: &[D]) -> &mut Self {
        let dim = dims
            .iter()
            .map(|d| tensor_shape_proto::Dimension {
                value: Some(match d {
                    D::N(v) => tensor_shape_proto::dimension::Value::DimValue(*v),
                    D::P(p) => tensor_shape_proto::dimension::Value::DimParam(p.to_string()),
                }),
                ..Default::default()
            })
            .collect();
        self.graph.input.push(ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(TypeProto {
                value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                    elem_type: Some(elem_type),
                    shape: Some(TensorShapeProto { dim }),
                })),
                ..Default::default()
            }),
            ..Default::default()
        });
        self
    }

    pub fn output(&mut self, name: &str) -> &mut Self {
        self.graph.output.push(ValueInfoProto {
            name: Some(name.into()),
            ..Default::default()
        });
        self
    }

    pub fn init_f32(&mut self, name: &str, dims: &[i64], values: &[f32]) -> &mut Self {
        self.graph.initializer.push(TensorProto {
            name: Some(name.into()),
            dims: dims.to_vec(),
            data_type: Some(1),
            raw_data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
            ..Default::default()
        });
        self
    }

    pub fn init_i64(&mut self, name: &str, dims: &[i64], values: &[i64]) -> &mut Self {
        self.graph.initializer.push(TensorProto {
            name: Some(name.into()),
            dims: dims.to_vec(),
            data_type: Some(7),
            int64_data: values.to_vec(),
            ..Default::default()
        });
        self
    }

    pub fn init(&mut self, t: TensorProto) -> &mut Self {
        self.graph.initializer.push(t);
        self
    }

    /// Adds a node; returns it for attributes.
    pub fn node(
        &mut self,
        name: &str,
        op: &str,
        inputs: &[&str],
        outputs: &[&str],
    ) -> &mut NodeProto {
        self.graph.node.push(NodeProto {
            name: Some(name.into()),
            op_type: Some(op.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        });
        self.graph.node.last_mut().expect("just pushed")
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut opset_import = vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(self.opset),
        }];
        opset_import.extend(self.extra_opsets.iter().map(|(d, v)| OperatorSetIdProto {
            domain: Some(d.clone()),
            version: Some(*v),
        }));
        ModelProto {
            ir_version: Some(self.ir_version),
            opset_import,
            producer_name: Some("sci-frontend tests".into()),
            graph: Some(self.graph.clone()),
            ..Default::default()
        }
        .encode_to_vec()
    }
}

pub fn attr_i(n: &mut NodeProto, name: &str, v: i64) {
    n.attribute.push(AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    });
}

pub fn attr_f(n: &mut NodeProto, name: &str, v: f32) {
    n.attribute.push(AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Float as i32),
        f: Some(v),
        ..Default::default()
    });
}

pub fn attr_ints(n: &mut NodeProto, name: &str, v: &[i64]) {
    n.attribute.push(AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    });
}

pub fn attr_s(n: &mut NodeProto, name: &str, v: &str) {
    n.attribute.push(AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec()),
        ..Default::default()
    });
}
