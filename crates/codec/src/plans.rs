//! The single-pass transcoders' plans of one tool, each made on first use.

use std::{borrow::Cow, sync::OnceLock};

use prost_reflect::MessageDescriptor;

use super::{
    fast_from_json::EncodePlan, fast_from_text::TextChecks, fast_to_json::DecodePlan,
    validate::Validator,
};

/// The plans of a tool's request and response types: made on its first call, so that a
/// server of many tools pays only for those that are called (each boxed: an unused one is a
/// pointer).
#[derive(Debug, Default)]
pub struct Plans {
    encode: OnceLock<Box<EncodePlan>>,
    decode: OnceLock<Box<DecodePlan>>,
    text: OnceLock<Box<TextChecks>>,
}

impl Plans {
    /// The request encoder's plan of `input`.
    pub(crate) fn encode(&self, input: &MessageDescriptor) -> &EncodePlan {
        self.encode.get_or_init(|| Box::new(EncodePlan::new(input)))
    }

    /// The text encoder's checks of `validator` (the tool's input schema compiled, for
    /// `input`).
    pub(crate) fn text(&self, input: &MessageDescriptor, validator: &Validator) -> &TextChecks {
        self.text
            .get_or_init(|| Box::new(TextChecks::new(self.encode(input), validator)))
    }

    /// The response decoder's plan of `output`, clearing the `omitted` fields.
    pub(crate) fn decode(
        &self,
        output: &MessageDescriptor,
        omitted: &[Cow<'static, str>],
    ) -> &DecodePlan {
        self.decode
            .get_or_init(|| Box::new(DecodePlan::new(output, omitted)))
    }
}
