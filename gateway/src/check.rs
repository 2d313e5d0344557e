//! `--check`: load every backend as serving would, and report the tools it would serve, what
//! to look at, and every error, without serving: what an operator runs in CI before a rollout.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use tonic_mcp_dynamic::DescriptorTools;
use tonic_mcp_schema::json_schema::Direction;
use tonic_mcp_schema::{Context, RpcKind};

use crate::args::Config;
use crate::assemble::Loaded;
use crate::error::Error;
use crate::gateway::{Gateway, load};

/// What `--check` found: one row per tool, and warnings.
#[derive(Debug, Default)]
pub struct Report {
    /// The tools, in `tools/list` order.
    pub rows: Vec<Row>,
    /// Things that work but deserve a look: a service without tools, a shrunk schema that
    /// still does not fit, a tool without a description.
    pub warnings: Vec<String>,
}

/// One tool the gateway would serve.
#[derive(Debug)]
pub struct Row {
    /// The tool name.
    pub tool: String,
    /// The backend it calls.
    pub backend: String,
    /// The RPC (`/shop.v1.CartService/GetCart`).
    pub rpc: String,
    /// `unary`, `server_streaming`, `client_streaming` or `bidi_streaming`.
    pub kind: &'static str,
    /// Bytes of minified JSON of the input and output schemas.
    pub schema_bytes: (usize, usize),
    /// Which schemas the `max_schema_bytes` budget shrank: `input`, `output`, both or none.
    pub shrunk: Vec<&'static str>,
}

/// Loads every backend (one that cannot be loaded is an error here, not a warning) and builds
/// the server as [`Gateway::connect`] does, then lists its tools.
///
/// # Errors
///
/// Every reason [`Gateway::connect`] has, for any backend.
pub async fn check(config: &Config) -> Result<Report, Error> {
    let mut loaded = Vec::with_capacity(config.backends.len());
    for backend in &config.backends {
        loaded.push(load(backend).await?);
    }
    let mut report = Report::default();
    for Loaded {
        backend,
        descriptors,
        ..
    } in &loaded
    {
        // Every schema is made here: the whole set's pool, once.
        let pool = descriptors
            .set
            .files()
            .whole_pool()
            .map_err(|e| backend.locate(format!("the descriptors do not link: {e}")))?;
        let context = Context::with_comments(&pool, &backend.options, &descriptors.comments);
        let services = descriptors
            .select(&backend.services)
            .map_err(|e| backend.locate(e))?;
        // The names the tools are served under (qualified by package where they collide).
        let naming = DescriptorTools::with_comments(
            &pool,
            Arc::clone(&descriptors.comments),
            &backend.options,
        )
        .unique_names(services.iter().map(String::as_str));
        for name in services {
            let Some(service) = pool.get_service_by_name(&name) else {
                continue;
            };
            let tools = context
                .service_tools(&service)
                .map_err(|e| backend.locate(e))?;
            if tools.tools.is_empty() {
                report.warnings.push(format!(
                    "backend `{}`: service {name} has no tools (every RPC is excluded or \
                     skipped)",
                    backend.name
                ));
            }
            for mut tool in tools.tools {
                tool.name = naming.served_name(&tool).to_owned();
                if tool.description.is_empty() {
                    report.warnings.push(format!(
                        "backend `{}`: tool `{}` has no description (descriptors without \
                         source info carry no comments)",
                        backend.name, tool.name
                    ));
                }
                for (direction, shrink) in &tool.shrunk {
                    if !shrink.fits {
                        report.warnings.push(format!(
                            "backend `{}`: tool `{}`: the {} schema is {} bytes after every \
                             shrinking step, over max_schema_bytes",
                            backend.name,
                            tool.name,
                            direction_name(*direction),
                            shrink.after
                        ));
                    }
                }
                report.rows.push(Row {
                    backend: backend.name.clone(),
                    rpc: tool.rpc_path.clone(),
                    kind: kind_name(tool.kind),
                    // Measured on the served tools below.
                    schema_bytes: (0, 0),
                    shrunk: tool
                        .shrunk
                        .iter()
                        .map(|(direction, _)| direction_name(*direction))
                        .collect(),
                    tool: tool.name,
                });
            }
        }
    }
    // The server itself: collisions, and what tool sets refuse.
    let gateway = Gateway::from_loaded(config, loaded)?;
    report.rows.sort_by(|a, b| a.tool.cmp(&b.tool));
    // The sizes of what clients get, stream controls and all.
    let served = gateway.server.served_tools();
    let names =
        |tools: &mut dyn Iterator<Item = &str>| tools.map(str::to_owned).collect::<Vec<_>>();
    if names(&mut served.iter().map(|t| t.name.as_ref()))
        != names(&mut report.rows.iter().map(|r| r.tool.as_str()))
    {
        return Err(Error::new(
            "the tools the server lists are not the tools the check found; this is a bug",
        ));
    }
    for (row, tool) in report.rows.iter_mut().zip(served) {
        let minified = |schema: &serde_json::Map<String, serde_json::Value>| {
            serde_json::to_vec(schema).map_or(0, |json| json.len())
        };
        row.schema_bytes = (
            minified(&tool.input_schema),
            tool.output_schema.as_deref().map_or(0, minified),
        );
    }
    Ok(report)
}

fn kind_name(kind: RpcKind) -> &'static str {
    match kind {
        RpcKind::Unary => "unary",
        RpcKind::ServerStreaming => "server_streaming",
        RpcKind::ClientStreaming => "client_streaming",
        RpcKind::Bidi => "bidi_streaming",
    }
}

fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Input => "input",
        Direction::Output => "output",
    }
}

impl fmt::Display for Report {
    /// A table a person reads in a CI log, then the warnings and a summary line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header = ["TOOL", "BACKEND", "RPC", "KIND", "SCHEMA BYTES", "SHRUNK"];
        let cells: Vec<[String; 6]> = self
            .rows
            .iter()
            .map(|row| {
                [
                    row.tool.clone(),
                    row.backend.clone(),
                    row.rpc.clone(),
                    row.kind.to_owned(),
                    format!("{} in, {} out", row.schema_bytes.0, row.schema_bytes.1),
                    if row.shrunk.is_empty() {
                        "no".to_owned()
                    } else {
                        row.shrunk.join(", ")
                    },
                ]
            })
            .collect();
        let mut widths = header.map(str::len);
        for row in &cells {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.len());
            }
        }
        let mut line = |cells: &[String]| {
            let mut text = String::new();
            for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
                if i + 1 == cells.len() {
                    text.push_str(cell);
                } else {
                    let _ = write!(text, "{cell:width$}  ");
                }
            }
            writeln!(f, "{}", text.trim_end())
        };
        line(&header.map(str::to_owned))?;
        for row in &cells {
            line(row)?;
        }
        for warning in &self.warnings {
            writeln!(f, "warning: {warning}")?;
        }
        let backends: std::collections::BTreeSet<&str> =
            self.rows.iter().map(|row| row.backend.as_str()).collect();
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        writeln!(
            f,
            "{} from {}, {}",
            plural(self.rows.len(), "tool"),
            plural(backends.len(), "backend"),
            plural(self.warnings.len(), "warning")
        )
    }
}
