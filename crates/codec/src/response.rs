//! A tool's response messages → the JSON its output schema describes.
//!
//! Each message is decoded in one pass when the one-pass decoder can answer exactly
//! ([`decode`]), else through prost-reflect ([`to_json`]), which also words the errors.
//! A differential test (`decode/transcode_tests.rs`) holds the first to the second.

use std::borrow::Cow;

use bytes::Bytes;
use prost_reflect::{DynamicMessage, MessageDescriptor};
use serde_json::Value;

use crate::{
    decode,
    plans::Plans,
    to_json::{self, ToJsonOptions, clear_omitted},
};

/// What decodes one tool's responses: the response type, the fields its output schema leaves
/// out, how results are written, and the plans of the one-pass decoder. Borrows all of it.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    /// The response message type.
    pub output: &'a MessageDescriptor,
    /// The one-pass plans of `output`; `None` takes prost-reflect's way only (for a type the
    /// plans were not made for, or bytes the one-pass decoder already declined).
    pub plans: Option<&'a Plans>,
    /// Full names of the fields the output schema leaves out: cleared at any depth.
    pub omitted: &'a [Cow<'static, str>],
    /// How results are written.
    pub options: ToJsonOptions,
    /// The RPC streams responses: each message is an element, not the tool's root.
    pub streaming: bool,
}

impl Response<'_> {
    /// One response message as JSON.
    ///
    /// # Errors
    ///
    /// What failed: the bytes are not a message of `output`, or it has no JSON form.
    pub fn decode(&self, bytes: &Bytes) -> Result<Value, String> {
        if let Some(plans) = self.plans {
            let plan = plans.decode(self.output, self.omitted);
            let fast = if self.streaming {
                decode::message_to_json(plan, bytes, self.options)
            } else {
                decode::root_to_json(plan, bytes, self.options)
            };
            if let Some(value) = fast {
                return Ok(value);
            }
        }
        let mut message =
            DynamicMessage::decode(self.output.clone(), bytes.clone()).map_err(|e| {
                format!(
                    "the backend's response could not be decoded as {}: {e}",
                    self.output.full_name()
                )
            })?;
        if !self.omitted.is_empty() {
            clear_omitted(&mut message, self.omitted);
        }
        let value = if self.streaming {
            to_json::message_to_json(&message, self.options)
        } else {
            to_json::root_to_json(&message, self.options)
        };
        value.map_err(|e| format!("the backend's response could not be encoded as JSON: {e}"))
    }

    /// A unary response as the JSON text of the tool's root, written straight from the bytes,
    /// or `None` where the one-pass writer is not sure of them (then [`Response::decode`]).
    pub fn decode_text(&self, bytes: &[u8]) -> Option<String> {
        let plan = self.plans?.decode(self.output, self.omitted);
        decode::root_to_text(plan, bytes, self.options)
    }
}
