//! The two ways from a call's arguments to its request messages (`tonic_mcp_codec::Arguments`)
//! give one answer: canonical arguments validated and encoded as they came (how calls are
//! served) against every call normalised, validated and encoded (the whole way). The tools are
//! made from the same specifications (`tonic_mcp::schema`) the runtime's tool sets are.
//!
//! For every tool of every `testdata/` service, its properties named by proto names and again
//! by JSON names: arguments generated from its listed
//! `inputSchema` (`test_kit::schema_gen`), and the same arguments mutated into loose forms
//! and wrong ones (`test_kit::mutate`: wrong types, numbers out of range, 64-bit
//! numbers as JSON numbers, bad base64, unknown keys, nulls, bad timestamps…). Both ways must
//! give the same request bytes (up to the order of map entries, which prost-reflect does not
//! keep), or the same `isError` text.
//!
//! The same arguments also hold the codec's own validator (`tonic_mcp_codec::compile`) to
//! jsonschema, the reference: the same verdict on every one, and problems at the very paths
//! the reference's errors give (`test_kit::oracle`; the words are the codec's).

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use serde_json::{Map, Value};
use test_kit::{mutate, oracle, schema_gen, testdata, wire};
use tonic_mcp_codec::{Arguments, DeepCheck, JsonPath, Plans, Validator};

/// Nesting the whole way walks, as a call's default limit does.
const MAX_DEPTH: usize = 64;

/// A tool as the codec sees it: what [`Arguments`] borrows, owned.
struct Tool {
    name: String,
    input: MessageDescriptor,
    schema: Value,
    validator: Validator,
    /// jsonschema's validator of `schema`, the reference `validator` is held to.
    reference: jsonschema::Validator,
    deep: DeepCheck,
    plans: Plans,
    json_names: bool,
    streaming: bool,
}

/// Request bytes, or the problems' text.
type Encoded = Result<Vec<Vec<u8>>, String>;

impl Tool {
    fn arguments(&self) -> Arguments<'_> {
        Arguments {
            input: &self.input,
            schema: &self.schema,
            validator: &self.validator,
            deep: &self.deep,
            plans: &self.plans,
            json_names: self.json_names,
            streaming: self.streaming,
        }
    }

    /// Canonical arguments taken as they came (as calls are served), and every call taking
    /// the whole way.
    fn both_ways(&self, args: &Map<String, Value>) -> (Encoded, Encoded) {
        let run = |canonical_first: bool| {
            self.arguments()
                .encode(args.clone(), MAX_DEPTH, canonical_first)
                .map(|requests| requests.iter().map(|bytes| bytes.to_vec()).collect())
                .map_err(|problems| {
                    let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
                    lines.join("\n")
                })
        };
        (run(true), run(false))
    }

    /// The text encoder's request for `text`, or `None` where it leaves them to the whole way.
    fn encode_text(&self, text: &str) -> Option<Vec<Vec<u8>>> {
        let limits = tonic_mcp::Limits::default();
        self.arguments()
            .encode_text(text, limits.max_depth)
            .map(|bytes| vec![bytes.to_vec()])
    }
}

/// Nested `$ref`s followed on any path of a generated value.
const REF_BUDGET: u32 = 4;

#[derive(Default, Debug)]
struct Tally {
    compared: u64,
    same_bytes: u64,
    same_refusal: u64,
    /// Arguments the text encoder answered for (compact, pretty and keys reversed each count).
    from_text: u64,
    /// Arguments the validator and the reference both took, and both refused with problems at
    /// the same paths.
    same_verdict: (u64, u64),
    mismatches: Vec<String>,
}

impl Tally {
    /// The codec's validator against the reference on `arguments`, as they came.
    fn check_validator(&mut self, tool: &Tool, arguments: &Value) {
        let valid = tool.reference.is_valid(arguments);
        let problems = tool.validator.problems(arguments);
        let own: BTreeSet<String> = problems.iter().map(|p| p.path.to_string()).collect();
        let expected: BTreeSet<String> = oracle::problem_paths(&tool.reference, arguments)
            .iter()
            .map(|steps| {
                oracle::path_of(steps, JsonPath::push_key, JsonPath::push_index).to_string()
            })
            .collect();
        let same = tool.validator.is_valid(arguments) == valid
            && problems.is_empty() == valid
            && own == expected;
        match (same, valid) {
            (true, true) => self.same_verdict.0 += 1,
            (true, false) => self.same_verdict.1 += 1,
            (false, _) if self.mismatches.len() < 20 => self.mismatches.push(format!(
                "{}: validator on {arguments}\n  reference: valid {valid}, at {expected:?}\n  own:       {problems:?}",
                tool.name
            )),
            (false, _) => {}
        }
    }

