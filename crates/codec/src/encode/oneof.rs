//! A oneof's `{"case": member, "value": …}`, read `case` first.

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};

use super::checks::Prop;
use super::plan::{FieldPlan, KeyMap};
use super::seed::{Encoder, FieldSeed, KeySeed, whole_way};

/// A oneof's `{"case": member, "value": …}`, `case` first: writes the member's value and
/// returns the index of its field.
pub(super) struct OneofSeed<'e, 'p> {
    pub(super) encoder: &'e mut Encoder<'p>,
    pub(super) fields: &'p [FieldPlan],
    pub(super) members: &'p KeyMap<Prop>,
}

impl<'de> DeserializeSeed<'de> for OneofSeed<'_, '_> {
    type Value = usize;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OneofSeed<'_, '_> {
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a oneof")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let encoder = self.encoder;
        encoder.enter()?;
        // `value` before `case` would have to wait for it: left to the whole way.
        if map.next_key_seed(Exactly("case"))?.is_none() {
            return Err(whole_way());
        }
        let prop = map.next_value_seed(KeySeed {
            props: self.members,
        })?;
        if map.next_key_seed(Exactly("value"))?.is_none() {
            return Err(whole_way());
        }
        let field = self.fields.get(prop.field).ok_or_else(whole_way)?;
        map.next_value_seed(FieldSeed {
            encoder: &mut *encoder,
            field,
            check: prop.check,
        })?;
        if map.next_key_seed(Exactly(""))?.is_some() {
            return Err(whole_way());
        }
        encoder.leave();
        Ok(prop.field)
    }
}

/// A property key that must be the given one.
struct Exactly(&'static str);

impl<'de> DeserializeSeed<'de> for Exactly {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Exactly {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<(), E> {
        if key == self.0 {
            Ok(())
        } else {
            Err(whole_way())
        }
    }
}
