//! A value checked against compiled schema nodes: whether it is valid, stopping at the first
//! failure (the common case, which builds nothing), or its problems with their paths (up to
//! [`MAX_PROBLEMS`] and one more), worded for a model to act on.

use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::{Map, Number, Value};

use super::schema::{Additional, Check, Nodes, TYPE_NAMES};
use crate::number::integer;
use crate::path::{JsonPath, MAX_PROBLEMS, Problem, Seg};

/// The problems [`Nodes::collect`] finds: at most [`MAX_PROBLEMS`] and one more, none at or
/// under a suppressed path. The paths are kept in a set, each problem's prefixes looked up in
/// it: a value the normaliser took as an alternate the schema cannot express (`"NaN"` for a
/// number) is suppressed, and a list can hold one in every few bytes.
pub(crate) struct Found<'s> {
    pub(crate) problems: Vec<Problem>,
    suppressed: HashSet<&'s [Seg]>,
}

impl<'s> Found<'s> {
    pub(crate) fn new(suppressed: &'s [JsonPath]) -> Self {
        Self {
            problems: Vec::new(),
            suppressed: suppressed.iter().map(|path| path.0.as_slice()).collect(),
        }
    }

    /// Whether no more problems are taken.
    fn full(&self) -> bool {
        self.problems.len() > MAX_PROBLEMS
    }

    fn push(&mut self, problem: Problem) {
        let steps = problem.path.0.as_slice();
        if !self.full() && !(0..=steps.len()).any(|n| self.suppressed.contains(&steps[..n])) {
            self.problems.push(problem);
        }
    }
}

impl Nodes {
    /// Whether `value` is valid against node `node`.
    pub(super) fn valid(&self, node: usize, value: &Value) -> bool {
        self.0[node].checks.iter().all(|check| match check {
            // The most common check, first in its node: kept out of the call.
            Check::Type(bits) => bits & type_bits(value) != 0,
            check => self.check_valid(check, value),
        })
    }

    fn check_valid(&self, check: &Check, value: &Value) -> bool {
        match check {
            Check::Members {
                properties,
                additional,
            } => {
                let Value::Object(object) = value else {
                    return true;
                };
                let mut next = 0;
                object.iter().all(|(name, member)| {
                    match (properties.get(name, &mut next), additional) {
                        (Some(node), _) | (None, &Additional::Schema(node)) => {
                            self.valid(node, member)
                        }
                        (None, Additional::Any) => true,
                        (None, Additional::Forbidden) => false,
                    }
                })
            }
            Check::PropertyNames(node) => {
                let Value::Object(object) = value else {
                    return true;
                };
                let mut name = Value::String(String::new());
                object.keys().all(|key| {
                    set_string(&mut name, key);
                    self.valid(*node, &name)
                })
            }
            Check::Items(node) => match value {
                Value::Array(items) => items.iter().all(|item| self.valid(*node, item)),
                _ => true,
            },
            Check::AnyOf(branches) => self
                .open_branches(branches, value)
                .any(|branch| self.valid(branch, value)),
            Check::OneOf(branches) => self.valid_branches(branches, value) == 1,
            Check::Ref(node) => self.valid(*node, value),
            leaf => holds(leaf, value),
        }
    }

    /// How many of `branches` take `value`, counting no further than two.
    fn valid_branches(&self, branches: &[usize], value: &Value) -> usize {
        self.open_branches(branches, value)
            .filter(|branch| self.valid(*branch, value))
            .take(2)
            .count()
    }

