//! The `build.rs` builder writes the same MCP modules as the protoc plugin for the same files
//! and options, and leaves prost's file including them.

#![cfg(feature = "build")]

mod common;

#[test]
fn builder_output_matches_the_plugin() {
    let repo = common::repo();
    let files = [
        "scalars.proto",
        "oneofs.proto",
        "recursion.proto",
        "crosspkg/service.proto",
        "nopackage.proto",
        "tool_options.proto",
    ];
    let out = common::tempfile_path("builder-out");
    std::fs::create_dir_all(&out).expect("out dir");
    let protos: Vec<_> = files
        .iter()
        .map(|f| repo.join("testdata").join(f))
        .collect();
    protoc_gen_rust_mcp::Builder::new()
        .plugin_options("json_names")
        .expect("valid options")
        .out_dir(&out)
        .compile_protos(&protos, &[repo.join("testdata"), repo.join("proto")])
        .expect("builder runs");

    let names: Vec<String> = files.iter().map(|f| (*f).to_owned()).collect();
    let plugin = common::protoc_generate(&names, "json_names,flat_output_dir");
    assert!(plugin.len() >= 5, "{plugin:?}");
    for (name, content) in &plugin {
        let built = std::fs::read_to_string(out.join(name))
            .unwrap_or_else(|e| panic!("the builder did not write {name}: {e}"));
        assert!(
            built == *content,
            "{name} differs between the builder and the plugin"
        );
        let stem = name.trim_end_matches(".pb.mcp.rs");
        let prost = std::fs::read_to_string(out.join(format!("{stem}.rs"))).expect("prost file");
        assert!(
            prost.contains(&format!("include!(\"{name}\");")),
            "{stem}.rs does not include {name}"
        );
    }
    std::fs::remove_dir_all(&out).ok();
}
