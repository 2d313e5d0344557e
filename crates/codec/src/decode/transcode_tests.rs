//! The single-pass response decoder against the old path
//! (`DynamicMessage::decode`, `clear_omitted`, protojson, canonical reshaping): for every
//! message type of `testdata/`, random messages, their merges (two encodings concatenated),
//! truncated and mutated bytes, with every option combination, as a root and as a stream
//! element, and with an omitted field. Where the old path answers, the new one must answer
//! the same text byte for byte (JSON-equal where a map has two or more keys, whose order the
//! old path does not keep from one call to the next), or `None` for a documented reason only;
//! it must never answer where the old path fails, nor differ, nor panic.

mod random_message;
mod rewrite;

use std::borrow::Cow;
use std::collections::BTreeMap;

use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use serde_json::Value;
use test_kit::testdata;

use super::Plan;
use crate::to_json::{self, ToJsonOptions};
use random_message::{ANY, UNORDERED_MAP, old_path_reason, random_message};
use rewrite::{put_varint, unpacked, with_unknown_fields};

/// A response type with its options, made once: [`Transcoder::old_path`] runs the old path
/// (decode, `clear_omitted`, protojson, canonical reshaping), [`Transcoder::fast_path`] the
/// single-pass decoder and [`Transcoder::text_path`] its text writer.
#[derive(Debug)]
struct Transcoder {
    desc: MessageDescriptor,
    omitted: Vec<Cow<'static, str>>,
    plan: Plan,
    options: ToJsonOptions,
    root: bool,
}

impl Transcoder {
    /// For responses of `desc`, written with these options, as a tool root or a stream
    /// element, with the fields named (full names) in `omitted` cleared.
    fn build(
        desc: &MessageDescriptor,
        json_names: bool,
        emit_defaults: bool,
        root: bool,
        omitted: &[&str],
    ) -> Self {
        let omitted: Vec<Cow<'static, str>> = omitted
            .iter()
            .map(|s| Cow::Owned((*s).to_owned()))
            .collect();
        Self {
            plan: Plan::new(desc, &omitted),
            desc: desc.clone(),
            omitted,
            options: ToJsonOptions {
                json_names,
                emit_defaults,
            },
            root,
        }
    }

    /// The old path's value, or its error text.
    fn old_path(&self, bytes: &[u8]) -> Result<Value, String> {
        let mut message =
            DynamicMessage::decode(self.desc.clone(), bytes).map_err(|e| format!("decode: {e}"))?;
        if !self.omitted.is_empty() {
            to_json::clear_omitted(&mut message, &self.omitted);
        }
        if self.root {
            to_json::root_to_json(&message, self.options)
        } else {
            to_json::message_to_json(&message, self.options)
        }
    }

    /// The single-pass decoder's value, or `None` when it leaves the bytes to the old path.
    fn fast_path(&self, bytes: &[u8]) -> Option<Value> {
        if self.root {
            super::root_to_json(&self.plan, bytes, self.options)
        } else {
            super::message_to_json(&self.plan, bytes, self.options)
        }
    }

    /// The text writer's answer for a tool root (`root_to_text`); `None` for a stream
    /// element, which is never written as text.
    fn text_path(&self, bytes: &[u8]) -> Option<String> {
        if self.root {
            super::root_to_text(&self.plan, bytes, self.options)
        } else {
            None
        }
    }
}

/// Message types the new decoder leaves to the old path whatever their content. The
/// content-driven reason (`Any`) is found by [`old_path_reason`], which also finds the maps
/// whose answers are compared as JSON.
const UNSUPPORTED_TYPES: &[&str] = &[];

#[derive(Default, Debug)]
struct Tally {
    cases: u64,
    same: u64,
    /// JSON-equal, a map's keys in another order.
    same_unordered: u64,
    /// Old path answered, new left it, by reason.
    left: BTreeMap<&'static str, u64>,
    old_failed: u64,
    mutated: u64,
    mutated_same: u64,
    mutated_left: u64,
    /// Roots the text writer wrote, each what serde_json writes of the fast path's value.
    text_same: u64,
    /// Roots the fast path answered and the text writer did not (it answers wherever the fast
    /// path does, well-known roots included).
    text_left: u64,
    failures: Vec<String>,
}