    /// The branches of a union that `value` may take: a `{case, value}` branch whose `case`
    /// constant is not `value`'s `case` is left out unlooked-at, as checking it would fail at
    /// `case`. Without that, a value that nests unions with its `value` before its `case` would
    /// be checked against every branch at every level: a cost of the branches to the power of
    /// the depth, for a few hundred bytes.
    fn open_branches<'a>(
        &'a self,
        branches: &'a [usize],
        value: &'a Value,
    ) -> impl Iterator<Item = usize> + 'a {
        let case = value.get("case").and_then(Value::as_str);
        branches.iter().copied().filter(move |branch| {
            case.is_none_or(|case| {
                self.0[*branch]
                    .case
                    .as_deref()
                    .is_none_or(|own| own == case)
            })
        })
    }

    /// Every problem of `value` against node `node`, at `path`, into `out` (until it is full).
    pub(super) fn collect(&self, node: usize, value: &Value, path: &mut JsonPath, out: &mut Found) {
        if out.full() {
            return;
        }
        let checks = &self.0[node].checks;
        for check in checks.iter() {
            match check {
                // A value an `enum` also refuses is one problem, which the `enum` words.
                Check::Type(_)
                    if checks
                        .iter()
                        .any(|other| matches!(other, Check::Enum(_)) && !holds(other, value)) =>
                {
                    continue;
                }
                Check::Required(names) => {
                    if let Value::Object(object) = value {
                        for name in names.iter().filter(|name| !has_key(object, name)) {
                            out.push(problem(path, format!("missing required property `{name}`")));
                        }
                    }
                }
                Check::Members {
                    properties,
                    additional,
                } => {
                    let Value::Object(object) = value else {
                        continue;
                    };
                    let mut unexpected = Vec::new();
                    let mut next = 0;
                    for (name, member) in object {
                        let node = match (properties.get(name, &mut next), additional) {
                            (Some(node), _) | (None, &Additional::Schema(node)) => node,
                            (None, Additional::Any) => continue,
                            (None, Additional::Forbidden) => {
                                unexpected.push(name);
                                continue;
                            }
                        };
                        path.push_key(name);
                        self.collect(node, member, path, out);
                        path.pop();
                    }
                    for name in unexpected {
                        let message = if properties.names.is_empty() {
                            format!("unknown property `{name}`; this object takes no properties")
                        } else {
                            let allowed: Vec<&str> =
                                properties.names.iter().map(|(n, _)| n.as_str()).collect();
                            format!("unknown property `{name}`; allowed: {}", allowed.join(", "))
                        };
                        out.push(Problem {
                            path: path.with_key(name),
                            message,
                        });
                    }
                }
                Check::PropertyNames(node) => {
                    let Value::Object(object) = value else {
                        continue;
                    };
                    for key in object.keys() {
                        let name = Value::String(key.clone());
                        let mut found = Found::new(&[]);
                        self.collect(*node, &name, &mut JsonPath::default(), &mut found);
                        for inner in found.problems {
                            out.push(problem(
                                path,
                                format!("property name {name}: {}", inner.message),
                            ));
                        }
                    }
                }
                Check::Items(node) => {
                    if let Value::Array(items) = value {
                        for (index, item) in items.iter().enumerate() {
                            path.push_index(index);
                            self.collect(*node, item, path, out);
                            path.pop();
                        }
                    }
                }
                Check::AnyOf(branches) => {
                    if !self
                        .open_branches(branches, value)
                        .any(|branch| self.valid(branch, value))
                    {
                        self.union_problems("anyOf", branches, value, path, out);
                    }
                }
                Check::OneOf(branches) => match self.valid_branches(branches, value) {
                    1 => {}
                    0 => self.union_problems("oneOf", branches, value, path, out),
                    _ => out.push(problem(
                        path,
                        format!(
                            "{} is valid under more than one of the schemas listed in the \
                             'oneOf' keyword",
                            shown(value)
                        ),
                    )),
                },
                Check::Ref(node) => self.collect(*node, value, path, out),
                leaf => {
                    if !holds(leaf, value) {
                        out.push(problem(path, message(leaf, value)));
                    }
                }
            }
        }
    }

    /// The problems of a value no branch of a union takes. In a `{case, value}` union (a
    /// protobuf oneof), those of the branch whose `case` matched; else one problem naming the
    /// cases.
    fn union_problems(
        &self,
        keyword: &str,
        branches: &[usize],
        value: &Value,
        path: &mut JsonPath,
        out: &mut Found,
    ) {
        if value.get("case").is_some_and(Value::is_string) {
            let case_path = path.with_key("case");
            let mut matching = self.open_branches(branches, value).filter_map(|branch| {
                let mut found = Found::new(&[]);
                self.collect(branch, value, path, &mut found);
                let found = found.problems;
                (!found.iter().any(|p| p.path == case_path)).then_some(found)
            });
            if let (Some(found), None) = (matching.next(), matching.next()) {
                for problem in found {
                    out.push(problem);
                }
                return;
            }
        }
        let cases: Vec<&str> = branches
            .iter()
            .filter_map(|branch| self.0[*branch].case.as_deref())
            .collect();
        let message = if cases.is_empty() {
            format!(
                "{} is not valid under any of the schemas listed in the '{keyword}' keyword",
                shown(value)
            )
        } else {
            format!(
                "expected {{\"case\": <member>, \"value\": <value>}} with case one of: {}",
                cases.join(", ")
            )
        };
        out.push(problem(path, message));
    }
}

