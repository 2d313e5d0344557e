//! A tool schema compiled into checks: exactly the JSON Schema 2020-12 keywords the schema
//! generator (`tonic-mcp-schema`) writes, each checked as the specification says. A schema
//! with any other keyword does not compile, so that no keyword is ever passed over as if it
//! allowed anything.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use crate::patterns::KnownPattern;

/// The keywords that only annotate: nothing is checked with them (`format` and the `content*`
/// keywords are annotations in draft 2020-12 unless a validator is told otherwise), but each
/// must have the form the meta-schema gives it.
const ANNOTATIONS: &[&str] = &[
    "$comment",
    "$schema",
    "contentEncoding",
    "contentMediaType",
    "default",
    "deprecated",
    "description",
    "examples",
    "format",
    "readOnly",
    "title",
    "writeOnly",
];

/// The keywords checked, in the order their problems are reported (cheap ones first, as the
/// reference validator reports them).
const CHECKED: &[&str] = &[
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "required",
    "pattern",
    "uniqueItems",
    "properties",
    "additionalProperties",
    "propertyNames",
    "items",
    "anyOf",
    "oneOf",
    "$ref",
    "$defs",
];

/// The JSON types a `type` keyword names, as bits, in the order they are named in messages.
pub(crate) const TYPE_NAMES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// The bit of the JSON type `name` in a `type` check.
pub(crate) fn type_bit(name: &str) -> u8 {
    TYPE_NAMES
        .iter()
        .position(|known| *known == name)
        .map_or(0, |position| 1 << position)
}

/// A compiled schema: its nodes, the root first.
#[derive(Debug)]
pub(crate) struct Nodes(pub(crate) Box<[Node]>);

/// One schema object (or boolean schema): its checks, in reporting order.
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub(crate) checks: Box<[Check]>,
    /// The `case` constant when this is a `{case, value}` branch (through `$ref`), found once
    /// when the schema is compiled: a union then looks only at the branch a value's `case`
    /// names.
    pub(crate) case: Option<Box<str>>,
}

/// One keyword's check. Indexes are of [`Nodes`].
#[derive(Debug)]
pub(crate) enum Check {
    /// The `false` schema: nothing is valid.
    False,
    /// `type`: the bits of [`TYPE_NAMES`] taken.
    Type(u8),
    Const(Value),
    Enum(Box<[Value]>),
    Minimum(Number),
    Maximum(Number),
    ExclusiveMinimum(Number),
    ExclusiveMaximum(Number),
    MinLength(u64),
    MaxLength(u64),
    MinItems(u64),
    MaxItems(u64),
    MinProperties(u64),
    MaxProperties(u64),
    Required(Box<[String]>),
    Pattern(Pattern),
    UniqueItems,
    /// `properties` and `additionalProperties`, checked in one pass over the members.
    Members {
        properties: Properties,
        additional: Additional,
    },
    PropertyNames(usize),
    Items(usize),
    AnyOf(Box<[usize]>),
    OneOf(Box<[usize]>),
    Ref(usize),
}

/// A `pattern`: one the generator writes, checked by hand, or any other regular expression.
#[derive(Debug)]
pub(crate) struct Pattern {
    /// As the schema writes it, for messages.
    pub(crate) source: String,
    pub(crate) matcher: Matcher,
}

#[derive(Debug)]
pub(crate) enum Matcher {
    Known(KnownPattern),
    Regex(regex::Regex),
}

impl Pattern {
    /// The generator's pattern this is, if it is one.
    pub(crate) fn known(&self) -> Option<KnownPattern> {
        match self.matcher {
            Matcher::Known(known) => Some(known),
            Matcher::Regex(_) => None,
        }
    }

    pub(crate) fn matches(&self, text: &str) -> bool {
        match &self.matcher {
            Matcher::Known(known) => known.matches(text),
            Matcher::Regex(regex) => regex.is_match(text),
        }
    }
}

/// Members named by `properties`, each with its node.
#[derive(Debug, Default)]
pub(crate) struct Properties {
    /// In the schema's order (the order of the names a message lists).
    pub(crate) names: Box<[(String, usize)]>,
    /// Their positions in `names`, hashed, when there are many.
    index: Option<HashMap<String, usize, foldhash::fast::RandomState>>,
}

/// From this many properties on, a name not found where expected is hashed rather than scanned
/// for (a short scan costs less than hashing the name).
const HASHED_FROM: usize = 12;

impl Properties {
    /// The node of the property `name`. Members mostly come in the schema's order, so the
    /// one after the last found (`next`, which is moved on) is tried first.
    pub(crate) fn get(&self, name: &str, next: &mut usize) -> Option<usize> {
        let position = match self.names.get(*next) {
            Some((key, _)) if key == name => *next,
            _ => match &self.index {
                Some(index) => *index.get(name)?,
                None => self.names.iter().position(|(key, _)| key == name)?,
            },
        };
        *next = position + 1;
        Some(self.names[position].1)
    }
}

