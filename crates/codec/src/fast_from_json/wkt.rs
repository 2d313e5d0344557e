//! The well-known types, as prost-reflect reads them: Timestamp and Duration strings (parsed
//! by `prost_types`, range-checked as prost-reflect does), wrappers as their scalar, FieldMask
//! paths, Struct, ListValue, Value, Empty. `Any` is left to the old path.

use prost::Message as _;
use prost::encoding::{WireType, encode_key, encode_varint};
use serde_json::Value;

use super::plan::MessagePlan;
use super::{Encoder, scalar};
use crate::Wkt;

/// Field numbers of `google/protobuf/struct.proto`, `field_mask.proto` and `wrappers.proto`.
mod number {
    /// `Struct.fields`, a `map<string, Value>`.
    pub(super) const STRUCT_FIELDS: u32 = 1;
    /// `ListValue.values`.
    pub(super) const LIST_VALUES: u32 = 1;
    /// `FieldMask.paths`.
    pub(super) const FIELD_MASK_PATHS: u32 = 1;
    /// `DoubleValue.value` and the other wrappers'.
    pub(super) const WRAPPER_VALUE: u32 = 1;
    /// The members of `Value.kind`.
    pub(super) const NULL_VALUE: u32 = 1;
    pub(super) const NUMBER_VALUE: u32 = 2;
    pub(super) const STRING_VALUE: u32 = 3;
    pub(super) const BOOL_VALUE: u32 = 4;
    pub(super) const STRUCT_VALUE: u32 = 5;
    pub(super) const LIST_VALUE: u32 = 6;
}

use super::{MAP_KEY, MAP_VALUE};

impl<'p, 'v> Encoder<'p, 'v> {
    pub(super) fn well_known(
        &mut self,
        message: &'p MessagePlan,
        wkt: Wkt,
        value: &'v Value,
    ) -> Option<()> {
        match wkt {
            Wkt::Any => None,
            Wkt::Timestamp => {
                let Value::String(s) = value else {
                    return None;
                };
                if !scalar::strict_rfc3339(s) {
                    return None;
                }
                let timestamp: prost_types::Timestamp = s.parse().ok()?;
                if timestamp.seconds < scalar::MIN_TIMESTAMP_SECONDS
                    || scalar::MAX_TIMESTAMP_SECONDS < timestamp.seconds
                {
                    return None;
                }
                timestamp.encode_raw(&mut self.buf);
                Some(())
            }
            Wkt::Duration => {
                let Value::String(s) = value else {
                    return None;
                };
                let duration: prost_types::Duration = s.parse().ok()?;
                if duration.seconds.unsigned_abs() > scalar::MAX_DURATION_SECONDS
                    || duration.nanos.unsigned_abs() > scalar::MAX_DURATION_NANOS
                {
                    return None;
                }
                duration.encode_raw(&mut self.buf);
                Some(())
            }
            Wkt::Wrapper => {
                let kind = message.wrapped?;
                // Wrappers read with `deserialize_any`: the scalar readers as for a field.
                self.scalar_value(number::WRAPPER_VALUE, kind, false, value)
            }
            Wkt::FieldMask => {
                let Value::String(s) = value else {
                    return None;
                };
                let mut path = String::new();
                for part in s.split(',').filter(|p| !p.is_empty()) {
                    path.clear();
                    scalar::field_mask_path(part, &mut path)?;
                    encode_key(
                        number::FIELD_MASK_PATHS,
                        WireType::LengthDelimited,
                        &mut self.buf,
                    );
                    encode_varint(path.len() as u64, &mut self.buf);
                    self.buf.extend_from_slice(path.as_bytes());
                }
                Some(())
            }
            Wkt::Struct => self.struct_body(value),
            Wkt::ListValue => self.list_body(value),
            Wkt::Value => self.value_body(value),
            Wkt::Empty => match value {
                Value::Object(object) if object.is_empty() => Some(()),
                _ => None,
            },
        }
    }

    fn struct_body(&mut self, value: &Value) -> Option<()> {
        let Value::Object(object) = value else {
            return None;
        };
        for (key, value) in object {
            encode_key(
                number::STRUCT_FIELDS,
                WireType::LengthDelimited,
                &mut self.buf,
            );
            let entry = self.open();
            // The entry's key has implicit presence: "" is left out.
            if !key.is_empty() {
                encode_key(MAP_KEY, WireType::LengthDelimited, &mut self.buf);
                encode_varint(key.len() as u64, &mut self.buf);
                self.buf.extend_from_slice(key.as_bytes());
            }
            encode_key(MAP_VALUE, WireType::LengthDelimited, &mut self.buf);
            let start = self.open();
            self.nested_value(value)?;
            self.close(start)?;
            self.close(entry)?;
        }
        Some(())
    }

    fn list_body(&mut self, value: &Value) -> Option<()> {
        let Value::Array(items) = value else {
            return None;
        };
        for item in items {
            encode_key(
                number::LIST_VALUES,
                WireType::LengthDelimited,
                &mut self.buf,
            );
            let start = self.open();
            self.nested_value(item)?;
            self.close(start)?;
        }
        Some(())
    }

    fn nested_value(&mut self, value: &Value) -> Option<()> {
        self.enter()?;
        self.value_body(value)?;
        self.depth -= 1;
        Some(())
    }

    /// A `google.protobuf.Value`: one member of its `kind` oneof, always written.
    fn value_body(&mut self, value: &Value) -> Option<()> {
        match value {
            Value::Null => {
                encode_key(number::NULL_VALUE, WireType::Varint, &mut self.buf);
                self.buf.push(0);
            }
            Value::Number(n) => {
                encode_key(number::NUMBER_VALUE, WireType::SixtyFourBit, &mut self.buf);
                self.buf.extend_from_slice(&n.as_f64()?.to_le_bytes());
            }
            Value::String(s) => {
                encode_key(
                    number::STRING_VALUE,
                    WireType::LengthDelimited,
                    &mut self.buf,
                );
                encode_varint(s.len() as u64, &mut self.buf);
                self.buf.extend_from_slice(s.as_bytes());
            }
            Value::Bool(b) => {
                encode_key(number::BOOL_VALUE, WireType::Varint, &mut self.buf);
                self.buf.push(u8::from(*b));
            }
            Value::Object(_) => {
                encode_key(
                    number::STRUCT_VALUE,
                    WireType::LengthDelimited,
                    &mut self.buf,
                );
                let start = self.open();
                self.enter()?;
                self.struct_body(value)?;
                self.depth -= 1;
                self.close(start)?;
            }
            Value::Array(_) => {
                encode_key(number::LIST_VALUE, WireType::LengthDelimited, &mut self.buf);
                let start = self.open();
                self.enter()?;
                self.list_body(value)?;
                self.depth -= 1;
                self.close(start)?;
            }
        }
        Some(())
    }
}
