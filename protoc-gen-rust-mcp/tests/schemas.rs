//! Every schema the plugin generates for `testdata/`, under every option that changes schemas,
//! passes the portability rules of docs/design.md §4.10: the 2020-12 meta-schema, resolvable `$ref`s, no
//! root combinators, no type arrays, no boolean schemas, `items` on every array, `properties`
//! only on objects, and host-safe property keys.

mod common;

use serde_json::{Value, json};

const PARAMETERS: &[&str] = &[
    "tools_json,rust=false",
    "tools_json,rust=false,json_names,unions=any_of,schema_keyword",
    "tools_json,rust=false,descriptions=false",
    // Every shrink step, on every testdata tool.
    "tools_json,rust=false,max_schema_bytes=400",
    "tools_json,rust=false,max_schema_bytes=400,json_names,unions=any_of",
];

fn all_tools(parameter: &str) -> Vec<Value> {
    let files = common::testdata_files();
    common::generate_ok(&files, parameter)
        .into_iter()
        .filter(|(name, _)| name.ends_with(".mcp.json"))
        .flat_map(|(_, text)| common::tools_of(&text))
        .collect()
}

fn find<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

/// Collects every `$ref` in a schema.
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                out.push(r.clone());
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[test]
fn every_schema_is_portable_and_valid_2020_12() {
    let mut checked = 0;
    for parameter in PARAMETERS {
        let tools = all_tools(parameter);
        assert!(
            tools.len() > 40,
            "expected the whole testdata set, got {}",
            tools.len()
        );
        for tool in &tools {
            for side in ["inputSchema", "outputSchema"] {
                let schema = &tool[side];
                let at = format!("{} {side} ({parameter})", tool["name"]);
                jsonschema::draft202012::meta::validate(schema)
                    .unwrap_or_else(|e| panic!("{at}: not a valid 2020-12 schema: {e}"));
                // Building a validator resolves every `$ref`.
                jsonschema::draft202012::new(schema)
                    .unwrap_or_else(|e| panic!("{at}: does not compile: {e}"));
                let violations = protoc_gen_rust_mcp::json_schema::portability::violations(schema);
                assert!(violations.is_empty(), "{at}: {violations:?}");
                // Every definition is used, and every reference is local.
                let mut found = Vec::new();
                refs(schema, &mut found);
                for r in &found {
                    assert!(
                        r == "#" || r.starts_with("#/$defs/"),
                        "{at}: non-local $ref {r}"
                    );
                }
                if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
                    for key in defs.keys() {
                        let target = format!("#/$defs/{key}");
                        assert!(found.contains(&target), "{at}: unused $defs entry {key}");
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 240, "checked only {checked} schemas");
}

#[test]
fn tool_names_follow_the_rules() {
    for tool in all_tools(PARAMETERS[0]) {
        let name = tool["name"].as_str().expect("name");
        tonic_mcp_schema::names::check_tool_name(name).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn recursion_uses_defs_and_root_references() {
    let tools = all_tools(PARAMETERS[0]);
    // Self recursion at the root: `#`.
    let tree = &find(&tools, "RecursionService_EchoTree")["inputSchema"];
    assert_eq!(
        tree["properties"]["children"]["items"],
        json!({"$ref": "#"})
    );
    assert!(tree.get("$defs").is_none());
    // Mutual recursion: the other half is a definition that points back at the root.
    let a = &find(&tools, "RecursionService_EchoA")["inputSchema"];
    assert_eq!(a["properties"]["b"]["$ref"], "#/$defs/testdata.recursion.B");
    assert_eq!(
        a["$defs"]["testdata.recursion.B"]["properties"]["a"]["$ref"],
        "#"
    );
    // A message used twice, not recursive: one definition.
    let transfer = &find(&tools, "RecursionService_EchoTransfer")["inputSchema"];
    assert_eq!(
        transfer["properties"]["amount"]["$ref"],
        "#/$defs/testdata.recursion.Money"
    );
    assert_eq!(
        transfer["properties"]["fee"]["$ref"],
        "#/$defs/testdata.recursion.Money"
    );
    // Used once and not recursive: inlined.
    let holder = &find(&tools, "RecursionService_EchoHolder")["inputSchema"];
    assert_eq!(holder["properties"]["outer"]["type"], "object");
}

#[test]
fn oneofs_are_case_value_unions_with_the_chosen_keyword() {
    let tools = all_tools(PARAMETERS[0]);
    let search = &find(&tools, "SearchService_Echo")["inputSchema"];
    let filter = &search["properties"]["filter"];
    assert!(filter.get("type").is_none(), "no type beside the union");
    let branches = filter["oneOf"].as_array().expect("oneOf");
    let cases: Vec<&str> = branches
        .iter()
        .map(|b| b["properties"]["case"]["const"].as_str().expect("case"))
        .collect();
    assert_eq!(cases, ["author_id", "range", "tag"]);
    for branch in branches {
        assert_eq!(branch["required"], json!(["case", "value"]));
        assert_eq!(branch["additionalProperties"], json!(false));
    }
    let required = search["required"].as_array().expect("required oneof");
    assert!(required.contains(&json!("destination")));
    assert!(!required.contains(&json!("filter")));
    // proto3 `optional` (a synthetic oneof) is a plain field, not a union.
    let unions: Vec<&String> = search["properties"]
        .as_object()
        .expect("properties")
        .iter()
        .filter(|(_, p)| p.get("oneOf").is_some())
        .map(|(k, _)| k)
        .collect();
    assert_eq!(unions, ["filter", "sort", "destination"]);

    let any_of = all_tools(PARAMETERS[1]);
    let filter = &find(&any_of, "SearchService_Echo")["inputSchema"]["properties"]["filter"];
    assert!(filter.get("oneOf").is_none() && filter["anyOf"].is_array());
    assert_eq!(
        filter["anyOf"][0]["properties"]["case"]["const"],
        "authorId"
    );
}

#[test]
fn non_object_messages_are_wrapped_at_the_root() {
    let tools = all_tools(PARAMETERS[0]);
    let shout = find(&tools, "WellKnownService_Shout");
    for side in ["inputSchema", "outputSchema"] {
        assert_eq!(shout[side]["required"], json!(["value"]));
        assert_eq!(shout[side]["properties"]["value"]["type"], "string");
    }
    let now = find(&tools, "WellKnownService_Now");
    assert_eq!(now["inputSchema"]["properties"], json!({}));
    assert_eq!(
        now["outputSchema"]["properties"]["value"]["format"],
        "date-time"
    );
}

#[test]
fn required_hidden_and_output_only_fields() {
    let tools = all_tools(PARAMETERS[0]);
    let create = tools
        .iter()
        .find(|t| {
            t["name"]
                .as_str()
                .is_some_and(|n| n == "LibraryService_CreateBook")
        })
        .expect("a field_behavior tool");
    let input = &create["inputSchema"];
    let output = &create["outputSchema"];
    let input_keys: Vec<&String> = input["properties"]
        .as_object()
        .expect("props")
        .keys()
        .collect();
    let output_keys: Vec<&String> = output["properties"]
        .as_object()
        .expect("props")
        .keys()
        .collect();
    // `name` and `create_time_unix` are OUTPUT_ONLY; `request_id` is INPUT_ONLY.
    assert!(
        !input_keys
            .iter()
            .any(|k| *k == "name" || *k == "create_time_unix"),
        "{input_keys:?}"
    );
    assert!(
        output_keys.iter().any(|k| *k == "name") && !output_keys.iter().any(|k| *k == "request_id")
    );
    assert!(input_keys.iter().any(|k| *k == "request_id"));
    assert_eq!(input["required"], json!(["title", "author", "publisher"]));
    assert!(
        output.get("required").is_none(),
        "outputs never require fields"
    );
}

#[test]
fn the_budget_shrinks_in_steps_and_zero_turns_it_off() {
    let full = all_tools("tools_json,rust=false,max_schema_bytes=0");
    // The testdata schemas are all under the default budget: the default output is the full one.
    assert_eq!(full, all_tools("tools_json,rust=false"));
    let small = all_tools("tools_json,rust=false,max_schema_bytes=400");
    assert_eq!(full.len(), small.len());
    let mut cut = 0;
    for (whole, shrunk) in full.iter().zip(&small) {
        assert_eq!(whole["name"], shrunk["name"]);
        for side in ["inputSchema", "outputSchema"] {
            let before = whole[side].to_string().len();
            let after = shrunk[side].to_string().len();
            if before <= 400 {
                assert_eq!(whole[side], shrunk[side], "{} {side}", whole["name"]);
            } else {
                // Smaller, or as small as it gets (a well-known root has nothing to drop).
                assert!(
                    after <= before,
                    "{} {side}: {before} -> {after}",
                    whole["name"]
                );
            }
            if shrunk[side]
                .to_string()
                .contains(protoc_gen_rust_mcp::json_schema::NOT_EXPANDED)
            {
                cut += 1;
            }
        }
    }
    assert!(cut > 5, "subtrees were cut in {cut} schemas");
    // A cut subtree names its message and accepts any object.
    let tool = find(&small, "RecursionService_EchoForest");
    let text = tool["inputSchema"].to_string();
    assert!(text.contains("testdata.recursion."), "{text}");
}
