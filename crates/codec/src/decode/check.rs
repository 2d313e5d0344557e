//! The test hook: the old path and the new one side by side, for the differential tests
//! (`tests/e2e/tests/transcode_response.rs`), through `tonic_mcp_codec::differential::response`.

use std::borrow::Cow;

use prost_reflect::{DynamicMessage, MessageDescriptor};
use serde_json::Value;

use super::Plan;
use crate::to_json::{self, ToJsonOptions};

/// A response type with its options, made once: [`Transcoder::old_path`] runs the current path
/// (decode, `clear_omitted`, protojson, canonical reshaping), [`Transcoder::fast_path`] the
/// single-pass decoder.
#[derive(Debug)]
pub struct Transcoder {
    desc: MessageDescriptor,
    omitted: Vec<Cow<'static, str>>,
    plan: Plan,
    options: ToJsonOptions,
    root: bool,
}

impl Transcoder {
    /// For responses of `desc`, written with these options, as a tool root or a stream
    /// element, with the fields named (full names) in `omitted` cleared.
    pub fn build(
        desc: &MessageDescriptor,
        json_names: bool,
        emit_defaults: bool,
        root: bool,
        omitted: &[&str],
    ) -> Self {
        let omitted: Vec<Cow<'static, str>> = omitted
            .iter()
            .map(|s| Cow::Owned((*s).to_owned()))
            .collect();
        Self {
            plan: Plan::new(desc, &omitted),
            desc: desc.clone(),
            omitted,
            options: ToJsonOptions {
                json_names,
                emit_defaults,
            },
            root,
        }
    }

    /// The old path's value, or its error text.
    pub fn old_path(&self, bytes: &[u8]) -> Result<Value, String> {
        let mut message =
            DynamicMessage::decode(self.desc.clone(), bytes).map_err(|e| format!("decode: {e}"))?;
        if !self.omitted.is_empty() {
            crate::to_json::clear_omitted(&mut message, &self.omitted);
        }
        if self.root {
            to_json::root_to_json(&message, self.options)
        } else {
            to_json::message_to_json(&message, self.options)
        }
    }

    /// The single-pass decoder's value, or `None` when it leaves the bytes to the old path.
    pub fn fast_path(&self, bytes: &[u8]) -> Option<Value> {
        if self.root {
            super::root_to_json(&self.plan, bytes, self.options)
        } else {
            super::message_to_json(&self.plan, bytes, self.options)
        }
    }
}

impl Transcoder {
    /// The text writer's answer for a tool root (`root_to_text`); `None` for a
    /// stream element, which is never written as text.
    pub fn text_path(&self, bytes: &[u8]) -> Option<String> {
        if self.root {
            super::root_to_text(&self.plan, bytes, self.options)
        } else {
            None
        }
    }
}
