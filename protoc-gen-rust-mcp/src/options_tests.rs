//! Parsing the plugin's parameter string: both kinds of option, and the errors.

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
    let options = PluginOptions::parse(
        "json_names,unions=any_of,tool_names=method,prefix=shop,extern_path=.acme=::acme,\
         include=demo.v1.*,exclude=*.Delete*,tools_json=true,descriptions=false",
    )
    .unwrap();
    assert!(options.tools.json_names);
    assert_eq!(options.tools.unions, Unions::AnyOf);
    assert_eq!(options.tools.tool_names, ToolNames::Method);
    assert_eq!(options.tools.prefix.as_deref(), Some("shop"));
    assert_eq!(
        options.extern_paths,
        vec![(".acme".to_owned(), "::acme".to_owned())]
    );
    assert!(options.tools_json);
    assert!(!options.tools.descriptions);
    assert_eq!(options.tools.max_schema_bytes, DEFAULT_MAX_SCHEMA_BYTES);
    assert_eq!(options.tools.long_running, LongRunning::Wait);
    assert_eq!(
        PluginOptions::parse("long_running=operation")
            .unwrap()
            .tools
            .long_running,
        LongRunning::Operation
    );
    assert_eq!(
        PluginOptions::parse("max_schema_bytes=0")
            .unwrap()
            .tools
            .max_schema_bytes,
        0
    );
    assert!(options.tools.selects("demo.v1.ItemService.GetItem"));
    assert!(!options.tools.selects("demo.v1.ItemService.DeleteItem"));
    assert!(!options.tools.selects("other.Service.GetItem"));
    let code = PluginOptions::parse(
        "runtime_crate=crate::mcp,adapters=client,rust=false,flat_output_dir,include_in_prost",
    )
    .unwrap();
    assert_eq!(code.runtime_crate, "crate::mcp");
    assert_eq!(code.adapters, Adapters::Client);
    assert!(!code.rust && code.flat_output_dir && code.include_in_prost);
    assert_eq!(code.tools, Options::default());
}

#[test]
fn every_documented_option_is_parsed() {
    for doc in OPTIONS {
        if let Err(err) = PluginOptions::parse(doc.key) {
            let err = err.to_string();
            assert!(!err.contains("unknown option"), "{}: {err}", doc.key);
        }
    }
}

#[test]
fn unknown_option_lists_the_valid_ones() {
    let err = PluginOptions::parse("json_name").unwrap_err().to_string();
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
        let err = PluginOptions::parse(input).unwrap_err().to_string();
        assert!(err.contains(expected), "{input}: {err}");
    }
}
