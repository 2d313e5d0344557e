//! The differential test hook (`tonic_mcp_codec::differential::request`): the old path's bytes next
//! to this encoder's, and the normaliser in front of both. Not an API.

use std::panic::{AssertUnwindSafe, catch_unwind};

use prost::Message as _;
use prost_reflect::MessageDescriptor;
use serde_json::{Map, Value};

use super::{Checks, MAX_DEPTH, Plan, from_value};
use crate::{
    from_json::{message_from_json, root_from_json},
    normalize::{NormalizeOptions, normalize_arguments},
};

/// The plan of one input type, and its type's checks.
#[derive(Debug)]
pub struct Transcoder {
    desc: MessageDescriptor,
    plan: Plan,
    checks: Checks,
}

impl Transcoder {
    /// Plans the encoding of `desc` (done once per tool input type).
    pub fn new(desc: &MessageDescriptor) -> Self {
        let plan = Plan::new(desc, &[]);
        Self {
            desc: desc.clone(),
            checks: Checks::loose(&plan),
            plan,
        }
    }

    /// The old path: `root_from_json` (or `message_from_json`) then `encode_to_vec`; a panic
    /// inside it is an error too (`"panic: …"`).
    pub fn old(&self, canonical: &Value, root: bool) -> Result<Vec<u8>, String> {
        let run = || {
            let message = if root {
                root_from_json(&self.desc, canonical.clone())
            } else {
                message_from_json(&self.desc, canonical.clone())
            };
            message.map(|m| m.encode_to_vec())
        };
        catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|panic| {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            Err(format!("panic: {text}"))
        })
    }

    /// This encoder, reading `canonical` as the type's checks take it.
    pub fn new_path(&self, canonical: &Value, root: bool) -> Option<Vec<u8>> {
        from_value(&self.plan, &self.checks, canonical, root, MAX_DEPTH)
    }

    /// Both: the old path's bytes (or error) and this encoder's.
    pub fn both(
        &self,
        canonical: &Value,
        root: bool,
    ) -> (Result<Vec<u8>, String>, Option<Vec<u8>>) {
        (self.old(canonical, root), self.new_path(canonical, root))
    }
}

/// The runtime's normaliser: loose tool arguments → the canonical value and the problems it
/// reported (as text).
pub fn normalize(
    desc: &MessageDescriptor,
    args: Map<String, Value>,
    json_names: bool,
    streaming_input: bool,
) -> (Value, Vec<String>) {
    let normalized = normalize_arguments(
        desc,
        args,
        NormalizeOptions {
            json_names,
            max_depth: 64,
            streaming_input,
        },
    );
    let problems = normalized
        .problems
        .iter()
        .map(ToString::to_string)
        .collect();
    (normalized.value, problems)
}
