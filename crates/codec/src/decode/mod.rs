//! Encoded response bytes → the canonical JSON shape in one pass, without a `DynamicMessage`.
//!
//! The old path ([`super::to_json`]) decodes a `DynamicMessage`, clears the omitted fields,
//! has prost-reflect write protojson into a `serde_json::Value`, then reshapes it. This
//! decoder reads the wire once and writes the very same `Value` (key order included: the
//! workspace's `serde_json` preserves it), from a [`Plan`] made once per output type:
//! every reachable message's fields in number order (the order prost-reflect writes), their
//! output keys (aliases of long names included) made in advance, enum names by number.
//!
//! Map entries come in the order of the wire (a key seen again keeps its place and takes the
//! later value). prost-reflect keeps a map in a `HashMap`, so the old path wrote a map of two
//! or more keys in an order that changed from call to call: the result is JSON-equal, and now
//! deterministic.
//!
//! What it reproduces of prost-reflect: the last of repeated singular scalars wins; a
//! singular message seen twice is the merge of both (decoded as their concatenation, which
//! the wire format defines as the merge); a oneof member clears the others; packed and
//! unpacked repeated scalars; unknown fields skipped; enums by name, unknown numbers as
//! numbers, `NullValue` as `null`; 64-bit integers and non-finite floats as strings; bytes as
//! padded standard base64; defaults skipped unless `emit_defaults` (presence fields only when
//! set, even then); omitted fields cleared (an implicit-presence one then comes out as its
//! default with `emit_defaults`, as the old path does); Timestamp, Duration, FieldMask, the
//! wrappers (a NaN `FloatValue`/`DoubleValue` is `null` there), Empty, Struct (keys sorted,
//! as `prost_types` holds them in a `BTreeMap`), Value and ListValue (integral numbers as
//! integers).
//!
//! What the old path decodes and then drops (an omitted field, a oneof member a later one
//! replaced, each part of a merged message) is still decoded here, for its errors only, so
//! that bytes the old path refuses are never answered.
//!
//! [`root_to_text`] writes a tool root as JSON text instead, byte for byte what `serde_json`
//! writes of the `Value` (`text`): a message's keys and scalars are written as they are read,
//! without a tree; lists, maps and well-known types (a root of one included) go through the
//! same `Value`s and are written at once. It answers `None` exactly where [`root_to_json`]
//! does.
//!
//! It answers `None`, and the caller runs the old path (which also words the errors), for:
//! malformed wire data of any kind; groups; extension fields on the wire; `Any` (its payload
//! type is resolved through the pool and the server's union pool); a non-finite `Value` number, an
//! out-of-range Timestamp or Duration and a FieldMask path that does not round-trip (the old
//! path fails on them); messages nested deeper than 64.

mod message;
mod text;
mod wire;

use serde_json::Value;

use super::to_json::ToJsonOptions;
use crate::plan::{Plan, ROOT};
use crate::well_known::{Wkt, as_root};
use message::Ctx;

/// A tool root: `Some` of exactly what [`super::to_json::root_to_json`] writes after
/// `clear_omitted`, or `None` when this decoder cannot guarantee it (see the module).
pub(crate) fn root_to_json(plan: &Plan, bytes: &[u8], options: ToJsonOptions) -> Option<Value> {
    let value = message_to_json(plan, bytes, options)?;
    let wrapped = plan
        .messages
        .get(ROOT)?
        .wkt
        .is_some_and(Wkt::is_value_wrapped_root);
    Some(as_root(value, wrapped))
}

/// A tool root as JSON text: `Some` of exactly what `serde_json` writes of what
/// [`root_to_json`] gives, and `None` where that gives `None`.
pub(crate) fn root_to_text(plan: &Plan, bytes: &[u8], options: ToJsonOptions) -> Option<String> {
    if plan.messages.get(ROOT)?.wkt.is_some() {
        // A well-known root is a `Value` (wrapped, for some) either way.
        return serde_json::to_string(&root_to_json(plan, bytes, options)?).ok();
    }
    let mut out = Vec::with_capacity(bytes.len() * 2 + 16);
    text::write_message(ctx(plan, options), ROOT, bytes, 0, &mut out)?;
    String::from_utf8(out).ok()
}

/// One message (not a tool root), e.g. an element of a server stream: as
/// [`super::to_json::message_to_json`] writes it, or `None`.
pub(crate) fn message_to_json(plan: &Plan, bytes: &[u8], options: ToJsonOptions) -> Option<Value> {
    message::message(ctx(plan, options), ROOT, bytes, 0)
}

/// What the decoding of one response with `options` shares.
fn ctx(plan: &Plan, options: ToJsonOptions) -> Ctx<'_> {
    Ctx {
        plan,
        json_names: options.json_names,
        emit_defaults: options.emit_defaults,
        validating: false,
    }
}

#[cfg(test)]
mod transcode_tests;
