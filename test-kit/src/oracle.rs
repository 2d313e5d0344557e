//! jsonschema, the reference validator the codec's own is held to (`tonic_mcp_codec::compile`):
//! its verdict, and the paths of its errors placed as the codec's validator places problems.

use std::collections::BTreeSet;

use jsonschema::{ValidationError, error::ValidationErrorKind, paths::LocationSegment};
use serde_json::Value;

/// One step of a path into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// The member of an object.
    Key(String),
    /// The item of an array.
    Index(usize),
}

/// The reference validator of `schema`, as a draft 2020-12 schema.
///
/// # Errors
///
/// jsonschema's own, when it does not take the schema.
pub fn reference(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Where the codec's validator must report problems in `instance`, from the reference's
/// errors: each error at its instance path, but an unknown property at its own path (one per
/// name), and a `{case, value}` union that no branch takes at the paths of the branch whose
/// `case` matched, when exactly one did (else at the union).
pub fn problem_paths(reference: &jsonschema::Validator, instance: &Value) -> BTreeSet<Vec<Step>> {
    let mut out = BTreeSet::new();
    for error in reference.iter_errors(instance) {
        place(&error, instance, &mut out);
    }
    out
}

fn place(error: &ValidationError<'_>, root: &Value, out: &mut BTreeSet<Vec<Step>>) {
    let path = location(error, root);
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for name in unexpected {
                let mut at = path.clone();
                at.push(Step::Key(name.clone()));
                out.insert(at);
            }
        }
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context }
            if error.instance().get("case").is_some_and(Value::is_string) =>
        {
            let mut case = path.clone();
            case.push(Step::Key("case".to_owned()));
            let mut matching = context
                .iter()
                .filter(|branch| !branch.iter().any(|e| location(e, root) == case));
            match (matching.next(), matching.next()) {
                (Some(branch), None) => {
                    for error in branch {
                        place(error, root, out);
                    }
                }
                _ => {
                    out.insert(path);
                }
            }
        }
        _ => {
            out.insert(path);
        }
    }
}

/// The instance path of `error`. A JSON pointer cannot tell an object key made of digits from
/// an array index, so each step is read against the value it walks into.
fn location(error: &ValidationError<'_>, root: &Value) -> Vec<Step> {
    let mut at = Some(root);
    let mut path = Vec::new();
    for segment in error.instance_path().segments() {
        let step = match segment {
            LocationSegment::Property(key) => {
                at = at.and_then(|value| value.get(key.as_ref()));
                Step::Key(key.into_owned())
            }
            LocationSegment::Index(index) => match at {
                Some(Value::Object(object)) => {
                    let key = index.to_string();
                    at = object.get(&key);
                    Step::Key(key)
                }
                _ => {
                    at = at.and_then(|value| value.get(index));
                    Step::Index(index)
                }
            },
        };
        path.push(step);
    }
    path
}
