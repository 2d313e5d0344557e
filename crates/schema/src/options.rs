//! Options: `--rust-mcp_opt=key=value,flag` (protoc), `opt:` (buf), the gateway's `--opt`.
//!
//! Every option is listed in [`OPTIONS`] with its help text and its [`Scope`]; `--help` and the
//! error for an unknown option both print that table, so they cannot drift apart.
//!
//! The options split by who uses them. The tool options ([`Scope::Tool`]) say what a tool looks
//! like: its name, its schemas, which RPCs become tools. The plugin, `tonic-mcp-dynamic`'s
//! `DescriptorTools` and the gateway share them, as [`Options`]. The code options
//! ([`Scope::Code`]) say how Rust is written and where files go; only the plugin reads them
//! (its `PluginOptions`, which holds an [`Options`]). They are listed here too, so that every
//! reader of an option string tells a code option from an unknown one.

use crate::error::{Error, Result};

/// How a tool is named before any prefix or per-method override is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolNames {
    /// `ItemService_GetItem` (the default).
    #[default]
    ServiceMethod,
    /// `GetItem`.
    Method,
    /// `demo_v1_ItemService_GetItem`.
    Package,
}

/// Which JSON Schema combinator carries a oneof's branches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unions {
    /// `oneOf` (the default).
    #[default]
    OneOf,
    /// `anyOf`, for strict provider modes that accept only `anyOf`.
    AnyOf,
}

impl Unions {
    /// The JSON Schema keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Unions::OneOf => "oneOf",
            Unions::AnyOf => "anyOf",
        }
    }
}

/// The tool options: what a tool looks like, for the plugin, the runtime and the gateway alike
/// ([`Scope::Tool`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The tool-name scheme.
    pub tool_names: ToolNames,
    /// A prefix for every tool name (joined with `_`).
    pub prefix: Option<String>,
    /// Property names are lowerCamel JSON names instead of proto field names.
    pub json_names: bool,
    /// `oneOf` or `anyOf` for oneofs.
    pub unions: Unions,
    /// Schemas carry `"$schema": "https://json-schema.org/draft/2020-12/schema"`.
    pub schema_keyword: bool,
    /// Descriptions from proto comments are emitted.
    pub descriptions: bool,
    /// Output encoding emits default-valued fields.
    pub emit_defaults: bool,
    /// RPCs to expose, by full name (`demo.v1.ItemService.GetItem`); `*` globs. Empty: all.
    pub include: Vec<String>,
    /// RPCs to leave out, by full name; `*` globs.
    pub exclude: Vec<String>,
    /// Only RPCs that carry a `(rust_mcp.tool)` option become tools.
    pub opt_in: bool,
    /// The most bytes of minified JSON an input or output schema may take before it is shrunk
    /// ([`crate::json_schema::tool_schema_report`]); 0: no limit.
    pub max_schema_bytes: usize,
    /// Whether tools of RPCs that return `google.longrunning.Operation` wait for it by default.
    pub long_running: LongRunning,
}

/// How a tool treats a `google.longrunning.Operation` result (`long_running` plugin option,
/// `(rust_mcp.tool).long_running`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LongRunning {
    /// Poll the operation until it is done or the deadline passes; return its response.
    #[default]
    Wait,
    /// Return the operation as the RPC answered it.
    Operation,
}

/// The default `max_schema_bytes`, chosen from measurement on the googleapis corpus
/// (`scripts/corpus.sh`; docs/benchmark-history.md).
pub const DEFAULT_MAX_SCHEMA_BYTES: usize = 16 * 1024;

impl Default for Options {
    fn default() -> Self {
        Options {
            tool_names: ToolNames::default(),
            prefix: None,
            json_names: false,
            unions: Unions::default(),
            schema_keyword: false,
            descriptions: true,
            emit_defaults: false,
            include: Vec::new(),
            exclude: Vec::new(),
            opt_in: false,
            max_schema_bytes: DEFAULT_MAX_SCHEMA_BYTES,
            long_running: LongRunning::default(),
        }
    }
}

