//! Plugin options: `--rust-mcp_opt=key=value,flag` (protoc) or `opt:` (buf).
//!
//! Every option is listed in [`OPTIONS`] with its help text; `--help` and the error for an unknown
//! option both print that table, so they cannot drift apart.

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

/// Which constructors the generated Rust module offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Adapters {
    /// `from_channel` and `from_service` (the default).
    #[default]
    All,
    /// Only `from_channel`, forwarding over a tonic transport.
    Client,
    /// Only `from_service`, over an in-process implementation of the tonic server trait.
    Service,
}

impl Adapters {
    /// Whether `from_channel` is public (`from_service` is built on it, so it is always there).
    pub fn client(self) -> bool {
        matches!(self, Adapters::All | Adapters::Client)
    }

    /// Whether `from_service` is generated.
    pub fn service(self) -> bool {
        matches!(self, Adapters::All | Adapters::Service)
    }
}

/// The parsed plugin options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Path of the runtime crate in generated code (`::tonic_mcp`).
    pub runtime_crate: String,
    /// prost-build `extern_path` pairs (proto path, Rust path).
    pub extern_paths: Vec<(String, String)>,
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
    /// Which constructors the Rust module offers.
    pub adapters: Adapters,
    /// Write `<package>.mcp.json` beside the Rust output.
    pub tools_json: bool,
    /// Write the Rust modules (`<package>.pb.mcp.rs`).
    pub rust: bool,
    /// Write outputs directly into the output directory instead of `demo/v1/…` subfolders (the
    /// layout protoc-gen-prost uses unless its own `flat_output_dir` is set).
    pub flat_output_dir: bool,
    /// Insert `include!("<package>.pb.mcp.rs")` into the prost file at its `module` insertion
    /// point (protoc-gen-prost in the same protoc or buf run).
    pub include_in_prost: bool,
    /// RPCs to expose, by full name (`demo.v1.ItemService.GetItem`); `*` globs. Empty: all.
    pub include: Vec<String>,
    /// RPCs to leave out, by full name; `*` globs.
    pub exclude: Vec<String>,
    /// Only RPCs that carry a `(rust_mcp.tool)` option become tools.
    pub opt_in: bool,
    /// The most bytes of minified JSON an input or output schema may take before it is shrunk
    /// ([`crate::schema::tool_schema_report`]); 0: no limit.
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
/// (`scripts/corpus.sh`, BENCHMARKS.md).
pub const DEFAULT_MAX_SCHEMA_BYTES: usize = 16 * 1024;

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime_crate: "::tonic_mcp".to_owned(),
            extern_paths: Vec::new(),
            tool_names: ToolNames::default(),
            prefix: None,
            json_names: false,
            unions: Unions::default(),
            schema_keyword: false,
            descriptions: true,
            emit_defaults: false,
            adapters: Adapters::default(),
            tools_json: false,
            rust: true,
            flat_output_dir: false,
            include_in_prost: false,
            include: Vec::new(),
            exclude: Vec::new(),
            opt_in: false,
            max_schema_bytes: DEFAULT_MAX_SCHEMA_BYTES,
            long_running: LongRunning::default(),
        }
    }
}

/// One documented option: its key, the value it takes and what it does.
#[derive(Debug, Clone, Copy)]
pub struct OptionDoc {
    /// The key.
    pub key: &'static str,
    /// The accepted value, as shown to users.
    pub value: &'static str,
    /// One line of help.
    pub help: &'static str,
}

