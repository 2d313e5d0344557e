//! Table tests for normalise → decode → encode over the test service's descriptors.

use prost_reflect::{DescriptorPool, MessageDescriptor};
use serde_json::{Value, json};

use super::{
    from_json::root_from_json,
    normalize::{NormalizeOptions, Normalized, normalize_arguments},
    to_json::{ToJsonOptions, root_to_json},
};

const DESCRIPTOR_SET: &[u8] = include_bytes!("../../../tests/kit/gen/descriptor.bin");

fn desc(name: &str) -> MessageDescriptor {
    let pool = DescriptorPool::decode(DESCRIPTOR_SET).unwrap_or_else(|e| unreachable!("{e}"));
    pool.get_message_by_name(name)
        .unwrap_or_else(|| unreachable!("{name} not in the test descriptors"))
}

fn normalize_with(name: &str, input: Value, json_names: bool) -> Normalized {
    let Value::Object(args) = input else {
        unreachable!("arguments are objects")
    };
    normalize_arguments(
        &desc(name),
        args,
        NormalizeOptions {
            json_names,
            max_depth: 64,
            streaming_input: false,
        },
    )
}

/// Normalise and expect no problems.
fn canonical(name: &str, input: Value) -> Value {
    let out = normalize_with(name, input, false);
    assert!(
        out.problems.is_empty(),
        "unexpected problems: {:?}",
        out.problems
    );
    out.value
}

fn problems(name: &str, input: Value) -> Vec<String> {
    normalize_with(name, input, false)
        .problems
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Normalise, decode, encode: what a backend echoing the request would return.
fn round_trip(name: &str, input: Value, options: ToJsonOptions) -> Value {
    let normalized = canonical(name, input);
    let message =
        root_from_json(&desc(name), normalized, false).unwrap_or_else(|e| unreachable!("{e}"));
    root_to_json(&message, options).unwrap_or_else(|e| unreachable!("{e}"))
}

const PROTO_NAMES: ToJsonOptions = ToJsonOptions {
    json_names: false,
    emit_defaults: false,
};

#[test]
fn int64_accepts_exact_json_integers_and_strings() {
    assert_eq!(
        canonical(
            "demo.v1.GetItemRequest",
            json!({"id": 9_007_199_254_740_993_u64})
        ),
        json!({"id": "9007199254740993"})
    );
    assert_eq!(
        canonical(
            "demo.v1.Everything",
            json!({"u64": 18_446_744_073_709_551_615_u64, "i64": " -5 "})
        ),
        json!({"u64": "18446744073709551615", "i64": "-5"})
    );
    assert_eq!(
        canonical("demo.v1.Everything", json!({"i64": 12.0})),
        json!({"i64": "12"})
    );
}

#[test]
fn int64_rejects_inexact_and_out_of_range() {
    let found = problems(
        "demo.v1.Everything",
        json!({"i64": 1e20, "u64": "-1", "s64": "99999999999999999999"}),
    );
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found[0].starts_with("$.i64: 1e+20 is too large to be exact"),
        "{found:?}"
    );
    assert_eq!(found[1], "$.u64: \"-1\" is out of range for uint64");
    assert_eq!(
        found[2],
        "$.s64: \"99999999999999999999\" is out of range for int64"
    );
}

#[test]
fn int32_accepts_integral_floats_and_numeric_strings() {
    assert_eq!(
        canonical(
            "demo.v1.Everything",
            json!({"i32": 1.0, "u32": "7", "opt": "-3"})
        ),
        json!({"i32": 1, "u32": 7, "opt": -3})
    );
    // Not integral: left for the schema to reject.
    assert_eq!(
        canonical("demo.v1.Everything", json!({"i32": 1.5})),
        json!({"i32": 1.5})
    );
    assert_eq!(
        problems(
            "demo.v1.Everything",
            json!({"i32": 3_000_000_000_u64, "u32": -1})
        ),
        vec![
            "$.i32: 3000000000 is out of range for int32",
            "$.u32: -1 is out of range for uint32"
        ]
    );
}

#[test]
fn floats_accept_special_strings() {
    let out = normalize_with(
        "demo.v1.Everything",
        json!({"dbl": "NaN", "flt": "-Infinity", "i32": 1}),
        false,
    );
    assert!(out.problems.is_empty());
    assert_eq!(
        out.value,
        json!({"dbl": "NaN", "flt": "-Infinity", "i32": 1})
    );
    assert_eq!(
        out.suppressed.len(),
        2,
        "special floats are hidden from the schema"
    );
    assert_eq!(
        canonical("demo.v1.Everything", json!({"dbl": "2.5"})),
        json!({"dbl": 2.5})
    );
    let echoed = round_trip(
        "demo.v1.Everything",
        json!({"dbl": "Infinity"}),
        PROTO_NAMES,
    );
    assert_eq!(echoed, json!({"dbl": "Infinity"}));
}