/// Who reads an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// What a tool looks like: the plugin, the runtime and the gateway read it ([`Options`]).
    Tool,
    /// How Rust is written and where files go: only the plugin reads it.
    Code,
}

/// One documented option: its key, the value it takes, what it does and who reads it.
#[derive(Debug, Clone, Copy)]
pub struct OptionDoc {
    /// The key.
    pub key: &'static str,
    /// The accepted value, as shown to users.
    pub value: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// Who reads it.
    pub scope: Scope,
}

/// Every option the plugin accepts, tool options and code options.
pub const OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        key: "runtime_crate",
        value: "<rust path>",
        help: "path of the runtime crate in generated code (default ::tonic_mcp)",
        scope: Scope::Code,
    },
    OptionDoc {
        key: "extern_path",
        value: "<.proto.path>=<rust path>",
        help: "as prost-build's extern_path; repeat for several",
        scope: Scope::Code,
    },
    OptionDoc {
        key: "tool_names",
        value: "service_method|method|package",
        help: "tool-name scheme: ItemService_GetItem (default), GetItem, demo_v1_ItemService_GetItem",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "prefix",
        value: "<prefix>",
        help: "prefix every tool name with <prefix>_ (a service's (rust_mcp.service).prefix wins)",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "json_names",
        value: "[true|false]",
        help: "property names in lowerCamel JSON form instead of proto field names (default false)",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "unions",
        value: "one_of|any_of",
        help: "combinator for oneof branches (default one_of)",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "schema_keyword",
        value: "[true|false]",
        help: "schemas carry \"$schema\" naming draft 2020-12 (default false)",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "descriptions",
        value: "[true|false]",
        help: "emit descriptions from proto comments (default true)",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "emit_defaults",
        value: "[true|false]",
        help: "tool results include default-valued fields (default false)",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "adapters",
        value: "all|client|service",
        help: "constructors to generate: from_channel, from_service or both (default all)",
        scope: Scope::Code,
    },
    OptionDoc {
        key: "tools_json",
        value: "[true|false]",
        help: "also write <package>.mcp.json with every tool as tools/list shows it (default false)",
        scope: Scope::Code,
    },
    OptionDoc {
        key: "rust",
        value: "[true|false]",
        help: "write the Rust modules <package>.pb.mcp.rs (default true)",
        scope: Scope::Code,
    },
    OptionDoc {
        key: "flat_output_dir",
        value: "[true|false]",
        help: "write files into the output directory itself instead of demo/v1/demo.v1.pb.mcp.rs, as protoc-gen-prost's option of the same name (default false)",
        scope: Scope::Code,
    },
    OptionDoc {
        key: "include_in_prost",
        value: "[true|false]",
        help: "include the module from protoc-gen-prost's <package>.rs at its `module` insertion point (default false)",
        scope: Scope::Code,
    },
    OptionDoc {
        key: "include",
        value: "<glob>",
        help: "expose only RPCs whose full name (demo.v1.ItemService.GetItem) matches; repeat for several",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "exclude",
        value: "<glob>",
        help: "leave out RPCs whose full name matches; repeat for several",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "max_schema_bytes",
        value: "<bytes>",
        help: "shrink an input or output schema whose minified JSON is larger, in documented steps, and say so on stderr; 0: no limit (default 16384)",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "long_running",
        value: "wait|operation",
        help: "RPCs returning a google.longrunning.Operation with operation_info: wait for it and return its response (default), or return the operation",
        scope: Scope::Tool,
    },
    OptionDoc {
        key: "opt_in",
        value: "[true|false]",
        help: "only RPCs carrying a (rust_mcp.tool) option become tools (default false)",
        scope: Scope::Tool,
    },
];

/// The options table as shown by `--help` and in errors.
pub fn options_help() -> String {
    help_table(OPTIONS.iter())
}

/// The table of `options` as [`options_help`] prints it: `key=value` aligned, then the help.
pub fn help_table<'a>(options: impl Iterator<Item = &'a OptionDoc> + Clone) -> String {
    let width = options
        .clone()
        .map(|o| o.key.len() + o.value.len() + 1)
        .max()
        .unwrap_or(0);
    options
        .map(|o| {
            let head = format!("{}={}", o.key, o.value);
            format!("  {head:width$}  {}\n", o.help)
        })
        .collect()
}

