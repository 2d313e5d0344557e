//! Protobuf messages and MCP tool JSON, both ways.
//!
//! Three shapes meet here:
//!
//! - **Loose input**: whatever a model sends. It may use any of the alternates the runtime
//!   accepts (docs/design.md §4.3, §4.5, §4.7): JSON integers for 64-bit fields, numeric strings,
//!   URL-safe base64, enum numbers, the flat protojson form of a oneof, protojson's `@type`
//!   form of `Any`, JSON objects or arrays sent as strings, `null` for "absent".
//! - **Canonical shape**: what the tool schemas of `tonic-mcp-schema` describe (docs/design.md
//!   §4). The normaliser turns loose input into it; the compiled input schema then validates it.
//! - **protojson**: what prost-reflect's serde support reads and writes, the reference the
//!   one-pass transcoders are held to.
//!
//! Two entry points, one per direction: [`Arguments`] turns a tool's arguments into its request
//! messages (or the [`Problem`]s that keep them from being sent), and [`Response`] turns its
//! response messages into the JSON of its output schema. Both borrow what they work from; the
//! one-pass [`Plans`] of a tool (one per-type plan of its request type for the encoder, one of
//! its response type for the decoder, the same structure both ways) are made on its first call
//! and kept by the caller.
//!
//! Every walker is descriptor-driven and checks the nesting depth before it recurses.

mod arguments;
mod decode;
mod descriptor;
mod encode;
mod from_json;
mod measure;
mod normalize;
mod number;
mod path;
mod patterns;
mod plan;
mod plans;
mod response;
mod scalar_kind;
mod to_json;
mod validate;
mod well_known;

pub use arguments::{Arguments, parse};
pub use measure::depth_within;
pub use path::{JsonPath, MAX_PROBLEMS, Problem};
pub use plans::Plans;
pub use response::Response;
pub use to_json::ToJsonOptions;
pub use validate::{DeepCheck, Validator, check_schema, compile};

#[cfg(test)]
mod codec_tests;
#[cfg(test)]
mod synthetic_tests;
