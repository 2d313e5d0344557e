//! Input validation against the tool's compiled JSON Schema, with errors the model can act on.

use jsonschema::{
    Draft, ValidationError, Validator, error::ValidationErrorKind, paths::LocationSegment,
};
use std::sync::OnceLock;

use prost_reflect::MessageDescriptor;
use serde_json::Value;
use tonic_mcp_schema::json_schema::NOT_EXPANDED;

use crate::path::{JsonPath, Problem, Seg};

/// The second check of a tool whose listed input schema the plugin's `max_schema_bytes` budget
/// shrank: subtrees listed as plain `{"type": "object"}` accept any object, so the arguments are
/// also validated against the full schema, made from the descriptors by the plugin's own
/// generator (`tonic-mcp-schema`) and compiled on the first call. A wrong field deep in such a
/// subtree is then reported with its path like any other.
#[derive(Debug, Default)]
pub struct DeepCheck {
    /// `None` when the listed schema is complete.
    full: Option<OnceLock<Result<(Value, Validator), String>>>,
}

impl DeepCheck {
    /// The check of a complete listed schema: none.
    pub const NONE: DeepCheck = DeepCheck { full: None };

    /// A check for a listed input schema, given as JSON text: only shrunk schemas (which carry
    /// the [`NOT_EXPANDED`] phrase, plain ASCII that JSON text holds unescaped) need one.
    pub fn new(listed_schema: &str) -> DeepCheck {
        DeepCheck {
            full: listed_schema.contains(NOT_EXPANDED).then(OnceLock::new),
        }
    }

    /// Whether the listed schema is complete, so that there is nothing more to check.
    pub fn is_none(&self) -> bool {
        self.full.is_none()
    }

    /// Problems the full schema finds that the listed one did not (`reported`), minus those
    /// under `suppressed` paths.
    pub(crate) fn problems(
        &self,
        input: &MessageDescriptor,
        streaming_input: bool,
        json_names: bool,
        instance: &Value,
        suppressed: &[JsonPath],
        reported: &[Problem],
    ) -> Vec<Problem> {
        let Some(full) = &self.full else {
            return Vec::new();
        };
        let compiled = full.get_or_init(|| full_schema(input, streaming_input, json_names));
        match compiled {
            Ok((schema, validator)) => {
                let mut found = problems(validator, schema, instance, suppressed);
                // Where the listed schema already spoke, it was complete: keep its words.
                found.retain(|p| !reported.iter().any(|r| r.path == p.path));
                found
            }
            Err(message) => {
                tracing::warn!(message = %message, "cannot build the full input schema");
                Vec::new()
            }
        }
    }
}

/// The unshrunk input schema of a tool, without descriptions, and its validator.
fn full_schema(
    input: &MessageDescriptor,
    streaming_input: bool,
    json_names: bool,
) -> Result<(Value, Validator), String> {
    let options = tonic_mcp_schema::Options {
        json_names,
        descriptions: false,
        max_schema_bytes: 0,
        ..tonic_mcp_schema::Options::default()
    };
    let context = tonic_mcp_schema::Context::new(input.parent_pool(), &options);
    let cardinal = if streaming_input {
        tonic_mcp_schema::json_schema::Cardinal::Stream
    } else {
        tonic_mcp_schema::json_schema::Cardinal::One
    };
    let schema = tonic_mcp_schema::json_schema::tool_schema(
        context.schema_context(),
        input,
        tonic_mcp_schema::json_schema::Direction::Input,
        cardinal,
    )
    .map_err(|e| e.to_string())?;
    let validator = compile(&schema)?;
    Ok((schema, validator))
}

/// Check a tool schema against the draft 2020-12 meta-schema: cheap, so it runs for every
/// tool at registration, while [`compile`] waits for the tool's first call.
pub fn check_schema(schema: &Value) -> Result<(), String> {
    jsonschema::draft202012::meta::validator()
        .validate(schema)
        .map_err(|e| e.to_string())
}

/// Compile a tool schema (draft 2020-12, no remote references), on the tool's first call.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Every schema error in `instance`, minus those under `suppressed` paths.
pub(crate) fn problems(
    validator: &Validator,
    schema: &Value,
    instance: &Value,
    suppressed: &[JsonPath],
) -> Vec<Problem> {
    let mut out = Vec::new();
    // The common case is valid arguments: `is_valid` stops early and builds no error values.
    if suppressed.is_empty() && validator.is_valid(instance) {
        return out;
    }
    for error in validator.iter_errors(instance) {
        collect(&error, schema, instance, &mut out);
    }
    out.retain(|p| !suppressed.iter().any(|s| p.path.starts_with(s)));
    out.dedup();
    out
}

/// The path of `segments` in `root`. A JSON pointer cannot tell an object key made of digits
/// from an array index, so each segment is read against the value it walks into: a map key
/// `"1"` stays a key, as the normaliser writes it, and the two report one path.
fn location<'a>(segments: impl Iterator<Item = LocationSegment<'a>>, root: &Value) -> JsonPath {
    let mut at = Some(root);
    let mut path = Vec::new();
    for segment in segments {
        let segment = match segment {
            LocationSegment::Property(key) => {
                at = at.and_then(|value| value.get(key.as_ref()));
                Seg::Key(key.into_owned())
            }
            LocationSegment::Index(index) => match at {
                Some(Value::Object(object)) => {
                    let key = index.to_string();
                    at = object.get(&key);
                    Seg::Key(key)
                }
                _ => {
                    at = at.and_then(|value| value.get(index));
                    Seg::Index(index)
                }
            },
        };
        path.push(segment);
    }
    JsonPath(path)
}

fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let text = value.to_string();
    if text.chars().count() > 60 {
        kind.to_owned()
    } else {
        format!("{kind} ({text})")
    }
}

fn collect(error: &ValidationError<'_>, schema: &Value, root: &Value, out: &mut Vec<Problem>) {
    let path = location(error.instance_path().segments(), root);
    let instance = error.instance();
    let message = match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed = parent_properties(schema, error).unwrap_or_default();
            for name in unexpected {
                let message = if allowed.is_empty() {
                    format!("unknown property `{name}`; this object takes no properties")
                } else {
                    format!("unknown property `{name}`; allowed: {}", allowed.join(", "))
                };
                out.push(Problem {
                    path: path.with_key(name),
                    message,
                });
            }
            return;
        }
        ValidationErrorKind::Required { property } => match property.as_str() {
            Some(name) => format!("missing required property `{name}`"),
            None => format!("missing required property {property}"),
        },
        // A value an `enum` also refuses is one problem, which the `enum` error words.
        ValidationErrorKind::Type { .. } if beside_enum(schema, error) => return,
        ValidationErrorKind::Type { kind } => {
            format!("expected {}, got {}", type_names(kind), describe(instance))
        }
        ValidationErrorKind::Enum { options } => {
            let names = options
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string));
            let options: Vec<String> = match options.as_ref() {
                Value::Array(items) => items.iter().map(Value::to_string).collect(),
                other => vec![other.to_string()],
            };
            // A protobuf enum's value may also be given by its number (proto3 JSON); a number
            // that reaches here is none of them.
            let numbers = if names && instance.is_number() {
                " (or the number of one of them)"
            } else {
                ""
            };
            format!(
                "expected one of {}{numbers}, got {}",
                options.join(", "),
                describe(instance)
            )
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("expected {expected_value}, got {}", describe(instance))
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!(
                "expected a string matching {pattern}, got {}",
                describe(instance)
            )
        }
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            // A discriminated union: report the errors of the branch whose `case` matched.
            if let Some(branch) = matching_case_branch(instance, root, &path, context) {
                for error in branch {
                    collect(error, schema, root, out);
                }
                return;
            }
            let cases = union_cases(schema, error);
            if cases.is_empty() {
                error.to_string()
            } else {
                format!(
                    "expected {{\"case\": <member>, \"value\": <value>}} with case one of: {}",
                    cases.join(", ")
                )
            }
        }
        _ => error.to_string(),
    };
    out.push(Problem { path, message });
}

fn type_names(kind: &jsonschema::error::TypeKind) -> String {
    match kind {
        jsonschema::error::TypeKind::Single(t) => t.to_string(),
        jsonschema::error::TypeKind::Multiple(set) => set
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

/// In `{case, value}` unions, the branch whose `case` const matched has no error at `case`.
fn matching_case_branch<'e>(
    instance: &Value,
    root: &Value,
    path: &JsonPath,
    context: &'e [Vec<ValidationError<'static>>],
) -> Option<&'e [ValidationError<'static>]> {
    instance.get("case")?.as_str()?;
    let case_path = path.with_key("case");
    let mut matching = context.iter().filter(|branch| {
        !branch
            .iter()
            .any(|e| location(e.instance_path().segments(), root) == case_path)
    });
    match (matching.next(), matching.next()) {
        (Some(branch), None) => Some(branch.as_slice()),
        _ => None,
    }
}

/// Resolve a schema location given as evaluation-path segments, following `$ref`s.
fn schema_at<'a, 's>(
    root: &'s Value,
    segments: impl Iterator<Item = LocationSegment<'a>>,
) -> Option<&'s Value> {
    let mut current = root;
    for seg in segments {
        current = match seg {
            LocationSegment::Property(key) if key == "$ref" => {
                resolve_ref(root, current.get("$ref")?.as_str()?)?
            }
            LocationSegment::Property(key) => current.get(key.as_ref())?,
            LocationSegment::Index(index) => current.get(index)?,
        };
    }
    Some(current)
}

/// Local references only: tool schemas are self-contained (docs/design.md §4).
fn resolve_ref<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    let pointer = percent_decode(pointer);
    root.pointer(&pointer)
}

fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `properties` names of the schema object holding the failing `additionalProperties`.
/// Whether the keyword that failed sits beside an `enum` (a `type` with the value list).
fn beside_enum(schema: &Value, error: &ValidationError<'_>) -> bool {
    let segments: Vec<LocationSegment<'_>> = error.evaluation_path().segments().collect();
    segments
        .split_last()
        .and_then(|(_, parent)| schema_at(schema, parent.iter().cloned()))
        .is_some_and(|object| object.get("enum").is_some())
}

fn parent_properties(schema: &Value, error: &ValidationError<'_>) -> Option<Vec<String>> {
    let segments: Vec<LocationSegment<'_>> = error.evaluation_path().segments().collect();
    let (_, parent) = segments.split_last()?;
    let object = schema_at(schema, parent.iter().cloned())?;
    let properties = object.get("properties")?.as_object()?;
    Some(properties.keys().cloned().collect())
}

/// The `case` constants of a `{case, value}` union.
fn union_cases(schema: &Value, error: &ValidationError<'_>) -> Vec<String> {
    let Some(union) = schema_at(schema, error.evaluation_path().segments()) else {
        return Vec::new();
    };
    union
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|branch| {
            let branch = match branch.get("$ref").and_then(Value::as_str) {
                Some(reference) => resolve_ref(schema, reference)?,
                None => branch,
            };
            branch
                .pointer("/properties/case/const")?
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}