#[test]
fn bytes_accept_url_safe_and_unpadded() {
    assert_eq!(
        canonical("demo.v1.Everything", json!({"data": "-_8"})),
        json!({"data": "+/8="})
    );
    assert_eq!(
        problems("demo.v1.Everything", json!({"data": "%%%"})),
        vec!["$.data: expected base64 (standard or URL-safe alphabet, padding optional)"]
    );
}

#[test]
fn enums_accept_names_numbers_and_case_insensitive_names() {
    assert_eq!(
        canonical(
            "demo.v1.Everything",
            json!({"color": 1, "colors": ["color_green", "2", "COLOR_RED"]})
        ),
        json!({"color": "COLOR_RED", "colors": ["COLOR_GREEN", "COLOR_GREEN", "COLOR_RED"]})
    );
    // Unknown numbers stay for the schema's `enum` to report with the allowed names.
    assert_eq!(
        canonical("demo.v1.Everything", json!({"color": 9})),
        json!({"color": 9})
    );
}

#[test]
fn oneof_alternates_normalise_to_case_value() {
    let expected = json!({"filter": {"case": "author_id", "value": "5"}});
    for input in [
        json!({"filter": {"case": "author_id", "value": "5"}}),
        json!({"filter": {"case": "authorId", "value": 5}}),
        json!({"filter": {"author_id": "5"}}),
        json!({"filter": {"which": "author_id", "author_id": "5"}}),
        json!({"author_id": "5"}),
        json!({"authorId": 5}),
        json!({"filter": "{\"author_id\": \"5\"}"}),
        json!({"author_id": "5", "range": null}),
    ] {
        assert_eq!(
            canonical("demo.v1.GetItemRequest", input.clone()),
            expected,
            "{input}"
        );
    }
}

#[test]
fn oneof_message_member_and_json_names() {
    let range = json!({"start": "2024-01-01T00:00:00Z"});
    assert_eq!(
        canonical("demo.v1.GetItemRequest", json!({"range": range})),
        json!({"filter": {"case": "range", "value": range}})
    );
    let out = normalize_with(
        "demo.v1.GetItemRequest",
        json!({"author_id": "5", "id": 1}),
        true,
    );
    assert!(out.problems.is_empty());
    assert_eq!(
        out.value,
        json!({"filter": {"case": "authorId", "value": "5"}, "id": "1"})
    );
}

#[test]
fn oneof_two_members_is_an_error_naming_both() {
    for input in [
        json!({"author_id": "5", "range": {}}),
        json!({"filter": {"author_id": "5", "range": {}}}),
        json!({"filter": {"case": "range", "value": {}}, "author_id": "5"}),
    ] {
        let found = problems("demo.v1.GetItemRequest", input.clone());
        assert_eq!(found.len(), 1, "{input}: {found:?}");
        assert!(
            found[0].contains("oneof `filter` takes exactly one member"),
            "{found:?}"
        );
        assert!(
            found[0].contains("`author_id`") && found[0].contains("`range`"),
            "{found:?}"
        );
    }
}

#[test]
fn oneof_unknown_case_lists_members() {
    assert_eq!(
        problems(
            "demo.v1.GetItemRequest",
            json!({"filter": {"case": "nope", "value": 1}})
        ),
        vec!["$.filter.case: unknown member \"nope\"; expected one of: author_id, range"]
    );
}

/// Every oneof member needs its `value`, as the listed schema's `required: ["case", "value"]`
/// says, a message member too (its empty message is `{}`); `null` is no value.
#[test]
fn a_oneof_member_needs_its_value_as_the_schema_says() {
    let name = "demo.v1.GetItemRequest";
    for (filter, expected) in [
        (
            json!({"case": "range"}),
            "$.filter: missing `value` for member `range`; give `{}` for the empty message",
        ),
        (
            json!({"case": "range", "value": null}),
            "$.filter: missing `value` for member `range`; give `{}` for the empty message",
        ),
        (
            json!({"case": "author_id"}),
            "$.filter: missing `value` for member `author_id`",
        ),
    ] {
        assert_eq!(
            problems(name, json!({ "filter": filter })),
            vec![expected],
            "{filter}"
        );
    }
    assert!(problems(name, json!({"filter": {"case": "range", "value": {}}})).is_empty());
    assert!(problems(name, json!({"filter": {"case": "author_id", "value": "7"}})).is_empty());
}

