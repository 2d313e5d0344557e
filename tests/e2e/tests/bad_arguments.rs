//! The bad-argument catalogue: malformed arguments across every proto type the testdata
//! covers, sent by rmcp's client to the MCP server (over `serve_io`, the same transport as
//! stdio), whose tools call a real tonic backend on loopback. Every entry must give an
//! `isError` result that names the JSON path of the problem: never a JSON-RPC error, never a
//! panic, and the backend is never called (its interceptor counts every request).

mod scenario;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

use e2e::{services, testdata};

/// A tonic backend with every testdata service (recursion too, over the network here), and a
/// count of the requests it received.
async fn counted_backend() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    use testdata::*;
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let incoming = tonic::transport::server::TcpIncoming::bind(([127, 0, 0, 1], 0).into())
        .expect("bind")
        .with_nodelay(Some(true));
    let addr = incoming.local_addr().expect("addr");
    let observed = Arc::new(services::Observed::default());
    let router = tonic::transport::Server::builder()
        .layer(tonic::service::InterceptorLayer::new(
            move |request: tonic::Request<()>| {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(request)
            },
        ))
        .add_routes(e2e::echo_routes(&observed))
        .add_service(
            streaming::inventory_service_server::InventoryServiceServer::new(services::Inventory {
                observed,
            }),
        )
        .add_service(
            recursion::recursion_service_server::RecursionServiceServer::new(services::Recursion),
        );
    tokio::spawn(router.serve_with_incoming(incoming));
    (addr, calls)
}

async fn server(addr: std::net::SocketAddr) -> tonic_mcp::McpServer {
    use testdata::*;
    let channel = tonic::transport::Endpoint::try_from(format!("http://{addr}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    let sets = vec![
        scalars::scalar_service_mcp::from_channel(channel.clone()),
        wkt::well_known_service_mcp::from_channel(channel.clone()),
        oneofs::search_service_mcp::from_channel(channel.clone()),
        maps::map_service_mcp::from_channel(channel.clone()),
        streaming::inventory_service_mcp::from_channel(channel.clone()),
        recursion::recursion_service_mcp::from_channel(channel),
    ];
    let mut builder = tonic_mcp::McpServer::builder("catalogue", "0");
    for set in sets {
        builder = builder.tool_set(set.expect("tool set")).expect("register");
    }
    builder.build()
}

/// The valid `destination` every `SearchService_Echo` call needs.
fn search(extra: Value) -> Value {
    let mut args = json!({"destination": {"case": "inline", "value": true}});
    if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra) {
        args.extend(extra);
    }
    args
}

