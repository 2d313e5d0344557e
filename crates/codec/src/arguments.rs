//! A tool's arguments → its request messages, or the problems that keep them from being sent.
//!
//! Two ways, one answer:
//!
//! - **Canonical arguments** (the shape the listed schema describes, which a model that follows
//!   the schema sends) are encoded in one pass ([`encode`]) as they came: checked as they are
//!   read by the schema's checks when these take them all, else validated first.
//!   Normalisation would give them back unchanged, in bytes.
//! - **Anything else** (loose forms: enum numbers, `null` for absent, URL-safe base64, a flat
//!   oneof, JSON sent as a string…; arguments with problems; what the one-pass encoder leaves)
//!   takes the whole way: normalise to the canonical shape (reporting what cannot be),
//!   validate, and encode, in one pass when it can, else through prost-reflect, which also
//!   words the errors.
//!
//! The first way is taken only when it gives the very bytes of the second; a differential test
//! (`tests/e2e/tests/transcode_arguments.rs`) holds it to that. Arguments sent as JSON text may also
//! be encoded straight from the text ([`Arguments::encode_text`]), checks included.

use bytes::Bytes;
use prost::Message as _;
use prost_reflect::MessageDescriptor;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::{
    encode::{self, Checks},
    from_json::{message_from_json, root_from_json},
    normalize::{NormalizeOptions, normalize_arguments},
    path::{JsonPath, MAX_PROBLEMS, Problem},
    plan::Plan,
    plans::Plans,
    validate::{self, DeepCheck, Validator},
};

/// What encodes one tool's arguments: its request type, the listed input schema with its
/// compiled validator and second check, and the plans made from them. Cheap to make: it
/// borrows all of it.
#[derive(Debug, Clone, Copy)]
pub struct Arguments<'a> {
    /// The request message type.
    pub input: &'a MessageDescriptor,
    /// The tool's listed input schema.
    pub schema: &'a Value,
    /// `schema`, compiled ([`validate::compile`]).
    pub validator: &'a Validator,
    /// The check against the full schema when the listed one was shrunk.
    pub deep: &'a DeepCheck,
    /// The one-pass plans of `input`.
    pub plans: &'a Plans,
    /// Properties are the fields' JSON names rather than their proto names.
    pub json_names: bool,
    /// The RPC streams requests: the arguments are `{"messages": [...]}`, one per request.
    pub streaming: bool,
}

impl Arguments<'_> {
    /// The request messages of `args`. With `canonical_first`, canonical arguments are
    /// validated and encoded as they came (see the module); without, they take the whole way.
    /// `max_depth` bounds the nesting the normaliser walks.
    ///
    /// # Errors
    ///
    /// Every problem found, each with its JSON path, up to [`MAX_PROBLEMS`] and one more.
    pub fn encode(
        &self,
        args: Map<String, Value>,
        max_depth: usize,
        canonical_first: bool,
    ) -> Result<Vec<Bytes>, Vec<Problem>> {
        let args = if canonical_first {
            let value = Value::Object(args);
            // Arguments the schema's checks take (canonical, valid) need no validator pass.
            if let Some((plan, checks)) = self.schema_checks()
                && let Some(bytes) = encode::from_value(plan, checks, &value, true, max_depth)
            {
                return Ok(vec![Bytes::from(bytes)]);
            }
            let valid = validate::problems(self.validator, &value, &[]).is_empty()
                && self
                    .deep
                    .problems(
                        self.input,
                        self.streaming,
                        self.json_names,
                        &value,
                        &[],
                        &[],
                    )
                    .is_empty();
            if valid && let Some(requests) = self.encode_in_one_pass(&value) {
                return Ok(requests);
            }
            match value {
                Value::Object(args) => args,
                _ => Map::new(),
            }
        } else {
            args
        };

        let normalized = normalize_arguments(
            self.input,
            args,
            NormalizeOptions {
                json_names: self.json_names,
                max_depth,
                streaming_input: self.streaming,
            },
        );
        let mut problems = normalized.problems;
        problems.extend(validate::problems(
            self.validator,
            &normalized.value,
            &normalized.suppressed,
        ));
        let deep = self.deep.problems(
            self.input,
            self.streaming,
            self.json_names,
            &normalized.value,
            &normalized.suppressed,
            &problems,
        );
        problems.extend(deep);
        if !problems.is_empty() {
            problems.truncate(MAX_PROBLEMS + 1);
            return Err(problems);
        }
        self.encode_canonical(normalized.value)
            .map_err(|problem| vec![problem])
    }

    /// The request message of `text` (the arguments as the client sent them, a JSON object),
    /// encoded straight from the text with the schema's checks, or `None` where the text
    /// encoder leaves them to [`parse`] and [`Arguments::encode`]: a streaming input, a shrunk
    /// schema, or anything it is not sure of. `max_depth` bounds the nesting it reads.
    pub fn encode_text(&self, text: &str, max_depth: usize) -> Option<Bytes> {
        let (plan, checks) = self.schema_checks()?;
        encode::from_text(plan, checks, text, max_depth).map(Bytes::from)
    }

    /// The plan and the schema's checks that encode arguments without a validator pass, or
    /// `None` where the arguments are left to the validator: a streaming input, a shrunk schema.
    fn schema_checks(&self) -> Option<(&Plan, &Checks)> {
        if self.streaming || !self.deep.is_none() {
            return None;
        }
        let plan = self.plans.encode(self.input);
        Some((plan, self.plans.schema(self.input, self.validator)))
    }

    /// Canonical arguments encoded by the one-pass encoder, or `None` where it leaves them.
    fn encode_in_one_pass(&self, canonical: &Value) -> Option<Vec<Bytes>> {
        let plan = self.plans.encode(self.input);
        let checks = self.plans.loose(self.input);
        if !self.streaming {
            return encode::from_value(plan, checks, canonical, true, encode::MAX_DEPTH)
                .map(|bytes| vec![Bytes::from(bytes)]);
        }
        match canonical.get("messages") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    encode::from_value(plan, checks, item, false, encode::MAX_DEPTH)
                        .map(Bytes::from)
                })
                .collect(),
            _ => Some(Vec::new()),
        }
    }

    /// Canonical arguments → encoded request messages: in one pass when the encoder can answer
    /// exactly, else through prost-reflect, which also words the errors.
    fn encode_canonical(&self, canonical: Value) -> Result<Vec<Bytes>, Problem> {
        let undecodable = |path: JsonPath, message: String| Problem { path, message };
        let plan = self.plans.encode(self.input);
        let checks = self.plans.loose(self.input);
        if !self.streaming {
            if let Some(bytes) =
                encode::from_value(plan, checks, &canonical, true, encode::MAX_DEPTH)
            {
                return Ok(vec![Bytes::from(bytes)]);
            }
            let message = root_from_json(self.input, canonical, self.json_names)
                .map_err(|e| undecodable(JsonPath::default(), e))?;
            return Ok(vec![Bytes::from(message.encode_to_vec())]);
        }
        let messages = match canonical {
            Value::Object(mut object) => object.remove("messages"),
            _ => None,
        };
        let Some(Value::Array(items)) = messages else {
            return Ok(Vec::new());
        };
        items
            .into_iter()
            .enumerate()
            .map(|(index, item)| {
                let mut path = JsonPath::default();
                path.push_key("messages");
                path.push_index(index);
                if let Some(bytes) =
                    encode::from_value(plan, checks, &item, false, encode::MAX_DEPTH)
                {
                    return Ok(Bytes::from(bytes));
                }
                message_from_json(self.input, item, self.json_names)
                    .map(|message| Bytes::from(message.encode_to_vec()))
                    .map_err(|e| undecodable(path, e))
            })
            .collect()
    }
}