/// The documentation of the option `key`, if there is one.
pub fn option_doc(key: &str) -> Option<&'static OptionDoc> {
    OPTIONS.iter().find(|doc| doc.key == key)
}

/// One `key` or `key=value` of a comma-separated option string.
#[derive(Debug, Clone, Copy)]
pub struct OptionItem<'a> {
    /// The item as written, trimmed.
    pub raw: &'a str,
    /// The key, trimmed.
    pub key: &'a str,
    /// The value after the first `=`, trimmed; `None` without `=`.
    pub value: Option<&'a str>,
}

impl<'a> OptionItem<'a> {
    /// The items of `parameter`, the comma-separated string protoc and buf pass to the plugin;
    /// empty items are skipped.
    pub fn split(parameter: &'a str) -> impl Iterator<Item = OptionItem<'a>> {
        parameter
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|raw| match raw.split_once('=') {
                Some((key, value)) => OptionItem {
                    raw,
                    key: key.trim(),
                    value: Some(value.trim()),
                },
                None => OptionItem {
                    raw,
                    key: raw,
                    value: None,
                },
            })
    }

    /// The error for this item: it is invalid for `reason`.
    pub fn invalid(&self, reason: String) -> Error {
        Error::Option {
            option: self.raw.to_owned(),
            reason,
        }
    }

    /// The error for a key no parser took; `valid` is the table of the options that are.
    pub fn unknown(&self, valid: &str) -> Error {
        self.invalid(format!(
            "unknown option `{}`; valid options are:\n{valid}",
            self.key
        ))
    }

    /// A boolean value: `key`, `key=true` or `key=false`.
    pub fn flag(&self) -> Result<bool> {
        let key = self.key;
        match self.value {
            None | Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(other) => Err(self.invalid(format!(
                "`{other}` is not a boolean; write `{key}`, `{key}=true` or `{key}=false`"
            ))),
        }
    }

    /// A value that must not be empty; `what` shows its form in the error (`<glob>`).
    pub fn text(&self, what: &str) -> Result<String> {
        match self.value {
            Some(v) if !v.is_empty() => Ok(v.to_owned()),
            _ => Err(self.invalid(format!("expects a value: `{}={what}`", self.key))),
        }
    }
}

impl Options {
    /// Parses a comma-separated option string of tool options. A code option is refused, as
    /// it shapes nothing here; so is an unknown one, with the table of tool options.
    pub fn parse(parameter: &str) -> Result<Options> {
        let mut options = Options::default();
        for item in OptionItem::split(parameter) {
            if !options.set(&item)? {
                return Err(match option_doc(item.key) {
                    Some(doc) if doc.scope == Scope::Code => item.invalid(format!(
                        "`{}` shapes generated Rust code or output files, which only \
                         protoc-gen-rust-mcp writes; tool options are:\n{}",
                        item.key,
                        help_table(OPTIONS.iter().filter(|o| o.scope == Scope::Tool))
                    )),
                    _ => item.unknown(&help_table(
                        OPTIONS.iter().filter(|o| o.scope == Scope::Tool),
                    )),
                });
            }
        }
        Ok(options)
    }

