//! JSON → protobuf bytes in one pass: no `DynamicMessage`, and from text no `serde_json::Value`.
//!
//! One encoder, a serde [`DeserializeSeed`](serde::de::DeserializeSeed) (`seed.rs`), reads a
//! tool's arguments from JSON text ([`from_text`], `serde_json::Deserializer::from_str`) and
//! from a `serde_json::Value` ([`from_value`], which serde_json makes a `Deserializer` of)
//! alike: serde hands it the same calls either way. It writes the very bytes that
//! `root_from_json(desc, canonical)?.encode_to_vec()` (or `message_from_json`) gives: fields in
//! ascending number order (prost-reflect writes its `BTreeMap` in that order; fields are put in
//! that order when a message ends), packed exactly where the descriptor says `is_packed`,
//! defaults omitted only without explicit presence, each scalar read as prost-reflect's
//! deserializer reads it (`scalar.rs`). Nested lengths are written into a one-byte slot and the
//! body is shifted in the rare case it needs more.
//!
//! What each value may be is its [`Check`](checks::Check), from one of two tables ([`Checks`]):
//!
//! - **the schema's** ([`Checks::new`]), compiled from the input validator: the value must be
//!   what the schema accepts, in the canonical form. A `Some` is then what the whole way
//!   (normalise, validate, encode) gives, so arguments sent as text need no other pass.
//! - **the type's** ([`Checks::loose`]), compiled from the plan alone: every form prost-reflect
//!   reads from a `Value` (`null` for absent, numeric strings, enum numbers, integer map keys,
//!   `Struct`, `Value`, `ListValue`…), for canonical arguments the validator has passed.
//!
//! Map entries are written in the order of the JSON object; prost-reflect writes them in the
//! order of a `HashMap`, which varies from one call to the next, so the two agree up to the
//! order of map entries (which protobuf leaves unspecified).
//!
//! Whatever the encoder is not sure to write as the old path does gives `None`, and the caller
//! falls back to the old path, which keeps its error texts: every input the old path refuses,
//! `Any` (its payload is a type looked up by URL), groups, a property that is one field's proto
//! name and another's JSON name (it means one or the other by the tool's naming, which a plan
//! made for both does not know), a property given twice (by two of its names, or two members
//! of one oneof), a oneof not written `{"case": …, "value": …}` in that order, integer map keys
//! not in canonical decimal form, and nesting deeper than [`MAX_DEPTH`] (prost's decoder, used
//! by the old path for the well-known types, stops at 100).

pub(crate) mod checks;
pub(crate) mod scalar;
mod seed;
mod well_known;

use serde::de::{self, DeserializeSeed as _};
use serde_json::Value;

use self::checks::Check;
use self::seed::BodySeed;

pub(crate) use self::checks::Checks;
use crate::plan::Plan;

/// The key and value fields of a map entry (`descriptor.proto`, `MessageOptions.map_entry`).
pub(crate) const MAP_KEY: u32 = 1;
pub(crate) const MAP_VALUE: u32 = 2;

/// Nesting this encoder follows; deeper input is left to the old path.
pub(crate) const MAX_DEPTH: usize = 48;

static NULL: Value = Value::Null;

/// Exactly the bytes the whole way gives for the arguments `text` (a JSON object) checked by
/// `checks` (the schema's), or `None` when this encoder is not sure of them. Containers deeper
/// than `max_depth` give `None`.
pub(crate) fn from_text(
    plan: &Plan,
    checks: &Checks,
    text: &str,
    max_depth: usize,
) -> Option<Vec<u8>> {
    let mut encoder = Encoder::new(plan, checks, text.len().min(4096), max_depth);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    BodySeed {
        encoder: &mut encoder,
        check: 0,
    }
    .deserialize(&mut deserializer)
    .ok()?;
    deserializer.end().ok()?;
    Some(encoder.buf)
}

/// Some(exactly the bytes `root_from_json(desc, value.clone())?.encode_to_vec()` gives, up to
/// the order of map entries; `message_from_json` unless `root`) or `None` when this encoder
/// cannot guarantee that, including every case where the old path returns an error.
/// Containers deeper than `max_depth` give `None`.
pub(crate) fn from_value(
    plan: &Plan,
    checks: &Checks,
    value: &Value,
    root: bool,
    max_depth: usize,
) -> Option<Vec<u8>> {
    let value = match value {
        Value::Object(object) if root && plan.root_wrapped => object.get("value").unwrap_or(&NULL),
        other => other,
    };
    // Most requests fit: one allocation, rarely a second.
    let mut encoder = Encoder::new(plan, checks, 512, max_depth);
    BodySeed {
        encoder: &mut encoder,
        check: 0,
    }
    .deserialize(value)
    .ok()?;
    Some(encoder.buf)
}

/// The state of one encoding: the plan and checks it follows and the bytes written.
struct Encoder<'p> {
    plan: &'p Plan,
    checks: &'p Checks,
    buf: Vec<u8>,
    /// (field index, start, end) of the fields written of the messages open, in text order.
    fields: Vec<(usize, usize, usize)>,
    /// Where a message's fields are put in order.
    scratch: Vec<u8>,
    depth: usize,
    max_depth: usize,
}

/// The error that sends a call the whole way; its text is never shown.
fn whole_way<E: de::Error>() -> E {
    E::custom("left to the whole way")
}

static UNSUPPORTED: Check = Check::Unsupported;

impl<'p> Encoder<'p> {
    /// An encoder of `plan` checked by `checks`, its buffer of `capacity`, following nesting
    /// to `max_depth` (at most [`MAX_DEPTH`]).
    fn new(plan: &'p Plan, checks: &'p Checks, capacity: usize, max_depth: usize) -> Self {
        Self {
            plan,
            checks,
            buf: Vec::with_capacity(capacity),
            fields: Vec::with_capacity(32),
            scratch: Vec::new(),
            depth: 0,
            max_depth: max_depth.min(MAX_DEPTH),
        }
    }

    fn check(&self, index: usize) -> &'p Check {
        let checks: &'p Checks = self.checks;
        checks.checks.get(index).unwrap_or(&UNSUPPORTED)
    }

    /// One level deeper; past the limit, the whole way.
    fn enter<E: de::Error>(&mut self) -> Result<(), E> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(whole_way());
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Puts the fields written since `mark` in field-number order, refusing one given twice.
    fn order<E: de::Error>(&mut self, mark: usize) -> Result<(), E> {
        let fields = self.fields.get_mut(mark..).ok_or_else(whole_way)?;
        if fields.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            return Ok(());
        }
        let Some(&(_, from, _)) = fields.first() else {
            return Ok(());
        };
        fields.sort_unstable_by_key(|field| field.0);
        if fields.windows(2).any(|pair| pair[0].0 == pair[1].0) {
            return Err(whole_way());
        }
        self.scratch.clear();
        self.scratch
            .extend_from_slice(self.buf.get(from..).ok_or_else(whole_way)?);
        self.buf.truncate(from);
        for &(_, start, end) in fields.iter() {
            let bytes = self
                .scratch
                .get(start - from..end - from)
                .ok_or_else(whole_way)?;
            self.buf.extend_from_slice(bytes);
        }
        Ok(())
    }
}

#[cfg(test)]
mod transcode_tests;