/// (tool, arguments, the JSON path the error must name).
fn catalogue() -> Vec<(&'static str, Value, &'static str)> {
    const S: &str = "ScalarService_Echo";
    const W: &str = "WellKnownService_Echo";
    const O: &str = "SearchService_Echo";
    const M: &str = "MapService_Echo";
    const T: &str = "RecursionService_EchoTree";
    let big_string = "x".repeat(2 * 1024 * 1024);
    vec![
        // Wrong JSON types, 32- and 64-bit overflow as strings and numbers, fractions, NaN,
        // huge exponents.
        (S, json!({"f_int32": "abc"}), "$.f_int32"),
        (S, json!({"f_int32": 2147483648u64}), "$.f_int32"),
        (S, json!({"f_int32": "2147483648"}), "$.f_int32"),
        (S, json!({"f_int32": -2147483649i64}), "$.f_int32"),
        (S, json!({"f_uint32": -1}), "$.f_uint32"),
        (S, json!({"f_uint32": "4294967296"}), "$.f_uint32"),
        (S, json!({"f_sint32": 1e10}), "$.f_sint32"),
        (S, json!({"f_fixed32": "-3"}), "$.f_fixed32"),
        (S, json!({"f_int64": "9223372036854775808"}), "$.f_int64"),
        (S, json!({"f_int64": 9223372036854775808u64}), "$.f_int64"),
        (S, json!({"f_uint64": "18446744073709551616"}), "$.f_uint64"),
        (S, json!({"f_uint64": 1.8446744073709552e19}), "$.f_uint64"),
        (S, json!({"f_uint64": "-1"}), "$.f_uint64"),
        (
            S,
            json!({"f_sfixed64": "-9223372036854775809"}),
            "$.f_sfixed64",
        ),
        (S, json!({"f_int32": 1.5}), "$.f_int32"),
        (S, json!({"f_int64": "1.5"}), "$.f_int64"),
        (S, json!({"f_int32": "NaN"}), "$.f_int32"),
        (S, json!({"f_int64": "Infinity"}), "$.f_int64"),
        (S, json!({"f_int32": 1e308}), "$.f_int32"),
        (S, json!({"f_int64": "1e400"}), "$.f_int64"),
        (S, json!({"f_float": 3.5e38}), "$.f_float"),
        (S, json!({"f_double": "1e400"}), "$.f_double"),
        (S, json!({"f_double": "fast"}), "$.f_double"),
        (S, json!({"f_bool": "yes"}), "$.f_bool"),
        (S, json!({"f_bool": 1}), "$.f_bool"),
        (S, json!({"f_string": 5}), "$.f_string"),
        (S, json!({"f_string": {"a": 1}}), "$.f_string"),
        // Bad base64.
        (S, json!({"f_bytes": "not base64!"}), "$.f_bytes"),
        (S, json!({"f_bytes": "Q"}), "$.f_bytes"),
        (S, json!({"f_bytes": 12}), "$.f_bytes"),
        (S, json!({"r_bytes": ["%%%"]}), "$.r_bytes[0]"),
        // Lists: null inside, wrong item types.
        (S, json!({"r_int32": [1, null, 3]}), "$.r_int32[1]"),
        (S, json!({"r_int32": [1, "x"]}), "$.r_int32[1]"),
        (S, json!({"r_string": [["a"]]}), "$.r_string[0]"),
        (S, json!({"r_uint64": ["-5"]}), "$.r_uint64[0]"),
        (S, json!({"r_double": ["abc"]}), "$.r_double[0]"),
        (S, json!({"r_bool": [true, "no"]}), "$.r_bool[1]"),
        (S, json!({"r_int64": {"a": 1}}), "$.r_int64"),
        // Enums: unknown name and number.
        (S, json!({"color": "COLOR_PURPLE"}), "$.color"),
        (S, json!({"color": 99}), "$.color"),
        (S, json!({"colors": ["COLOR_RED", "NOPE"]}), "$.colors[1]"),
        (S, json!({"colors": [1.5]}), "$.colors[0]"),
        (S, json!({"maybe_count": "many"}), "$.maybe_count"),
        (S, json!({"f_nope": 1}), "$.f_nope"),
        // Well-known types: timestamps, durations, field masks, Struct, wrappers, Any.
        (W, json!({"timestamp": "yesterday"}), "$.timestamp"),
        (
            W,
            json!({"timestamp": "10000-01-01T00:00:00Z"}),
            "$.timestamp",
        ),
        (
            W,
            json!({"timestamp": "2024-13-01T00:00:00Z"}),
            "$.timestamp",
        ),
        (
            W,
            json!({"timestamp": "0000-12-31T23:59:59Z"}),
            "$.timestamp",
        ),
        (W, json!({"timestamp": 12345}), "$.timestamp"),
        (
            W,
            json!({"timestamps": ["2024-01-01T00:00:00Z", null]}),
            "$.timestamps[1]",
        ),
        (W, json!({"duration": "315576000001s"}), "$.duration"),
        (W, json!({"duration": "-315576000001s"}), "$.duration"),
        (W, json!({"duration": "1.5"}), "$.duration"),
        (W, json!({"duration": "1.5h"}), "$.duration"),
        (W, json!({"field_mask": "a..b"}), "$.field_mask"),
        (W, json!({"field_mask": "Bad Path!"}), "$.field_mask"),
        (W, json!({"field_mask": 7}), "$.field_mask"),
        (W, json!({"struct_value": [1, 2]}), "$.struct_value"),
        (W, json!({"struct_value": "text"}), "$.struct_value"),
        (W, json!({"struct_value": 3}), "$.struct_value"),
        (W, json!({"list_value": {"a": 1}}), "$.list_value"),
        (W, json!({"int32_value": 2147483648u64}), "$.int32_value"),
        (W, json!({"uint64_value": "-1"}), "$.uint64_value"),
        (W, json!({"bool_value": "maybe"}), "$.bool_value"),
        (W, json!({"bytes_value": "***"}), "$.bytes_value"),
        (W, json!({"double_value": "abc"}), "$.double_value"),
        (W, json!({"empty": {"x": 1}}), "$.empty"),
        (
            W,
            json!({"any": {"type_url": "type.googleapis.com/no.such.Type", "value": {}}}),
            "$.any",
        ),
        (
            W,
            json!({"any": {"@type": "type.googleapis.com/no.such.Type"}}),
            "$.any",
        ),
        (
            W,
            json!({"any": {"type_url": "type.googleapis.com/testdata.wkt.Note", "value": {"id": "x"}}}),
            "$.any",
        ),
        (
            "WellKnownService_EchoAny",
            json!({"type_url": "no-slash", "value": {}}),
            "$",
        ),
        (
            "WellKnownService_EchoFieldMask",
            json!({"paths": ["a b"]}),
            "$.paths",
        ),
        (
            "WellKnownService_Sleep",
            json!({"value": "99999999999999s"}),
            "$",
        ),
        // Oneofs: two members, unknown case, wrong member types, a required oneof left out.
        (
            O,
            search(json!({"filter": {"case": "tag", "value": "x"}, "tag": "y"})),
            "$",
        ),
        (O, search(json!({"author_id": "1", "tag": "x"})), "$"),
        (
            O,
            search(json!({"filter": {"case": "nope", "value": 1}})),
            "$.filter",
        ),
        (
            O,
            search(json!({"filter": {"case": "author_id", "value": "abc"}})),
            "$.filter",
        ),
        (
            O,
            search(json!({"filter": {"case": "author_id", "value": "9223372036854775808"}})),
            "$.filter",
        ),
        (
            O,
            search(json!({"filter": {"case": "range", "value": "2024"}})),
            "$.filter",
        ),
        (
            O,
            search(json!({"sort": {"case": "order", "value": "SORT_ORDER_RANDOM"}})),
            "$.sort",
        ),
        (O, search(json!({"limit": "ten"})), "$.limit"),
        (O, json!({"query": "q"}), "$"),
        // Maps: keys out of range or of the wrong type, duplicate keys, bad values.
        (
            M,
            json!({"int32_to_string": {"2147483648": "x"}}),
            "$.int32_to_string",
        ),
        (
            M,
            json!({"int32_to_string": {"abc": "x"}}),
            "$.int32_to_string",
        ),
        (
            M,
            json!({"uint32_to_bool": {"-1": true}}),
            "$.uint32_to_bool",
        ),
        (
            M,
            json!({"uint64_to_double": {"18446744073709551616": 1.0}}),
            "$.uint64_to_double",
        ),
        (
            M,
            json!({"bool_to_string": {"yes": "x"}}),
            "$.bool_to_string",
        ),
        (
            M,
            json!({"int32_to_string": {"1": "a", "01": "b"}}),
            "$.int32_to_string",
        ),
        (M, json!({"int64_to_int64": {"1": "x"}}), "$.int64_to_int64"),
        (M, json!({"points": {"a": {"x": "left"}}}), "$.points.a.x"),
        (M, json!({"statuses": {"a": "STATUS_NOPE"}}), "$.statuses.a"),
        (
            M,
            json!({"string_to_string": {"a": 5}}),
            "$.string_to_string.a",
        ),
        (M, json!({"string_to_string": ["a"]}), "$.string_to_string"),
        (
            M,
            json!({"sint32_to_bytes": {"1": "%%"}}),
            "$.sint32_to_bytes",
        ),
        // Recursive messages: wrong types deep down, null in a list, over the depth limit.
        (
            T,
            json!({"children": [{"children": [{"name": 5}]}]}),
            "$.children[0].children[0].name",
        ),
        (T, json!({"children": [null]}), "$.children[0]"),
        (
            "RecursionService_EchoA",
            json!({"b": {"a": {"b": {"count": "many"}}}}),
            "$.b.a.b.count",
        ),
        (T, support::nested_tree(40), "$"),
        (T, support::nested_tree(70), "$"),
        // 2 MB of arguments.
        (T, json!({"name": big_string}), "$"),
        // Streaming tools.
        (
            "InventoryService_UploadItems",
            json!({"messages": [{"id": 5}]}),
            "$.messages[0].id",
        ),
        (
            "InventoryService_UploadItems",
            json!({"messages": "x"}),
            "$.messages",
        ),
        (
            "InventoryService_Chat",
            json!({"messages": [null]}),
            "$.messages[0]",
        ),
        ("InventoryService_GetItem", json!({"id": ["a"]}), "$.id"),
    ]
}