impl Tally {
    fn fail(&mut self, text: String) {
        if self.failures.len() < 20 {
            self.failures.push(text);
        }
    }
}

/// The eight transcoders of a type: json_names × emit_defaults × root.
fn transcoders(desc: &MessageDescriptor, omitted: &[&str]) -> Vec<(String, Transcoder)> {
    let mut out = Vec::with_capacity(8);
    for json_names in [false, true] {
        for emit_defaults in [false, true] {
            for root in [false, true] {
                let label = format!(
                    "json_names={json_names} emit_defaults={emit_defaults} root={root} omitted={omitted:?}"
                );
                out.push((
                    label,
                    Transcoder::build(desc, json_names, emit_defaults, root, omitted),
                ));
            }
        }
    }
    out
}

/// A valid encoding of `message`: the new path must equal the old one, or leave it for
/// `reason`.
fn check_valid(
    tally: &mut Tally,
    name: &str,
    label: &str,
    transcoder: &Transcoder,
    bytes: &[u8],
    reason: Option<&'static str>,
) {
    tally.cases += 1;
    let old = transcoder.old_path(bytes);
    let new = transcoder.fast_path(bytes);
    check_text(tally, name, label, transcoder, bytes, new.as_ref());
    match (old, new) {
        (Ok(old), Some(new)) if text(&old) == text(&new) => tally.same += 1,
        // JSON-equal, the map's keys in another order (see `UNORDERED_MAP`).
        (Ok(old), Some(new)) if reason == Some(UNORDERED_MAP) && old == new => {
            tally.same_unordered += 1;
        }
        (Ok(old), Some(new)) => tally.fail(format!(
            "{name} {label} bytes={}\n  old: {old}\n  new: {new}",
            short(bytes)
        )),
        (Ok(old), None) => {
            let why = if UNSUPPORTED_TYPES.contains(&name) {
                Some("unsupported type")
            } else {
                reason.filter(|reason| *reason == ANY)
            };
            match why {
                Some(why) => *tally.left.entry(why).or_default() += 1,
                None => tally.fail(format!(
                    "{name} {label}: new path gave None without a documented reason\n  bytes={}\n  old: {old}",
                    short(bytes)
                )),
            }
        }
        (Err(_), None) => tally.old_failed += 1,
        (Err(error), Some(new)) => tally.fail(format!(
            "{name} {label}: old path failed ({error}) but new answered {new}\n  bytes={}",
            short(bytes)
        )),
    }
}

/// The text writer, where it answers, writes byte for byte what serde_json writes of the
/// fast path's value, and never answers where the fast path does not.
fn check_text(
    tally: &mut Tally,
    name: &str,
    label: &str,
    transcoder: &Transcoder,
    bytes: &[u8],
    fast: Option<&serde_json::Value>,
) {
    match (fast, transcoder.text_path(bytes)) {
        (Some(value), Some(written)) if written == text(value) => tally.text_same += 1,
        (Some(value), Some(written)) => tally.fail(format!(
            "{name} {label} text bytes={}\n  value: {value}\n  text:  {written}",
            short(bytes)
        )),
        (None, Some(written)) => tally.fail(format!(
            "{name} {label}: text written where the fast path declines: {written}\n  bytes={}",
            short(bytes)
        )),
        (Some(_), None) if label.contains("root=true") => tally.text_left += 1,
        _ => {}
    }
}

/// A value's JSON text: byte for byte, key order included (`Value`'s `==` ignores it).
fn text(value: &serde_json::Value) -> String {
    value.to_string()
}

/// Damaged bytes: the new path may leave them, never answer differently.
fn check_mutated(
    tally: &mut Tally,
    name: &str,
    label: &str,
    transcoder: &Transcoder,
    bytes: &[u8],
) {
    tally.mutated += 1;
    let fast = transcoder.fast_path(bytes);
    check_text(tally, name, label, transcoder, bytes, fast.as_ref());
    let Some(new) = fast else {
        tally.mutated_left += 1;
        return;
    };
    match transcoder.old_path(bytes) {
        // JSON-equal: a map's keys may come in another order (see `UNORDERED_MAP`).
        Ok(old) if old == new => tally.mutated_same += 1,
        Ok(old) => tally.fail(format!(
            "{name} {label} mutated bytes={}\n  old: {old}\n  new: {new}",
            short(bytes)
        )),
        Err(error) => tally.fail(format!(
            "{name} {label}: mutated bytes, old path failed ({error}) but new answered {new}\n  bytes={}",
            short(bytes)
        )),
    }
}