/// Every option the plugin accepts.
pub const OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        key: "runtime_crate",
        value: "<rust path>",
        help: "path of the runtime crate in generated code (default ::tonic_mcp)",
    },
    OptionDoc {
        key: "extern_path",
        value: "<.proto.path>=<rust path>",
        help: "as prost-build's extern_path; repeat for several",
    },
    OptionDoc {
        key: "tool_names",
        value: "service_method|method|package",
        help: "tool-name scheme: ItemService_GetItem (default), GetItem, demo_v1_ItemService_GetItem",
    },
    OptionDoc {
        key: "prefix",
        value: "<prefix>",
        help: "prefix every tool name with <prefix>_ (a service's (rust_mcp.service).prefix wins)",
    },
    OptionDoc {
        key: "json_names",
        value: "[true|false]",
        help: "property names in lowerCamel JSON form instead of proto field names (default false)",
    },
    OptionDoc {
        key: "unions",
        value: "one_of|any_of",
        help: "combinator for oneof branches (default one_of)",
    },
    OptionDoc {
        key: "schema_keyword",
        value: "[true|false]",
        help: "schemas carry \"$schema\" naming draft 2020-12 (default false)",
    },
    OptionDoc {
        key: "descriptions",
        value: "[true|false]",
        help: "emit descriptions from proto comments (default true)",
    },
    OptionDoc {
        key: "emit_defaults",
        value: "[true|false]",
        help: "tool results include default-valued fields (default false)",
    },
    OptionDoc {
        key: "adapters",
        value: "all|client|service",
        help: "constructors to generate: from_channel, from_service or both (default all)",
    },
    OptionDoc {
        key: "tools_json",
        value: "[true|false]",
        help: "also write <package>.mcp.json with every tool as tools/list shows it (default false)",
    },
    OptionDoc {
        key: "rust",
        value: "[true|false]",
        help: "write the Rust modules <package>.pb.mcp.rs (default true)",
    },
    OptionDoc {
        key: "flat_output_dir",
        value: "[true|false]",
        help: "write files into the output directory itself instead of demo/v1/demo.v1.pb.mcp.rs, as protoc-gen-prost's option of the same name (default false)",
    },
    OptionDoc {
        key: "include_in_prost",
        value: "[true|false]",
        help: "include the module from protoc-gen-prost's <package>.rs at its `module` insertion point (default false)",
    },
    OptionDoc {
        key: "include",
        value: "<glob>",
        help: "expose only RPCs whose full name (demo.v1.ItemService.GetItem) matches; repeat for several",
    },
    OptionDoc {
        key: "exclude",
        value: "<glob>",
        help: "leave out RPCs whose full name matches; repeat for several",
    },
    OptionDoc {
        key: "max_schema_bytes",
        value: "<bytes>",
        help: "shrink an input or output schema whose minified JSON is larger, in documented steps, and say so on stderr; 0: no limit (default 16384)",
    },
    OptionDoc {
        key: "long_running",
        value: "wait|operation",
        help: "RPCs returning a google.longrunning.Operation with operation_info: wait for it and return its response (default), or return the operation",
    },
    OptionDoc {
        key: "opt_in",
        value: "[true|false]",
        help: "only RPCs carrying a (rust_mcp.tool) option become tools (default false)",
    },
];

/// The options table as shown by `--help` and in errors.
pub fn options_help() -> String {
    let width = OPTIONS
        .iter()
        .map(|o| o.key.len() + o.value.len() + 1)
        .max()
        .unwrap_or(0);
    OPTIONS
        .iter()
        .map(|o| {
            let head = format!("{}={}", o.key, o.value);
            format!("  {head:width$}  {}\n", o.help)
        })
        .collect()
}

