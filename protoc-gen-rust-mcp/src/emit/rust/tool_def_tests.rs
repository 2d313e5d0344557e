//! The text of [`tool_def()`] against prettyplease's printing of the same item's tokens.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::super::literals::raw_string;
use super::super::schema_texts::SchemaTexts;
use super::super::{Context, path_text};
use super::tool_def;
use crate::error::{Error, Result};
use crate::model::{Annotations, Package, RpcKind, Service, TaskSupport, Tool, Unconfirmed};
use crate::options::PluginOptions;
use tonic_mcp_schema::{LongRunningSpec, ToolSpec};

/// The tokens of a `ToolDef` constant, as the emitter made them before it wrote text.
fn tokens(cx: &Context<'_>, tool: &Tool, index: usize) -> Result<TokenStream> {
    let runtime = &cx.runtime;
    let ident = format_ident!("{}", tool.const_name);
    let doc = format!(" `{}`: `{}`.", tool.spec.name, tool.spec.rpc_path);
    let name = &tool.spec.name;
    let title = &tool.spec.title;
    let description = &tool.spec.description;
    let rpc_path = &tool.spec.rpc_path;
    let input_type = &tool.spec.input_type;
    let output_type = &tool.spec.output_type;
    let kind = match tool.spec.kind {
        RpcKind::Unary => quote!(Unary),
        RpcKind::ServerStreaming => quote!(ServerStreaming),
        RpcKind::ClientStreaming => quote!(ClientStreaming),
        RpcKind::Bidi => quote!(Bidi),
    };
    let (input_number, output_number) = cx.schemas.tool_numbers(index, &tool.spec.name)?;
    let input_schema = cx.schemas.expression(input_number);
    let output_schema = cx.schemas.expression(output_number);
    let annotations = generate_annotations(tool.spec.annotations);
    let json_names = cx.options.tools.json_names;
    let emit_defaults = cx.options.tools.emit_defaults;
    let timeout = match tool.spec.timeout {
        Some((seconds, nanos)) => {
            let seconds = u64::try_from(seconds).unwrap_or(0);
            let nanos = u32::try_from(nanos).unwrap_or(0);
            quote!(::core::option::Option::Some(::core::time::Duration::new(#seconds, #nanos)))
        }
        None => quote!(::core::option::Option::None),
    };
    let output_omitted = &tool.spec.output_omitted;
    // Small, so an ordinary raw-string token (the big schema texts bypass the formatter).
    let meta: Literal = raw_string(&tool.meta.to_string())
        .parse()
        .map_err(|e| Error::Internal(format!("_meta literal of {}: {e}", tool.spec.name)))?;
    let task_support = match tool.spec.task_support {
        TaskSupport::Forbidden => quote!(Forbidden),
        TaskSupport::Optional => quote!(Optional),
        TaskSupport::Required => quote!(Required),
    };
    let confirm = match tool.spec.confirm {
        Some(Unconfirmed::Refuse) => {
            quote!(::core::option::Option::Some(#runtime::codegen::Unconfirmed::Refuse))
        }
        Some(Unconfirmed::Proceed) => {
            quote!(::core::option::Option::Some(#runtime::codegen::Unconfirmed::Proceed))
        }
        None => quote!(::core::option::Option::None),
    };
    let optional_text = |text: Option<&str>| match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    };
    let wait_for = tool.wait_for_operation();
    let wait_for_operation = optional_text(wait_for.map(|(response, _)| response));
    let operation_metadata_type = optional_text(wait_for.and_then(|(_, metadata)| metadata));
    let max_messages = match tool.spec.max_messages {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    let max_result_bytes = match tool.spec.max_result_bytes {
        Some(n) => {
            let n = n as usize;
            quote!(::core::option::Option::Some(#n))
        }
        None => quote!(::core::option::Option::None),
    };
    Ok(quote! {
        #[doc = #doc]
        pub const #ident: #runtime::codegen::ToolDef = #runtime::codegen::ToolDef {
            name: #name,
            title: #title,
            description: #description,
            rpc_path: #rpc_path,
            kind: #runtime::codegen::RpcKind::#kind,
            input_type: #input_type,
            output_type: #output_type,
            input_schema: #input_schema,
            output_schema: #output_schema,
            annotations: #runtime::codegen::ToolAnnotations #annotations,
            json_names: #json_names,
            emit_defaults: #emit_defaults,
            timeout: #timeout,
            max_messages: #max_messages,
            max_result_bytes: #max_result_bytes,
            output_omitted: &[#(#output_omitted),*],
            task_support: #runtime::codegen::TaskSupport::#task_support,
            confirm: #confirm,
            wait_for_operation: #wait_for_operation,
            operation_metadata_type: #operation_metadata_type,
            meta: #meta,
        };
    })
}

fn generate_annotations(hints: Annotations) -> TokenStream {
    let hint = |value: Option<bool>| match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let (read_only, destructive, idempotent, open_world) = (
        hint(hints.read_only),
        hint(hints.destructive),
        hint(hints.idempotent),
        hint(hints.open_world),
    );
    quote!({
        read_only: #read_only,
        destructive: #destructive,
        idempotent: #idempotent,
        open_world: #open_world,
    })
}

fn tool(const_name: &str) -> Tool {
    let spec = ToolSpec {
        name: format!("Svc_{const_name}"),
        method: const_name.to_owned(),
        title: "A title".to_owned(),
        description: "Says \"hi\"\nover two lines, with ünïcode and a tab\t.".to_owned(),
        rpc_path: format!("/demo.v1.Svc/{const_name}"),
        kind: RpcKind::Unary,
        input_type: "demo.v1.Request".to_owned(),
        output_type: "demo.v1.Response".to_owned(),
        annotations: Annotations::default(),
        timeout: None,
        max_messages: None,
        max_result_bytes: None,
        output_omitted: Vec::new(),
        input_schema: serde_json::Value::Null,
        output_schema: serde_json::Value::Null,
        shrunk: Vec::new(),
        category: None,
        required_scopes: Vec::new(),
        task_support: TaskSupport::Forbidden,
        confirm: None,
        long_running: None,
        notes: Vec::new(),
    };
    Tool {
        spec,
        const_name: const_name.to_owned(),
        input_schema: r#"{"type":"object"}"#.to_owned(),
        output_schema: format!(r#"{{"type":"object","title":"{const_name}"}}"#),
        meta: serde_json::json!({"protoc-gen-rust-mcp/rpc": {"path": const_name}}),
    }
}

/// Tools with every kind of field, around the layout's limits.
fn tools() -> Vec<Tool> {
    let mut tools = Vec::new();
    let omitted = |n: usize, len: usize| -> Vec<String> {
        (0..n)
            .map(|i| format!("demo.v1.{}{i}", "f".repeat(len)))
            .collect()
    };
    for (i, kind) in [
        RpcKind::Unary,
        RpcKind::ServerStreaming,
        RpcKind::ClientStreaming,
        RpcKind::Bidi,
    ]
    .into_iter()
    .enumerate()
    {
        let mut t = tool(&format!("KIND_{i}"));
        t.spec.kind = kind;
        t.spec.annotations = Annotations {
            read_only: Some(i % 2 == 0),
            destructive: (i > 1).then_some(true),
            idempotent: Some(false),
            open_world: None,
        };
        t.spec.max_messages = (i > 0).then_some(u32::MAX - i as u32);
        t.spec.max_result_bytes = (i < 3).then_some(512 * i as u32);
        tools.push(t);
    }
    let timeouts = [
        (5, 0),
        (2, 500_000_000),
        (10, 5),
        (1234, 123_456),
        (99_999, 99),
        (i64::MAX, 999_999_999),
        (-1, -1),
    ];
    for (i, timeout) in timeouts.into_iter().enumerate() {
        let mut t = tool(&format!("TIMEOUT_{i}"));
        t.spec.timeout = Some(timeout);
        tools.push(t);
    }
    // Around the width where the array of omitted fields breaks.
    for n in 1..4 {
        for len in (0..60).step_by(3) {
            let mut t = tool(&format!("OMITTED_{n}_{len}"));
            t.spec.output_omitted = omitted(n, len);
            tools.push(t);
        }
    }
    // Serving choices, with operation types around the width where `Some(…)` breaks.
    for (i, unconfirmed) in [Unconfirmed::Refuse, Unconfirmed::Proceed]
        .into_iter()
        .enumerate()
    {
        let mut t = tool(&format!("CONFIRM_{i}"));
        t.spec.task_support = [TaskSupport::Optional, TaskSupport::Required][i];
        t.spec.confirm = Some(unconfirmed);
        tools.push(t);
    }
    for len in (0..60).step_by(4) {
        let mut t = tool(&format!("WAIT_{len}"));
        t.spec.long_running = Some(LongRunningSpec {
            response_type: format!("demo.v1.{}Response", "R".repeat(len)),
            metadata_type: (len % 8 == 0).then(|| format!("demo.v1.{}Metadata", "M".repeat(len))),
            wait: true,
        });
        tools.push(t);
    }
    // First lines far over the margin.
    for len in [40, 80, 120, 200] {
        tools.push(tool(&"LONG_NAME_".repeat(len / 10)));
    }
    tools
}

fn compare(runtime_crate: &str) {
    let options = PluginOptions {
        runtime_crate: runtime_crate.to_owned(),
        ..PluginOptions::default()
    };
    let tools = tools();
    let package = Package {
        name: "demo.v1".to_owned(),
        files: Vec::new(),
        services: vec![Service {
            full_name: "demo.v1.Svc".to_owned(),
            rust_name: "Svc".to_owned(),
            server_mod: "svc_server".to_owned(),
            mcp_mod: "svc_mcp".to_owned(),
            tools,
            omitted: Vec::new(),
        }],
        descriptor_set: Vec::new(),
    };
    let runtime: syn::Path = syn::parse_str(runtime_crate).unwrap();
    let cx = Context {
        runtime_text: path_text(&runtime, runtime_crate).unwrap(),
        runtime,
        options: &options,
        schemas: SchemaTexts::new(&package),
    };
    let tools = &package.services[0].tools;
    let items: Vec<TokenStream> = (0..tools.len())
        .map(|i| tokens(&cx, &tools[i], i).unwrap())
        .collect();
    let file: syn::File = syn::parse2(quote!(pub mod svc_mcp { #(#items)* })).unwrap();
    let printed = cx
        .schemas
        .substitute(&prettyplease::unparse(&file), "", &[])
        .unwrap();
    let mut written = String::from("pub mod svc_mcp {\n");
    for (i, tool) in tools.iter().enumerate() {
        written.push_str(&tool_def(&cx, tool, i).unwrap());
    }
    written.push_str("}\n");
    for (printed, written) in printed.lines().zip(written.lines()) {
        assert_eq!(printed, written, "runtime {runtime_crate}");
    }
    assert_eq!(printed, written, "runtime {runtime_crate}");
}

#[test]
fn text_is_what_prettyplease_prints() {
    for runtime in [
        "::tonic_mcp",
        "crate::mcp",
        "r#async::x",
        "::a_very_long_runtime_crate_name::with::several::segments::in_it",
    ] {
        compare(runtime);
    }
}

#[test]
fn a_runtime_path_with_generic_arguments_is_refused() {
    let path: syn::Path = syn::parse_str("::a::<T>::b").unwrap();
    let error = path_text(&path, "::a::<T>::b").unwrap_err().to_string();
    assert!(error.contains("no generic arguments"), "{error}");
}