#[test]
fn proto3_optional_is_a_plain_field() {
    assert_eq!(
        canonical("demo.v1.GetItemRequest", json!({"note": "hi"})),
        json!({"note": "hi"})
    );
}

#[test]
fn null_is_absent_except_in_value() {
    assert_eq!(
        canonical(
            "demo.v1.Everything",
            json!({"text": null, "tree": null, "dyn": null, "maybe": null})
        ),
        json!({"dyn": null})
    );
}

#[test]
fn objects_and_arrays_sent_as_strings_are_parsed() {
    assert_eq!(
        canonical(
            "demo.v1.Everything",
            json!({"tree": "{\"label\": \"a\"}", "colors": "[1]", "meta": "{\"k\": 1}", "list": "[1, \"x\"]"})
        ),
        json!({"tree": {"label": "a"}, "colors": ["COLOR_RED"], "meta": {"k": 1}, "list": [1, "x"]})
    );
    // A plain string field is never parsed.
    assert_eq!(
        canonical("demo.v1.Everything", json!({"text": "{}"})),
        json!({"text": "{}"})
    );
}

#[test]
fn well_known_types() {
    assert_eq!(
        canonical(
            "demo.v1.Everything",
            json!({"mask": ["display_name", "update_time"], "took": 1.5, "maybe": {"value": "3"}})
        ),
        json!({"mask": "displayName,updateTime", "took": "1.5s", "maybe": 3})
    );
    let found = problems(
        "demo.v1.Everything",
        json!({"when": "yesterday", "took": "5 minutes"}),
    );
    assert_eq!(found.len(), 2);
    assert!(
        found[0].starts_with("$.when: expected an RFC 3339 timestamp"),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("$.took: expected a duration"),
        "{found:?}"
    );
}

#[test]
fn an_invalid_timestamp_is_quoted_as_sent() {
    // The value is upper-cased for protobuf's parser, but the problem quotes the model's input.
    let found = problems("demo.v1.Everything", json!({"when": "yesterday"}));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("got \"yesterday\""), "{found:?}");
    assert!(!found[0].contains("YESTERDAY"), "{found:?}");
    // Lower-case `t` and `z` are still accepted.
    assert!(
        problems(
            "demo.v1.Everything",
            json!({"when": "2024-05-01t12:00:00z"})
        )
        .is_empty()
    );
}

#[test]
fn any_accepts_type_url_and_at_type_forms() {
    let expected = json!({"any": {"type_url": "type.googleapis.com/demo.v1.Note", "value": {"body": "hi", "likes": "3"}}});
    for input in [
        json!({"any": {"type_url": "type.googleapis.com/demo.v1.Note", "value": {"body": "hi", "likes": 3}}}),
        json!({"any": {"@type": "type.googleapis.com/demo.v1.Note", "body": "hi", "likes": "3"}}),
        json!({"any": {"type_url": "demo.v1.Note", "value": {"body": "hi", "likes": "3"}}}),
    ] {
        assert_eq!(
            canonical("demo.v1.Everything", input.clone()),
            expected,
            "{input}"
        );
    }
    // A well-known payload carries its own JSON under `value`.
    let timestamp = json!({"anys": [{"@type": "type.googleapis.com/google.protobuf.Timestamp", "value": "2024-01-01T00:00:00Z"}]});
    assert_eq!(
        canonical("demo.v1.Everything", timestamp),
        json!({"anys": [{"type_url": "type.googleapis.com/google.protobuf.Timestamp", "value": "2024-01-01T00:00:00Z"}]})
    );
    assert_eq!(
        problems(
            "demo.v1.Everything",
            json!({"any": {"type_url": "x.Unknown", "value": {}}})
        ),
        vec![
            "$.any.type_url: unknown message type `x.Unknown`: it is not among this service's types"
        ]
    );
}

#[test]
fn wrapper_root_is_value_wrapped() {
    assert_eq!(
        canonical("google.protobuf.Int64Value", json!({"value": 5})),
        json!({"value": "5"})
    );
    let echoed = round_trip(
        "google.protobuf.Int64Value",
        json!({"value": "9007199254740993"}),
        PROTO_NAMES,
    );
    assert_eq!(echoed, json!({"value": "9007199254740993"}));
}

