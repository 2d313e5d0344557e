//! Rust identifiers, paths and file names of generated code.
//!
//! Rust names for prost types and methods come from prost-build itself (see `model.rs`); this
//! module only derives what prost does not give us, using the same rules as tonic-build. Tool
//! names and the other naming rules shared with the runtime live in `tonic_mcp_schema::names`.

use heck::ToShoutySnakeCase;

/// tonic-build's `naive_snake_case`, used for the `<service>_client` and `<service>_server`
/// modules. It differs from prost's snake case (`ABCServiceX` → `a_b_c_service_x`), so it is
/// reproduced exactly rather than replaced by heck.
pub fn tonic_snake_case(name: &str) -> String {
    let mut s = String::new();
    let mut it = name.chars().peekable();
    while let Some(x) = it.next() {
        s.push(x.to_ascii_lowercase());
        if it.peek().is_some_and(|y| y.is_uppercase()) {
            s.push('_');
        }
    }
    s
}

/// The name of the `const` holding a tool's definition: the Rust method name in capitals
/// (`get_item` → `GET_ITEM`, `r#type` → `TYPE`). `TOOLS` is taken by the list of all tools.
pub fn tool_const_name(rust_method: &str) -> String {
    let name = rust_method.trim_start_matches("r#").to_shouty_snake_case();
    if name == "TOOLS" {
        "TOOLS_TOOL".to_owned()
    } else {
        name
    }
}

/// A prost type path (relative to the package module, as prost-build reports it) as seen from a
/// module nested one level inside the package module, the way tonic-build writes it.
pub fn nested_type_path(prost_path: &str) -> String {
    if prost_path.starts_with("::") || prost_path.starts_with("crate::") || prost_path == "()" {
        prost_path.to_owned()
    } else {
        format!("super::{prost_path}")
    }
}

/// The base of a package's output file names: `demo.v1`, or `_` for the empty package (as
/// protoc-gen-prost and prost-build name it).
pub fn package_file_stem(package: &str) -> String {
    if package.is_empty() {
        "_".to_owned()
    } else {
        package.to_owned()
    }
}

/// The name protoc-gen-prost gives a package's file: `demo.v1.rs`, or `_` for the empty package.
pub fn prost_file_name(package: &str) -> String {
    if package.is_empty() {
        "_".to_owned()
    } else {
        format!("{package}.rs")
    }
}

/// The directory a package's files go in when the output is not flat (`demo/v1/`).
pub fn package_dir(package: &str, flat: bool) -> String {
    if flat || package.is_empty() {
        String::new()
    } else {
        format!("{}/", package.replace('.', "/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tonic_snake_case_matches_tonic_build() {
        let cases = [
            ("ItemService", "item_service"),
            ("ABCServiceX", "a_b_c_service_x"),
            ("Greeter", "greeter"),
            ("HTTPService", "h_t_t_p_service"),
        ];
        for (input, expected) in cases {
            assert_eq!(tonic_snake_case(input), expected, "{input}");
        }
    }

    #[test]
    fn tool_const_names() {
        let cases = [
            ("get_item", "GET_ITEM"),
            ("r#type", "TYPE"),
            ("get_http_thing", "GET_HTTP_THING"),
            ("tools", "TOOLS_TOOL"),
        ];
        for (input, expected) in cases {
            assert_eq!(tool_const_name(input), expected, "{input}");
        }
    }

    #[test]
    fn nested_paths_follow_tonic() {
        let cases = [
            ("GetItemRequest", "super::GetItemRequest"),
            ("super::common::Money", "super::super::common::Money"),
            ("::prost_types::Timestamp", "::prost_types::Timestamp"),
            ("()", "()"),
            ("crate::x::Y", "crate::x::Y"),
        ];
        for (input, expected) in cases {
            assert_eq!(nested_type_path(input), expected, "{input}");
        }
    }
}
