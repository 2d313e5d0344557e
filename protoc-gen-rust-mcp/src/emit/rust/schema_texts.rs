//! The schema texts of a package: which are written once as a shared constant, and the token
//! each `ToolDef` field holds.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::literals::raw_string;
use crate::model::Package;
use tonic_mcp_schema::error::{Error, Result};

/// The minified text of every schema of a package (minified: what the runtime parses, with no
/// indentation to pay for in the user's crate; `<package>.mcp.json` keeps the readable form). A
/// text that two or more tools share (the same `Operation` result, the same request) is written
/// once, as a package-level `MCP_SCHEMA_<n>` constant that their `ToolDef`s name; the others
/// stay inline. Either way a text is one raw string literal token ([`raw_string`]).
pub(super) struct SchemaTexts<'a> {
    /// Each tool's (input, output) text numbers, in tool order.
    by_tool: Vec<(usize, usize)>,
    /// Every distinct text, by number.
    order: Vec<&'a str>,
    /// By number: the index of the text's `MCP_SCHEMA_<n>` constant, if shared.
    constant: Vec<Option<usize>>,
    /// Shared texts (numbers) in constant order.
    shared: Vec<usize>,
}

impl<'a> SchemaTexts<'a> {
    pub(super) fn new(package: &'a Package) -> SchemaTexts<'a> {
        let mut numbers: HashMap<&str, usize> = HashMap::new();
        let mut order: Vec<&str> = Vec::new();
        let mut uses: Vec<usize> = Vec::new();
        let mut by_tool = Vec::new();
        for tool in package.services.iter().flat_map(|s| &s.tools) {
            let mut pair = [0; 2];
            for (slot, text) in pair
                .iter_mut()
                .zip([&tool.input_schema, &tool.output_schema])
            {
                let number = *numbers.entry(text).or_insert_with(|| {
                    order.push(text);
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

    /// The expressions of the `index`-th tool's (input, output) schema fields: the raw string,
    /// or `super::MCP_SCHEMA_<n>` when the text is shared. `name` is the tool's, for errors.
    pub(super) fn tool_expressions(
        &self,
        index: usize,
        name: &str,
    ) -> Result<(TokenStream, TokenStream)> {
        let (input, output) = self
            .by_tool
            .get(index)
            .copied()
            .ok_or_else(|| Error::Internal(format!("no schema texts for tool {name}")))?;
        Ok((
            self.expression(input, || format!("the input schema of tool {name}"))?,
            self.expression(output, || format!("the output schema of tool {name}"))?,
        ))
    }

    fn expression(&self, number: usize, what: impl Fn() -> String) -> Result<TokenStream> {
        if let Some(index) = self.constant.get(number).copied().flatten() {
            let ident = format_ident!("MCP_SCHEMA_{}", index);
            return Ok(quote!(super::#ident));
        }
        let text = self.text(number)?;
        let literal = raw_string(text, &what())?;
        Ok(quote!(#literal))
    }

    fn text(&self, number: usize) -> Result<&'a str> {
        self.order
            .get(number)
            .copied()
            .ok_or_else(|| Error::Internal(format!("no schema text number {number}")))
    }

    /// The package-level constants of the shared texts.
    pub(super) fn constants(&self) -> Result<TokenStream> {
        let items = self
            .shared
            .iter()
            .enumerate()
            .map(|(index, &number)| {
                let ident = format_ident!("MCP_SCHEMA_{}", index);
                let value = raw_string(self.text(number)?, &format!("schema text {ident}"))?;
                Ok(quote! {
                    #[doc(hidden)]
                    pub const #ident: &str = #value;
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(quote!(#(#items)*))
    }
}