#[test]
fn round_trip_everything() {
    let input = json!({
        "i32": -1, "i64": "-9007199254740993", "u32": 4_000_000_000_u64, "u64": "18446744073709551615",
        "s64": "-2", "f64": "3", "flt": 1.5, "dbl": -0.25, "flag": true, "text": "héllo",
        "data": "AAEC", "color": "COLOR_GREEN", "colors": ["COLOR_RED"],
        "by_id": {"-1": "minus one", "7": "seven"},
        "by_flag": {"true": {"label": "yes", "children": [{"label": "leaf"}]}},
        "tree": {"label": "root", "children": [{"label": "a", "children": [{"label": "b"}]}]},
        "any": {"type_url": "type.googleapis.com/demo.v1.Note", "value": {"body": "n", "likes": "1"}},
        "when": "2024-05-01T12:00:00Z", "took": "1.500s", "mask": "a.bC,d",
        "meta": {"k": [1, "two", null, {"x": true}]}, "dyn": {"nested": [1.5]}, "list": [null, 2],
        "maybe": 0, "nothing": {},
        "anys": [{"type_url": "type.googleapis.com/google.protobuf.Duration", "value": "2s"}],
        "choice": {"case": "node", "value": {"label": "picked"}},
        "opt": 0, "snake_case_field": "s"
    });
    let echoed = round_trip("demo.v1.Everything", input.clone(), PROTO_NAMES);
    assert_eq!(echoed, input);
}

#[test]
fn encode_with_json_names_and_defaults() {
    let echoed = round_trip(
        "demo.v1.Everything",
        json!({"snake_case_field": "s", "choice": {"case": "at", "value": "2024-05-01T12:00:00Z"}}),
        ToJsonOptions {
            json_names: true,
            emit_defaults: false,
        },
    );
    assert_eq!(
        echoed,
        json!({"snakeCaseField": "s", "choice": {"case": "at", "value": "2024-05-01T12:00:00Z"}})
    );
    let defaults = round_trip(
        "demo.v1.Item",
        json!({}),
        ToJsonOptions {
            json_names: false,
            emit_defaults: true,
        },
    );
    assert_eq!(
        defaults,
        json!({"id": "0", "name": "", "color": "COLOR_UNSPECIFIED", "payload": "", "counts": {}, "big": "0", "tags": []})
    );
}

#[test]
fn duplicate_spellings_of_one_field_are_reported() {
    assert_eq!(
        problems(
            "demo.v1.Everything",
            json!({"snake_case_field": "a", "snakeCaseField": "b"})
        ),
        vec![
            "$.snakeCaseField: `snake_case_field` and `snakeCaseField` name the same field; give it once"
        ]
    );
}

#[test]
fn depth_is_checked_before_recursing() {
    // 100 levels of TreeNode, sent as a string so the argument-depth check cannot see it.
    let mut tree = String::from("{\"label\": \"x\"}");
    for _ in 0..50 {
        tree = format!("{{\"children\": [{tree}]}}");
    }
    let found = problems("demo.v1.Everything", json!({ "tree": tree }));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("nest deeper than the limit of 64 levels"),
        "{found:?}"
    );
}

/// `Choice`, a message whose oneof `kind` has a `google.protobuf.NullValue` member beside a
/// string (as Datastore's `Value` has), made by hand over the well-known types.
fn null_member() -> MessageDescriptor {
    use prost_types::{
        DescriptorProto, FieldDescriptorProto, FileDescriptorProto, OneofDescriptorProto,
        field_descriptor_proto::{Label, Type},
    };
    let member =
        |name: &str, number: i32, kind: Type, type_name: Option<&str>| FieldDescriptorProto {
            name: Some(name.to_owned()),
            json_name: Some(name.to_owned()),
            number: Some(number),
            label: Some(Label::Optional as i32),
            r#type: Some(kind as i32),
            type_name: type_name.map(str::to_owned),
            oneof_index: Some(0),
            ..FieldDescriptorProto::default()
        };
    let file = FileDescriptorProto {
        name: Some("null_member.proto".to_owned()),
        package: Some("nulls".to_owned()),
        dependency: vec!["google/protobuf/struct.proto".to_owned()],
        syntax: Some("proto3".to_owned()),
        message_type: vec![DescriptorProto {
            name: Some("Choice".to_owned()),
            field: vec![
                member(
                    "null_value",
                    1,
                    Type::Enum,
                    Some(".google.protobuf.NullValue"),
                ),
                member("text", 2, Type::String, None),
            ],
            oneof_decl: vec![OneofDescriptorProto {
                name: Some("kind".to_owned()),
                ..OneofDescriptorProto::default()
            }],
            ..DescriptorProto::default()
        }],
        ..FileDescriptorProto::default()
    };
    let mut pool = DescriptorPool::global();
    pool.add_file_descriptor_proto(file)
        .unwrap_or_else(|e| unreachable!("{e}"));
    pool.get_message_by_name("nulls.Choice")
        .unwrap_or_else(|| unreachable!("nulls.Choice"))
}

