//! The portability rules every tool schema must pass (docs/design.md §4.10), so that Anthropic, OpenAI,
//! Bedrock and Gemini-backed hosts all accept the tool.
//!
//! The meta-schema check itself needs a JSON Schema validator and lives in the test suite; the
//! structural rules here run on every schema the plugin writes.

use serde_json::{Map, Value};

use crate::names::is_portable_property_key;

const COMBINATORS: &[&str] = &["oneOf", "anyOf", "allOf", "not", "enum"];

/// Every violation of the portability rules in `schema`, as `<JSON pointer>: <problem>`.
pub fn violations(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match schema.as_object() {
        Some(root) => {
            if root.get("type").and_then(Value::as_str) != Some("object") {
                out.push("/: the root is not `\"type\": \"object\"`".to_owned());
            }
            if !root.contains_key("properties") {
                out.push("/: the root has no `properties`".to_owned());
            }
            for keyword in COMBINATORS {
                if root.contains_key(*keyword) {
                    out.push(format!("/: `{keyword}` at the root"));
                }
            }
            let mut walker = Walker {
                root: schema,
                path: Vec::new(),
                out,
            };
            walker.walk(root);
            out = walker.out;
        }
        None => out.push("/: the schema is not an object".to_owned()),
    }
    out
}

/// One step of a JSON pointer, borrowed from the schema so that walking allocates nothing
/// until a violation is found.
#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

struct Walker<'a> {
    root: &'a Value,
    path: Vec<Step<'a>>,
    out: Vec<String>,
}

impl<'a> Walker<'a> {
    fn report(&mut self, problem: impl std::fmt::Display) {
        let mut pointer = String::new();
        for step in &self.path {
            match step {
                Step::Key(key) => {
                    pointer.push('/');
                    pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
                Step::Index(i) => pointer.push_str(&format!("/{i}")),
            }
        }
        self.out.push(format!("{pointer}: {problem}"));
    }

    fn walk(&mut self, schema: &'a Map<String, Value>) {
        // One pass over the keywords instead of a hashed lookup for each rule.
        let mut reference = None;
        let mut beside_reference = false;
        let mut kind = None;
        let mut properties = None;
        let mut has_required = false;
        let mut has_items = false;
        for (keyword, value) in schema {
            match keyword.as_str() {
                "$ref" => reference = Some(value),
                "description" => {}
                "type" => {
                    kind = Some(value);
                    beside_reference = true;
                }
                "properties" => {
                    properties = Some(value);
                    beside_reference = true;
                }
                "required" => {
                    has_required = true;
                    beside_reference = true;
                }
                "items" => {
                    has_items = true;
                    beside_reference = true;
                }
                _ => beside_reference = true,
            }
        }
        if let Some(reference) = reference {
            match reference.as_str() {
                Some(r) if resolves(self.root, r) => {}
                _ => self.report(format_args!("`$ref` {reference} does not resolve")),
            }
            if beside_reference {
                self.report("keywords other than `description` beside `$ref`");
            }
        }
        if let Some(kind) = kind
            && !kind.is_string()
        {
            self.report("`type` is not a single string");
        }
        let kind = kind.and_then(Value::as_str);
        if (properties.is_some() || has_required) && kind != Some("object") {
            self.report("`properties` or `required` on a non-object");
        }
        if kind == Some("array") && !has_items {
            self.report("an array without `items`");
        }
        if let Some(format) = schema.get("format") {
            let accepted = match kind {
                Some("string") => ["date-time", "enum"].as_slice(),
                Some("integer") => &["int32", "int64"],
                Some("number") => &["float", "double"],
                _ => &[],
            };
            if !format.as_str().is_some_and(|f| accepted.contains(&f)) {
                self.report(format_args!(
                    "`format` {format} is not one Gemini takes for this type ({})",
                    if accepted.is_empty() {
                        "none".to_owned()
                    } else {
                        accepted.join(", ")
                    }
                ));
            }
        }
        if let Some(Value::Object(properties)) = properties {
            for key in properties.keys() {
                if !is_portable_property_key(key) {
                    self.report(format_args!(
                        "property key `{key}` is not ^[a-zA-Z0-9_.-]{{1,64}}$"
                    ));
                }
            }
        }
        for (keyword, value) in schema {
            self.path.push(Step::Key(keyword));
            match (keyword.as_str(), value) {
                ("properties" | "$defs", Value::Object(children)) => {
                    for (name, child) in children {
                        self.path.push(Step::Key(name));
                        self.visit(child);
                        self.path.pop();
                    }
                }
                ("items" | "additionalProperties" | "propertyNames" | "not", child) => {
                    if child.is_boolean() && keyword != "additionalProperties" {
                        self.report("a boolean schema");
                    }
                    if child.is_object() {
                        self.visit(child);
                    }
                }
                ("oneOf" | "anyOf" | "allOf", Value::Array(branches)) => {
                    for (i, child) in branches.iter().enumerate() {
                        self.path.push(Step::Index(i));
                        self.visit(child);
                        self.path.pop();
                    }
                }
                _ => {}
            }
            self.path.pop();
        }
    }

    fn visit(&mut self, child: &'a Value) {
        match child {
            Value::Object(map) => self.walk(map),
            Value::Bool(_) => self.report("a boolean schema"),
            _ => self.report("not a schema"),
        }
    }
}

fn resolves(root: &Value, reference: &str) -> bool {
    match reference.strip_prefix('#') {
        Some("") => true,
        Some(pointer) => root.pointer(pointer).is_some_and(Value::is_object),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::violations;
    use serde_json::json;

    #[test]
    fn accepts_a_portable_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "array", "items": {"$ref": "#/$defs/x.Y"}},
                "b": {"$ref": "#", "description": "self"},
                "c": {"type": "integer", "format": "int32"},
                "d": {"type": "number", "format": "float"},
                "e": {"type": "string", "format": "date-time"},
            },
            "additionalProperties": false,
            "$defs": {"x.Y": {"type": "object", "properties": {}, "additionalProperties": false}},
        });
        assert_eq!(violations(&schema), Vec::<String>::new());
    }

    #[test]
    fn reports_each_rule() {
        let cases = [
            (
                json!({"oneOf": [], "type": "object", "properties": {}}),
                "`oneOf` at the root",
            ),
            (json!({"type": "string"}), "root is not"),
            (
                json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
                "single string",
            ),
            (
                json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}),
                "does not resolve",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "array"}}}),
                "without `items`",
            ),
            (
                json!({"type": "object", "properties": {"a": true}}),
                "boolean schema",
            ),
            (
                json!({"type": "object", "properties": {"@type": {}}}),
                "key `@type`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "properties": {}}}}),
                "non-object",
            ),
            (
                json!({"type": "object", "properties": {"a": {"$ref": "#", "type": "string"}}}),
                "beside `$ref`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "format": "uuid"}}}),
                "`format` \"uuid\" is not one Gemini takes for this type (date-time, enum)",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "integer", "format": "uint32"}}}),
                "(int32, int64)",
            ),
            (
                json!({"type": "object", "properties": {"a": {"format": "date-time"}}}),
                "for this type (none)",
            ),
        ];
        for (schema, expected) in cases {
            let found = violations(&schema);
            assert!(
                found.iter().any(|v| v.contains(expected)),
                "{schema}: {found:?}"
            );
        }
    }
}
