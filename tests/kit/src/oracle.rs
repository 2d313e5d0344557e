//! jsonschema, the reference validator the codec's own is held to (`tonic_mcp_codec::compile`):
//! its verdict, and the paths of its errors placed as the codec's validator places problems.

use std::collections::BTreeSet;

use jsonschema::{ValidationError, error::ValidationErrorKind};
use serde_json::Value;

/// One step of a path into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// The member of an object.
    Key(String),
    /// The item of an array.
    Index(usize),
}

/// `steps` made into a path of the caller's own type, from its empty value, with its ways to go
/// into a member (`key`) and into an item (`index`): `path_of(steps, JsonPath::push_key,
/// JsonPath::push_index)` for the codec's.
pub fn path_of<P: Default>(
    steps: &[Step],
    key: impl Fn(&mut P, &str),
    index: impl Fn(&mut P, usize),
) -> P {
    let mut path = P::default();
    for step in steps {
        match step {
            Step::Key(name) => key(&mut path, name),
            Step::Index(at) => index(&mut path, *at),
        }
    }
    path
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

/// The instance path of `error`, read from its JSON pointer against the value each token walks
/// into: a token is an array index only in an array. (jsonschema's own reading of its pointers
/// drops empty keys and takes keys such as `01` or `+1` for the index 1.)
fn location(error: &ValidationError<'_>, root: &Value) -> Vec<Step> {
    let pointer = error.instance_path().as_str();
    let mut at = Some(root);
    let mut path = Vec::new();
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let step = match (at, token.parse::<usize>()) {
            (Some(Value::Array(items)), Ok(index)) => {
                at = items.get(index);
                Step::Index(index)
            }
            (value, _) => {
                at = value.and_then(|value| value.get(token.as_str()));
                Step::Key(token)
            }
        };
        path.push(step);
    }
    path
}