/// A `NullValue` member is set by `null`, its only value: `null` there is not "absent", in
/// every form of a oneof.
#[test]
fn a_null_value_member_is_set_by_null() {
    let desc = null_member();
    for input in [
        json!({"kind": {"case": "null_value", "value": null}}),
        json!({"kind": {"case": "null_value", "value": "NULL_VALUE"}}),
        json!({"null_value": null}),
    ] {
        let Value::Object(args) = input.clone() else {
            unreachable!("an object")
        };
        let out = normalize_arguments(
            &desc,
            args,
            NormalizeOptions {
                json_names: false,
                max_depth: 64,
                streaming_input: false,
            },
        );
        assert!(out.problems.is_empty(), "{input}: {:?}", out.problems);
        let message = root_from_json(&desc, out.value.clone(), false)
            .unwrap_or_else(|e| panic!("{input} → {}: {e}", out.value));
        assert!(
            message.has_field_by_name("null_value"),
            "{input} → {}: the member is not set",
            out.value
        );
    }
}

/// A proto2 message whose field `clash` takes the JSON name `other`, another field's proto
/// name; `other`'s JSON name is `renamed`.
const CLASH: &str = r#"
syntax = "proto2";
package clash;
message M {
  optional int32 clash = 19 [json_name = "other"];
  optional int32 other = 20 [json_name = "renamed"];
}
service S { rpc Echo(M) returns (M); }
"#;

/// Where a field's JSON name is another field's proto name, a property means the field the
/// listed schema says it does (with proto names, `other` is field 20; with JSON names, field
/// 19), both in the arguments and in the results, whichever way the call takes.
#[test]
fn a_json_name_equal_to_a_siblings_proto_name_means_the_field_the_schema_lists() {
    use crate::{Arguments, DeepCheck, Plans, Response};

    let set = test_kit::testdata::compile_sources(&[("clash/m.proto", CLASH)]);
    let pool = DescriptorPool::decode(set.as_slice()).expect("the set decodes");
    let desc = pool.get_message_by_name("clash.M").expect("clash.M");
    let field = |number: u8, value: u8| [0x80 | (number << 3), 0x01, value];
    for json_names in [false, true] {
        let options = tonic_mcp_schema::Options {
            json_names,
            ..tonic_mcp_schema::Options::default()
        };
        let context = tonic_mcp_schema::Context::new(&pool, &options);
        let service = pool.services().next().expect("a service");
        let tool = context
            .service_tools(&service)
            .expect("tools")
            .tools
            .remove(0);
        let validator = crate::compile(&tool.input_schema).expect("the schema compiles");
        let plans = Plans::default();
        let arguments = Arguments {
            input: &desc,
            schema: &tool.input_schema,
            validator: &validator,
            deep: &DeepCheck::NONE,
            plans: &plans,
            json_names,
            streaming: false,
        };
        // (property, field number) as the listed schema names them.
        let (clash, other) = if json_names {
            (("other", 19), ("renamed", 20))
        } else {
            (("clash", 19), ("other", 20))
        };
        for (property, number) in [clash, other] {
            assert_eq!(
                tool.input_schema["properties"][property]["type"], "integer",
                "{json_names}: {property} is listed"
            );
            let Value::Object(args) = json!({ property: 7 }) else {
                unreachable!("an object")
            };
            for canonical_first in [true, false] {
                let requests = arguments
                    .encode(args.clone(), 64, canonical_first)
                    .unwrap_or_else(|problems| panic!("{json_names} {property}: {problems:?}"));
                assert_eq!(
                    requests.iter().map(|r| r.to_vec()).collect::<Vec<_>>(),
                    [field(number, 7).to_vec()],
                    "json_names={json_names} canonical_first={canonical_first}: `{property}` sets field {number}"
                );
            }
        }
        let response = Response {
            output: &desc,
            plans: Some(&plans),
            omitted: &[],
            options: ToJsonOptions {
                json_names,
                emit_defaults: false,
            },
            streaming: false,
        };
        let bytes: bytes::Bytes = [field(19, 1), field(20, 2)].concat().into();
        let expected = json!({ clash.0: 1, other.0: 2 });
        for plans in [Some(&plans), None] {
            let response = Response { plans, ..response };
            assert_eq!(
                response.decode(&bytes).expect("decodes"),
                expected,
                "json_names={json_names}, one pass: {}",
                plans.is_some()
            );
        }
    }
}