/// What `additionalProperties` asks of the members `properties` does not name.
#[derive(Debug, Default)]
pub(crate) enum Additional {
    /// Absent (or `true`): anything.
    #[default]
    Any,
    /// `false`: none may be given.
    Forbidden,
    /// Each is checked by this node.
    Schema(usize),
}

/// Compiles `schema` into its nodes.
pub(crate) fn compile(schema: &Value) -> Result<Nodes, String> {
    let mut compiler = Compiler {
        root: schema,
        nodes: Vec::new(),
        at: HashMap::new(),
    };
    compiler.node(schema, String::new())?;
    let mut nodes = Nodes(compiler.nodes.into_boxed_slice());
    if let Some(node) = nodes.loop_in_place() {
        let pointer = compiler
            .at
            .iter()
            .find(|(_, index)| **index == node)
            .map(|(pointer, _)| pointer.as_str())
            .unwrap_or_default();
        return Err(format!(
            "`$ref` at {}: the reference leads back to itself without going into the value",
            shown(pointer)
        ));
    }
    let cases: Vec<Option<Box<str>>> = (0..nodes.0.len())
        .map(|node| nodes.case_of(node).map(Box::from))
        .collect();
    for (node, case) in nodes.0.iter_mut().zip(cases) {
        node.case = case;
    }
    Ok(nodes)
}

struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    /// The node of each schema compiled, by its JSON pointer: a `$ref` and the walk share it.
    at: HashMap<String, usize>,
}

/// A JSON pointer for messages (the root is `/`).
fn shown(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}

