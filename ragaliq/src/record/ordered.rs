//! A JSON value that keeps its object keys in the order they were written.
//!
//! A recording shows the judge's JSON reply as structured YAML, and replay
//! must hand the parsers the very bytes the judge sent. That works only if
//! the reply can be written back exactly, keys in their original order,
//! whatever map type serde_json was compiled with (its `preserve_order`
//! feature may be switched on by any crate in the build).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::fmt;

/// A JSON value whose objects keep their key order.
#[derive(Clone, Debug, PartialEq)]
pub enum Ordered {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as serde_json holds it.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Ordered>),
    /// An object, keys in written order.
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    /// Parses JSON text, keeping key order; `None` when it is not exactly
    /// one JSON value.
    pub(crate) fn parse_json(text: &str) -> Option<Ordered> {
        serde_json::from_str(text).ok()
    }

    /// Compact JSON, as serde_json writes it.
    pub(crate) fn to_compact(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Pretty JSON (two-space indent), as serde_json writes it.
    pub(crate) fn to_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The value at `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Ordered> {
        match self {
            Ordered::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Ordered::String(s) => Some(s),
            _ => None,
        }
    }

    /// A whole number that fits a `u64`.
    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Ordered::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&[Ordered]> {
        match self {
            Ordered::Array(a) => Some(a),
            _ => None,
        }
    }

    /// As a serde_json value (object keys then in serde_json's map order).
    pub(crate) fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Ordered::Null => Value::Null,
            Ordered::Bool(b) => Value::Bool(*b),
            Ordered::Number(n) => Value::Number(n.clone()),
            Ordered::String(s) => Value::String(s.clone()),
            Ordered::Array(items) => Value::Array(items.iter().map(Ordered::to_value).collect()),
            Ordered::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// From a serde_json value; its object keys in the value's own order.
    pub(crate) fn from_value(value: &serde_json::Value) -> Ordered {
        use serde_json::Value;
        match value {
            Value::Null => Ordered::Null,
            Value::Bool(b) => Ordered::Bool(*b),
            Value::Number(n) => Ordered::Number(n.clone()),
            Value::String(s) => Ordered::String(s.clone()),
            Value::Array(items) => Ordered::Array(items.iter().map(Ordered::from_value).collect()),
            Value::Object(map) => Ordered::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), Ordered::from_value(v)))
                    .collect(),
            ),
        }
    }
}

impl Serialize for Ordered {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Ordered::Null => s.serialize_unit(),
            Ordered::Bool(b) => s.serialize_bool(*b),
            Ordered::Number(n) => n.serialize(s),
            Ordered::String(v) => s.serialize_str(v),
            Ordered::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Ordered, E> {
        serde_json::Number::from_f64(v)
            .map(Ordered::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Ordered, E> {
        Ok(Ordered::String(v))
    }

    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }

    fn visit_none<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Ordered, D::Error> {
        Ordered::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
            entries.push((k, v));
        }
        Ok(Ordered::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_survives_json_both_ways() {
        let text = r#"{"score":0.9,"reasoning":"ok","z":[1,{"b":true,"a":null}]}"#;
        let v = Ordered::parse_json(text).unwrap();
        assert_eq!(v.to_compact(), text);
        let pretty = "{\n  \"b\": 1,\n  \"a\": \"x\"\n}";
        assert_eq!(Ordered::parse_json(pretty).unwrap().to_pretty(), pretty);
    }
}
