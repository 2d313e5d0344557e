//! The schema texts of a package and the placeholders that stand for big literals (schema
//! texts, the descriptor set, `ToolDef` items written as text) in the token tree until the formatted
//! code is substituted.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::literals::raw_string;
use crate::error::{Error, Result};
use crate::model::Package;

/// The minified text of every schema of a package (minified: what the runtime parses, with no
/// indentation to pay for in the user's crate; `<package>.mcp.json` keeps the readable form). A text that two or more
/// tools share (the same `Operation` result, the same request) is written once, as a
/// package-level `MCP_SCHEMA_<n>` constant that their `ToolDef`s name; the others stay inline.
///
/// Large literals (schemas, the descriptor set) never go through syn and prettyplease: the
/// token tree holds a placeholder identifier that [`SchemaTexts::substitute`] replaces with the
/// literal's text after formatting, which keeps the plugin fast and lean on big packages.
pub(super) struct SchemaTexts {
    /// Each tool's (input, output) placeholder numbers, in tool order.
    by_tool: Vec<(usize, usize)>,
    /// Every distinct text, by placeholder number.
    order: Vec<String>,
    /// By placeholder number: the index of the text's `MCP_SCHEMA_<n>` constant, if shared.
    constant: Vec<Option<usize>>,
    /// Shared texts (placeholder numbers) in constant order.
    shared: Vec<usize>,
}

/// Placeholders are identifiers no proto element or comment is expected to contain. Both
/// kinds start with [`MARKER`].
const PLACEHOLDER: &str = "__rust_mcp_literal_9f1c_";
/// A whole item written without syn and prettyplease (a `ToolDef`, see [`mod@super::tool_def`]):
/// the line of the placeholder constant is replaced by the item's text.
pub(super) const ITEM_PLACEHOLDER: &str = "__rust_mcp_item_9f1c_";
/// The common start of both placeholders.
const MARKER: &str = "__rust_mcp_";

impl SchemaTexts {
    pub(super) fn new(package: &Package) -> SchemaTexts {
        // Text → its placeholder number; `uses` by number.
        let mut numbers: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut uses: Vec<usize> = Vec::new();
        let mut by_tool = Vec::new();
        for tool in package.services.iter().flat_map(|s| &s.tools) {
            let mut pair = [0; 2];
            for (slot, text) in pair
                .iter_mut()
                .zip([&tool.input_schema, &tool.output_schema])
            {
                let number = *numbers.entry(text).or_insert_with(|| {
                    order.push(text.clone());
                    uses.push(0);
                    order.len() - 1
                });
                if let Some(count) = uses.get_mut(number) {
                    *count += 1;
                }
                *slot = number;
            }
            by_tool.push((pair[0], pair[1]));
        }
        let mut shared = Vec::new();
        let constant = uses
            .iter()
            .enumerate()
            .map(|(number, &count)| {
                (count >= 2).then(|| {
                    shared.push(number);
                    shared.len() - 1
                })
            })
            .collect();
        SchemaTexts {
            by_tool,
            order,
            constant,
            shared,
        }
    }

    /// The (input, output) placeholder numbers of the `index`-th tool, `name`.
    pub(super) fn tool_numbers(&self, index: usize, name: &str) -> Result<(usize, usize)> {
        self.by_tool
            .get(index)
            .copied()
            .ok_or_else(|| Error::Internal(format!("no schema texts for tool {name}")))
    }

    /// The expression a `ToolDef` field holds: `super::MCP_SCHEMA_<n>` or the placeholder of
    /// an inline literal (for the tokens the tests format to check [`mod@super::tool_def`]'s text).
    #[cfg(test)]
    pub(super) fn expression(&self, number: usize) -> TokenStream {
        match self.constant.get(number).copied().flatten() {
            Some(index) => {
                let ident = format_ident!("MCP_SCHEMA_{}", index);
                quote!(super::#ident)
            }
            None => placeholder(number),
        }
    }

    /// The package-level constants of the shared texts.
    pub(super) fn constants(&self) -> TokenStream {
        let items = self.shared.iter().enumerate().map(|(index, &number)| {
            let ident = format_ident!("MCP_SCHEMA_{}", index);
            let value = placeholder(number);
            quote! {
                #[doc(hidden)]
                pub const #ident: &str = #value;
            }
        });
        quote!(#(#items)*)
    }

    /// Replaces every placeholder in formatted code: schema texts by number, `descriptor`
    /// (placeholder `usize::MAX`) as a byte string, and the line of each item placeholder by
    /// that item of `items`.
    pub(super) fn substitute(
        &self,
        code: &str,
        descriptor: &str,
        items: &[String],
    ) -> Result<String> {
        let mut out = String::with_capacity(
            code.len()
                + self.order.iter().map(String::len).sum::<usize>()
                + descriptor.len()
                + items.iter().map(String::len).sum::<usize>(),
        );
        let mut rest = code;
        while let Some(at) = rest.find(MARKER) {
            let tail = &rest[at..];
            let (kind, after) = if let Some(after) = tail.strip_prefix(PLACEHOLDER) {
                (PLACEHOLDER, after)
            } else if let Some(after) = tail.strip_prefix(ITEM_PLACEHOLDER) {
                (ITEM_PLACEHOLDER, after)
            } else {
                // Not ours (a comment that happens to contain the marker): keep it.
                out.push_str(&rest[..at + MARKER.len()]);
                rest = &rest[at + MARKER.len()..];
                continue;
            };
            out.push_str(&rest[..at]);
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let number: usize = after[..digits]
                .parse()
                .map_err(|_| Error::Internal("a placeholder lost its number".to_owned()))?;
            if kind == ITEM_PLACEHOLDER {
                let item = items
                    .get(number)
                    .ok_or_else(|| Error::Internal(format!("no item for placeholder {number}")))?;
                // The whole line: from its start (already written) to its end.
                out.truncate(out.rfind('\n').map_or(0, |newline| newline + 1));
                out.push_str(item);
                let line_end = after.find('\n').map_or(after.len(), |newline| newline + 1);
                rest = &after[line_end..];
                continue;
            }
            if number == DESCRIPTOR_PLACEHOLDER {
                out.push_str(descriptor);
            } else {
                let text = self.order.get(number).ok_or_else(|| {
                    Error::Internal(format!("no schema text for placeholder {number}"))
                })?;
                out.push_str(&raw_string(text));
            }
            rest = &after[digits..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The source of a `ToolDef` schema field: `super::MCP_SCHEMA_<n>` or the raw string.
    pub(super) fn source(&self, number: usize) -> Option<String> {
        let text = self.order.get(number)?;
        Some(match self.constant.get(number).copied().flatten() {
            Some(index) => format!("super::MCP_SCHEMA_{index}"),
            None => raw_string(text),
        })
    }
}

/// The placeholder number of the descriptor set.
pub(super) const DESCRIPTOR_PLACEHOLDER: usize = 999_999_999;

pub(super) fn placeholder(number: usize) -> TokenStream {
    let ident = format_ident!("{}{}", PLACEHOLDER, number);
    quote!(#ident)
}
