//! The elements of a packed list: scalars and enums written one after another, no keys.

use prost::encoding::encode_varint;
use serde::de::{self, DeserializeSeed, Visitor};
use serde_json::{Number, Value};

use super::super::fast_from_json::{plan::ValueKind, scalar_raw};
use super::{Encoder, checks::Check, whole_way};

/// One element of a packed list: no key.
pub(super) struct PackedSeed<'e, 'p, 'k> {
    pub(super) encoder: &'e mut Encoder<'p>,
    pub(super) kind: &'k ValueKind,
    pub(super) check: usize,
}

impl<'de> DeserializeSeed<'de> for PackedSeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PackedSeed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list element")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        self.raw(&Value::Bool(value), |check| matches!(check, Check::Bool))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        let exact = i128::from(value);
        self.raw(&Value::Number(Number::from(value)), |check| {
            check.takes_integer(exact)
        })
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        let exact = i128::from(value);
        self.raw(&Value::Number(Number::from(value)), |check| {
            check.takes_integer(exact)
        })
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        let number = Number::from_f64(value).ok_or_else(whole_way)?;
        self.raw(&Value::Number(number), |check| {
            matches!(check, Check::Number)
        })
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        let encoder = self.encoder;
        let check = encoder.check(self.check);
        match self.kind {
            ValueKind::Enum { .. } => {
                let n = check.enum_number(self.kind, text).ok_or_else(whole_way)?;
                encode_varint(i64::from(n) as u64, &mut encoder.buf);
                Ok(())
            }
            ValueKind::Scalar(kind) => {
                let number = check.digits_number(*kind, text).ok_or_else(whole_way)?;
                scalar_raw(&mut encoder.buf, *kind, &Value::Number(number))
                    .map(|_| ())
                    .ok_or_else(whole_way)
            }
            ValueKind::Message(_) => Err(whole_way()),
        }
    }
}

impl PackedSeed<'_, '_, '_> {
    /// A scalar element whose check `fits`.
    fn raw<E: de::Error>(self, value: &Value, fits: impl Fn(&Check) -> bool) -> Result<(), E> {
        let ValueKind::Scalar(kind) = self.kind else {
            return Err(whole_way());
        };
        if !fits(self.encoder.check(self.check)) {
            return Err(whole_way());
        }
        scalar_raw(&mut self.encoder.buf, *kind, value)
            .map(|_| ())
            .ok_or_else(whole_way)
    }
}
