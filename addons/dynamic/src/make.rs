//! Making the tools of many services, on several threads: each thread makes the tools of a run
//! of services with its own schema context, and the caller registers them in order.

use std::{collections::HashMap, sync::Arc};

use super::schema_texts::SchemaTexts;
use prost_reflect::DescriptorPool;
use tonic_mcp::{Error, MadeSchemas, SpecTool};
use tonic_mcp_schema::{Context, Options, ToolSpec, tools::Schemas as When};

use super::lazy::{MethodSchemas, SchemaSource, text};

/// Most threads [`DescriptorTools::services`] makes tools on.
pub(super) const MAX_THREADS: usize = 8;

/// Fewest methods worth a thread of their own.
const METHODS_PER_THREAD: usize = 256;

/// What making a tool reads besides its spec: shared, read-only, by every thread.
#[derive(Clone, Copy)]
pub(super) struct Maker<'a> {
    pub(super) pool: &'a DescriptorPool,
    pub(super) options: &'a Options,
    pub(super) renamed: &'a HashMap<String, (String, String)>,
    /// What the tools' schemas are made from when first needed; `None` to make them now.
    pub(super) later: Option<&'a Arc<SchemaSource>>,
    /// Where schemas made now are packed.
    pub(super) texts: &'a SchemaTexts,
}

/// A tool made ready for [`ToolSetBuilder::add_spec_tool`](tonic_mcp::codegen::ToolSetBuilder::add_spec_tool).
#[derive(Debug)]
pub(super) struct Made {
    pub(super) tool: SpecTool,
}

impl Made {
    /// Serves the tool under the unique name `renamed` gives its RPC, if it gives one for
    /// the name the tool has (see [`DescriptorTools::unique_names`](super::DescriptorTools::unique_names)).
    pub(super) fn rename(&mut self, renamed: &HashMap<String, (String, String)>) {
        if let Some((taken, unique)) = renamed.get(self.tool.rpc_path())
            && taken == self.tool.name()
        {
            let unique = unique.clone();
            self.tool.rename(unique);
        }
    }
}

/// `names` cut into at most `threads` runs of about the same number of methods, in order.
pub(super) fn runs<'n, 's>(
    pool: &DescriptorPool,
    names: &'s [&'n str],
    threads: usize,
) -> Vec<&'s [&'n str]> {
    let methods: Vec<usize> = names
        .iter()
        .map(|name| {
            pool.get_service_by_name(name)
                .map_or(0, |s| s.methods().len())
        })
        .collect();
    let total: usize = methods.iter().sum();
    let threads = threads.min(total / METHODS_PER_THREAD).max(1);
    let share = total.div_ceil(threads).max(1);
    let mut runs = Vec::with_capacity(threads);
    let (mut start, mut sum) = (0, 0);
    for (at, count) in methods.iter().enumerate() {
        sum += count;
        if sum >= share && runs.len() + 1 < threads {
            runs.push(&names[start..=at]);
            start = at + 1;
            sum = 0;
        }
    }
    if start < names.len() || runs.is_empty() {
        runs.push(&names[start..]);
    }
    runs
}

/// The tools of each of `names` in order, up to and including the first error.
pub(super) fn make_run(
    context: &Context<'_>,
    maker: Maker<'_>,
    names: &[&str],
) -> Vec<Result<Vec<Made>, Error>> {
    let mut made = Vec::with_capacity(names.len());
    for name in names {
        let tools = maker
            .pool
            .get_service_by_name(name)
            .ok_or_else(|| Error::UnknownService {
                name: (*name).to_owned(),
            })
            .and_then(|service| {
                let when = match maker.later {
                    Some(_) => When::Later,
                    None => When::Now,
                };
                context
                    .service_tools_with(&service, when)
                    .map_err(|e| Error::ToolGeneration(e.to_string()))
            })
            .and_then(|tools| {
                let service_description = tools.description.map(Arc::from);
                tools
                    .tools
                    .into_iter()
                    .map(|spec| maker.made(spec, service_description.clone()))
                    .collect()
            });
        let failed = tools.is_err();
        made.push(tools);
        if failed {
            break;
        }
    }
    made
}

/// The name `spec`'s tool is served under (see [`DescriptorTools::served_name`]).
pub(super) fn served_name<'s>(
    renamed: &'s HashMap<String, (String, String)>,
    spec: &'s ToolSpec,
) -> &'s str {
    match renamed.get(&spec.rpc_path) {
        Some((taken, unique)) if *taken == spec.name => unique,
        _ => &spec.name,
    }
}

impl Maker<'_> {
    /// `spec` as it is registered: served under its unique name, its schemas as text.
    /// `service_description` is the proto comment of the tool's service.
    pub(super) fn made(
        &self,
        mut spec: ToolSpec,
        service_description: Option<Arc<str>>,
    ) -> Result<Made, Error> {
        let name = served_name(self.renamed, &spec).to_owned();
        spec.name = name;
        let tool = match self.later {
            Some(source) => {
                let maker = Box::new(MethodSchemas {
                    source: Arc::clone(source),
                    rpc_path: spec.rpc_path.clone(),
                });
                SpecTool::later(spec, self.options, service_description, maker)
            }
            None => {
                let tool = &spec.name;
                let invalid = |which: &'static str| {
                    move |message: String| Error::InvalidSchema {
                        tool: tool.clone(),
                        which,
                        message,
                    }
                };
                let input =
                    text(std::mem::take(&mut spec.input_schema)).map_err(invalid("input"))?;
                let output =
                    text(std::mem::take(&mut spec.output_schema)).map_err(invalid("output"))?;
                let made = MadeSchemas::made(&input, &output, |text| self.texts.keep(text));
                SpecTool::new(spec, self.options, service_description, made)
            }
        };
        Ok(Made { tool })
    }
}
