//! The well-known types' JSON forms, as prost-reflect reads them: Timestamp, Duration and
//! FieldMask as their strings (Timestamp and Duration parsed by `prost_types`, range-checked
//! as prost-reflect does), and `Struct`, `ListValue` and `Value` as any JSON of their shape.
//! Wrappers are their scalar and `Empty` is `{}` (`seed.rs`); `Any` is left to the old path.

use std::borrow::Cow;

use prost::Message as _;
use prost::encoding::{WireType, encode_key};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::scalar::{self, close, open, string_field};
use super::seed::{Encoder, whole_way};
use super::{MAP_KEY, MAP_VALUE};
use crate::{Wkt, patterns::KnownPattern};

/// Field numbers of `google/protobuf/struct.proto` and `field_mask.proto`.
mod number {
    /// `Struct.fields`, a `map<string, Value>`.
    pub(super) const STRUCT_FIELDS: u32 = 1;
    /// `ListValue.values`.
    pub(super) const LIST_VALUES: u32 = 1;
    /// `FieldMask.paths`.
    pub(super) const FIELD_MASK_PATHS: u32 = 1;
    /// The members of `Value.kind`.
    pub(super) const NULL_VALUE: u32 = 1;
    pub(super) const NUMBER_VALUE: u32 = 2;
    pub(super) const STRING_VALUE: u32 = 3;
    pub(super) const BOOL_VALUE: u32 = 4;
    pub(super) const STRUCT_VALUE: u32 = 5;
    pub(super) const LIST_VALUE: u32 = 6;
}

/// A Timestamp, Duration or FieldMask string of message plan `message`, matching `pattern`
/// when there is one.
pub(super) struct WktTextSeed<'e, 'p> {
    pub(super) encoder: &'e mut Encoder<'p>,
    pub(super) message: usize,
    pub(super) pattern: Option<KnownPattern>,
}

impl<'de> Visitor<'de> for WktTextSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        if self.pattern.is_some_and(|pattern| !pattern.matches(text)) {
            return Err(whole_way());
        }
        let plan = self.encoder.plan;
        let wkt = plan.messages.get(self.message).and_then(|m| m.wkt);
        let buf = &mut self.encoder.buf;
        match wkt {
            Some(Wkt::Timestamp) => timestamp(text, buf),
            Some(Wkt::Duration) => duration(text, buf),
            Some(Wkt::FieldMask) => field_mask(text, buf),
            _ => None,
        }
        .ok_or_else(whole_way)
    }
}

/// A Timestamp's body from its RFC 3339 text.
fn timestamp(text: &str, buf: &mut Vec<u8>) -> Option<()> {
    if !scalar::strict_rfc3339(text) {
        return None;
    }
    let timestamp: prost_types::Timestamp = text.parse().ok()?;
    if timestamp.seconds < scalar::MIN_TIMESTAMP_SECONDS
        || scalar::MAX_TIMESTAMP_SECONDS < timestamp.seconds
    {
        return None;
    }
    timestamp.encode_raw(buf);
    Some(())
}

/// A Duration's body from its text (`"1.5s"`).
fn duration(text: &str, buf: &mut Vec<u8>) -> Option<()> {
    let duration: prost_types::Duration = text.parse().ok()?;
    if duration.seconds.unsigned_abs() > scalar::MAX_DURATION_SECONDS
        || duration.nanos.unsigned_abs() > scalar::MAX_DURATION_NANOS
    {
        return None;
    }
    duration.encode_raw(buf);
    Some(())
}

/// A FieldMask's body from its comma-separated lowerCamel paths.
fn field_mask(text: &str, buf: &mut Vec<u8>) -> Option<()> {
    let mut path = String::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        path.clear();
        scalar::field_mask_path(part, &mut path)?;
        string_field(buf, number::FIELD_MASK_PATHS, &path);
    }
    Some(())
}

/// Which JSON a [`JsonSeed`] reads.
#[derive(Clone, Copy)]
enum Shape {
    /// A `Struct`'s body: an object.
    Struct,
    /// A `ListValue`'s body: an array.
    List,
    /// A `Value`'s body: any JSON.
    Value,
}

/// `Struct`, `ListValue` or `Value`: any JSON of its shape, one level deeper per value and per
/// container, as the old path's decoder counts them.
pub(super) struct JsonSeed<'e, 'p> {
    encoder: &'e mut Encoder<'p>,
    shape: Shape,
}

