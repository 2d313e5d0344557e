//! Property tests (docs/design.md §7 "Properties") over the echo tools whose request type is their
//! response type, driven through generated code, the runtime and rmcp's client:
//!
//! 1. **Inputs that validate decode:** every generated argument object validates against the
//!    tool's `inputSchema` (draft 2020-12, formats checked; a failure here is a generator bug),
//!    and calling the tool with it succeeds.
//! 2. **Encoded results validate:** the result's `structuredContent` validates against the
//!    tool's `outputSchema`, and the text content is the same JSON.
//! 3. **Encode then decode is the identity:** calling the tool again with the first result as
//!    its arguments returns exactly the first result. The backend echoes what it decoded, so
//!    this is decode(encode(m)) == m on every message the first call produced.
//!
//! The arguments come from a generator driven by the listed `inputSchema` alone
//! (`test_kit::schema_gen`). One backend, MCP server and client serve each test.

#[path = "scenario/mod.rs"]
mod scenario;

use std::time::Instant;

use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde_json::Value;
use test_kit::schema_gen;

/// Cases per tool; every case checks all three properties. `PROPTEST_CASES` overrides it for a
/// deeper run.
const CASES: u32 = 64;

fn cases() -> u32 {
    test_kit::env_or("PROPTEST_CASES", CASES)
}

/// Nested `$ref`s followed on any path of a generated value.
const REF_BUDGET: u32 = 4;

struct Tool {
    name: String,
    input: jsonschema::Validator,
    output: jsonschema::Validator,
    input_schema: Value,
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("schema does not compile: {e}\n{schema:#}"))
}

fn errors(validator: &jsonschema::Validator, instance: &Value) -> Option<String> {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("  at `{}`: {e}", e.instance_path()))
        .collect();
    (!errors.is_empty()).then(|| errors.join("\n"))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Calls `tool` and checks property 2 on the result; returns its structured content.
async fn call(client: &scenario::Client, tool: &Tool, arguments: &Value) -> Result<Value, String> {
    let result = scenario::call(client, &tool.name, arguments.clone())
        .await
        .map_err(|e| format!("tools/call failed: {e}"))?;
    if result.is_error == Some(true) {
        return Err(format!(
            "the call returned isError:\n{}",
            scenario::text(&result)
        ));
    }
    let structured = result
        .structured_content
        .clone()
        .ok_or("no structuredContent")?;
    if let Some(errors) = errors(&tool.output, &structured) {
        return Err(format!(
            "structuredContent does not validate against the outputSchema:\n{errors}\nresult:\n{}",
            pretty(&structured)
        ));
    }
    let from_text: Value = serde_json::from_str(&scenario::text(&result))
        .map_err(|e| format!("the text content is not JSON: {e}"))?;
    if from_text != structured {
        return Err(format!(
            "text and structuredContent differ:\ntext:\n{}\nstructured:\n{}",
            pretty(&from_text),
            pretty(&structured)
        ));
    }
    Ok(structured)
}

/// All three properties on one generated argument object.
async fn check_case(
    client: &scenario::Client,
    tool: &Tool,
    arguments: Value,
) -> Result<(), TestCaseError> {
    if let Some(errors) = errors(&tool.input, &arguments) {
        return Err(TestCaseError::fail(format!(
            "generator bug: the arguments do not validate against the inputSchema:\n{errors}"
        )));
    }
    let first = call(client, tool, &arguments)
        .await
        .map_err(|e| TestCaseError::fail(format!("first call: {e}")))?;
    let second = call(client, tool, &first).await.map_err(|e| {
        TestCaseError::fail(format!(
            "second call, with the first result as arguments:\n{}\n{e}",
            pretty(&first)
        ))
    })?;
    if second != first {
        return Err(TestCaseError::fail(format!(
            "encode then decode is not the identity:\nfirst result:\n{}\nsecond result:\n{}",
            pretty(&first),
            pretty(&second)
        )));
    }
    Ok(())
}

/// Serves every testdata tool set over an in-process pipe and runs the properties on `name`.
fn check_tool(name: &str) {
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (client, tool) = runtime.block_on(async {
        let client = scenario::connect_in_process().await;
        let tools = client.list_all_tools().await.expect("tools/list");
        let listed = tools
            .into_iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("tools/list has no {name}"));
        let input_schema = Value::Object((*listed.input_schema).clone());
        let output_schema = Value::Object(
            (*listed
                .output_schema
                .unwrap_or_else(|| panic!("{name} has no outputSchema")))
            .clone(),
        );
        let tool = Tool {
            name: name.to_owned(),
            input: validator(&input_schema),
            output: validator(&output_schema),
            input_schema,
        };
        (client, tool)
    });

    let strategy = schema_gen::strategy(&tool.input_schema, REF_BUDGET);
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        // No regression files in the source tree; a failure prints its minimal input.
        failure_persistence: None,
        // Enough to walk a large float down; bounded in time all the same.
        max_shrink_iters: 4096,
        max_shrink_time: 10_000,
        ..Config::default()
    });
    let outcome = runner.run(&strategy, |arguments| {
        runtime.block_on(check_case(&client, &tool, arguments))
    });
    runtime.block_on(async {
        let _ = client.cancel().await;
    });
    match outcome {
        Ok(()) => eprintln!(
            "{name}: {} cases passed in {:.2?}",
            cases(),
            started.elapsed()
        ),
        Err(TestError::Fail(reason, arguments)) => panic!(
            "{name}: property failed: {reason}\nminimal arguments:\n{}",
            pretty(&arguments)
        ),
        Err(TestError::Abort(reason)) => panic!("{name}: aborted: {reason}"),
    }
}

#[test]
fn scalar_echo() {
    check_tool("ScalarService_Echo");
}

#[test]
fn well_known_echo() {
    check_tool("WellKnownService_Echo");
}

#[test]
fn search_echo() {
    check_tool("SearchService_Echo");
}

#[test]
fn map_echo() {
    check_tool("MapService_Echo");
}

#[test]
fn recursion_echo_tree() {
    check_tool("RecursionService_EchoTree");
}

#[test]
fn recursion_evaluate() {
    check_tool("RecursionService_Evaluate");
}

#[test]
fn recursion_echo_a() {
    check_tool("RecursionService_EchoA");
}

#[test]
fn recursion_echo_transfer() {
    check_tool("RecursionService_EchoTransfer");
}

#[test]
fn recursion_echo_holder() {
    check_tool("RecursionService_EchoHolder");
}