/// The bytes in hex, cut after 96.
fn short(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().take(96).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > 96 {
        format!("{hex}… ({} bytes)", bytes.len())
    } else {
        hex
    }
}

fn mutate(bytes: &[u8], rng: &mut test_kit::Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    match rng.below(4) {
        0 => out.truncate(rng.below(out.len() + 1)),
        1 if !out.is_empty() => {
            let at = rng.below(out.len());
            if let Some(byte) = out.get_mut(at) {
                *byte ^= 1 << rng.below(8);
            }
        }
        2 => {
            let at = rng.below(out.len() + 1);
            out.insert(at, rng.next() as u8);
        }
        _ if !out.is_empty() => {
            out.remove(rng.below(out.len()));
        }
        _ => {}
    }
    out
}

/// A field full name somewhere under `desc` to omit (its own fields or a nested message's).
fn some_field(desc: &MessageDescriptor, rng: &mut test_kit::Rng) -> Option<String> {
    let fields: Vec<_> = desc.fields().collect();
    let field = rng.pick(&fields).clone();
    if let prost_reflect::Kind::Message(inner) = field.kind()
        && !inner.full_name().starts_with("google.protobuf.")
        && rng.chance(40)
        && inner.fields().len() > 0
    {
        return some_field(&inner, rng);
    }
    Some(field.full_name().to_owned())
}

fn run(pool: &DescriptorPool, types: &[MessageDescriptor], seeds: u64) -> Tally {
    let mut tally = Tally::default();
    for desc in types {
        let name = desc.full_name();
        let plain = transcoders(desc, &[]);
        let mut rng = test_kit::Rng(0x5eed ^ name.len() as u64);
        let omitted_name = if desc.fields().len() > 0 {
            some_field(desc, &mut rng)
        } else {
            None
        };
        let omitted: Vec<&str> = omitted_name.as_deref().into_iter().collect();
        let with_omitted = transcoders(desc, &omitted);
        for seed in 0..seeds {
            let mut rng = test_kit::Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xabcd);
            let first = random_message(desc, &mut rng);
            let second = random_message(desc, &mut rng);
            let bytes = first.encode_to_vec();
            // Two encodings concatenated: the merge (last scalar wins, messages merge, lists
            // append, a later oneof member clears an earlier one).
            let mut merged_bytes = bytes.clone();
            merged_bytes.extend(second.encode_to_vec());
            let merged = DynamicMessage::decode(desc.clone(), merged_bytes.as_slice())
                .expect("a concatenation decodes");
            let reason = old_path_reason(&first);
            let merged_reason = old_path_reason(&merged);
            for (label, transcoder) in &plain {
                check_valid(&mut tally, name, label, transcoder, &bytes, reason);
                check_valid(
                    &mut tally,
                    name,
                    label,
                    transcoder,
                    &merged_bytes,
                    merged_reason,
                );
                let damaged = mutate(&merged_bytes, &mut rng);
                check_mutated(&mut tally, name, label, transcoder, &damaged);
            }
            if !omitted.is_empty() {
                let (label, transcoder) = &with_omitted[(seed % 8) as usize];
                check_valid(&mut tally, name, label, transcoder, &bytes, reason);
            }
        }
    }
    let _ = pool;
    tally
}

fn message_types(pool: &DescriptorPool) -> Vec<MessageDescriptor> {
    pool.all_messages().filter(|m| !m.is_map_entry()).collect()
}

fn report(tally: &Tally) {
    eprintln!(
        "transcode: {} valid cases, {} identical, {} JSON-equal (maps), {} left to the old path {:?}, {} where the old path failed; {} mutated, {} identical or JSON-equal, {} left; text written of {} roots, left for {}",
        tally.cases,
        tally.same,
        tally.same_unordered,
        tally.left.values().sum::<u64>(),
        tally.left,
        tally.old_failed,
        tally.mutated,
        tally.mutated_same,
        tally.mutated_left,
        tally.text_same,
        tally.text_left,
    );
    assert!(
        tally.failures.is_empty(),
        "{} failure(s), first ones:\n{}",
        tally.failures.len(),
        tally.failures.join("\n")
    );
}

