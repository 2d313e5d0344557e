//! The plans of one tool's request and response types, each made on first use.

use std::{borrow::Cow, sync::OnceLock};

use prost_reflect::MessageDescriptor;

use super::{encode::Checks, plan::Plan, validate::Validator};

/// The plans of a tool's request and response types: made on its first call, so that a
/// server of many tools pays only for those that are called (each boxed: an unused one is a
/// pointer).
#[derive(Debug, Default)]
pub struct Plans {
    request: OnceLock<Box<Plan>>,
    response: OnceLock<Box<Plan>>,
    schema: OnceLock<Box<Checks>>,
    loose: OnceLock<Box<Checks>>,
}

impl Plans {
    /// The plan of `input`, the request type, for the encoder.
    pub(crate) fn encode(&self, input: &MessageDescriptor) -> &Plan {
        self.request.get_or_init(|| Box::new(Plan::new(input, &[])))
    }

    /// The encoder's checks of `validator` (the tool's input schema compiled, for `input`).
    pub(crate) fn schema(&self, input: &MessageDescriptor, validator: &Validator) -> &Checks {
        self.schema
            .get_or_init(|| Box::new(Checks::new(self.encode(input), validator)))
    }

    /// The encoder's checks of `input`'s type alone, for arguments the validator has passed.
    pub(crate) fn loose(&self, input: &MessageDescriptor) -> &Checks {
        self.loose
            .get_or_init(|| Box::new(Checks::loose(self.encode(input))))
    }

    /// The plan of `output`, the response type, for the decoder, clearing the `omitted`
    /// fields.
    pub(crate) fn decode(
        &self,
        output: &MessageDescriptor,
        omitted: &[Cow<'static, str>],
    ) -> &Plan {
        self.response
            .get_or_init(|| Box::new(Plan::new(output, omitted)))
    }
}
