//! A deterministic fuzzer for the plugin, in stable Rust: real `CodeGeneratorRequest`s (protoc
//! over `testdata/`), mutated through reflection (descriptor fields keep their unknown
//! extension bytes) and sent to `protoc_gen_rust_mcp::execute`. Mutations: dangling type
//! names, types of the wrong kind, import cycles, huge and odd names, missing files, options of
//! the wrong wire type, invalid numbers, labels and types.
//!
//! Invariants for every input: no panic, an answer within a time bound, and an error (in
//! `CodeGeneratorResponse.error`) names a proto element of the request.
//!
//! CI runs `FUZZ_PLUGIN_EXECUTIONS` (default 400) inputs from `FUZZ_SEED` (default 1); a
//! longer run is `FUZZ_PLUGIN_EXECUTIONS=20000 cargo test -p protoc-gen-rust-mcp --test
//! fuzz_plugin --release`.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, Value};
use test_kit::Rng;

#[derive(Clone, PartialEq, prost::Message)]
struct RawSet {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file: Vec<Vec<u8>>,
}

const ODD_NAMES: &[&str] = &[
    "",
    "1abc",
    "a-b",
    "a.b",
    "é",
    "🦀",
    "type",
    "self",
    "Self",
    "super",
    "_",
    "__",
    "r#type",
    "Foo",
    "foo_bar",
    "FooBar",
    "HTTPThing",
    "a b",
    "\u{0}",
];

/// The rust_mcp option extension number, on methods, services and fields.
const OPTION: u64 = 51790;

fn varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Options bytes holding the rust_mcp extension with a wrong wire type or a wrong payload.
fn wrong_options(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    match rng.below(4) {
        // A varint where a message belongs.
        0 => {
            varint(OPTION << 3, &mut out);
            varint(rng.next(), &mut out);
        }
        // A message whose fields have the wrong wire types (`name` as a varint, `timeout`
        // as a fixed64, `skip` as a string).
        1 => {
            let inner = [0x08, 0x05, 0x49, 1, 2, 3, 4, 5, 6, 7, 8, 0x22, 0x01, b'x'];
            varint((OPTION << 3) | 2, &mut out);
            varint(inner.len() as u64, &mut out);
            out.extend_from_slice(&inner);
        }
        // Random bytes as the message.
        2 => {
            let inner: Vec<u8> = (0..rng.below(24)).map(|_| rng.next() as u8).collect();
            varint((OPTION << 3) | 2, &mut out);
            varint(inner.len() as u64, &mut out);
            out.extend_from_slice(&inner);
        }
        // A length that runs past the end.
        _ => {
            varint((OPTION << 3) | 2, &mut out);
            varint(1000, &mut out);
            out.push(1);
        }
    }
    out
}

struct Corpus {
    files: Vec<DynamicMessage>,
    names: Vec<String>,
    options: BTreeMap<&'static str, MessageDescriptor>,
}

fn corpus() -> Corpus {
    let set_bytes = common::descriptor_set(&common::testdata_files());
    let pool = DescriptorPool::decode(set_bytes.as_slice()).expect("descriptor pool");
    let file_desc = pool
        .get_message_by_name("google.protobuf.FileDescriptorProto")
        .expect("descriptor.proto is imported by the options");
    let set = RawSet::decode(set_bytes.as_slice()).expect("set");
    let files: Vec<DynamicMessage> = set
        .file
        .iter()
        .map(|bytes| DynamicMessage::decode(file_desc.clone(), bytes.as_slice()).expect("file"))
        .collect();
    let names = files.iter().map(|f| string(f, "name")).collect();
    let options = ["MethodOptions", "ServiceOptions", "FieldOptions"]
        .into_iter()
        .map(|name| {
            (
                name,
                pool.get_message_by_name(&format!("google.protobuf.{name}"))
                    .expect("options"),
            )
        })
        .collect();
    Corpus {
        files,
        names,
        options,
    }
}

