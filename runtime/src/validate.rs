//! Input validation against the tool's compiled JSON Schema, with errors the model can act on.

use jsonschema::{
    Draft, ValidationError, Validator, error::ValidationErrorKind, paths::LocationSegment,
};
use serde_json::Value;

use crate::codec::path::{JsonPath, Problem, Seg};

/// Check a tool schema against the draft 2020-12 meta-schema: cheap, so it runs for every
/// tool at registration, while [`compile`] waits for the tool's first call.
pub(crate) fn check_schema(schema: &Value) -> Result<(), String> {
    jsonschema::draft202012::meta::validator()
        .validate(schema)
        .map_err(|e| e.to_string())
}

/// Compile a tool schema (draft 2020-12, no remote references), on the tool's first call.
pub(crate) fn compile(schema: &Value) -> Result<Validator, String> {
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
        collect(&error, schema, &mut out);
    }
    out.retain(|p| !suppressed.iter().any(|s| p.path.starts_with(s)));
    out.dedup();
    out
}

fn location<'a>(segments: impl Iterator<Item = LocationSegment<'a>>) -> JsonPath {
    JsonPath(
        segments
            .map(|seg| match seg {
                LocationSegment::Property(key) => Seg::Key(key.into_owned()),
                LocationSegment::Index(index) => Seg::Index(index),
            })
            .collect(),
    )
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

fn collect(error: &ValidationError<'_>, schema: &Value, out: &mut Vec<Problem>) {
    let path = location(error.instance_path().segments());
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
        ValidationErrorKind::Type { kind } => {
            format!("expected {}, got {}", type_names(kind), describe(instance))
        }
        ValidationErrorKind::Enum { options } => {
            let options: Vec<String> = match options.as_ref() {
                Value::Array(items) => items.iter().map(Value::to_string).collect(),
                other => vec![other.to_string()],
            };
            format!(
                "expected one of {}, got {}",
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
            if let Some(branch) = matching_case_branch(instance, &path, context) {
                for error in branch {
                    collect(error, schema, out);
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
    path: &JsonPath,
    context: &'e [Vec<ValidationError<'static>>],
) -> Option<&'e [ValidationError<'static>]> {
    instance.get("case")?.as_str()?;
    let case_path = path.with_key("case");
    let mut matching = context.iter().filter(|branch| {
        !branch
            .iter()
            .any(|e| location(e.instance_path().segments()) == case_path)
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

/// Local references only: tool schemas are self-contained (SPEC §4).
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