fn problem(path: &JsonPath, message: String) -> Problem {
    Problem {
        path: path.clone(),
        message,
    }
}

/// Whether `object` has the member `name`. A short object is scanned: comparing a few keys
/// costs less than hashing the name (`Map` hashes with SipHash).
fn has_key(object: &Map<String, Value>, name: &str) -> bool {
    if object.len() <= 8 {
        object.keys().any(|key| key == name)
    } else {
        object.contains_key(name)
    }
}

/// Makes `slot` (a string) hold `text`, reusing its buffer.
fn set_string(slot: &mut Value, text: &str) {
    if let Value::String(buffer) = slot {
        buffer.clear();
        buffer.push_str(text);
    }
}

/// Whether the keyword that checks only the value itself holds for `value`.
fn holds(check: &Check, value: &Value) -> bool {
    use Ordering::{Greater, Less};
    // A keyword about one JSON type holds for values of the others.
    match (check, value) {
        (Check::Type(bits), value) => bits & type_bits(value) != 0,
        (Check::False, _) => false,
        (Check::Const(expected), value) => equal(value, expected),
        (Check::Enum(options), value) => options.iter().any(|option| equal(value, option)),
        (Check::Minimum(limit), Value::Number(n)) => compare(n, limit) != Less,
        (Check::Maximum(limit), Value::Number(n)) => compare(n, limit) != Greater,
        (Check::ExclusiveMinimum(limit), Value::Number(n)) => compare(n, limit) == Greater,
        (Check::ExclusiveMaximum(limit), Value::Number(n)) => compare(n, limit) == Less,
        (Check::MinLength(min), Value::String(text)) => text.chars().count() as u64 >= *min,
        (Check::MaxLength(max), Value::String(text)) => text.chars().count() as u64 <= *max,
        (Check::MinItems(min), Value::Array(items)) => items.len() as u64 >= *min,
        (Check::MaxItems(max), Value::Array(items)) => items.len() as u64 <= *max,
        (Check::MinProperties(min), Value::Object(object)) => object.len() as u64 >= *min,
        (Check::MaxProperties(max), Value::Object(object)) => object.len() as u64 <= *max,
        (Check::Required(names), Value::Object(object)) => {
            names.iter().all(|name| has_key(object, name))
        }
        (Check::Pattern(pattern), Value::String(text)) => pattern.matches(text),
        (Check::UniqueItems, Value::Array(items)) => unique(items),
        _ => true,
    }
}

/// The message of a keyword that checks only the value itself, which `value` fails.
fn message(check: &Check, value: &Value) -> String {
    match check {
        Check::False => format!("False schema does not allow {}", shown(value)),
        Check::Type(bits) => {
            let names: Vec<&str> = TYPE_NAMES
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .map(|(_, name)| *name)
                .collect();
            format!("expected {}, got {}", names.join(" or "), describe(value))
        }
        Check::Const(expected) => format!("expected {expected}, got {}", describe(value)),
        Check::Enum(options) => {
            // A protobuf enum's value may also be given by its number (proto3 JSON); a number
            // that reaches here is none of them.
            let numbers = if value.is_number() && options.iter().all(Value::is_string) {
                " (or the number of one of them)"
            } else {
                ""
            };
            let options: Vec<String> = options.iter().map(Value::to_string).collect();
            format!(
                "expected one of {}{numbers}, got {}",
                options.join(", "),
                describe(value)
            )
        }
        Check::Minimum(limit) => format!("{} is less than the minimum of {limit}", shown(value)),
        Check::Maximum(limit) => format!("{} is greater than the maximum of {limit}", shown(value)),
        Check::ExclusiveMinimum(limit) => {
            format!(
                "{} is less than or equal to the minimum of {limit}",
                shown(value)
            )
        }
        Check::ExclusiveMaximum(limit) => {
            format!(
                "{} is greater than or equal to the maximum of {limit}",
                shown(value)
            )
        }
        Check::MinLength(n) => {
            format!(
                "{} is shorter than {}",
                shown(value),
                plural(*n, "character", "characters")
            )
        }
        Check::MaxLength(n) => {
            format!(
                "{} is longer than {}",
                shown(value),
                plural(*n, "character", "characters")
            )
        }
        Check::MinItems(n) => format!(
            "{} has less than {}",
            shown(value),
            plural(*n, "item", "items")
        ),
        Check::MaxItems(n) => format!(
            "{} has more than {}",
            shown(value),
            plural(*n, "item", "items")
        ),
        Check::MinProperties(n) => {
            format!(
                "{} has less than {}",
                shown(value),
                plural(*n, "property", "properties")
            )
        }
        Check::MaxProperties(n) => {
            format!(
                "{} has more than {}",
                shown(value),
                plural(*n, "property", "properties")
            )
        }
        Check::Pattern(pattern) => format!(
            "expected a string matching {}, got {}",
            pattern.source,
            describe(value)
        ),
        Check::UniqueItems => format!("{} has non-unique elements", shown(value)),
        Check::Required(_)
        | Check::Members { .. }
        | Check::PropertyNames(_)
        | Check::Items(_)
        | Check::AnyOf(_)
        | Check::OneOf(_)
        | Check::Ref(_) => String::new(),
    }
}