#[test]
fn new_decoder_matches_old_path_on_testdata() {
    let pool = DescriptorPool::decode(testdata::descriptor_set()).expect("testdata pool");
    let types = message_types(&pool);
    assert!(types.len() > 20, "{} types", types.len());
    let seeds = test_kit::env_or("TRANSCODE_CASES", 200u64);
    let tally = run(&pool, &types, seeds);
    report(&tally);
    // The fast path must really answer, and the text writer for most roots.
    assert!(tally.same * 2 > tally.cases, "{tally:?}");
    assert!(tally.text_same > tally.text_left * 4, "{tally:?}");
}

/// proto2 and proto3 features testdata does not have (`crate::synthetic_tests`): custom
/// defaults, required fields, unpacked lists, `NullValue` fields, a JSON name that is a
/// sibling's proto name.
#[test]
fn new_decoder_matches_old_path_on_synthetic_types() {
    let pool = crate::synthetic_tests::pool();
    let types: Vec<MessageDescriptor> = message_types(&pool)
        .into_iter()
        .filter(|desc| desc.package_name().starts_with("synthetic"))
        .collect();
    assert_eq!(types.len(), 2, "{types:?}");
    let tally = run(&pool, &types, test_kit::env_or("TRANSCODE_CASES", 200u64));
    report(&tally);
    assert!(tally.same * 2 > tally.cases, "{tally:?}");
}

/// Unpacked lists and unknown fields, which encodings by other implementations hold.
#[test]
fn new_decoder_matches_old_path_on_unpacked_lists_and_unknown_fields() {
    let pool = DescriptorPool::decode(testdata::descriptor_set()).expect("testdata pool");
    let seeds = test_kit::env_or("TRANSCODE_CASES", 200u64) / 4 + 1;
    let mut tally = Tally::default();
    let mut unpacked_differs = 0;
    for desc in message_types(&pool) {
        let name = desc.full_name();
        let plain = transcoders(&desc, &[]);
        for seed in 0..seeds {
            let mut rng = test_kit::Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 77);
            let message = random_message(&desc, &mut rng);
            let bytes = message.encode_to_vec();
            let reason = old_path_reason(&message);
            let unpacked = unpacked(&desc, &bytes).expect("a valid encoding parses");
            if unpacked != bytes {
                unpacked_differs += 1;
            }
            let unknown = with_unknown_fields(&desc, &bytes);
            for (label, transcoder) in &plain {
                check_valid(&mut tally, name, label, transcoder, &unpacked, reason);
                check_valid(&mut tally, name, label, transcoder, &unknown, reason);
            }
        }
    }
    eprintln!("{unpacked_differs} encodings with packed lists unpacked");
    assert!(unpacked_differs > 0);
    report(&tally);
}

/// `TRANSCODE_DESCRIPTORS=path/to/set.binpb cargo test -p tonic-mcp-codec --lib --
/// --ignored descriptor_set`: the same over another descriptor set, `TRANSCODE_TYPES`
/// types (2000) sampled evenly, `TRANSCODE_SEEDS` seeds each (5).
#[test]
#[ignore = "needs TRANSCODE_DESCRIPTORS"]
fn new_decoder_matches_old_path_on_descriptor_set() {
    let pool = testdata::pool_from_env();
    let all = message_types(&pool);
    let wanted = test_kit::env_or("TRANSCODE_TYPES", 2000usize).max(1);
    let step = all.len().div_ceil(wanted).max(1);
    let types: Vec<_> = all.iter().step_by(step).cloned().collect();
    eprintln!("{} of {} message types", types.len(), all.len());
    let tally = run(&pool, &types, test_kit::env_or("TRANSCODE_SEEDS", 5u64));
    report(&tally);
}

