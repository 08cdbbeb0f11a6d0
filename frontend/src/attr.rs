//! Reading node attributes. Every helper returns an error that names the node,
//! its op type and the attribute when the attribute has the wrong type or value.

use crate::error::{FrontendError, Result};
use crate::model::Node;
use crate::pb::AttributeProto;
use crate::pb::attribute_proto::AttributeType as A;

impl Node {
    /// An error about attribute `attr` of this node.
    pub fn attr_error(&self, attr: &str, msg: impl Into<String>) -> FrontendError {
        FrontendError::Attribute {
            node: Box::new(self.desc.clone()),
            attr: attr.to_string(),
            msg: msg.into(),
        }
    }

    /// An error about this node.
    pub fn error(&self, msg: impl Into<String>) -> FrontendError {
        FrontendError::Node {
            node: Box::new(self.desc.clone()),
            msg: msg.into(),
        }
    }

    /// The attribute `name`, checked to be of type `ty` (models that leave
    /// `type` unset are accepted when the matching field is filled).
    fn attr(&self, name: &str, ty: A) -> Result<Option<&AttributeProto>> {
        let Some(a) = self
            .attributes
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
        else {
            return Ok(None);
        };
        let declared = a
            .r#type
            .and_then(|t| A::try_from(t).ok())
            .unwrap_or(A::Undefined);
        let inferred = match declared {
            A::Undefined => {
                if a.f.is_some() {
                    A::Float
                } else if a.i.is_some() {
                    A::Int
                } else if a.s.is_some() {
                    A::String
                } else if a.t.is_some() {
                    A::Tensor
                } else if !a.floats.is_empty() {
                    A::Floats
                } else if !a.ints.is_empty() {
                    A::Ints
                } else {
                    A::Undefined
                }
            }
            t => t,
        };
        // An empty list attribute with no declared type is compatible with any list type.
        let empty_list = inferred == A::Undefined && matches!(ty, A::Ints | A::Floats);
        if inferred != ty && !empty_list {
            return Err(self.attr_error(
                name,
                format!(
                    "expected type {}, found {}",
                    ty.as_str_name(),
                    inferred.as_str_name()
                ),
            ));
        }
        Ok(Some(a))
    }

    /// An optional `INT` attribute.
    pub fn attr_int(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.attr(name, A::Int)?.map(|a| a.i.unwrap_or(0)))
    }

    /// An `INT` attribute with a default.
    pub fn attr_int_or(&self, name: &str, default: i64) -> Result<i64> {
        Ok(self.attr_int(name)?.unwrap_or(default))
    }

    /// An optional `FLOAT` attribute.
    pub fn attr_float(&self, name: &str) -> Result<Option<f32>> {
        Ok(self.attr(name, A::Float)?.map(|a| a.f.unwrap_or(0.0)))
    }

    /// A `FLOAT` attribute with a default.
    pub fn attr_float_or(&self, name: &str, default: f32) -> Result<f32> {
        Ok(self.attr_float(name)?.unwrap_or(default))
    }

    /// An optional `INTS` attribute.
    pub fn attr_ints(&self, name: &str) -> Result<Option<Vec<i64>>> {
        Ok(self.attr(name, A::Ints)?.map(|a| a.ints.clone()))
    }

    /// An optional `FLOATS` attribute.
    pub fn attr_floats(&self, name: &str) -> Result<Option<Vec<f32>>> {
        Ok(self.attr(name, A::Floats)?.map(|a| a.floats.clone()))
    }

    /// An optional `STRING` attribute (UTF-8).
    pub fn attr_string(&self, name: &str) -> Result<Option<String>> {
        match self.attr(name, A::String)? {
            None => Ok(None),
            Some(a) => String::from_utf8(a.s.clone().unwrap_or_default())
                .map(Some)
                .map_err(|_| self.attr_error(name, "not valid UTF-8")),
        }
    }

    /// An optional `TENSOR` attribute (undecoded).
    pub fn attr_tensor(&self, name: &str) -> Result<Option<&crate::pb::TensorProto>> {
        Ok(self.attr(name, A::Tensor)?.and_then(|a| a.t.as_ref()))
    }

    /// Whether the node has an attribute called `name` (of any type).
    pub fn has_attr(&self, name: &str) -> bool {
        self.attributes
            .iter()
            .any(|a| a.name.as_deref() == Some(name))
    }

    /// Rejects any attribute whose name is not in `known`, so that an attribute
    /// changing the op's meaning is never silently ignored.
    pub fn check_known_attrs(&self, known: &[&str]) -> Result<()> {
        for a in &self.attributes {
            let name = a.name.as_deref().unwrap_or("");
            if !known.contains(&name) {
                let list = if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                };
                return Err(self.attr_error(name, format!("unknown attribute (supported: {list})")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::error::NodeDesc;
    use crate::model::Node;
    use crate::pb::AttributeProto;

    fn node(attrs: Vec<AttributeProto>) -> Node {
        Node {
            desc: NodeDesc {
                name: Some("n".into()),
                index: 0,
                op_type: "Conv".into(),
                domain: String::new(),
            },
            inputs: vec![],
            outputs: vec![],
            attributes: attrs,
        }
    }

    #[test]
    fn typed_reads_and_errors() {
        let ints = AttributeProto {
            name: Some("pads".into()),
            r#type: Some(7),
            ints: vec![1, 1],
            ..Default::default()
        };
        let untyped = AttributeProto {
            name: Some("group".into()),
            i: Some(2),
            ..Default::default()
        };
        let n = node(vec![ints, untyped]);
        assert_eq!(n.attr_ints("pads").unwrap(), Some(vec![1, 1]));
        assert_eq!(n.attr_int_or("group", 1).unwrap(), 2);
        assert_eq!(n.attr_int_or("missing", 7).unwrap(), 7);
        let e = n.attr_int("pads").unwrap_err().to_string();
        assert!(
            e.contains("node 'n'")
                && e.contains("Conv")
                && e.contains("'pads'")
                && e.contains("INTS"),
            "{e}"
        );
        let e = n.check_known_attrs(&["pads"]).unwrap_err().to_string();
        assert!(
            e.contains("'group'") && e.contains("supported: pads"),
            "{e}"
        );
    }
}