/// The arguments object of `text`, the JSON text a client sent.
///
/// A key given twice in one object, at any depth, is refused: JSON leaves such a document's
/// meaning open (RFC 8259 section 4), and whatever reads one copy while another part reads the
/// other would let a check and the call disagree. Every reading of arguments sent as text
/// goes through here.
///
/// # Errors
///
/// Where the duplicate key is and which it is, or what else keeps the text from parsing.
pub fn parse(text: &str) -> Result<Map<String, Value>, Problem> {
    let mut path = JsonPath::default();
    let mut duplicate = None;
    let seed = UniqueValue {
        path: &mut path,
        duplicate: &mut duplicate,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = seed
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    match (parsed, duplicate) {
        (Ok(Value::Object(map)), _) => Ok(map),
        (_, Some(problem)) => Err(problem),
        (Ok(_), None) => Err(Problem {
            path: JsonPath::default(),
            message: "the arguments must be a JSON object".to_owned(),
        }),
        (Err(error), None) => Err(Problem {
            path: JsonPath::default(),
            message: format!("the arguments are not valid JSON: {error}"),
        }),
    }
}

/// Reads a JSON value as `serde_json::Value` does, refusing an object that names a key twice
/// (`Value` keeps the last silently); the duplicate is left in `duplicate`, with its path.
struct UniqueValue<'p> {
    path: &'p mut JsonPath,
    duplicate: &'p mut Option<Problem>,
}

impl<'de> DeserializeSeed<'de> for UniqueValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            self.path.push_index(items.len());
            let item = seq.next_element_seed(UniqueValue {
                path: &mut *self.path,
                duplicate: &mut *self.duplicate,
            })?;
            self.path.pop();
            match item {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.push_key(&key);
            if object.contains_key(&key) {
                let problem = Problem {
                    path: self.path.clone(),
                    message: "this key is given twice in one object; give it once".to_owned(),
                };
                *self.duplicate = Some(problem);
                return Err(serde::de::Error::custom("a key given twice"));
            }
            let value = map.next_value_seed(UniqueValue {
                path: &mut *self.path,
                duplicate: &mut *self.duplicate,
            })?;
            self.path.pop();
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A key given twice is refused wherever it stands, with its path; the same key in two
    /// objects is not a duplicate.
    #[test]
    fn a_key_given_twice_is_refused_with_its_path() {
        let refused = [
            (r#"{"name":"a","name":"b"}"#, "$.name"),
            (r#"{"name":"a","na\u006de":"b"}"#, "$.name"),
            (r#"{"f":{"x":1,"y":[{"k":1,"k":2}]}}"#, "$.f.y[0].k"),
            (r#"{"a b":{"c":1,"c":1}}"#, r#"$["a b"].c"#),
        ];
        for (text, path) in refused {
            let problem = parse(text).expect_err(text);
            assert_eq!(
                problem.to_string(),
                format!("{path}: this key is given twice in one object; give it once"),
                "{text}"
            );
        }
        let parsed = parse(r#"{"a":{"k":1},"b":{"k":[1,2.5,"x",null,true]}}"#).expect("parses");
        assert_eq!(
            Value::Object(parsed),
            json!({"a": {"k": 1}, "b": {"k": [1, 2.5, "x", null, true]}})
        );
        assert!(parse("[1]").is_err());
        assert!(parse("{} x").is_err());
    }
}
