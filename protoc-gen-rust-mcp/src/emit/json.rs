//! `<package>.mcp.json`: every tool exactly as `tools/list` lists it, for reviewers and tools.

use serde_json::{Map, Value, json};

use crate::model::{Annotations, Package, Tool};

/// The pretty-printed `{"tools": [...]}` document of a package, tools sorted by name.
pub(crate) fn package(package: &Package) -> String {
    let mut tools: Vec<&Tool> = package.services.iter().flat_map(|s| &s.tools).collect();
    tools.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
    let tools: Vec<Value> = tools.into_iter().map(tool).collect();
    let mut text = serde_json::to_string_pretty(&json!({ "tools": tools }))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

/// One tool as MCP's `Tool` object.
pub(crate) fn tool(tool: &Tool) -> Value {
    let mut out = Map::new();
    out.insert("name".to_owned(), json!(tool.spec.name));
    out.insert("title".to_owned(), json!(tool.spec.title));
    out.insert("description".to_owned(), json!(tool.spec.description));
    out.insert("inputSchema".to_owned(), parsed(&tool.input_schema));
    out.insert("outputSchema".to_owned(), parsed(&tool.output_schema));
    let annotations = annotations(&tool.spec.annotations);
    if !annotations.is_empty() {
        out.insert("annotations".to_owned(), Value::Object(annotations));
    }
    out.insert("_meta".to_owned(), tool.meta.clone());
    Value::Object(out)
}

/// A schema text the model holds, as JSON (the model made it from a `Value`, so it parses; key
/// order is kept).
fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| json!({"error": e.to_string()}))
}

/// The MCP `ToolAnnotations` object: only the hints that are set.
pub(crate) fn annotations(hints: &Annotations) -> Map<String, Value> {
    [
        ("readOnlyHint", hints.read_only),
        ("destructiveHint", hints.destructive),
        ("idempotentHint", hints.idempotent),
        ("openWorldHint", hints.open_world),
    ]
    .into_iter()
    .filter_map(|(key, value)| value.map(|v| (key.to_owned(), json!(v))))
    .collect()
}