/// Whether a listed problem (`- PATH: message`) is at `path` or below it.
fn names_path(text: &str, path: &str) -> bool {
    text.lines()
        .filter_map(|line| line.strip_prefix("- "))
        .filter_map(|line| line.split_once(": ").map(|(at, _)| at))
        .any(|at| {
            at == path
                || at
                    .strip_prefix(path)
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_malformed_argument_is_an_is_error_naming_its_path_and_the_backend_is_never_called() {
    let (addr, calls) = counted_backend().await;
    let server = server(addr).await;
    let client = test_kit::connect_io(server).await;

    // The counter sees calls that are valid.
    let before = calls.load(Ordering::SeqCst);
    scenario::ok(&client, "ScalarService_Echo", json!({"f_int32": 1})).await;
    scenario::ok(&client, "RecursionService_EchoTree", json!({"name": "n"})).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        before + 2,
        "the backend counts calls"
    );

    let entries = catalogue();
    assert!(entries.len() >= 60, "{} entries", entries.len());
    let before = calls.load(Ordering::SeqCst);
    let mut failures = Vec::new();
    for (index, (tool, arguments, path)) in entries.iter().enumerate() {
        let result = tokio::time::timeout(
            Duration::from_secs(30),
            scenario::call(&client, tool, arguments.clone()),
        )
        .await;
        let shown = {
            let text = arguments.to_string();
            if text.len() > 120 {
                format!("{}…", &text[..120])
            } else {
                text
            }
        };
        match result {
            Err(_) => failures.push(format!("#{index} {tool} {shown}: no answer in 30 s")),
            Ok(Err(error)) => {
                failures.push(format!("#{index} {tool} {shown}: JSON-RPC error {error}"));
            }
            Ok(Ok(result)) => {
                let text = scenario::text(&result);
                if result.is_error != Some(true) {
                    failures.push(format!("#{index} {tool} {shown}: accepted: {text}"));
                } else if !text.contains(&format!("Invalid arguments for tool `{tool}`"))
                    || !names_path(&text, path)
                {
                    failures.push(format!(
                        "#{index} {tool} {shown}: does not name {path}: {text}"
                    ));
                }
            }
        }
        let called = calls.load(Ordering::SeqCst) - before;
        if called != 0 {
            failures.push(format!("#{index} {tool} {shown}: the backend was called"));
            break;
        }
    }
    // The server is still fine.
    scenario::ok(&client, "ScalarService_Echo", json!({"f_int32": 2})).await;
    eprintln!(
        "bad-argument catalogue: {} entries, {} failures",
        entries.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    client.cancel().await.expect("close");
}

/// `arguments` that is not an object (an array, a string, a number, `null`) or is missing:
/// sent as raw JSON-RPC lines, since a typed client cannot send them.
#[tokio::test]
async fn arguments_that_are_not_an_object() {
    let (addr, calls) = counted_backend().await;
    let server = server(addr).await;
    let client_io = test_kit::serve_io_in_process(server);
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let mut exchange = async |message: Value| -> Value {
        client_write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write");
        if message.get("id").is_none() {
            return Value::Null;
        }
        let line = support::next_line_within(&mut lines, Duration::from_secs(30)).await;
        serde_json::from_str(&line).expect("JSON")
    };
    exchange(support::initialize(0)).await;
    exchange(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let cases = [
        (json!([1, 2]), "$: expected an object, got an array"),
        (json!("text"), "$: expected an object, got a string"),
        (json!(5), "$: expected an object, got a number"),
        (json!(true), "$: expected an object, got a boolean"),
    ];
    let mut id: u64 = 1;
    for (arguments, expected) in cases {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "SearchService_Echo", "arguments": arguments}});
        let answer = exchange(request).await;
        let text = refusal_text(&answer, id);
        assert!(
            text.contains("Invalid arguments for tool `SearchService_Echo`"),
            "{answer}"
        );
        assert!(text.contains(expected), "{answer}");
        id += 1;
    }
    // `null` and a missing `arguments` are no arguments: the required oneof is missing.
    for params in [
        json!({"name": "SearchService_Echo", "arguments": null}),
        json!({"name": "SearchService_Echo"}),
    ] {
        let answer =
            exchange(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
                .await;
        let text = refusal_text(&answer, id);
        assert!(
            text.contains("$:") || text.contains("$.destination"),
            "{answer}"
        );
        id += 1;
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the backend was never called"
    );
}

/// A value an enum does not take is one problem at its path, naming the values it takes: a
/// number is refused as a number that is none of theirs (numbers are proto3 JSON too), not as
/// a number where a string was expected.
#[tokio::test]
async fn a_value_outside_an_enum_is_one_problem_naming_the_values() {
    let (addr, _calls) = counted_backend().await;
    let client = test_kit::connect_io(server(addr).await).await;
    let names = r#""COLOR_UNSPECIFIED", "COLOR_RED", "COLOR_GREEN", "COLOR_BLUE""#;
    for (color, expected) in [
        (
            json!(7),
            format!(
                "- $.color: expected one of {names} (or the number of one of them), got a number (7)"
            ),
        ),
        (
            json!(true),
            format!("- $.color: expected one of {names}, got a boolean (true)"),
        ),
        (
            json!("COLOR_PURPLE"),
            format!(r#"- $.color: expected one of {names}, got a string ("COLOR_PURPLE")"#),
        ),
    ] {
        let result = scenario::call(&client, "ScalarService_Echo", json!({ "color": color }))
            .await
            .expect("an answer");
        let text = scenario::text(&result);
        assert_eq!(result.is_error, Some(true), "{color}: {text}");
        assert!(text.contains("(1 problem)"), "{color}:\n{text}");
        assert!(
            text.contains(&expected),
            "{color}: missing {expected:?} in:\n{text}"
        );
    }
}

/// Arguments with more problems than a model acts on in one turn get the first
/// `MAX_PROBLEMS`, said to be the first, and the backend is not called; the rest are neither
/// worded nor sent. A long list of alternates the schema cannot express (`"NaN"` for a
/// `double`) is no problem at all, however long.
#[tokio::test]
async fn many_problems_are_the_first_max_problems_of_more() {
    let (addr, calls) = counted_backend().await;
    let client = test_kit::connect_io(server(addr).await).await;
    let max = tonic_mcp_codec::MAX_PROBLEMS;
    // The opening of a long answer, for a failure's message.
    let opening = |text: &str, n: usize| text.chars().take(n).collect::<String>();
    let unknown: serde_json::Map<String, Value> =
        (0..5000).map(|i| (format!("k{i}"), json!(i))).collect();
    let wrong_names = json!({ "r_double": vec![json!(true); 3000] });
    for (arguments, first) in [
        (
            Value::Object(unknown),
            "- $.k0: unknown property `k0`; allowed: ",
        ),
        (wrong_names, "- $.r_double[0]: "),
    ] {
        let result = scenario::call(&client, "ScalarService_Echo", arguments)
            .await
            .expect("an answer");
        let text = scenario::text(&result);
        assert_eq!(result.is_error, Some(true), "{}", opening(&text, 200));
        let header = format!(
            "Invalid arguments for tool `ScalarService_Echo` (more than {max} problems; the first \
             {max}):"
        );
        assert!(text.starts_with(&header), "{}", opening(&text, 200));
        assert_eq!(text.matches("\n- ").count(), max, "{}", opening(&text, 200));
        assert!(text.contains(first), "{}", opening(&text, 300));
    }
    let nans = scenario::call(
        &client,
        "ScalarService_Echo",
        json!({ "r_double": vec!["NaN"; 20_000] }),
    )
    .await
    .expect("an answer");
    let text = scenario::text(&nans);
    assert_ne!(nans.is_error, Some(true), "{}", opening(&text, 200));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "only the valid call reaches the backend"
    );
}

/// A key given twice in the arguments, at any depth and however it is spelt, is refused with
/// its path, never sent with one of the two values (the backend is not called): over stdio
/// (raw lines, since a typed client cannot send one) and over streamable HTTP, with sessions
/// and stateless, from the spawned binary.
#[tokio::test]
async fn a_key_given_twice_in_the_arguments_is_refused_with_its_path() {
    const TWICE: &str = "this key is given twice in one object; give it once";
    let cases = [
        (
            "ScalarService_Echo",
            r#"{"f_int32":1,"f_int32":2}"#,
            "$.f_int32",
        ),
        (
            "ScalarService_Echo",
            r#"{"f_string":"a","f_str\u0069ng":"b"}"#,
            "$.f_string",
        ),
        (
            "MapService_Echo",
            r#"{"labels":{"k":"a","k":"b"}}"#,
            "$.labels.k",
        ),
    ];
    let call = |id: usize, tool: &str, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        )
    };
    let (addr, calls) = counted_backend().await;
    let client_io = test_kit::serve_io_in_process(server(addr).await);
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    for line in [
        support::initialize(0).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
    ] {
        client_write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write");
    }
    support::next_line_within(&mut lines, Duration::from_secs(30)).await;
    for (id, (tool, arguments, path)) in (1..).zip(cases) {
        client_write
            .write_all(format!("{}\n", call(id, tool, arguments)).as_bytes())
            .await
            .expect("write");
        let line = support::next_line_within(&mut lines, Duration::from_secs(30)).await;
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        let text = refusal_text(&answer, id as u64);
        assert!(
            text.contains(&format!("{path}: {TWICE}")),
            "{arguments}: {text}"
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the backend was called");

    for flags in [&["--stateless"][..], &[]] {
        let server = support::spawn_http(flags).await;
        let session = support::open_session(server.addr).await;
        for (id, (tool, arguments, path)) in (1..).zip(cases) {
            let headers: Vec<(&str, &str)> = session
                .iter()
                .map(|s| ("mcp-session-id", s.as_str()))
                .collect();
            let response =
                support::post(server.addr, &headers, call(id, tool, arguments).as_bytes()).await;
            assert_eq!(response.status, 200, "{flags:?} {arguments}: {response:?}");
            let messages = response.messages();
            let answer = messages.last().expect("an answer");
            let text = refusal_text(answer, id as u64);
            assert!(
                text.contains(&format!("{path}: {TWICE}")),
                "{flags:?} {arguments}: {text}"
            );
        }
    }
}

/// The text of `answer`, asserting that it answers request `id` with an `isError` result.
fn refusal_text(answer: &Value, id: u64) -> &str {
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The same refusal over streamable HTTP, from the spawned binary.
#[tokio::test]
async fn arguments_that_are_not_an_object_over_http() {
    let server = support::spawn_http(&["--stateless"]).await;
    for (arguments, got) in [(json!([1]), "an array"), (json!("x"), "a string")] {
        let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "SearchService_Echo", "arguments": arguments}});
        let response = support::post(server.addr, &[], call.to_string().as_bytes()).await;
        assert_eq!(response.status, 200, "{response:?}");
        let messages = response.messages();
        let answer = messages.last().expect("an answer");
        assert_eq!(answer["result"]["isError"], true, "{response:?}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.contains(&format!("- $: expected an object, got {got}")),
            "{text}"
        );
    }
}

