//! The plugin's options: the tool options it shares with the runtime and the gateway
//! ([`Options`], from `tonic-mcp-schema`), and the code options that say how Rust is written
//! and where files go ([`PluginOptions`], which holds the tool options).
//!
//! Both kinds are written in one `--rust-mcp_opt` string and documented in one table,
//! [`OPTIONS`], where each option's [`Scope`] says which kind it is.

pub use tonic_mcp_schema::options::*;

use tonic_mcp_schema::error::Result;

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

/// Every option of the plugin: the tool options and the code options ([`Scope::Code`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginOptions {
    /// What the tools look like, as the runtime and the gateway make them too.
    pub tools: Options,
    /// Path of the runtime crate in generated code (`::tonic_mcp`).
    pub runtime_crate: String,
    /// prost-build `extern_path` pairs (proto path, Rust path).
    pub extern_paths: Vec<(String, String)>,
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
}

impl Default for PluginOptions {
    fn default() -> Self {
        PluginOptions {
            tools: Options::default(),
            runtime_crate: "::tonic_mcp".to_owned(),
            extern_paths: Vec::new(),
            adapters: Adapters::default(),
            tools_json: false,
            rust: true,
            flat_output_dir: false,
            include_in_prost: false,
        }
    }
}

impl PluginOptions {
    /// Parses the comma-separated parameter string protoc and buf pass to the plugin.
    pub fn parse(parameter: &str) -> Result<PluginOptions> {
        let mut options = PluginOptions::default();
        for item in OptionItem::split(parameter) {
            options.apply(&item)?;
        }
        Ok(options)
    }

    /// Applies one item of a parameter string, of either kind.
    pub(crate) fn apply(&mut self, item: &OptionItem<'_>) -> Result<()> {
        if self.tools.set(item)? || self.set_code_option(item)? {
            Ok(())
        } else {
            Err(item.unknown(&options_help()))
        }
    }

    /// Applies `item` when it is a code option; `Ok(false)` when its key is not one.
    fn set_code_option(&mut self, item: &OptionItem<'_>) -> Result<bool> {
        match item.key {
            "runtime_crate" => {
                let path = item.text("<rust path>")?;
                if !is_rust_path(&path) {
                    return Err(item.invalid(format!(
                        "`{path}` is not a Rust path; for example `::tonic_mcp` or `crate::mcp`"
                    )));
                }
                self.runtime_crate = path;
            }
            "extern_path" => {
                let pair = item.text("<.proto.path>=<rust path>")?;
                let Some((proto, rust)) = pair.split_once('=') else {
                    return Err(item.invalid(
                        "expects `extern_path=<.proto.path>=<rust path>`, for example \
                         `extern_path=.acme.common=::acme_common`"
                            .to_owned(),
                    ));
                };
                if !proto.starts_with('.') {
                    return Err(item.invalid(format!(
                        "the proto path `{proto}` must be fully qualified with a leading dot, \
                         for example `.{proto}`"
                    )));
                }
                self.extern_paths.push((proto.to_owned(), rust.to_owned()));
            }
            "adapters" => {
                self.adapters = match item.value {
                    Some("all") => Adapters::All,
                    Some("client") => Adapters::Client,
                    Some("service") => Adapters::Service,
                    _ => {
                        return Err(item
                            .invalid("valid values are `all`, `client` and `service`".to_owned()));
                    }
                }
            }
            "tools_json" => self.tools_json = item.flag()?,
            "rust" => self.rust = item.flag()?,
            "flat_output_dir" => self.flat_output_dir = item.flag()?,
            "include_in_prost" => self.include_in_prost = item.flag()?,
            _ => return Ok(false),
        }
        Ok(true)
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
#[path = "options_tests.rs"]
mod tests;
