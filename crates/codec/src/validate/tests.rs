//! The validator against jsonschema, the reference, on hand-made schemas at the edges of each
//! keyword (the corpus of generated tool schemas is `tests/e2e/tests/transcode_arguments.rs`), and
//! its refusals and words.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use test_kit::oracle::{path_of, problem_paths, reference};

use super::{Validator, compile};
use crate::path::JsonPath;

/// For each schema, every instance gets the reference's verdict and problems at the paths the
/// reference's errors give. Returns how many instances were compared.
fn agree(cases: &[(Value, Vec<Value>)]) -> usize {
    let mut compared = 0;
    for (schema, instances) in cases {
        let own = compile(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        let oracle = reference(schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        for instance in instances {
            let valid = oracle.is_valid(instance);
            assert_eq!(own.is_valid(instance), valid, "{schema} on {instance}");
            let problems = own.problems(instance);
            assert_eq!(
                problems.is_empty(),
                valid,
                "{schema} on {instance}: {problems:?}"
            );
            let own_paths: BTreeSet<JsonPath> = problems.into_iter().map(|p| p.path).collect();
            let expected: BTreeSet<JsonPath> = problem_paths(&oracle, instance)
                .iter()
                .map(|steps| path_of(steps, JsonPath::push_key, JsonPath::push_index))
                .collect();
            assert_eq!(own_paths, expected, "{schema} on {instance}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn each_keyword_reads_as_the_reference_reads_it() {
    let strings = vec![
        json!(""),
        json!("a"),
        json!("é"),
        json!("ab"),
        json!("abc"),
        json!("12"),
        json!("١٢"),
        json!("a b"),
        json!("a\u{3000}b"),
        json!("x\n"),
        json!(5),
        json!(null),
    ];
    let numbers = vec![
        json!(0),
        json!(-1),
        json!(1),
        json!(1.0),
        json!(1.5),
        json!(2),
        json!(-0.0),
        json!(4_294_967_295_u64),
        json!(4_294_967_296_u64),
        json!(9_007_199_254_740_993_u64),
        json!(18_446_744_073_709_551_615_u64),
        json!(-9_223_372_036_854_775_808_i64),
        json!(1e300),
        json!(-1e300),
        json!("1"),
        json!(true),
    ];
    let cases = vec![
        (json!({"type": "integer"}), numbers.clone()),
        (json!({"type": "number"}), numbers.clone()),
        (json!({"type": ["string", "null"]}), strings.clone()),
        (
            json!({"type": "null"}),
            vec![json!(null), json!(0), json!({})],
        ),
        (
            json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64}),
            numbers.clone(),
        ),
        (
            json!({"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 2}),
            numbers.clone(),
        ),
        (
            json!({"minimum": 1.5, "maximum": 9_007_199_254_740_992_u64}),
            numbers.clone(),
        ),
        (
            json!({"exclusiveMaximum": 18_446_744_073_709_551_615_u64, "exclusiveMinimum": -1e300}),
            numbers.clone(),
        ),
        (json!({"const": 1}), numbers.clone()),
        (json!({"enum": [1, "1", null, [1], {"a": 1}]}), {
            let mut values = numbers.clone();
            values.extend([json!([1.0]), json!({"a": 1.0}), json!([1, 2]), json!(null)]);
            values
        }),
        (
            json!({"type": "string", "enum": ["A", "B"]}),
            vec![json!("A"), json!("C"), json!(1), json!(true)],
        ),
        (
            json!({"type": "string", "enum": [5]}),
            vec![json!(5), json!("5")],
        ),
        (json!({"minLength": 2, "maxLength": 2}), strings.clone()),
        (json!({"maxLength": 0}), strings.clone()),
        (json!({"pattern": "^[a-z0-9-]+$"}), strings.clone()),
        (json!({"pattern": "^\\d+$"}), strings.clone()),
        (json!({"pattern": "\\w"}), strings.clone()),
        (json!({"pattern": "^\\S*$"}), strings.clone()),
        (json!({"pattern": "^\\s|b$"}), strings.clone()),
        (json!({"pattern": "^.$"}), strings.clone()),
        (json!({"pattern": "a$"}), strings.clone()),
        (json!({"pattern": "^-?[0-9]+$"}), strings.clone()),
        (json!({"pattern": "^(0|[1-9][0-9]*)$"}), strings.clone()),
        (
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2, "uniqueItems": true}),
            vec![
                json!([]),
                json!([1]),
                json!([1, 1.0]),
                json!([1, "1"]),
                json!([1, 2, 3]),
                json!(["a", 2.5]),
                json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}]),
                json!({}),
            ],
        ),
        (
            json!({"uniqueItems": true}),
            vec![
                json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}]),
                json!([[1, 2], [2, 1]]),
                json!([null, null]),
                json!([0, -0.0]),
            ],
        ),
        (
            json!({"type": "array", "items": false}),
            vec![json!([]), json!([1])],
        ),
        (
            json!({"type": "object", "minProperties": 1, "maxProperties": 1}),
            vec![
                json!({}),
                json!({"a": 1}),
                json!({"a": 1, "b": 2}),
                json!([]),
            ],
        ),
        (
            json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "7": {"type": "integer"}},
                "required": ["a", "b"],
                "additionalProperties": false,
            }),
            vec![
                json!({"a": "x", "b": 1}),
                json!({"a": 1}),
                json!({"7": "x", "x": 1, "y": 2}),
                json!({}),
                json!("a"),
            ],
        ),
        (
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            vec![json!({}), json!({"a": 1})],
        ),
        (
            json!({
                "type": "object",
                "additionalProperties": {"type": "string", "pattern": "^-?[0-9]+$"},
                "propertyNames": {"pattern": "^-?(0|[1-9][0-9]*)$"},
            }),
            vec![
                json!({"1": "2", "-3": "4"}),
                json!({"01": "2", "x": 5}),
                json!({"1": ["2"]}),
            ],
        ),
        (
            json!({"type": "object", "propertyNames": {"enum": ["true", "false"]}}),
            vec![json!({"true": 1}), json!({"yes": 1, "no": 2})],
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            vec![json!({"a": "x", "b": 1}), json!({"a": 1})],
        ),
        (
            json!({"anyOf": [{"const": ""}, {"type": "string", "minLength": 3}]}),
            vec![json!(""), json!("ab"), json!("abc"), json!(1)],
        ),
        (
            json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}),
            vec![json!(1), json!(1.5), json!("x")],
        ),
        (union(), {
            vec![
                json!({"f": {"case": "a", "value": "x"}}),
                json!({"f": {"case": "a", "value": 5}}),
                json!({"f": {"case": "b", "value": {"n": "x"}}}),
                json!({"f": {"case": "b", "value": {"n": 1, "m": 2}}}),
                json!({"f": {"case": "c", "value": 1}}),
                json!({"f": {"case": 7, "value": 1}}),
                json!({"f": {"value": 1}}),
                json!({"f": {"case": "a"}}),
                json!({"f": "a"}),
                json!({"f": {"case": "a", "value": "x", "more": 1}}),
            ]
        }),
        (
            json!({
                "$defs": {"node": {
                    "type": "object",
                    "properties": {"label": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                    "additionalProperties": false,
                }},
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/node", "description": "A tree."}, "self": {"$ref": "#"}},
                "additionalProperties": false,
            }),
            vec![
                json!({"tree": {"label": "a", "children": [{"label": "b", "children": [{"lable": 1}]}]}}),
                json!({"self": {"self": {"tree": {"label": 5}}}}),
                json!({"self": {"x": 1}}),
            ],
        ),
        (
            json!({"$defs": {"a b": {"type": "string"}, "c/d": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/a%20b"}, "y": {"$ref": "#/$defs/c~1d"}}}),
            vec![json!({"x": "s", "y": 1}), json!({"x": 1, "y": "s"})],
        ),
        (
            json!({"type": "string", "format": "date-time", "contentEncoding": "base64", "deprecated": true, "title": "t"}),
            vec![json!("not a time"), json!("%%%")],
        ),
        (json!(true), vec![json!(1), json!(null)]),
        (json!(false), vec![json!(1), json!(null)]),
        (json!({}), vec![json!(1), json!({"a": [1]})]),
    ];
    assert!(agree(&cases) > 250);
}

/// A protobuf oneof as the schema generator writes it: `{case, value}` branches.
fn union() -> Value {
    let branch = |case: &str, value: Value| {
        json!({
            "type": "object",
            "properties": {"case": {"type": "string", "const": case}, "value": value},
            "required": ["case", "value"],
            "additionalProperties": false,
        })
    };
    json!({
        "type": "object",
        "properties": {"f": {"oneOf": [
            branch("a", json!({"type": "string"})),
            {"$ref": "#/$defs/b"},
        ]}},
        "$defs": {"b": branch("b", json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "additionalProperties": false,
        }))},
    })
}