    fn check(&mut self, tool: &Tool, arguments: &Value) {
        let Value::Object(object) = arguments else {
            return;
        };
        self.check_validator(tool, arguments);
        let (served, whole_way) = tool.both_ways(object);
        let desc = &tool.input;
        let name = &tool.name;
        self.compared += 1;
        let same = match (&served, &whole_way) {
            (Ok(a), Ok(b)) => {
                let equal = a.len() == b.len()
                    && a.iter().zip(b).all(|(a, b)| {
                        wire::same(desc, b, a) || (holds_any(arguments) && same_decoded(desc, a, b))
                    });
                if equal {
                    self.same_bytes += 1;
                }
                equal
            }
            (Err(a), Err(b)) => {
                if a == b {
                    self.same_refusal += 1;
                }
                a == b
            }
            _ => false,
        };
        if !same && self.mismatches.len() < 20 {
            self.mismatches.push(format!(
                "{name}: arguments {arguments}\n  served:    {served:02x?}\n  whole way: {whole_way:02x?}"
            ));
        }
        // The text encoder (arguments kept as text by the transports) answers only with what
        // the served way gives, whatever the layout and the order of the keys.
        let texts = [
            arguments.to_string(),
            serde_json::to_string_pretty(arguments).unwrap_or_default(),
            reversed(arguments).to_string(),
        ];
        for text in texts {
            let Some(encoded) = tool.encode_text(&text) else {
                continue;
            };
            self.from_text += 1;
            let agrees = match &served {
                Ok(served) => {
                    served.len() == encoded.len()
                        && served
                            .iter()
                            .zip(&encoded)
                            .all(|(a, b)| wire::same(desc, a, b))
                }
                Err(_) => false,
            };
            if !agrees && self.mismatches.len() < 20 {
                self.mismatches.push(format!(
                    "{name}: arguments as text {text}\n  served:    {served:02x?}\n  from text: {encoded:02x?}"
                ));
            }
        }
    }
}