/// A value as a message quotes it: its JSON text when that is short, else what it is and how
/// large (`an array of 5000 items`), so that a message stays short whatever the value.
fn shown(value: &Value) -> String {
    if let Some(text) = short_text(value) {
        return text;
    }
    match value {
        Value::String(text) => format!(
            "a string of {}",
            plural(text.chars().count() as u64, "character", "characters")
        ),
        Value::Array(items) => format!(
            "an array of {}",
            plural(items.len() as u64, "item", "items")
        ),
        Value::Object(object) => format!(
            "an object of {}",
            plural(object.len() as u64, "property", "properties")
        ),
        other => other.to_string(),
    }
}

/// What a value is, with its text when that is short: `a number (5)`.
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    match short_text(value) {
        Some(text) => format!("{kind} ({text})"),
        None => kind.to_owned(),
    }
}

/// The longest JSON text a message quotes, in characters.
const SHORT: usize = 60;

/// The JSON text of `value` when it is at most [`SHORT`] characters, written no further than
/// that: a message about a large value costs no more than one about a small one.
fn short_text(value: &Value) -> Option<String> {
    /// Takes bytes up to a UTF-8 text of `SHORT` characters could need, then fails the writer.
    struct Bounded(Vec<u8>);
    impl std::io::Write for Bounded {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.0.len() + bytes.len() > SHORT * 4 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.0.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Bounded(Vec::new());
    serde_json::to_writer(&mut out, value).ok()?;
    let text = String::from_utf8(out.0).ok()?;
    (text.chars().count() <= SHORT).then_some(text)
}

/// `n` and its noun: `1 item`, `2 items`.
fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The bits of [`TYPE_NAMES`] a value has: an integer (`1.0` included) is also a number.
#[inline]
fn type_bits(value: &Value) -> u8 {
    match value {
        Value::Null => 1,
        Value::Bool(_) => 1 << 1,
        Value::Number(n) if is_integer(n) => (1 << 2) | (1 << 3),
        Value::Number(_) => 1 << 3,
        Value::String(_) => 1 << 4,
        Value::Array(_) => 1 << 5,
        Value::Object(_) => 1 << 6,
    }
}

#[inline]
fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Whether no two of `items` are [`equal`]: scalars by a key of their value in a set (a number
/// by its exact value: `1` and `1.0` are one key), arrays and objects compared with each other.
/// Not every pair: a list can hold a hundred thousand items.
fn unique(items: &[Value]) -> bool {
    #[derive(PartialEq, Eq, Hash)]
    enum Key<'a> {
        Null,
        Bool(bool),
        Integer(i128),
        Fraction(u64),
        Str(&'a str),
    }
    /// 2^127: a whole float below it is an `i128` exactly.
    const WITHIN_I128: f64 = 1.701_411_834_604_692_3e38;
    let mut seen = HashSet::with_capacity(items.len());
    let mut others: Vec<&Value> = Vec::new();
    for item in items {
        let key = match item {
            Value::Null => Key::Null,
            Value::Bool(flag) => Key::Bool(*flag),
            Value::String(text) => Key::Str(text),
            Value::Number(n) => match (integer(n), n.as_f64()) {
                (Some(exact), _) => Key::Integer(exact),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < WITHIN_I128 => {
                    Key::Integer(f as i128)
                }
                (None, f) => Key::Fraction(f.unwrap_or(f64::NAN).to_bits()),
            },
            other => {
                if others.iter().any(|earlier| equal(other, earlier)) {
                    return false;
                }
                others.push(other);
                continue;
            }
        };
        if !seen.insert(key) {
            return false;
        }
    }
    true
}

/// Equality as JSON Schema has it: numbers by value (`1` is `1.0`), objects whatever the order
/// of their members.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Ordering::Equal,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, value)| b.get(key).is_some_and(|other| equal(value, other)))
        }
        (a, b) => a == b,
    }
}