fn string(message: &DynamicMessage, field: &str) -> String {
    message
        .get_field_by_name(field)
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn list_len(message: &DynamicMessage, field: &str) -> usize {
    message
        .get_field_by_name(field)
        .and_then(|v| v.as_list().map(<[Value]>::len))
        .unwrap_or(0)
}

/// A mutable element of `message.field[index]`.
fn item<'a>(
    message: &'a mut DynamicMessage,
    field: &str,
    index: usize,
) -> Option<&'a mut DynamicMessage> {
    match message.get_field_by_name_mut(field)? {
        Value::List(items) => match items.get_mut(index)? {
            Value::Message(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// A random element of `message.field`: the index drawn from `rng` (one draw, even when the
/// list is empty and there is nothing to pick).
fn pick<'a>(
    message: &'a mut DynamicMessage,
    field: &str,
    rng: &mut Rng,
) -> Option<&'a mut DynamicMessage> {
    let len = list_len(message, field);
    item(message, field, rng.below(len))
}

fn set_string(message: &mut DynamicMessage, field: &str, value: String) {
    let _ = message.try_set_field_by_name(field, Value::String(value));
}

/// One mutation of the request (`files`, the file to generate is `files[target]`).
fn mutate(
    rng: &mut Rng,
    corpus: &Corpus,
    files: &mut Vec<DynamicMessage>,
    target: usize,
    to_generate: &mut Vec<String>,
) -> &'static str {
    let odd = |rng: &mut Rng| -> String {
        match rng.below(4) {
            0 => "x".repeat(1 << (8 + rng.below(10))),
            _ => ODD_NAMES[rng.below(ODD_NAMES.len())].to_owned(),
        }
    };
    let file = &mut files[target];
    let messages = list_len(file, "message_type");
    let services = list_len(file, "service");
    match rng.below(12) {
        0 | 1 => {
            // A field's type name that resolves to nothing, or to an enum / a message of the
            // wrong kind, or to the message itself (a cycle).
            let index = rng.below(messages);
            let own = format!(
                ".{}.{}",
                string(file, "package"),
                file.get_field_by_name("message_type")
                    .and_then(|l| l.as_list().and_then(|l| l.get(index).cloned()))
                    .and_then(|m| m.as_message().map(|m| string(m, "name")))
                    .unwrap_or_default()
            );
            let Some(message) = item(file, "message_type", index) else {
                return "none";
            };
            let Some(field) = pick(message, "field", rng) else {
                return "none";
            };
            let name = match rng.below(4) {
                0 => ".no.such.Type".to_owned(),
                1 => own,
                2 => ".google.protobuf.FieldDescriptorProto.Type".to_owned(),
                _ => odd(rng),
            };
            let _ = field.try_set_field_by_name("type", Value::EnumNumber(11));
            set_string(field, "type_name", name);
            "dangling or cyclic type name"
        }
        2 => {
            // A method whose input or output is not a message.
            let Some(service) = item(file, "service", rng.below(services)) else {
                return "none";
            };
            let Some(method) = pick(service, "method", rng) else {
                return "none";
            };
            let which = if rng.below(2) == 0 {
                "input_type"
            } else {
                "output_type"
            };
            let name = match rng.below(3) {
                0 => ".no.such.Request".to_owned(),
                1 => ".google.protobuf.FieldDescriptorProto.Type".to_owned(),
                _ => odd(rng),
            };
            set_string(method, which, name);
            "method type not a message"
        }
        3 | 4 => {
            // Huge and odd names on messages, fields, services, methods, packages.
            let name = odd(rng);
            match rng.below(5) {
                0 => {
                    if let Some(message) = item(file, "message_type", rng.below(messages)) {
                        set_string(message, "name", name);
                    }
                }
                1 => {
                    if let Some(message) = item(file, "message_type", rng.below(messages))
                        && let Some(field) = pick(message, "field", rng)
                    {
                        let key = if rng.below(2) == 0 {
                            "name"
                        } else {
                            "json_name"
                        };
                        set_string(field, key, name);
                    }
                }
                2 => {
                    if let Some(service) = item(file, "service", rng.below(services)) {
                        set_string(service, "name", name);
                    }
                }
                3 => {
                    if let Some(service) = item(file, "service", rng.below(services))
                        && let Some(method) = pick(service, "method", rng)
                    {
                        set_string(method, "name", name);
                    }
                }
                _ => set_string(file, "package", name),
            }
            "huge or odd name"
        }
        5 => {
            // A dependency left out of the request.
            let deps: Vec<String> = file
                .get_field_by_name("dependency")
                .and_then(|l| {
                    l.as_list().map(|l| {
                        l.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                })
                .unwrap_or_default();
            if deps.is_empty() {
                return "none";
            }
            let dep = deps[rng.below(deps.len())].clone();
            if dep == string(file, "name") {
                return "none";
            }
            files.retain(|f| string(f, "name") != dep);
            "missing dependency file"
        }
        6 => {
            // A file to generate that is not in the request, or an import cycle.
            if rng.below(2) == 0 {
                to_generate.push(format!("missing/{}.proto", rng.below(100)));
                "missing file to generate"
            } else {
                let own = string(file, "name");
                if let Some(Value::List(deps)) = file.get_field_by_name_mut("dependency") {
                    deps.push(Value::String(own));
                }
                "import cycle"
            }
        }
        7 | 8 => {
            // rust_mcp options of the wrong type on a method, a service or a field.
            let bytes = wrong_options(rng);
            let (kind, holder) = match rng.below(3) {
                0 => {
                    let Some(service) = item(file, "service", rng.below(services)) else {
                        return "none";
                    };
                    ("MethodOptions", pick(service, "method", rng))
                }
                1 => ("ServiceOptions", item(file, "service", rng.below(services))),
                _ => {
                    let Some(message) = item(file, "message_type", rng.below(messages)) else {
                        return "none";
                    };
                    ("FieldOptions", pick(message, "field", rng))
                }
            };
            let Some(holder) = holder else {
                return "none";
            };
            let Ok(options) =
                DynamicMessage::decode(corpus.options[kind].clone(), bytes.as_slice())
            else {
                // Bytes that do not even frame (a length past the end): splice them in raw.
                return "none";
            };
            let _ = holder.try_set_field_by_name("options", Value::Message(options));
            "options of the wrong type"
        }
        9 => {
            // Field numbers, labels and types out of range.
            let Some(message) = item(file, "message_type", rng.below(messages)) else {
                return "none";
            };
            let Some(field) = pick(message, "field", rng) else {
                return "none";
            };
            match rng.below(3) {
                0 => {
                    let number = [0, -1, 19000, 536_870_912, 1][rng.below(5)];
                    let _ = field.try_set_field_by_name("number", Value::I32(number));
                }
                1 => {
                    let _ = field.try_set_field_by_name("label", Value::EnumNumber(99));
                }
                _ => {
                    let _ = field.try_set_field_by_name("type", Value::EnumNumber(99));
                }
            }
            "invalid number, label or type"
        }
        10 => {
            // A message or a service given twice.
            let (field, count) = if rng.below(2) == 0 {
                ("message_type", messages)
            } else {
                ("service", services)
            };
            if let Some(Value::List(items)) = file.get_field_by_name_mut(field)
                && count > 0
            {
                let copy = items[rng.below(count)].clone();
                items.push(copy);
            }
            "duplicate element"
        }
        _ => {
            // Syntax and edition oddities.
            let syntax = ["proto2", "proto4", "editions", ""][rng.below(4)];
            set_string(file, "syntax", syntax.to_owned());
            "odd syntax"
        }
    }
}

/// The files protoc would send to generate `target`: it and its imports, imports first.
fn closure(corpus: &Corpus, target: &str) -> Vec<DynamicMessage> {
    let mut wanted = vec![target.to_owned()];
    let mut index = 0;
    while index < wanted.len() {
        if let Some(file) = corpus.names.iter().position(|n| *n == wanted[index]) {
            for dep in corpus.files[file]
                .get_field_by_name("dependency")
                .and_then(|l| {
                    l.as_list().map(|l| {
                        l.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect::<Vec<_>>()
                    })
                })
                .unwrap_or_default()
            {
                if !wanted.contains(&dep) {
                    wanted.push(dep);
                }
            }
        }
        index += 1;
    }
    corpus
        .files
        .iter()
        .zip(&corpus.names)
        .filter(|(_, name)| wanted.contains(name))
        .map(|(file, _)| file.clone())
        .collect()
}

/// Every name in the request's files: file names, packages, fully qualified and short names
/// of messages, fields, enums, services and methods.
fn names_of(files: &[DynamicMessage]) -> Vec<String> {
    fn walk(message: &DynamicMessage, prefix: &str, out: &mut Vec<String>) {
        for (list, nested) in [
            ("message_type", true),
            ("nested_type", true),
            ("enum_type", false),
            ("service", true),
            ("field", false),
            ("method", false),
            ("value", false),
            ("oneof_decl", false),
        ] {
            let Some(Value::List(items)) = message.get_field_by_name(list).as_deref().cloned()
            else {
                continue;
            };
            for item in items {
                let Some(inner) = item.as_message() else {
                    continue;
                };
                let name = string(inner, "name");
                if name.is_empty() {
                    continue;
                }
                let full = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                out.push(name);
                out.push(full.clone());
                if nested {
                    walk(inner, &full, out);
                }
                for key in ["type_name", "input_type", "output_type", "json_name"] {
                    let value = string(inner, key);
                    if !value.is_empty() {
                        out.push(value.trim_start_matches('.').to_owned());
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for file in files {
        out.push(string(file, "name"));
        let package = string(file, "package");
        if !package.is_empty() {
            out.push(package.clone());
        }
        walk(file, &package, &mut out);
    }
    out.retain(|name| name.len() >= 2);
    out
}

#[test]
fn fuzz_code_generator_requests() {
    let executions: usize = test_kit::env_or("FUZZ_PLUGIN_EXECUTIONS", 400);
    let seed: u64 = test_kit::env_or("FUZZ_SEED", 1);
    let bound = Duration::from_secs(30);
    let corpus = corpus();
    let targets = common::testdata_files();

    let mut rng = Rng(seed);
    let mut findings = Vec::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut mutations: BTreeMap<&str, usize> = BTreeMap::new();
    // The mutations of the inputs on which prost-reflect panicked (caught by the plugin).
    let mut caught: BTreeMap<&str, usize> = BTreeMap::new();
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for execution in 0..executions {
        let target_name = &targets[execution % targets.len()];
        let mut files = closure(&corpus, target_name);
        let mut to_generate = vec![target_name.clone()];
        let mut applied = Vec::new();
        for _ in 0..=rng.below(3) {
            let Some(target) = files.iter().position(|f| string(f, "name") == *target_name) else {
                panic!("{target_name} is not in the request");
            };
            let what = mutate(&mut rng, &corpus, &mut files, target, &mut to_generate);
            *mutations.entry(what).or_default() += 1;
            applied.push(what);
        }
        let mut names = names_of(&files);
        names.extend(to_generate.iter().cloned());
        let request = protoc_gen_rust_mcp::model::RawRequest {
            file_to_generate: to_generate,
            parameter: None,
            proto_file: files.iter().map(DynamicMessage::encode_to_vec).collect(),
        }
        .encode_to_vec();

        let (sender, receiver) = std::sync::mpsc::channel();
        let call_started = Instant::now();
        let worker = std::thread::spawn(move || {
            let result = std::panic::catch_unwind(|| protoc_gen_rust_mcp::execute(&request));
            let _ = sender.send(result);
        });
        let label = format!("#{execution} {target_name} {applied:?}");
        match receiver.recv_timeout(bound) {
            Err(_) => {
                findings.push(format!("{label}: no answer within {bound:?}"));
                break;
            }
            Ok(Err(_)) => findings.push(format!("{label}: panicked")),
            Ok(Ok(Err(error))) => {
                findings.push(format!("{label}: the request did not decode: {error}"))
            }
            Ok(Ok(Ok(response))) => match response.error {
                None => *outcomes.entry("generated".to_owned()).or_default() += 1,
                Some(error) => {
                    let key = if error.contains("prost-reflect failed") {
                        for what in &applied {
                            *caught.entry(*what).or_default() += 1;
                        }
                        "error (prost-reflect panic caught)"
                    } else {
                        "error"
                    };
                    *outcomes.entry(key.to_owned()).or_default() += 1;
                    if !names.iter().any(|name| error.contains(name.as_str())) {
                        findings.push(format!(
                            "{label}: the error names no proto element: {error}"
                        ));
                    }
                }
            },
        }
        let _ = worker.join();
        slowest = slowest.max(call_started.elapsed());
        if findings.len() >= 10 {
            break;
        }
    }
    eprintln!(
        "plugin fuzz: seed {seed}, {executions} executions in {:.1?} (slowest {slowest:.1?}); outcomes {outcomes:?}; mutations {mutations:?}; prost-reflect panics caught with {caught:?}; {} findings",
        started.elapsed(),
        findings.len()
    );
    assert!(findings.is_empty(), "findings:\n{}", findings.join("\n"));
}