/// `value` with the keys of every object in reverse order.
fn reversed(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .rev()
                .map(|(key, value)| (key.clone(), reversed(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

/// Whether the arguments hold an `Any` (its canonical `{type_url, value}` form).
fn holds_any(value: &Value) -> bool {
    match value {
        Value::Object(object) => object.contains_key("type_url") || object.values().any(holds_any),
        Value::Array(items) => items.iter().any(holds_any),
        _ => false,
    }
}

/// Two encodings of `desc` equal as protojson, `Any` payloads decoded: the map entries inside
/// an `Any`'s bytes come in a `HashMap`'s order on the whole way, which [`wire::same`] cannot
/// see past.
fn same_decoded(desc: &MessageDescriptor, a: &[u8], b: &[u8]) -> bool {
    let json = |bytes: &[u8]| {
        DynamicMessage::decode(desc.clone(), bytes)
            .ok()
            .and_then(|message| serde_json::to_value(&message).ok())
    };
    matches!((json(a), json(b)), (Some(a), Some(b)) if a == b)
}

/// The tools of every service of `pool`, made as the runtime's tool sets make them.
fn tools_of(pool: &DescriptorPool, options: &tonic_mcp::schema::Options) -> Vec<Tool> {
    let cx = tonic_mcp::schema::Context::new(pool, options);
    let mut tools = Vec::new();
    for service in pool.services() {
        for spec in cx
            .service_tools(&service)
            .map(|t| t.tools)
            .unwrap_or_default()
        {
            let input = pool
                .get_message_by_name(&spec.input_type)
                .unwrap_or_else(|| panic!("{}: no input type", spec.name));
            let text = spec.input_schema.to_string();
            let validator = tonic_mcp_codec::compile(&spec.input_schema)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            let reference = oracle::reference(&spec.input_schema)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            tools.push(Tool {
                name: spec.name,
                input,
                validator,
                reference,
                deep: DeepCheck::new(&text),
                schema: spec.input_schema,
                plans: Plans::default(),
                json_names: options.json_names,
                streaming: spec.kind.streams_requests(),
            });
        }
    }
    tools
}

/// The testdata pool's tools.
fn testdata_tools() -> Vec<Tool> {
    let pool = DescriptorPool::decode(e2e::TESTDATA_DESCRIPTOR_SET).expect("testdata pool");
    tools_of(&pool, &tonic_mcp::schema::Options::default())
}

/// The tool named `name` among `tools`.
fn named<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

/// Every `stride`-th tool of `tools`: `cases` generated arguments each, and four mutations of
/// each, compared both ways.
fn compare(tools: &[Tool], cases: u32, stride: usize) -> (usize, Tally, Tally) {
    let mut valid = Tally::default();
    let mut mutated = Tally::default();
    let mut runner = TestRunner::deterministic();
    let replacements = mutate::replacements();
    let mut rng = test_kit::Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut tools_run = 0;
    for tool in tools.iter().step_by(stride.max(1)) {
        let schema = &tool.schema;
        tools_run += 1;
        for _ in 0..cases {
            let generated = catch_unwind(AssertUnwindSafe(|| {
                schema_gen::strategy(schema, REF_BUDGET)
                    .new_tree(&mut runner)
                    .ok()
                    .map(|tree| tree.current())
            }));
            let Ok(Some(arguments)) = generated else {
                break;
            };
            valid.check(tool, &arguments);
            for _ in 0..4 {
                let changed = mutate::mutate(&arguments, &mut rng, &replacements);
                mutated.check(tool, &changed);
            }
        }
    }
    eprintln!("{tools_run} tools; valid: {valid:?}\nmutated: {mutated:?}");
    for tally in [&valid, &mutated] {
        assert!(
            tally.mismatches.is_empty(),
            "{} mismatch(es):\n{}",
            tally.mismatches.len(),
            tally.mismatches.join("\n")
        );
    }
    (tools_run, valid, mutated)
}

#[test]
fn canonical_arguments_taken_as_they_came_give_what_the_whole_way_gives() {
    let pool = DescriptorPool::decode(e2e::TESTDATA_DESCRIPTOR_SET).expect("testdata pool");
    // Properties named by proto names, then by JSON names.
    for options in ["", "json_names"] {
        let tools = tools_of(
            &pool,
            &tonic_mcp::schema::Options::parse(options).expect("options"),
        );
        let cases = test_kit::env_or("TRANSCODE_CASES", 48u32);
        let (tools_run, valid, mutated) = compare(&tools, cases, 1);
        assert!(tools_run > 40, "{options}: {tools_run} tools");
        // The generated arguments are canonical: most of them must encode.
        assert!(
            valid.same_bytes * 10 > valid.compared * 8,
            "{options}: {valid:?}"
        );
        // The mutations must reach refusals too.
        assert!(mutated.same_refusal > 100, "{options}: {mutated:?}");
        // The text encoder must answer for a good share of canonical arguments, and for some
        // of the mutated ones (those still canonical); every answer was compared above.
        assert!(valid.from_text * 2 > valid.compared, "{options}: {valid:?}");
        assert!(mutated.from_text > 0, "{options}: {mutated:?}");
        // The validator met the reference on every one: most generated arguments valid, many
        // mutated ones refused.
        assert_eq!(
            valid.same_verdict.0 + valid.same_verdict.1,
            valid.compared,
            "{options}: {valid:?}"
        );
        assert!(
            valid.same_verdict.0 * 10 > valid.compared * 8,
            "{options}: {valid:?}"
        );
        assert!(mutated.same_verdict.1 > 100, "{options}: {mutated:?}");
    }
}

/// The same over the descriptor set at `TRANSCODE_DESCRIPTORS` (e.g. every googleapis service,
/// tools named by package), `TRANSCODE_RPCS` tools sampled evenly (default 1,000),
/// `TRANSCODE_CASES` arguments each (default 5).
#[test]
#[ignore = "needs TRANSCODE_DESCRIPTORS"]
fn canonical_arguments_on_a_descriptor_set() {
    let pool = testdata::pool_from_env();
    let options = tonic_mcp::schema::Options::parse("tool_names=package").expect("options");
    let tools = tools_of(&pool, &options);
    let total = tools.len();
    let wanted = test_kit::env_or("TRANSCODE_RPCS", 1000usize);
    let cases = test_kit::env_or("TRANSCODE_CASES", 5u32);
    let (tools_run, valid, _) = compare(&tools, cases, total / wanted.max(1));
    assert!(
        tools_run >= wanted.min(total) / 2,
        "{tools_run} of {total} tools"
    );
    assert!(valid.same_bytes * 10 > valid.compared * 8, "{valid:?}");
}

/// The loose forms a model sends (docs/design.md §4.3, §4.5, §4.7) take the whole way and are
/// answered as before: each gives the same bytes or the same refusal both ways, and the ones
/// the runtime accepts are accepted.
#[test]
fn loose_forms_take_the_whole_way() {
    let tools = testdata_tools();
    // (tool, arguments, accepted by the runtime)
    let cases: &[(&str, &str, bool)] = &[
        ("ScalarService_Echo", r#"{"color": 2}"#, true),
        ("ScalarService_Echo", r#"{"color": "color_green"}"#, true),
        ("ScalarService_Echo", r#"{"f_int64": 12}"#, true),
        (
            "ScalarService_Echo",
            r#"{"f_int64": "12", "f_uint64": 7}"#,
            true,
        ),
        ("ScalarService_Echo", r#"{"f_bytes": "-_-_"}"#, true),
        ("ScalarService_Echo", r#"{"f_bytes": "YQ"}"#, true),
        ("ScalarService_Echo", r#"{"f_bytes": " YWJj "}"#, true),
        ("ScalarService_Echo", r#"{"f_bytes": "1e3"}"#, false),
        (
            "ScalarService_Echo",
            r#"{"f_string": null, "f_int32": null}"#,
            true,
        ),
        ("ScalarService_Echo", r#"{"f_float": 1e39}"#, false),
        ("ScalarService_Echo", r#"{"f_float": "NaN"}"#, true),
        ("ScalarService_Echo", r#"{"f_int32": "7"}"#, true),
        ("ScalarService_Echo", r#"{"f_int32": 3000000000}"#, false),
        (
            "SearchService_Echo",
            r#"{"author_id": "12", "inline": true}"#,
            true,
        ),
        (
            "SearchService_Echo",
            r#"{"filter": {"case": "tag", "value": "x"}, "inline": true}"#,
            true,
        ),
        (
            "SearchService_Echo",
            r#"{"filter": "{\"case\":\"tag\",\"value\":\"x\"}", "inline": true}"#,
            true,
        ),
        ("SearchService_Echo", r#"{"query": "q"}"#, false),
        (
            "SearchService_Echo",
            r#"{"tag": "x", "author_id": "1", "inline": true}"#,
            false,
        ),
        (
            "WellKnownService_Echo",
            r#"{"field_mask": ["display_name", "a.b_c"]}"#,
            true,
        ),
        (
            "WellKnownService_Echo",
            r#"{"field_mask": "displayName,b"}"#,
            true,
        ),
        (
            "WellKnownService_Echo",
            r#"{"timestamp": "2024-01-02T03:04:05z"}"#,
            true,
        ),
        ("WellKnownService_Echo", r#"{"duration": "1.5s"}"#, true),
        (
            "WellKnownService_Echo",
            r#"{"struct_value": "{\"a\": 1}"}"#,
            true,
        ),
    ];
    let mut tally = Tally::default();
    let mut accepted = 0;
    for (tool, arguments, expected) in cases {
        let arguments: Value = serde_json::from_str(arguments).expect("a case is JSON");
        let arguments = &arguments;
        let before = tally.same_bytes;
        tally.check(named(&tools, tool), arguments);
        let encoded = tally.same_bytes > before;
        if encoded {
            accepted += 1;
        }
        if encoded != *expected && tally.mismatches.len() < 20 {
            tally.mismatches.push(format!(
                "{tool} {arguments}: accepted {encoded}, expected {expected}"
            ));
        }
    }
    assert!(
        tally.mismatches.is_empty(),
        "{}",
        tally.mismatches.join("\n")
    );
    assert!(accepted >= 15, "{accepted} accepted: {tally:?}");
}

/// The text encoder answers exactly for what it is sure of, whatever the key order, and leaves
/// the rest to the whole way: loose forms, aliases, `null`, keys given twice, values out of
/// range, a oneof written `value` first.
#[test]
fn the_text_encoder_answers_only_when_sure() {
    let tools = testdata_tools();
    let cases: &[(&str, &str, bool)] = &[
        (
            "ScalarService_Echo",
            r#"{"f_int32": 1, "f_int64": "-5", "f_string": "é\"x"}"#,
            true,
        ),
        (
            "ScalarService_Echo",
            r#"{"f_string": "x", "f_int64": "5", "f_int32": 1}"#,
            true,
        ),
        ("ScalarService_Echo", r#"{"f\u005fint32": 7}"#, true),
        (
            "ScalarService_Echo",
            r#"{"f_int32": 0, "f_bool": false, "f_bytes": ""}"#,
            true,
        ),
        (
            "ScalarService_Echo",
            r#"{"f_double": 1e300, "f_float": -2.5}"#,
            true,
        ),
        ("ScalarService_Echo", r#"{"f_int32": 1.0}"#, false),
        ("ScalarService_Echo", r#"{"f_int64": 5}"#, false),
        (
            "ScalarService_Echo",
            r#"{"f_int32": 1, "f_int32": 2}"#,
            false,
        ),
        ("ScalarService_Echo", r#"{"f_int32": null}"#, false),
        ("ScalarService_Echo", r#"{"fInt32": 1}"#, false),
        ("ScalarService_Echo", r#"{"f_uint32": -1}"#, false),
        ("ScalarService_Echo", r#"{"f_int32": 2147483648}"#, false),
        ("ScalarService_Echo", r#"{"f_float": 1e300}"#, false),
        ("ScalarService_Echo", r#"{"f_bytes": "not base64!"}"#, false),
        ("ScalarService_Echo", r#"{"nope": 1}"#, false),
        (
            "SearchService_Echo",
            r#"{"query": "q", "filter": {"case": "tag", "value": "rust"}, "destination": {"case": "inline", "value": false}}"#,
            true,
        ),
        (
            "SearchService_Echo",
            r#"{"destination": {"case": "bucket_path", "value": ""}, "sort": {"case": "order", "value": "SORT_ORDER_UNSPECIFIED"}, "filter": {"case": "range", "value": {"end": "z", "start": "a"}}, "query": "q"}"#,
            true,
        ),
        // `destination` is required.
        (
            "SearchService_Echo",
            r#"{"query": "q", "filter": {"case": "tag", "value": "rust"}}"#,
            false,
        ),
        (
            "SearchService_Echo",
            r#"{"destination": {"value": true, "case": "inline"}}"#,
            false,
        ),
        (
            "SearchService_Echo",
            r#"{"destination": {"case": "inline", "value": true, "x": 1}}"#,
            false,
        ),
        (
            "SearchService_Echo",
            r#"{"destination": {"case": "outline", "value": true}}"#,
            false,
        ),
        (
            "SearchService_Echo",
            r#"{"destination": {"case": "inline"}}"#,
            false,
        ),
        (
            "SearchService_Echo",
            r#"{"destination": {"case": "inline", "value": null}}"#,
            false,
        ),
        (
            "SearchService_Echo",
            r#"{"destination": {"case": "inline", "value": true}, "sort": {"case": "order", "value": "SORT_ORDER_SIDEWAYS"}}"#,
            false,
        ),
        (
            "WellKnownService_Echo",
            r#"{"timestamp": "2024-02-29T12:00:00.5Z", "duration": "-1.250s", "field_mask": "a.b,cD", "int64_value": "9", "bool_value": false, "empty": {}, "timestamps": ["1970-01-01T00:00:00Z"]}"#,
            true,
        ),
        (
            "WellKnownService_Echo",
            r#"{"duration": "1.0000000001s"}"#,
            false,
        ),
        ("WellKnownService_Echo", r#"{"duration": "1m"}"#, false),
        ("WellKnownService_Echo", r#"{"field_mask": "a..b"}"#, false),
        ("WellKnownService_Echo", r#"{"field_mask": "1a"}"#, false),
        (
            "WellKnownService_Echo",
            r#"{"timestamp": "2024-02-30T12:00:00Z"}"#,
            false,
        ),
        (
            "WellKnownService_Echo",
            r#"{"timestamp": "2024-02-01t12:00:00z"}"#,
            false,
        ),
        (
            "WellKnownService_Echo",
            r#"{"int32_value": 2147483648}"#,
            false,
        ),
        ("WellKnownService_Echo", r#"{"empty": {"x": 1}}"#, false),
        ("WellKnownService_Echo", r#"{"struct_value": {}}"#, false),
    ];
    for &(tool, text, sure) in cases {
        let codec_tool = named(&tools, tool);
        let encoded = codec_tool.encode_text(text);
        assert_eq!(encoded.is_some(), sure, "{tool} {text}: {encoded:02x?}");
        let Some(encoded) = encoded else { continue };
        let arguments: serde_json::Map<String, Value> = serde_json::from_str(text).expect("json");
        let (served, _) = codec_tool.both_ways(&arguments);
        let served = served.unwrap_or_else(|e| panic!("{tool} {text}: served refused: {e}"));
        let desc = &codec_tool.input;
        assert!(
            served.len() == 1 && encoded.len() == 1 && wire::same(desc, &served[0], &encoded[0]),
            "{tool} {text}: served {served:02x?}, from text {encoded:02x?}"
        );
    }
}
