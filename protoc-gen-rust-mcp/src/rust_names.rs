//! Rust identifiers, paths and file names of generated code.
//!
//! Rust names for prost types and methods come from prost-build itself (see `model.rs`); this
//! module only derives what prost does not give us, using the same rules as tonic-build. Tool
//! names and the other naming rules shared with the runtime live in `tonic_mcp_schema::names`.

use heck::ToShoutySnakeCase;

/// tonic-build's `naive_snake_case`, used for the `<service>_client` and `<service>_server`
/// modules. It differs from prost's snake case (`ABCServiceX` → `a_b_c_service_x`), so it is
/// reproduced exactly rather than replaced by heck.
pub(crate) fn tonic_snake_case(name: &str) -> String {
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
pub(crate) fn tool_const_name(rust_method: &str) -> String {
    let name = rust_method.trim_start_matches("r#").to_shouty_snake_case();
    if name == "TOOLS" {
        "TOOLS_TOOL".to_owned()
    } else {
        name
    }
}

/// The Rust module path prost gives a proto package (`edge.type.Foo_Bar` → `edge::r#type::foo_bar`),
/// from prost-build itself, so every naming rule (snake case, raw identifiers for keywords, `_`
/// suffixes, a leading `_` before digits) is prost's own.
pub(crate) fn rust_module(package: &str) -> prost_build::Module {
    prost_build::Module::from_protobuf_package_name(package)
}

/// The base of a package's MCP file names: the proto package as written (`demo.v1`,
/// `edge.type.Foo_Bar`), or `_` for the empty package. protoc-gen-tonic names its file the same
/// way (`<package>.tonic.rs`).
pub(crate) fn package_file_stem(package: &str) -> String {
    if package.is_empty() {
        "_".to_owned()
    } else {
        package.to_owned()
    }
}

/// The name protoc-gen-prost (0.5) gives a package's file: the proto package as written plus
/// `.rs` (`edge.type.Foo_Bar.rs`), or `_` for the empty package. It lives in [`package_dir`].
pub(crate) fn prost_file_name(package: &str) -> String {
    if package.is_empty() {
        "_".to_owned()
    } else {
        format!("{package}.rs")
    }
}

/// The name prost-build (and so tonic-prost-build and a `build.rs`) gives a package's file: the
/// Rust module path joined by dots (`edge.r#type.foo_bar.rs`), or `_.rs` for the empty package.
pub(crate) fn prost_build_file_name(package: &str) -> String {
    rust_module(package).to_file_name_or("_")
}

/// The directory protoc-gen-prost puts a package's files in when the output is not flat: the
/// Rust module path, one directory per module (`edge/r#type/foo_bar/`); empty for the empty
/// package and for flat output.
pub(crate) fn package_dir(package: &str, flat: bool) -> String {
    if flat {
        return String::new();
    }
    let module = rust_module(package);
    let mut dir = module.parts().collect::<Vec<_>>().join("/");
    if !dir.is_empty() {
        dir.push('/');
    }
    dir
}

/// The file protoc-gen-prost writes for each package of a request, directory included, the way
/// it decides it: packages whose Rust module path is the same share one file, named after the
/// package of the first file to generate (in the request's order) that maps to that module.
/// Packages without a file to generate are left out.
pub(crate) fn prost_plugin_files<'a>(
    files: impl IntoIterator<Item = &'a prost_types::FileDescriptorProto>,
    to_generate: &[String],
    flat: bool,
) -> std::collections::BTreeMap<String, String> {
    let mut by_module: std::collections::BTreeMap<prost_build::Module, String> =
        std::collections::BTreeMap::new();
    let mut packages = Vec::new();
    for file in files {
        let module = rust_module(file.package());
        if to_generate.iter().any(|name| name == file.name()) {
            by_module
                .entry(module)
                .or_insert_with(|| file.package().to_owned());
        }
        packages.push(file.package().to_owned());
    }
    packages
        .into_iter()
        .filter_map(|package| {
            let owner = by_module.get(&rust_module(&package))?;
            let path = format!("{}{}", package_dir(owner, flat), prost_file_name(owner));
            Some((package, path))
        })
        .collect()
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
    fn package_files_follow_prost() {
        // (package, protoc-gen-prost directory, protoc-gen-prost file, prost-build file)
        let cases = [
            ("demo.v1", "demo/v1/", "demo.v1.rs", "demo.v1.rs"),
            (
                "edge.type.Foo_Bar",
                "edge/r#type/foo_bar/",
                "edge.type.Foo_Bar.rs",
                "edge.r#type.foo_bar.rs",
            ),
            ("match.v2", "r#match/v2/", "match.v2.rs", "r#match.v2.rs"),
            (
                "snake_case.v1beta1",
                "snake_case/v1beta1/",
                "snake_case.v1beta1.rs",
                "snake_case.v1beta1.rs",
            ),
            (
                "CamelCase.V2Api",
                "camel_case/v2_api/",
                "CamelCase.V2Api.rs",
                "camel_case.v2_api.rs",
            ),
            (
                "self.crate",
                "self_/crate_/",
                "self.crate.rs",
                "self_.crate_.rs",
            ),
            (
                "a.async.gen",
                "a/r#async/r#gen/",
                "a.async.gen.rs",
                "a.r#async.r#gen.rs",
            ),
            ("", "", "_", "_.rs"),
        ];
        for (package, dir, plugin_file, build_file) in cases {
            assert_eq!(package_dir(package, false), dir, "{package}");
            assert_eq!(package_dir(package, true), "", "{package}");
            assert_eq!(prost_file_name(package), plugin_file, "{package}");
            assert_eq!(prost_build_file_name(package), build_file, "{package}");
        }
    }

    #[test]
    fn packages_sharing_a_module_share_the_first_file() {
        let file = |name: &str, package: &str| prost_types::FileDescriptorProto {
            name: Some(name.to_owned()),
            package: Some(package.to_owned()),
            ..Default::default()
        };
        let files = [
            file("dep.proto", "x.Foo"),
            file("b.proto", "x.foo"),
            file("a.proto", "x.Foo"),
            file("other.proto", "other"),
        ];
        let to_generate = ["a.proto".to_owned(), "b.proto".to_owned()];
        let found = prost_plugin_files(&files, &to_generate, false);
        assert_eq!(
            found.get("x.Foo").map(String::as_str),
            Some("x/foo/x.foo.rs")
        );
        assert_eq!(
            found.get("x.foo").map(String::as_str),
            Some("x/foo/x.foo.rs")
        );
        assert_eq!(found.get("other"), None);
    }
}
