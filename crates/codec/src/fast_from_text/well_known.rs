//! Timestamp, Duration and FieldMask written as their strings.

use serde::de::{self, Visitor};
use serde_json::Value;

use super::super::fast_from_json::well_known_into;
use super::{Encoder, whole_way};
use crate::patterns::KnownPattern;

/// A Timestamp, Duration or FieldMask string: checked as the schema asks, then written by the
/// one-pass encoder's own well-known code.
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
        let encoder = self.encoder;
        let value = Value::String(text.to_owned());
        well_known_into(encoder.plan, self.message, &value, &mut encoder.buf).ok_or_else(whole_way)
    }
}