/// The text encoder takes `format` for an annotation: so must the validator it stands in
/// for.
#[test]
fn the_validator_does_not_check_formats() {
    let schema = json!({"type": "object", "properties": {
        "t": {"type": "string", "format": "date-time"},
        "n": {"type": "integer", "format": "int32"},
        "e": {"type": "string", "format": "email"},
    }});
    let validator = compile(&schema).expect("compiles");
    assert!(validator.is_valid(&json!({"t": "not a time", "n": 4_294_967_296_i64, "e": "x"})));
}

/// A keyword outside the set tool schemas use is refused by name and place, never passed over;
/// so are malformed values of the keywords in it, and references that go nowhere.
#[test]
fn a_schema_outside_the_keyword_set_does_not_compile() {
    let refused = [
        (
            json!({"type": "object", "properties": {"a": {"allOf": [{}]}}}),
            "unsupported keyword `allOf` at /properties/a/allOf",
        ),
        (
            json!({"if": {}, "then": {}}),
            "unsupported keyword `if` at /if",
        ),
        (
            json!({"$defs": {"x": {"not": {}}}}),
            "unsupported keyword `not` at /$defs/x/not",
        ),
        (
            json!({"properties": {"a/b": {"multipleOf": 2}}}),
            "unsupported keyword `multipleOf` at /properties/a~1b/multipleOf",
        ),
        (json!({"type": 5}), "`type` at /type: must be a type name"),
        (json!({"type": []}), "`type` at /type: must be a type name"),
        (
            json!({"minLength": -1}),
            "`minLength` at /minLength: must be a non-negative integer",
        ),
        (
            json!({"items": [{}]}),
            "`items` at /items: must be a schema",
        ),
        (
            json!({"pattern": "(?<=a)b"}),
            "`pattern` at /pattern: \"(?<=a)b\" is not a regular expression this server can check",
        ),
        (json!({"pattern": "("}), "`pattern` at /pattern:"),
        (
            json!({"$ref": "#/$defs/missing"}),
            "`$ref` at /$ref: \"#/$defs/missing\" does not resolve",
        ),
        (
            json!({"$ref": "https://example.com/schema"}),
            "is not a local reference",
        ),
        (
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}}),
            "leads back to itself",
        ),
        (
            json!({"description": 5}),
            "`description` at /description: must be a string",
        ),
        (json!(5), "/: a schema must be an object or a boolean"),
    ];
    for (schema, expected) in refused {
        let error = compile(&schema).expect_err(&schema.to_string());
        assert!(error.contains(expected), "{schema}: {error}");
        assert_eq!(super::check_schema(&schema), Err(error));
    }
}

