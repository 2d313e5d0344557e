//! The encoder's seeds of the well-known types' JSON forms ([`crate::well_known`]):
//! Timestamp, Duration and FieldMask as their strings, and `Struct`, `ListValue` and `Value` as
//! any JSON of their shape. Wrappers are their scalar and `Empty` is `{}` (`seed.rs`); `Any` is
//! left to the old path.

use std::borrow::Cow;

use prost::encoding::{WireType, encode_key};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::scalar::{close, open, string_field};
use super::{Encoder, whole_way};
use super::{MAP_KEY, MAP_VALUE};
use crate::patterns::KnownPattern;
use crate::well_known::{self, Wkt, number};

/// A Timestamp, Duration or FieldMask (`wkt`) string, matching `pattern` when there is one.
pub(super) struct WktTextSeed<'e, 'p> {
    pub(super) encoder: &'e mut Encoder<'p>,
    pub(super) wkt: Wkt,
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
        let buf = &mut self.encoder.buf;
        match self.wkt {
            Wkt::FieldMask => well_known::field_mask_from_json(text, buf),
            wkt => well_known::time_from_json(wkt, text, buf),
        }
        .ok_or_else(whole_way)
    }
}

/// `Struct`, `ListValue` or `Value`: any JSON of its shape, one level deeper per value and per
/// container, as the old path's decoder counts them.
pub(super) struct JsonSeed<'e, 'p> {
    encoder: &'e mut Encoder<'p>,
    /// `Struct` (an object), `ListValue` (an array) or `Value` (any JSON).
    wkt: Wkt,
}

impl JsonSeed<'_, '_> {
    /// The body of the well-known message `wkt` (`Struct`, `ListValue` or `Value`).
    pub(super) fn body<'de, D: de::Deserializer<'de>>(
        encoder: &mut Encoder<'_>,
        wkt: Wkt,
        deserializer: D,
    ) -> Result<(), D::Error> {
        encoder.enter()?;
        let seed = JsonSeed {
            encoder: &mut *encoder,
            wkt,
        };
        match wkt {
            Wkt::Struct => deserializer.deserialize_map(seed)?,
            Wkt::ListValue => deserializer.deserialize_seq(seed)?,
            Wkt::Value => deserializer.deserialize_any(seed)?,
            _ => return Err(whole_way()),
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
            wkt: Wkt::Value,
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
        if self.wkt != Wkt::Value {
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
        if self.wkt == Wkt::Value {
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
        if self.wkt != Wkt::Value {
            return Err(whole_way());
        }
        string_field(&mut self.encoder.buf, number::STRING_VALUE, text);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.wkt == Wkt::ListValue {
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
        if self.wkt == Wkt::Struct {
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
