//! The schema budget (`max_schema_bytes`): a tool schema over it is made again with less
//! information, step by step, and how it shrank is reported.

use prost_reflect::MessageDescriptor;
use serde_json::Value;

use super::generator::{generate, is_root_node};
use super::{Cardinal, Direction, SchemaContext, Shrink, graph};
use crate::error::Result;

/// How a schema over the budget was shrunk (see [`tool_schema_report`]).
///
/// [`tool_schema_report`]: super::tool_schema_report
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShrinkReport {
    /// Minified size in bytes before shrinking.
    pub before: usize,
    /// Minified size in bytes after shrinking.
    pub after: usize,
    /// The steps taken, in order, from the least to the most useful information dropped.
    pub steps: Vec<String>,
    /// Whether the schema now fits the budget (every step taken and still over: `false`).
    pub fits: bool,
}

/// [`tool_schema_report`], with `finish` applied to every candidate schema before it is
/// measured.
///
/// [`tool_schema_report`]: super::tool_schema_report
pub(super) fn report(
    cx: SchemaContext<'_>,
    message: &MessageDescriptor,
    direction: Direction,
    cardinal: Cardinal,
    finish: &dyn Fn(&mut Value),
) -> Result<(Value, Option<ShrinkReport>)> {
    let budget = cx.options.max_schema_bytes;
    let graph = graph::MessageGraph::build(cx, message, direction, is_root_node(message, cardinal));
    let generate = |shrink: Shrink| -> Result<Value> {
        let mut schema = generate(cx, &graph, message, direction, cardinal, shrink)?;
        finish(&mut schema);
        Ok(schema)
    };
    let first = generate(Shrink::default())?;
    if budget == 0 {
        return Ok((first, None));
    }
    let before = minified_len(&first);
    if before <= budget {
        return Ok((first, None));
    }
    let mut shrink = Shrink::default();
    let mut steps = Vec::new();
    let mut plan: Vec<(String, Shrink)> = Vec::new();
    shrink.no_enum_value_comments = true;
    plan.push(("enum value comments".to_owned(), shrink));
    shrink.enum_defs = true;
    plan.push(("repeated enums to $defs".to_owned(), shrink));
    for depth in [2, 1] {
        shrink.description_depth = Some(depth);
        plan.push((format!("descriptions below depth {depth}"), shrink));
    }
    for depth in (1..=6).rev() {
        shrink.subtree_depth = Some(depth);
        plan.push((format!("subtrees below depth {depth}"), shrink));
    }
    // Last resort, for a root with very many fields: no descriptions at all.
    shrink.description_depth = Some(0);
    plan.push(("all descriptions".to_owned(), shrink));
    let mut schema = first;
    let mut after = before;
    for (step, shrink) in plan {
        let smaller = generate(shrink)?;
        let size = minified_len(&smaller);
        if size >= after && step.starts_with("subtrees") {
            // A cut deeper than the schema reaches changes nothing: not a step taken.
            continue;
        }
        steps.push(step);
        schema = smaller;
        after = size;
        if after <= budget {
            break;
        }
    }
    let fits = after <= budget;
    Ok((
        schema,
        Some(ShrinkReport {
            before,
            after,
            steps,
            fits,
        }),
    ))
}

/// The minified size of a schema in bytes.
pub fn minified_len(schema: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing into a counter cannot fail.
    let _ = serde_json::to_writer(&mut counter, schema);
    counter.0
}