impl JsonSeed<'_, '_> {
    /// The body of the well-known message `wkt` (`Struct`, `ListValue` or `Value`).
    pub(super) fn body<'de, D: de::Deserializer<'de>>(
        encoder: &mut Encoder<'_>,
        wkt: Wkt,
        deserializer: D,
    ) -> Result<(), D::Error> {
        encoder.enter()?;
        let shape = match wkt {
            Wkt::Struct => Shape::Struct,
            Wkt::ListValue => Shape::List,
            Wkt::Value => Shape::Value,
            _ => return Err(whole_way()),
        };
        let seed = JsonSeed {
            encoder: &mut *encoder,
            shape,
        };
        match shape {
            Shape::Struct => deserializer.deserialize_map(seed)?,
            Shape::List => deserializer.deserialize_seq(seed)?,
            Shape::Value => deserializer.deserialize_any(seed)?,
        }
        encoder.leave();
        Ok(())
    }

    /// A `Value` with its key `number` (a struct entry's or a list's), one level deeper.
    fn nested<'de, D: de::Deserializer<'de>>(
        encoder: &mut Encoder<'_>,
        number: u32,
        deserializer: D,
    ) -> Result<(), D::Error> {
        encode_key(number, WireType::LengthDelimited, &mut encoder.buf);
        let start = open(&mut encoder.buf);
        encoder.enter()?;
        deserializer.deserialize_any(JsonSeed {
            encoder: &mut *encoder,
            shape: Shape::Value,
        })?;
        encoder.leave();
        close(&mut encoder.buf, start).ok_or_else(whole_way)
    }

    /// A `Value` member with its key, the value written by `write`.
    fn member<E: de::Error>(
        self,
        number: u32,
        wire: WireType,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), E> {
        if !matches!(self.shape, Shape::Value) {
            return Err(whole_way());
        }
        encode_key(number, wire, &mut self.encoder.buf);
        write(&mut self.encoder.buf);
        Ok(())
    }

    fn number<E: de::Error>(self, value: f64) -> Result<(), E> {
        self.member(number::NUMBER_VALUE, WireType::SixtyFourBit, |buf| {
            buf.extend_from_slice(&value.to_le_bytes());
        })
    }

    /// A `Struct` or `ListValue` as a `Value`'s member, `fill` writing its body.
    fn container<E: de::Error>(
        self,
        number: u32,
        fill: impl FnOnce(&mut Encoder<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let encoder = self.encoder;
        if matches!(self.shape, Shape::Value) {
            encode_key(number, WireType::LengthDelimited, &mut encoder.buf);
            let start = open(&mut encoder.buf);
            encoder.enter()?;
            fill(&mut *encoder)?;
            encoder.leave();
            close(&mut encoder.buf, start).ok_or_else(whole_way)
        } else {
            fill(encoder)
        }
    }
}

/// A struct entry's or a list item's `Value`.
struct Nested<'e, 'p> {
    encoder: &'e mut Encoder<'p>,
    number: u32,
}

impl<'de> DeserializeSeed<'de> for Nested<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        JsonSeed::nested(self.encoder, self.number, deserializer)
    }
}

impl<'de> Visitor<'de> for JsonSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.member(number::NULL_VALUE, WireType::Varint, |buf| buf.push(0))
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        self.member(number::BOOL_VALUE, WireType::Varint, |buf| {
            buf.push(u8::from(value));
        })
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.number(value as f64)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.number(value as f64)
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        self.number(value)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        if !matches!(self.shape, Shape::Value) {
            return Err(whole_way());
        }
        string_field(&mut self.encoder.buf, number::STRING_VALUE, text);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if matches!(self.shape, Shape::List) {
            return Err(whole_way());
        }
        self.container(number::STRUCT_VALUE, |encoder| {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                encode_key(
                    number::STRUCT_FIELDS,
                    WireType::LengthDelimited,
                    &mut encoder.buf,
                );
                let entry = open(&mut encoder.buf);
                // The entry's key has implicit presence: "" is left out.
                if !key.is_empty() {
                    string_field(&mut encoder.buf, MAP_KEY, &key);
                }
                map.next_value_seed(Nested {
                    encoder: &mut *encoder,
                    number: MAP_VALUE,
                })?;
                close(&mut encoder.buf, entry).ok_or_else(whole_way)?;
            }
            Ok(())
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if matches!(self.shape, Shape::Struct) {
            return Err(whole_way());
        }
        self.container(number::LIST_VALUE, |encoder| {
            while seq
                .next_element_seed(Nested {
                    encoder: &mut *encoder,
                    number: number::LIST_VALUES,
                })?
                .is_some()
            {}
            Ok(())
        })
    }
}