/// Stateless HTTP answers a plain `tools/call` itself, without rmcp's per-request service
/// (`http_plain`). Every entry of the catalogue, and calls that succeed, fail at the backend,
/// stream or name no tool, get the same answer byte for byte from both paths, from a client
/// of revision 2025-06-18 and from one of 2026-07-28. rmcp's path is
/// taken by adding a second `Accept` value with a quoted parameter: rmcp reads it and still
/// accepts the request, while the plain path leaves every request with a quote in `Accept`
/// to rmcp.
#[tokio::test]
async fn stateless_http_answers_plain_calls_as_rmcp_does() {
    let server = support::spawn_http(&["--stateless"]).await;
    let to_rmcp = [("Accept", "text/plain;q=\"0.5\"")];
    let mut calls: Vec<(&str, Value)> = catalogue()
        .into_iter()
        .map(|(tool, arguments, _)| (tool, arguments))
        .collect();
    calls.extend([
        ("ScalarService_Echo", json!({"f_int64": "-9", "f_double": 0.1, "r_bool": [true]})),
        ("WellKnownService_Echo", json!({"duration": "1.5s", "any": {"@type": "type.googleapis.com/google.protobuf.Empty"}})),
        ("SearchService_Echo", json!({})),
        ("InventoryService_GetItem", json!({"id": "a-1"})),
        ("InventoryService_GetItem", json!({"id": ""})),
        ("InventoryService_ListItems", json!({"limit": 2})),
        ("InventoryService_ListItems", json!({"name_prefix": "fail"})),
        ("NoSuchTool", json!({})),
    ]);
    let mut plain_results = 0;
    for (id, (tool, arguments)) in calls.into_iter().enumerate() {
        // A client of revision 2025-06-18, and one of 2026-07-28: its `_meta` carries the
        // revision and the client, its headers the method and the tool.
        let legacy = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        let mut current = legacy.clone();
        current["params"]["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        });
        let current_headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
        ];
        let revisions: [(&Value, &[(&str, &str)]); 2] = [
            (&legacy, &[("MCP-Protocol-Version", "2025-06-18")]),
            (&current, &current_headers),
        ];
        for (call, headers) in revisions {
            let body = call.to_string();
            let plain = support::post(server.addr, headers, body.as_bytes()).await;
            let rmcp_headers = [headers, &to_rmcp[..]].concat();
            let rmcp = support::post(server.addr, &rmcp_headers, body.as_bytes()).await;
            assert_eq!(plain.status, rmcp.status, "{tool}: {plain:?} {rmcp:?}");
            assert_eq!(
                plain.header("content-type"),
                rmcp.header("content-type"),
                "{tool}"
            );
            assert_eq!(plain.body, rmcp.body, "{tool} {arguments}");
            if plain.header("content-type") == Some("application/json")
                && plain.body.contains("\"result\"")
            {
                plain_results += 1;
            }
        }
    }
    assert!(plain_results > 160, "{plain_results} results compared");
}