/// `pointer` with the reference token `token` appended.
fn join(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

impl<'s> Compiler<'s> {
    /// The node of the schema `schema` at `pointer`, compiled once.
    fn node(&mut self, schema: &'s Value, pointer: String) -> Result<usize, String> {
        if let Some(&index) = self.at.get(&pointer) {
            return Ok(index);
        }
        let index = self.nodes.len();
        self.nodes.push(Node::default());
        self.at.insert(pointer.clone(), index);
        let checks = match schema {
            Value::Bool(true) => Vec::new(),
            Value::Bool(false) => vec![Check::False],
            Value::Object(object) => self.checks(object, &pointer)?,
            _ => {
                return Err(format!(
                    "{}: a schema must be an object or a boolean",
                    shown(&pointer)
                ));
            }
        };
        self.nodes[index].checks = checks.into_boxed_slice();
        Ok(index)
    }

    fn checks(
        &mut self,
        object: &'s Map<String, Value>,
        pointer: &str,
    ) -> Result<Vec<Check>, String> {
        let mut checks = Vec::new();
        for (keyword, value) in object {
            if ANNOTATIONS.contains(&keyword.as_str()) {
                annotation(keyword, value).map_err(|e| invalid(pointer, keyword, e))?;
            } else if !CHECKED.contains(&keyword.as_str()) {
                return Err(format!(
                    "unsupported keyword `{keyword}` at {}: tool schemas may use {} and the \
                     annotations {}",
                    join(pointer, keyword),
                    CHECKED.join(", "),
                    ANNOTATIONS.join(", ")
                ));
            }
        }
        // In reporting order, whatever order the schema writes them in.
        for keyword in CHECKED {
            let Some(value) = object.get(*keyword) else {
                continue;
            };
            let at = |e: &str| invalid(pointer, keyword, e);
            let count = || count(value).ok_or_else(|| at("must be a non-negative integer"));
            let number = || match value {
                Value::Number(n) => Ok(n.clone()),
                _ => Err(at("must be a number")),
            };
            let check = match *keyword {
                "type" => Check::Type(types(value).ok_or_else(|| {
                    at("must be a type name or a non-empty array of distinct type names")
                })?),
                "const" => Check::Const(value.clone()),
                "enum" => match value {
                    Value::Array(items) => Check::Enum(items.clone().into_boxed_slice()),
                    _ => return Err(at("must be an array")),
                },
                "minimum" => Check::Minimum(number()?),
                "maximum" => Check::Maximum(number()?),
                "exclusiveMinimum" => Check::ExclusiveMinimum(number()?),
                "exclusiveMaximum" => Check::ExclusiveMaximum(number()?),
                "minLength" => Check::MinLength(count()?),
                "maxLength" => Check::MaxLength(count()?),
                "minItems" => Check::MinItems(count()?),
                "maxItems" => Check::MaxItems(count()?),
                "minProperties" => Check::MinProperties(count()?),
                "maxProperties" => Check::MaxProperties(count()?),
                "required" => Check::Required(
                    distinct_strings(value)
                        .ok_or_else(|| at("must be an array of distinct strings"))?,
                ),
                "pattern" => Check::Pattern(pattern(value).map_err(|e| at(&e))?),
                "uniqueItems" => match value {
                    Value::Bool(true) => Check::UniqueItems,
                    Value::Bool(false) => continue,
                    _ => return Err(at("must be a boolean")),
                },
                "properties" => self.members(object, pointer)?,
                // Checked with `properties`.
                "additionalProperties" if object.contains_key("properties") => continue,
                "additionalProperties" => self.members(object, pointer)?,
                "propertyNames" => Check::PropertyNames(self.node(value, join(pointer, keyword))?),
                "items" => match value {
                    Value::Object(_) | Value::Bool(_) => {
                        Check::Items(self.node(value, join(pointer, keyword))?)
                    }
                    _ => {
                        return Err(at(
                            "must be a schema (an array of item schemas is `prefixItems`, \
                             which tool schemas do not use)",
                        ));
                    }
                },
                "anyOf" => Check::AnyOf(self.branches(value, &join(pointer, keyword))?),
                "oneOf" => Check::OneOf(self.branches(value, &join(pointer, keyword))?),
                "$ref" => Check::Ref(self.reference(value).map_err(|e| at(&e))?),
                "$defs" => {
                    let Value::Object(defs) = value else {
                        return Err(at("must be an object of schemas"));
                    };
                    let defs_pointer = join(pointer, keyword);
                    for (name, def) in defs {
                        self.node(def, join(&defs_pointer, name))?;
                    }
                    continue;
                }
                _ => continue,
            };
            checks.push(check);
        }
        Ok(checks)
    }

    /// `properties` and `additionalProperties` of `object`, as one check.
    fn members(&mut self, object: &'s Map<String, Value>, pointer: &str) -> Result<Check, String> {
        let mut names = Vec::new();
        if let Some(properties) = object.get("properties") {
            let Value::Object(properties) = properties else {
                return Err(invalid(
                    pointer,
                    "properties",
                    "must be an object of schemas",
                ));
            };
            let properties_pointer = join(pointer, "properties");
            for (name, schema) in properties {
                let node = self.node(schema, join(&properties_pointer, name))?;
                names.push((name.clone(), node));
            }
        }
        let additional = match object.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Additional::Any,
            Some(Value::Bool(false)) => Additional::Forbidden,
            Some(schema) => {
                Additional::Schema(self.node(schema, join(pointer, "additionalProperties"))?)
            }
        };
        let index = (names.len() >= HASHED_FROM).then(|| {
            names
                .iter()
                .enumerate()
                .map(|(position, (name, _))| (name.clone(), position))
                .collect()
        });
        Ok(Check::Members {
            properties: Properties {
                names: names.into_boxed_slice(),
                index,
            },
            additional,
        })
    }

    fn branches(&mut self, value: &'s Value, pointer: &str) -> Result<Box<[usize]>, String> {
        let branches = match value {
            Value::Array(branches) if !branches.is_empty() => branches,
            _ => return Err(format!("{pointer}: must be a non-empty array of schemas")),
        };
        branches
            .iter()
            .enumerate()
            .map(|(i, branch)| self.node(branch, join(pointer, &i.to_string())))
            .collect()
    }

    /// The node a local `$ref` names (`#` and `#/…` JSON pointers; tool schemas are
    /// self-contained, docs/design.md §4).
    fn reference(&mut self, value: &Value) -> Result<usize, String> {
        let Value::String(reference) = value else {
            return Err("must be a string".to_owned());
        };
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(format!(
                "{reference:?} is not a local reference (`#` or `#/…`)"
            ));
        };
        let pointer = percent_decode(fragment)
            .ok_or_else(|| format!("{reference:?} is not a valid URI fragment"))?;
        if !(pointer.is_empty() || pointer.starts_with('/')) {
            return Err(format!(
                "{reference:?} is not a JSON pointer (anchors are not supported)"
            ));
        }
        let root = self.root;
        let target = root
            .pointer(&pointer)
            .ok_or_else(|| format!("{reference:?} does not resolve"))?;
        self.node(target, pointer)
    }
}

/// A keyword's value is not of the form the meta-schema gives it.
fn invalid(pointer: &str, keyword: &str, what: &str) -> String {
    format!("`{keyword}` at {}: {what}", join(pointer, keyword))
}

/// Checks the form of an annotation's value.
fn annotation(keyword: &str, value: &Value) -> Result<(), &'static str> {
    let (ok, expected) = match keyword {
        "deprecated" | "readOnly" | "writeOnly" => (value.is_boolean(), "must be a boolean"),
        "examples" => (value.is_array(), "must be an array"),
        "default" => (true, ""),
        _ => (value.is_string(), "must be a string"),
    };
    if ok { Ok(()) } else { Err(expected) }
}