/// ns per response, old path vs new, over a populated `testdata.scalars.AllScalars`
/// (run with `--release --ignored timing`).
#[test]
#[ignore = "timing figures"]
fn timing() {
    let pool = DescriptorPool::decode(testdata::descriptor_set()).expect("testdata pool");
    let desc = pool
        .get_message_by_name("testdata.scalars.AllScalars")
        .expect("AllScalars");
    let mut message = DynamicMessage::new(desc.clone());
    let mut rng = test_kit::Rng(7);
    // Every field set, lists with a few items.
    while message.fields().count() < desc.fields().len() / 2 {
        message = random_message(&desc, &mut rng);
    }
    let bytes = message.encode_to_vec();
    let transcoder = Transcoder::build(&desc, false, false, true, &[]);
    assert_eq!(
        transcoder.old_path(&bytes).map(|v| v.to_string()).ok(),
        transcoder.fast_path(&bytes).map(|v| v.to_string())
    );
    let iterations = test_kit::env_or("TRANSCODE_ITERATIONS", 100_000u32);
    let start = std::time::Instant::now();
    for _ in 0..iterations {
        std::hint::black_box(transcoder.old_path(std::hint::black_box(&bytes)).ok());
    }
    let old = start.elapsed();
    let start = std::time::Instant::now();
    for _ in 0..iterations {
        std::hint::black_box(transcoder.fast_path(std::hint::black_box(&bytes)));
    }
    let new = start.elapsed();
    // The floor: building (cloning) and dropping the result itself.
    let value = transcoder.fast_path(&bytes).expect("answered");
    let start = std::time::Instant::now();
    for _ in 0..iterations {
        std::hint::black_box(std::hint::black_box(&value).clone());
    }
    let floor = start.elapsed();
    let per = |d: std::time::Duration| d.as_nanos() as f64 / f64::from(iterations);
    eprintln!(
        "AllScalars ({} bytes, {} fields set): old {:.0} ns/op, new {:.0} ns/op, clone of the result {:.0} ns/op",
        bytes.len(),
        message.fields().count(),
        per(old),
        per(new),
        per(floor),
    );
}