    /// Applies `item` when it is a tool option; `Ok(false)` when its key is not one.
    pub fn set(&mut self, item: &OptionItem<'_>) -> Result<bool> {
        let value = item.value;
        match item.key {
            "tool_names" => {
                self.tool_names = match value {
                    Some("service_method") => ToolNames::ServiceMethod,
                    Some("method") => ToolNames::Method,
                    Some("package") => ToolNames::Package,
                    _ => {
                        return Err(item.invalid(
                            "valid values are `service_method`, `method` and `package`".to_owned(),
                        ));
                    }
                }
            }
            "prefix" => {
                let prefix = item.text("<prefix>")?;
                crate::names::check_prefix(&prefix).map_err(|reason| item.invalid(reason))?;
                self.prefix = Some(prefix);
            }
            "json_names" => self.json_names = item.flag()?,
            "unions" => {
                self.unions = match value {
                    Some("one_of") => Unions::OneOf,
                    Some("any_of") => Unions::AnyOf,
                    _ => {
                        return Err(
                            item.invalid("valid values are `one_of` and `any_of`".to_owned())
                        );
                    }
                }
            }
            "schema_keyword" => self.schema_keyword = item.flag()?,
            "descriptions" => self.descriptions = item.flag()?,
            "emit_defaults" => self.emit_defaults = item.flag()?,
            "include" => self.include.push(item.text("<glob>")?),
            "exclude" => self.exclude.push(item.text("<glob>")?),
            "opt_in" => self.opt_in = item.flag()?,
            "long_running" => {
                self.long_running = match value {
                    Some("wait") => LongRunning::Wait,
                    Some("operation") => LongRunning::Operation,
                    _ => {
                        return Err(
                            item.invalid("valid values are `wait` and `operation`".to_owned())
                        );
                    }
                }
            }
            "max_schema_bytes" => {
                let text = item.text("<bytes>")?;
                self.max_schema_bytes = text.parse().map_err(|_| {
                    item.invalid(format!(
                        "`{text}` is not a number of bytes; for example `max_schema_bytes=16384`, \
                         or `max_schema_bytes=0` for no limit"
                    ))
                })?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether the RPC with this full name (`demo.v1.ItemService.GetItem`) passes the `include`
    /// and `exclude` lists.
    pub fn selects(&self, method_full_name: &str) -> bool {
        let included = self.include.is_empty()
            || self
                .include
                .iter()
                .any(|glob| crate::names::glob_match(glob, method_full_name));
        included
            && !self
                .exclude
                .iter()
                .any(|glob| crate::names::glob_match(glob, method_full_name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_of_tool_option() {
        let options = Options::parse(
            "json_names,unions=any_of,tool_names=method,prefix=shop,include=demo.v1.*,\
             exclude=*.Delete*,descriptions=false,schema_keyword,emit_defaults=true,opt_in",
        )
        .unwrap();
        assert!(options.json_names);
        assert_eq!(options.unions, Unions::AnyOf);
        assert_eq!(options.tool_names, ToolNames::Method);
        assert_eq!(options.prefix.as_deref(), Some("shop"));
        assert!(!options.descriptions);
        assert!(options.schema_keyword && options.emit_defaults && options.opt_in);
        assert_eq!(options.max_schema_bytes, DEFAULT_MAX_SCHEMA_BYTES);
        assert!(options.selects("demo.v1.ItemService.GetItem"));
        assert!(!options.selects("demo.v1.ItemService.DeleteItem"));
        assert!(!options.selects("other.Service.GetItem"));
    }

    #[test]
    fn every_option_is_a_tool_option_or_a_code_option() {
        for doc in OPTIONS {
            let err = Options::parse(doc.key).err().map(|e| e.to_string());
            let err = err.as_deref().unwrap_or("");
            match doc.scope {
                Scope::Tool => assert!(!err.contains("unknown option"), "{}: {err}", doc.key),
                Scope::Code => {
                    assert!(
                        err.contains("shapes generated Rust code"),
                        "{}: {err}",
                        doc.key
                    )
                }
            }
        }
    }

    #[test]
    fn unknown_option_lists_the_tool_options() {
        let err = Options::parse("json_name").unwrap_err().to_string();
        assert!(err.contains("unknown option `json_name`"), "{err}");
        for doc in OPTIONS {
            let listed = err.contains(&format!("  {}=", doc.key));
            assert_eq!(listed, doc.scope == Scope::Tool, "{err}: {}", doc.key);
        }
    }

    #[test]
    fn a_tool_option_without_its_value_says_so() {
        // The other bad values are checked through the plugin's parser, which is this one.
        for key in ["include", "exclude", "prefix", "max_schema_bytes"] {
            let err = Options::parse(key).unwrap_err().to_string();
            assert!(err.contains(&format!("expects a value: `{key}=")), "{err}");
        }
    }
}
