//! A deterministic fuzzer for the runtime, in stable Rust: for every testdata tool, arbitrary
//! JSON arguments, arguments generated from the tool's own input schema, and mutations of
//! those, sent by rmcp's client through `McpServer::serve_io` to tools calling the real tonic
//! backend (so normalise → validate → decode → call → encode all run).
//!
//! Invariants for every input: the call is answered (a result, never a JSON-RPC error), within
//! a time bound, and the server never panics (a panic would leave the call unanswered).
//!
//! CI runs `FUZZ_RUNTIME_EXECUTIONS` (default 1,500) inputs from `FUZZ_SEED` (default 1); a
//! longer run is `FUZZ_RUNTIME_EXECUTIONS=200000 cargo test -p e2e --test fuzz_runtime --release`.

mod scenario;
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use test_kit::Rng;

const STRINGS: &[&str] = &[
    "",
    "a",
    "x y",
    "é🦀\u{0}\u{ffff}",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-0",
    "0x10",
    "2147483648",
    "-9223372036854775809",
    "18446744073709551616",
    "1.5",
    "true",
    "null",
    "{}",
    "[]",
    "{\"a\":",
    "[1,2",
    "AAE=",
    "-_8",
    "%%%",
    "2024-02-30T00:00:00Z",
    "9999-12-31T23:59:59.999999999Z",
    "0001-01-01T00:00:00Z",
    "1.000000001s",
    "315576000000s",
    "-315576000000.999999999s",
    "a..b",
    "displayName,address.city",
    "type.googleapis.com/testdata.wkt.Note",
    "type.googleapis.com/google.protobuf.Duration",
    "COLOR_RED",
    "OP_ADD",
    "STATUS_ACTIVE",
    "SORT_ORDER_NEWEST",
];

const NUMBERS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2147483647.0,
    2147483648.0,
    -2147483649.0,
    4294967296.0,
    9007199254740993.0,
    9.223372036854776e18,
    1.8446744073709552e19,
    1e308,
    -1e308,
    5e-324,
    3.5e38,
];

fn number(rng: &mut Rng) -> Value {
    match rng.below(4) {
        0 => json!(rng.next() as i64),
        1 => json!(rng.next()),
        2 => json!(rng.below(100)),
        _ => serde_json::Number::from_f64(*rng.pick(NUMBERS)).map_or(Value::Null, Value::Number),
    }
}

fn string(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => format!("{}", rng.next() as i64),
        1 => (0..rng.below(12))
            .map(|_| char::from(b'a' + rng.below(26) as u8))
            .collect(),
        _ => (*rng.pick(STRINGS)).to_owned(),
    }
}

/// Arbitrary JSON, `depth` levels at most.
fn arbitrary(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth == 0 { 4 } else { 6 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => number(rng),
        3 => Value::String(string(rng)),
        4 => Value::Array(
            (0..rng.below(4))
                .map(|_| arbitrary(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(4))
                .map(|_| (string(rng), arbitrary(rng, depth - 1)))
                .collect(),
        ),
    }
}

/// A value the schema describes (mostly valid; formats and patterns are approximated).
fn generate(rng: &mut Rng, root: &Value, schema: &Value, depth: usize) -> Value {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let target = reference
            .strip_prefix("#/")
            .map(|pointer| format!("/{pointer}"))
            .and_then(|pointer| root.pointer(&pointer));
        return match target {
            Some(target) if depth > 0 => generate(rng, root, target, depth - 1),
            _ => json!({}),
        };
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array)
            && !branches.is_empty()
        {
            let branch = rng.pick(branches).clone();
            return generate(rng, root, &branch, depth);
        }
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.is_empty()
    {
        return rng.pick(values).clone();
    }
    let ty = match schema.get("type") {
        Some(Value::Array(types)) if !types.is_empty() => rng.pick(types).clone(),
        Some(ty) => ty.clone(),
        None => return arbitrary(rng, 2),
    };
    match ty.as_str().unwrap_or("") {
        "object" => {
            let mut out = Map::new();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    if depth > 0 && (required.contains(&name.as_str()) || rng.chance(60)) {
                        out.insert(name.clone(), generate(rng, root, property, depth - 1));
                    }
                }
            }
            if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object())
                && depth > 0
            {
                for _ in 0..rng.below(3) {
                    let key = match schema
                        .get("propertyNames")
                        .and_then(|p| p.get("pattern"))
                        .and_then(Value::as_str)
                    {
                        Some(pattern) if pattern.contains("0-9") => {
                            format!("{}", rng.below(1000))
                        }
                        Some(pattern) if pattern.contains("true") => "true".to_owned(),
                        _ => string(rng),
                    };
                    out.insert(key, generate(rng, root, values, depth - 1));
                }
            }
            Value::Object(out)
        }
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..if depth > 0 { rng.below(4) } else { 0 })
                    .map(|_| generate(rng, root, &items, depth - 1))
                    .collect(),
            )
        }
        "string" => {
            let pattern = schema.get("pattern").and_then(Value::as_str).unwrap_or("");
            let format = schema.get("format").and_then(Value::as_str).unwrap_or("");
            if pattern.contains("0-9") {
                Value::String(format!("{}", rng.next() as i64 / (1 << rng.below(60))))
            } else if format == "date-time" {
                Value::String("2024-05-01T12:30:00Z".to_owned())
            } else if format == "byte" || schema.get("contentEncoding").is_some() {
                Value::String("AAE=".to_owned())
            } else {
                Value::String(string(rng))
            }
        }
        "integer" => json!(rng.below(1000) as i64 - 500),
        "number" => json!(rng.below(1000) as f64 / 8.0),
        "boolean" => Value::Bool(rng.chance(50)),
        "null" => Value::Null,
        _ => arbitrary(rng, 2),
    }
}