/// The problems `validator` finds in `instance`, as a model reads them.
fn words(validator: &Validator, instance: &Value) -> Vec<String> {
    validator
        .problems(instance)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The problems are worded for a model to act on.
#[test]
fn problems_are_worded_for_a_model() {
    let schema = json!({
        "type": "object",
        "properties": {
            "color": {"type": "string", "enum": ["RED", "GREEN"]},
            "id": {"type": "string", "pattern": "^-?[0-9]+$"},
            "name": {"type": "string", "minLength": 2},
            "count": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64},
            "f": union()["properties"]["f"].clone(),
        },
        "required": ["id"],
        "additionalProperties": false,
        "$defs": union()["$defs"].clone(),
    });
    let validator = compile(&schema).expect("compiles");
    assert_eq!(
        words(
            &validator,
            &json!({"color": 7, "id": "x", "name": "a", "count": -1, "nope": 1})
        ),
        vec![
            "$.color: expected one of \"RED\", \"GREEN\" (or the number of one of them), got a number (7)",
            "$.id: expected a string matching ^-?[0-9]+$, got a string (\"x\")",
            "$.name: \"a\" is shorter than 2 characters",
            "$.count: -1 is less than the minimum of 0",
            "$.nope: unknown property `nope`; allowed: color, id, name, count, f",
        ]
    );
    assert_eq!(
        words(
            &validator,
            &json!({"color": true, "f": {"case": "b", "value": {"n": "x"}}})
        ),
        vec![
            "$: missing required property `id`",
            "$.color: expected one of \"RED\", \"GREEN\", got a boolean (true)",
            "$.f.value.n: expected integer, got a string (\"x\")",
        ]
    );
    assert_eq!(
        words(
            &validator,
            &json!({"id": "1", "f": {"case": "c", "value": 1}})
        ),
        vec!["$.f: expected {\"case\": <member>, \"value\": <value>} with case one of: a, b"]
    );
    // A long value is named by what it is and how large, not quoted: a message stays short.
    let bounded = compile(&json!({
        "type": "object",
        "properties": {
            "tags": {"type": "array", "maxItems": 2},
            "code": {"type": "string", "maxLength": 3},
            "kind": {"type": "string", "enum": ["A"]},
        },
    }))
    .expect("compiles");
    assert_eq!(
        words(
            &bounded,
            &json!({"tags": (0..100).collect::<Vec<_>>(), "code": "x".repeat(61), "kind": "y".repeat(70)})
        ),
        vec![
            "$.tags: an array of 100 items has more than 2 items",
            "$.code: a string of 61 characters is longer than 3 characters",
            "$.kind: expected one of \"A\", got a string",
        ]
    );
    assert_eq!(
        words(&bounded, &json!({"tags": [1, 2, 3], "code": "abcd"})),
        vec![
            "$.tags: [1,2,3] has more than 2 items",
            "$.code: \"abcd\" is longer than 3 characters",
        ]
    );
}