impl Options {
    /// Parses the comma-separated parameter string protoc and buf pass to the plugin.
    pub fn parse(parameter: &str) -> Result<Options> {
        let mut options = Options::default();
        for raw in parameter
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let (key, value) = match raw.split_once('=') {
                Some((key, value)) => (key.trim(), Some(value.trim())),
                None => (raw, None),
            };
            options.apply(raw, key, value)?;
        }
        Ok(options)
    }

    fn apply(&mut self, raw: &str, key: &str, value: Option<&str>) -> Result<()> {
        let invalid = |reason: String| Error::Option {
            option: raw.to_owned(),
            reason,
        };
        let flag = |value: Option<&str>| -> Result<bool> {
            match value {
                None | Some("true") => Ok(true),
                Some("false") => Ok(false),
                Some(other) => Err(invalid(format!(
                    "`{other}` is not a boolean; write `{key}`, `{key}=true` or `{key}=false`"
                ))),
            }
        };
        let text = |value: Option<&str>, what: &str| -> Result<String> {
            match value {
                Some(v) if !v.is_empty() => Ok(v.to_owned()),
                _ => Err(invalid(format!("expects a value: `{key}={what}`"))),
            }
        };
        match key {
            "runtime_crate" => {
                let path = text(value, "<rust path>")?;
                if !is_rust_path(&path) {
                    return Err(invalid(format!(
                        "`{path}` is not a Rust path; for example `::tonic_mcp` or `crate::mcp`"
                    )));
                }
                self.runtime_crate = path;
            }
            "extern_path" => {
                let pair = text(value, "<.proto.path>=<rust path>")?;
                let Some((proto, rust)) = pair.split_once('=') else {
                    return Err(invalid(
                        "expects `extern_path=<.proto.path>=<rust path>`, for example \
                         `extern_path=.acme.common=::acme_common`"
                            .to_owned(),
                    ));
                };
                if !proto.starts_with('.') {
                    return Err(invalid(format!(
                        "the proto path `{proto}` must be fully qualified with a leading dot, \
                         for example `.{proto}`"
                    )));
                }
                self.extern_paths.push((proto.to_owned(), rust.to_owned()));
            }
            "tool_names" => {
                self.tool_names = match value {
                    Some("service_method") => ToolNames::ServiceMethod,
                    Some("method") => ToolNames::Method,
                    Some("package") => ToolNames::Package,
                    _ => {
                        return Err(invalid(
                            "valid values are `service_method`, `method` and `package`".to_owned(),
                        ));
                    }
                }
            }
            "prefix" => {
                let prefix = text(value, "<prefix>")?;
                crate::names::check_prefix(&prefix).map_err(invalid)?;
                self.prefix = Some(prefix);
            }
            "json_names" => self.json_names = flag(value)?,
            "unions" => {
                self.unions = match value {
                    Some("one_of") => Unions::OneOf,
                    Some("any_of") => Unions::AnyOf,
                    _ => return Err(invalid("valid values are `one_of` and `any_of`".to_owned())),
                }
            }
            "schema_keyword" => self.schema_keyword = flag(value)?,
            "descriptions" => self.descriptions = flag(value)?,
            "emit_defaults" => self.emit_defaults = flag(value)?,
            "adapters" => {
                self.adapters = match value {
                    Some("all") => Adapters::All,
                    Some("client") => Adapters::Client,
                    Some("service") => Adapters::Service,
                    _ => {
                        return Err(invalid(
                            "valid values are `all`, `client` and `service`".to_owned(),
                        ));
                    }
                }
            }
            "tools_json" => self.tools_json = flag(value)?,
            "rust" => self.rust = flag(value)?,
            "flat_output_dir" => self.flat_output_dir = flag(value)?,
            "include_in_prost" => self.include_in_prost = flag(value)?,
            "include" => self.include.push(text(value, "<glob>")?),
            "exclude" => self.exclude.push(text(value, "<glob>")?),
            "opt_in" => self.opt_in = flag(value)?,
            "long_running" => {
                self.long_running = match value {
                    Some("wait") => LongRunning::Wait,
                    Some("operation") => LongRunning::Operation,
                    _ => {
                        return Err(invalid(
                            "valid values are `wait` and `operation`".to_owned(),
                        ));
                    }
                }
            }
            "max_schema_bytes" => {
                let text = text(value, "<bytes>")?;
                self.max_schema_bytes = text.parse().map_err(|_| {
                    invalid(format!(
                        "`{text}` is not a number of bytes; for example `max_schema_bytes=16384`, \
                         or `max_schema_bytes=0` for no limit"
                    ))
                })?;
            }
            _ => {
                return Err(invalid(format!(
                    "unknown option `{key}`; valid options are:\n{}",
                    options_help()
                )));
            }
        }
        Ok(())
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

/// Whether `path` is a plain Rust path (`::tonic_mcp`, `crate::mcp`, `r#async::x`): segments
/// joined by `::`, an optional leading `::`, each segment an identifier or a raw identifier.
fn is_rust_path(path: &str) -> bool {
    // Strict keywords that cannot be path segments (`crate`, `self`, `super` and `Self` can).
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern",
        "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
        "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use",
        "where", "while",
    ];
    let segments = path.strip_prefix("::").unwrap_or(path);
    !segments.is_empty()
        && segments.split("::").all(|segment| {
            let (raw, ident) = match segment.strip_prefix("r#") {
                Some(ident) => (true, ident),
                None => (false, segment),
            };
            let mut chars = ident.chars();
            chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
                && chars.all(|c| c == '_' || c.is_alphanumeric())
                && ident != "_"
                && (raw || !KEYWORDS.contains(&ident))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_paths() {
        for path in [
            "::tonic_mcp",
            "crate::mcp",
            "super::x",
            "r#async::y",
            "a::b::C",
        ] {
            assert!(is_rust_path(path), "{path}");
        }
        for path in [
            "", "::", "a::", "a::::b", "fn::x", "1a", "a-b", "a::<T>", "_", "a b",
        ] {
            assert!(!is_rust_path(path), "{path}");
        }
    }

    #[test]
    fn parses_every_kind_of_option() {
        let options = Options::parse(
            "json_names,unions=any_of,tool_names=method,prefix=shop,extern_path=.acme=::acme,\
             include=demo.v1.*,exclude=*.Delete*,tools_json=true,descriptions=false",
        )
        .unwrap();
        assert!(options.json_names);
        assert_eq!(options.unions, Unions::AnyOf);
        assert_eq!(options.tool_names, ToolNames::Method);
        assert_eq!(options.prefix.as_deref(), Some("shop"));
        assert_eq!(
            options.extern_paths,
            vec![(".acme".to_owned(), "::acme".to_owned())]
        );
        assert!(options.tools_json);
        assert!(!options.descriptions);
        assert_eq!(options.max_schema_bytes, DEFAULT_MAX_SCHEMA_BYTES);
        assert_eq!(options.long_running, LongRunning::Wait);
        assert_eq!(
            Options::parse("long_running=operation")
                .unwrap()
                .long_running,
            LongRunning::Operation
        );
        assert_eq!(
            Options::parse("max_schema_bytes=0")
                .unwrap()
                .max_schema_bytes,
            0
        );
        assert!(options.selects("demo.v1.ItemService.GetItem"));
        assert!(!options.selects("demo.v1.ItemService.DeleteItem"));
        assert!(!options.selects("other.Service.GetItem"));
    }

    #[test]
    fn unknown_option_lists_the_valid_ones() {
        let err = Options::parse("json_name").unwrap_err().to_string();
        assert!(err.contains("unknown option `json_name`"), "{err}");
        for doc in OPTIONS {
            assert!(err.contains(doc.key), "{err} lacks {}", doc.key);
        }
    }

    #[test]
    fn bad_values_say_what_is_valid() {
        let cases = [
            ("unions=xor", "`one_of` and `any_of`"),
            ("json_names=yes", "write `json_names`"),
            ("extern_path=acme=::acme", "leading dot"),
            ("runtime_crate=not a path", "not a Rust path"),
            ("prefix=9lives", "letter"),
            ("tool_names", "`service_method`, `method` and `package`"),
            ("max_schema_bytes=lots", "not a number of bytes"),
            ("long_running=later", "`wait` and `operation`"),
        ];
        for (input, expected) in cases {
            let err = Options::parse(input).unwrap_err().to_string();
            assert!(err.contains(expected), "{input}: {err}");
        }
    }
}
