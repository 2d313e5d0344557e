//! The tool arguments the benchmarks send (the e2e crate's `benches/tool_call.rs` and the
//! gateway's `benches/gateway_call.rs`), so that both measure the same calls; the codec's
//! differential tests hold its encoder to these too.

use serde_json::{Map, Value, json};

/// `ScalarService_Echo`'s arguments: every field of `AllScalars` set, a few elements in each
/// repeated field, in the canonical JSON form the tool also returns.
pub fn scalars_arguments() -> Map<String, Value> {
    object(json!({
        "f_double": 1234.5678,
        "f_float": 0.25,
        "f_int32": -42,
        "f_int64": "9007199254740993",
        "f_uint32": 4_000_000_000u32,
        "f_uint64": "18446744073709551615",
        "f_sint32": -7,
        "f_sint64": "-9007199254740993",
        "f_fixed32": 123_456,
        "f_fixed64": "1234567890123",
        "f_sfixed32": -123_456,
        "f_sfixed64": "-1234567890123",
        "f_bool": true,
        "f_string": "The quick brown fox jumps over the lazy dog",
        "f_bytes": "AAECYmluYXJ5IHBheWxvYWT+/w==",
        "r_int32": [1, -2, 3, -4, 5, -6, 7, -8],
        "r_int64": ["1", "-2", "9007199254740993", "-4"],
        "r_uint64": ["1", "2", "18446744073709551615"],
        "r_double": [0.5, -1.5, 3.25, 1e100],
        "r_string": ["alpha", "beta", "gamma"],
        "r_bytes": ["b25l", "dHdv"],
        "r_bool": [true, false, true],
        "color": "COLOR_GREEN",
        "colors": ["COLOR_RED", "COLOR_BLUE"],
        "nickname": "foxy",
        "maybe_count": 3,
    }))
}

/// `SearchService_Echo`'s arguments: a `SearchRequest` with all three oneofs set, two of them
/// to messages, in the canonical `{case, value}` form.
pub fn search_arguments() -> Map<String, Value> {
    object(json!({
        "query": "grpc to mcp gateways",
        "limit": 20,
        "filter": {"case": "range", "value": {"start": "2024-01-01", "end": "2024-12-31"}},
        "sort": {"case": "by_field", "value": {"field": "published", "descending": true}},
        "destination": {"case": "bucket_path", "value": "gs://results/search"},
    }))
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("tool arguments must be an object, not {other}"),
    }
}