/// One mutation somewhere in `value`.
fn mutate(rng: &mut Rng, value: &mut Value) {
    // Choose a random node (as a JSON pointer), then change it.
    let mut pointer = String::new();
    let mut current: &Value = value;
    while rng.chance(60) {
        let next = match current {
            Value::Object(map) if !map.is_empty() => {
                let (key, next) = map.iter().nth(rng.below(map.len())).expect("in range");
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                next
            }
            Value::Array(items) if !items.is_empty() => {
                let index = rng.below(items.len());
                pointer.push_str(&format!("/{index}"));
                &items[index]
            }
            _ => break,
        };
        current = next;
    }
    let Some(node) = value.pointer_mut(&pointer) else {
        return;
    };
    match rng.below(12) {
        0 => *node = arbitrary(rng, 3),
        1 => *node = number(rng),
        2 => *node = Value::String(string(rng)),
        3 => *node = Value::Null,
        4 => *node = Value::String(node.to_string()),
        5 => *node = Value::Array(vec![node.take()]),
        6 => {
            if let Value::Object(map) = node {
                let key = map.keys().nth(rng.below(map.len())).cloned();
                if let Some(key) = key {
                    map.remove(&key);
                }
            }
        }
        7 => {
            if let Value::Object(map) = node {
                map.insert(string(rng), arbitrary(rng, 2));
            }
        }
        8 => {
            let mut deep = node.take();
            for _ in 0..(20 + rng.below(80)) {
                deep = json!({"children": [deep]});
            }
            *node = deep;
        }
        9 => *node = Value::String("x".repeat(1 << (10 + rng.below(8)))),
        10 => {
            if let Value::Array(items) = node {
                items.push(Value::Null);
            }
        }
        _ => *node = Value::Bool(rng.chance(50)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_tool_arguments() {
    let executions: usize = test_kit::env_or("FUZZ_RUNTIME_EXECUTIONS", 1_500);
    let seed: u64 = test_kit::env_or("FUZZ_SEED", 1);
    let bound = Duration::from_secs(10);

    let backend = e2e::start_backend().await.expect("backend");
    let channel = e2e::channel(&backend).await.expect("channel");
    let mut builder = tonic_mcp::McpServer::builder("fuzz", "0");
    for set in e2e::tool_sets(channel).expect("tool sets") {
        // Calls the fuzzer makes valid (WellKnownService_Sleep with a long duration) end at
        // this deadline rather than at the time bound.
        builder = builder
            .tool_set(set.with_timeout(Duration::from_millis(300)))
            .expect("register");
    }
    let server = builder.build();
    let client = test_kit::connect_io(server).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.len() >= 20, "{} tools", tools.len());

    let mut rng = Rng(seed);
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut findings = Vec::new();
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for execution in 0..executions {
        let tool = &tools[execution % tools.len()];
        let schema = Value::Object((*tool.input_schema).clone());
        let (kind, arguments) = match rng.below(10) {
            0 | 1 => ("arbitrary", arbitrary(&mut rng, 4)),
            2..=4 => ("generated", generate(&mut rng, &schema, &schema, 8)),
            _ => {
                let mut value = generate(&mut rng, &schema, &schema, 8);
                for _ in 0..=rng.below(3) {
                    mutate(&mut rng, &mut value);
                }
                ("mutated", value)
            }
        };
        let call_started = Instant::now();
        let answer = tokio::time::timeout(
            bound,
            scenario::call(&client, &tool.name, arguments.clone()),
        )
        .await;
        slowest = slowest.max(call_started.elapsed());
        let shown = {
            let text = arguments.to_string();
            if text.len() > 300 {
                format!("{}…", &text[..text.floor_char_boundary(300)])
            } else {
                text
            }
        };
        match answer {
            Err(_) => findings.push(format!(
                "#{execution} {} ({kind}): no answer within {bound:?}: {shown}",
                tool.name
            )),
            Ok(Err(error)) => findings.push(format!(
                "#{execution} {} ({kind}): JSON-RPC error {error}: {shown}",
                tool.name
            )),
            Ok(Ok(result)) => {
                let key = match (kind, result.is_error == Some(true)) {
                    ("arbitrary", true) => "arbitrary: isError",
                    ("arbitrary", false) => "arbitrary: ok",
                    ("generated", true) => "generated: isError",
                    ("generated", false) => "generated: ok",
                    (_, true) => "mutated: isError",
                    (_, false) => "mutated: ok",
                };
                *outcomes.entry(key).or_default() += 1;
                if result.is_error == Some(true) && scenario::text(&result).is_empty() {
                    findings.push(format!("#{execution} {}: an empty error", tool.name));
                }
            }
        }
        if findings.len() >= 10 {
            break;
        }
    }
    // The server is still answering.
    scenario::ok(&client, "ScalarService_Echo", json!({"f_int32": 1})).await;
    eprintln!(
        "runtime fuzz: seed {seed}, {executions} executions over {} tools in {:.1?} (slowest {slowest:.1?}); outcomes {outcomes:?}; {} findings",
        tools.len(),
        started.elapsed(),
        findings.len()
    );
    assert!(findings.is_empty(), "findings:\n{}", findings.join("\n"));
    client.cancel().await.expect("close");
}