/// The bits of a `type` value: a name, or a non-empty array of distinct names.
fn types(value: &Value) -> Option<u8> {
    let bit = |name: &Value| Some(type_bit(name.as_str()?)).filter(|&bit| bit != 0);
    match value {
        Value::Array(names) if !names.is_empty() => names.iter().try_fold(0u8, |bits, name| {
            let one = bit(name)?;
            (bits & one == 0).then_some(bits | one)
        }),
        Value::Array(_) => None,
        name => bit(name),
    }
}

/// A non-negative integer (`1.0` is one).
fn count(value: &Value) -> Option<u64> {
    let Value::Number(n) = value else {
        return None;
    };
    n.as_u64().or_else(|| {
        let f = n.as_f64()?;
        // Saturating: a bound past u64 is one no JSON text reaches.
        (f >= 0.0 && f.fract() == 0.0).then_some(f as u64)
    })
}

fn distinct_strings(value: &Value) -> Option<Box<[String]>> {
    let Value::Array(items) = value else {
        return None;
    };
    let mut names: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let name = item.as_str()?;
        if names.iter().any(|known| known == name) {
            return None;
        }
        names.push(name.to_owned());
    }
    Some(names.into_boxed_slice())
}

/// A `pattern`: the generator's own are checked by hand; any other is an ECMA-262 regular
/// expression, read as jsonschema reads it (its translation to the `regex` crate's syntax:
/// `\d` is ASCII digits, `\s` ECMA-262 white space…). Look-around and back-references have no
/// place in the `regex` crate (nor in the RE2 syntax of `buf.validate` patterns): refused.
fn pattern(value: &Value) -> Result<Pattern, String> {
    let Value::String(source) = value else {
        return Err("must be a string".to_owned());
    };
    let matcher = match KnownPattern::of(source) {
        Some(known) => Matcher::Known(known),
        None => {
            let translated = jsonschema_regex::to_rust_regex(source)
                .map_err(|()| format!("{source:?} is not a regular expression"))?;
            let regex = regex::Regex::new(&translated).map_err(|e| {
                format!("{source:?} is not a regular expression this server can check: {e}")
            })?;
            Matcher::Regex(regex)
        }
    };
    Ok(Pattern {
        source: source.clone(),
        matcher,
    })
}

/// The text of a URI fragment, `%XX` escapes decoded; `None` when they do not make UTF-8.
fn percent_decode(text: &str) -> Option<String> {
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
    String::from_utf8(out).ok()
}

impl Nodes {
    /// The checks of node `node`.
    pub(crate) fn keywords(&self, node: usize) -> &[Check] {
        self.0.get(node).map_or(&[], |node| &node.checks)
    }

    /// The `case` constant of a `{case, value}` branch, following a `$ref` (which
    /// [`loop_in_place`](Self::loop_in_place) has found to end).
    fn case_of(&self, node: usize) -> Option<&str> {
        self.0[node].checks.iter().find_map(|check| match check {
            Check::Ref(target) => self.case_of(*target),
            Check::Members { properties, .. } => {
                let case = properties.get("case", &mut 0)?;
                self.0[case].checks.iter().find_map(|check| match check {
                    Check::Const(Value::String(name)) => Some(name.as_str()),
                    _ => None,
                })
            }
            _ => None,
        })
    }

    /// A node that reaches itself through `$ref`, `anyOf` or `oneOf` alone, which would check
    /// one value forever.
    fn loop_in_place(&self) -> Option<usize> {
        // 0: not seen, 1: on the path, 2: done.
        let mut state = vec![0u8; self.0.len()];
        for start in 0..self.0.len() {
            if state[start] != 0 {
                continue;
            }
            // Depth-first, iteratively: (node, next child to visit).
            let mut stack = vec![(start, 0usize)];
            state[start] = 1;
            while let Some((node, next)) = stack.last_mut() {
                let children = self.in_place(*node);
                match children.get(*next) {
                    Some(&child) => {
                        *next += 1;
                        match state[child] {
                            0 => {
                                state[child] = 1;
                                stack.push((child, 0));
                            }
                            1 => return Some(child),
                            _ => {}
                        }
                    }
                    None => {
                        state[*node] = 2;
                        stack.pop();
                    }
                }
            }
        }
        None
    }

    /// The nodes that `node` applies to the very value it checks.
    fn in_place(&self, node: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for check in &self.0[node].checks {
            match check {
                Check::Ref(target) => out.push(*target),
                Check::AnyOf(branches) | Check::OneOf(branches) => out.extend(branches.iter()),
                _ => {}
            }
        }
        out
    }
}
