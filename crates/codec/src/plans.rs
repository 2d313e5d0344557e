//! The single-pass transcoders' plans of one tool, each made on first use.

use std::{borrow::Cow, sync::OnceLock};

use prost_reflect::MessageDescriptor;

use super::{
    decode::DecodePlan,
    encode::{Checks, EncodePlan},
    validate::Validator,
};

/// The plans of a tool's request and response types: made on its first call, so that a
/// server of many tools pays only for those that are called (each boxed: an unused one is a
/// pointer).
#[derive(Debug, Default)]
pub struct Plans {
    encode: OnceLock<Box<EncodePlan>>,
    decode: OnceLock<Box<DecodePlan>>,
    schema: OnceLock<Box<Checks>>,
    loose: OnceLock<Box<Checks>>,
}

impl Plans {
    /// The request encoder's plan of `input`.
    pub(crate) fn encode(&self, input: &MessageDescriptor) -> &EncodePlan {
        self.encode.get_or_init(|| Box::new(EncodePlan::new(input)))
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