/// Two JSON numbers compared exactly, whichever of `u64`, `i64` and `f64` holds each.
fn compare(a: &Number, b: &Number) -> Ordering {
    match (integer(a), integer(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(a), None) => compare_integer_float(a, b.as_f64().unwrap_or(f64::NAN)),
        (None, Some(b)) => compare_integer_float(b, a.as_f64().unwrap_or(f64::NAN)).reverse(),
        (None, None) => {
            let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            a.partial_cmp(&b).unwrap_or(Ordering::Equal)
        }
    }
}

/// An integer against a float, exactly: a float past ±2^100 is beyond any integer JSON holds
/// here; below, a whole float converts exactly, and a float with a fraction is below 2^53,
/// where the integer's nearest float keeps the order.
fn compare_integer_float(integer: i128, float: f64) -> Ordering {
    const FAR: f64 = 1.267_650_600_228_229_4e30; // 2^100
    if float >= FAR {
        Ordering::Less
    } else if float <= -FAR {
        Ordering::Greater
    } else if float.fract() == 0.0 {
        integer.cmp(&(float as i128))
    } else {
        (integer as f64)
            .partial_cmp(&float)
            .unwrap_or(Ordering::Equal)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validate::schema::compile;

    /// Only the branch a `{case, value}` names is looked at, whatever the order of its keys; a
    /// value without a `case` leaves every branch open.
    #[test]
    fn a_union_checks_only_the_branch_its_case_names() {
        let branch = |case: &str| {
            json!({
                "type": "object",
                "properties": {"value": {"type": "integer"}, "case": {"const": case}},
                "required": ["case"],
                "additionalProperties": false,
            })
        };
        let nodes =
            compile(&json!({"oneOf": [branch("a"), branch("b"), branch("c")]})).expect("compiles");
        let Some(Check::OneOf(branches)) = nodes.0[0].checks.first() else {
            panic!("a oneOf at the root: {:?}", nodes.0[0]);
        };
        let open = |value: Value| -> Vec<usize> { nodes.open_branches(branches, &value).collect() };
        assert_eq!(open(json!({"value": 1, "case": "b"})), vec![branches[1]]);
        assert!(open(json!({"value": 1, "case": "z"})).is_empty());
        assert_eq!(open(json!({"value": 1})), branches.to_vec());
        assert_eq!(open(json!(5)), branches.to_vec());
    }

    /// Items are unique as JSON Schema compares them: numbers by value, objects whatever the
    /// order of their members, a boolean never a number.
    #[test]
    fn unique_items_compare_as_json_schema_does() {
        let unique = |items: Value| super::unique(items.as_array().expect("an array"));
        assert!(unique(
            json!([1, 2, "1", true, null, 0.5, 0.25, [1], {"a": 1}])
        ));
        assert!(!unique(json!([1, 1.0])));
        assert!(!unique(json!([0, -0.0])));
        assert!(!unique(json!([
            1_152_921_504_606_846_976_u64,
            1.152_921_504_606_847e18
        ])));
        assert!(!unique(json!(["a", "b", "a"])));
        assert!(!unique(json!([0.5, 0.5])));
        assert!(!unique(json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}])));
        assert!(unique(json!([true, 1, false, 0])));
        assert!(unique(json!([
            u64::MAX,
            i64::MIN,
            18_446_744_073_709_551_614_u64
        ])));
    }
}