/// Hand-made wire data at the edges: each case either answers as the old path does, or is
/// left to it (and then the old path fails, or the case is a map with two keys).
#[test]
fn wire_edge_cases() {
    let pool = DescriptorPool::decode(testdata::descriptor_set()).expect("testdata pool");
    let scalars = pool
        .get_message_by_name("testdata.scalars.AllScalars")
        .expect("AllScalars");
    let maps = pool
        .get_message_by_name("testdata.maps.Maps")
        .expect("Maps");
    let tree = pool
        .get_message_by_name("testdata.recursion.TreeNode")
        .expect("TreeNode");
    // (type, bytes, expected: Some(true) same answer, Some(false) new leaves and old fails,
    // None new leaves and old answers)
    let ten_byte_max = [
        0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    ];
    let ten_byte_bad = [
        0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02,
    ];
    let cases: Vec<(&MessageDescriptor, Vec<u8>, Option<bool>)> = vec![
        (&scalars, ten_byte_max.to_vec(), Some(true)),
        (&scalars, ten_byte_bad.to_vec(), Some(false)),
        // Overlong zero, then the last of two values wins.
        (
            &scalars,
            vec![0x18, 0x80, 0x00, 0x18, 0x05, 0x18, 0x07],
            Some(true),
        ),
        // Field number 0.
        (&scalars, vec![0x00, 0x01], Some(false)),
        // Wire type 6, 7, and an end group.
        (&scalars, vec![0x1e, 0x01], Some(false)),
        (&scalars, vec![0x1f, 0x01], Some(false)),
        (&scalars, vec![0x1c], Some(false)),
        // A group of an unknown field: left to the old path.
        (&scalars, vec![0xfb, 0x0f, 0x08, 0x01, 0xfc, 0x0f], None),
        // Invalid UTF-8 in a string, in a repeated string.
        (&scalars, vec![0x72, 0x02, 0xc3, 0x28], Some(false)),
        (&scalars, vec![0xa2, 0x01, 0x01, 0xff], Some(false)),
        // A varint where a string belongs, a string where a varint belongs.
        (&scalars, vec![0x72, 0x01], Some(false)),
        (&scalars, vec![0x1a, 0x01, 0x01], Some(false)),
        // Packed list cut inside an element, packed fixed64 of 7 bytes.
        (&scalars, vec![0x82, 0x01, 0x01, 0x80], Some(false)),
        (
            &scalars,
            vec![0x9a, 0x01, 0x07, 0, 0, 0, 0, 0, 0, 0],
            Some(false),
        ),
        // Empty packed list: an empty list.
        (&scalars, vec![0x82, 0x01, 0x00], Some(true)),
        // Undefined enum numbers, negative in a packed list.
        (&scalars, vec![0xb8, 0x01, 0x63], Some(true)),
        (
            &scalars,
            vec![
                0xc2, 0x01, 0x0b, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            Some(true),
        ),
        // Length past the end.
        (&scalars, vec![0x72, 0x05, b'a'], Some(false)),
        // A map entry with its key twice, its value missing; the same key twice.
        (
            &maps,
            vec![0x0a, 0x06, 0x0a, 0x01, b'a', 0x0a, 0x01, b'b'],
            Some(true),
        ),
        (
            &maps,
            vec![
                0x0a, 0x03, 0x0a, 0x01, b'a', 0x0a, 0x05, 0x0a, 0x01, b'a', 0x12, 0x00,
            ],
            Some(true),
        ),
        // A map value message in two parts: merged.
        (
            &maps,
            vec![
                0x6a, 0x17, 0x0a, 0x01, b'p', 0x12, 0x09, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x12,
                0x09, 0x11, 0, 0, 0, 0, 0, 0, 0x00, 0x40,
            ],
            Some(true),
        ),
    ];
    let mut failures = Vec::new();
    for (index, (desc, bytes, expected)) in cases.iter().enumerate() {
        for (label, transcoder) in transcoders(desc, &[]) {
            let old = transcoder.old_path(bytes).map(|v| v.to_string());
            let new = transcoder.fast_path(bytes).map(|v| v.to_string());
            let ok = match expected {
                Some(true) => old.as_ref().ok() == new.as_ref(),
                Some(false) => old.is_err() && new.is_none(),
                None => old.is_ok() && new.is_none(),
            };
            if !ok {
                failures.push(format!("case {index} {label}: old {old:?}, new {new:?}"));
            }
        }
    }
    // Two map keys: the old path's key order changes from call to call (prost-reflect holds a
    // map in a `HashMap` with a fresh `RandomState`); the new path writes them in the order of
    // the wire, every time, JSON-equal to the old path's.
    let two_keys = [0x0a, 0x03, 0x0a, 0x01, b'a', 0x0a, 0x03, 0x0a, 0x01, b'b'];
    let transcoder = Transcoder::build(&maps, false, false, true, &[]);
    let orders: std::collections::BTreeSet<String> = (0..64)
        .map(|_| transcoder.old_path(&two_keys).expect("decodes").to_string())
        .collect();
    assert_eq!(orders.len(), 2, "{orders:?}");
    let reversed = [0x0a, 0x03, 0x0a, 0x01, b'b', 0x0a, 0x03, 0x0a, 0x01, b'a'];
    for (bytes, first, second) in [(&two_keys, "\"a\"", "\"b\""), (&reversed, "\"b\"", "\"a\"")] {
        let new = transcoder.fast_path(bytes).expect("the new path answers");
        assert_eq!(Ok(&new), transcoder.old_path(bytes).as_ref());
        let text = new.to_string();
        assert!(text.find(first) < text.find(second), "wire order: {text}");
    }
    // Nesting: the same as the old path to 64 levels, left beyond, never a stack overflow.
    for depth in [1usize, 30, 64, 65, 101, 5_000] {
        let mut bytes = vec![0x0a, 0x01, b'x'];
        for _ in 0..depth {
            let mut outer = vec![0x12];
            let mut len = Vec::new();
            put_varint(&mut len, bytes.len() as u64);
            outer.extend(len);
            outer.extend(bytes);
            bytes = outer;
        }
        let transcoder = Transcoder::build(&tree, false, false, true, &[]);
        let new = transcoder.fast_path(&bytes).map(|v| v.to_string());
        if depth <= 64 {
            let old = transcoder.old_path(&bytes).map(|v| v.to_string());
            if old.as_ref().ok() != new.as_ref() {
                failures.push(format!("depth {depth}: old {old:?}, new {new:?}"));
            }
        } else if new.is_some() {
            failures.push(format!("depth {depth}: new answered"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
