//! Startup at scale: how long a server holding about 10,000 tools takes from start to its first
//! `tools/list` answer, and its resident memory.
//!
//! A synthetic API is made by the parent process (not timed): `PACKAGES` packages of 10
//! services with `METHODS` methods each (10 × 10 × 100 = 10,000 tools by default). Every method
//! has its own request message (scalars, a nested message, a map, a oneof, a repeated message,
//! an enum) and response message, and a leading comment, as a descriptor set with source info.
//! The parent writes it to a file that each child reads, as a server reads its
//! `--descriptor-set`, so that no child's memory holds its making.
//!
//! Five ways to start, each measured in a fresh child process so that its RSS is its own:
//!
//! - `dynamic`: `DescriptorTools::all` over the pool `DescriptorTools::decode_pool` builds
//!   (source info kept; schemas generated at start);
//! - `lazy`: the same with `DescriptorTools::lazy_schemas` (each schema generated when first
//!   needed, here for the first page's 50 tools);
//! - `decoded`: what the gateway did before it kept the set as files:
//!   `DescriptorTools::decode` (the pool built without the files' source info, their comments
//!   kept beside it) with `lazy_schemas`;
//! - `gateway`: what the gateway does: `SetPools::decode` (the files kept without their source
//!   info, a pool built per package while its tools are made, then let go) and
//!   `DescriptorTools::of_set` with `lazy_schemas`;
//! - `generated`: one `codegen::tool_set` per service over `ToolDef`s whose schemas are the
//!   pretty JSON text the plugin writes (what generated `from_channel` does). The parent
//!   process makes the definitions and writes them to a file; the child reads the file in one
//!   block and borrows every text from it, as a binary's read-only data (so "RSS at start"
//!   holds them, about 39 MB, and none of the making).
//!
//! Timed: from decoding the descriptor set to the first `tools/list` response read by a raw
//! JSON-RPC client on an in-process duplex pipe (after `initialize`). RSS is `VmRSS` and
//! `VmHWM` of `/proc/self/status` after that answer.
//!
//! ```sh
//! cargo bench -p e2e --bench startup                  # 10,000 tools
//! PACKAGES=1 cargo bench -p e2e --bench startup       # 1,000 tools
//! ```

use std::io::Write as _;
use std::sync::Arc;
use std::time::Instant;

use prost::Message as _;
use prost_reflect::DescriptorPool;
use prost_types::{
    DescriptorProto, EnumDescriptorProto, EnumValueDescriptorProto, FieldDescriptorProto,
    FileDescriptorProto, FileDescriptorSet, MessageOptions, MethodDescriptorProto,
    OneofDescriptorProto, ServiceDescriptorProto, SourceCodeInfo,
    field_descriptor_proto::{Label, Type},
    source_code_info::Location,
};
use rmcp::ServiceExt as _;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tonic_mcp::{
    McpServer, SetPools, ToolSet,
    codegen::{BoxTransport, RpcKind, TaskSupport, ToolAnnotations, ToolDef},
    schema::Options,
};
use tonic_mcp_dynamic::DescriptorTools;

const SERVICES_PER_PACKAGE: usize = 10;

fn field(
    name: &str,
    number: i32,
    kind: Type,
    label: Label,
    type_name: Option<&str>,
) -> FieldDescriptorProto {
    FieldDescriptorProto {
        name: Some(name.to_owned()),
        number: Some(number),
        label: Some(label as i32),
        r#type: Some(kind as i32),
        type_name: type_name.map(str::to_owned),
        json_name: Some(heck_lower_camel(name)),
        ..Default::default()
    }
}

fn heck_lower_camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// One package of the synthetic API.
fn package_file(index: usize, methods: usize) -> FileDescriptorProto {
    use Label::{Optional, Repeated};
    let package = format!("bench.p{index}");
    let qualified = |name: &str| format!(".{package}.{name}");
    let mut messages = vec![DescriptorProto {
        name: Some("Common".to_owned()),
        field: vec![
            field("id", 1, Type::String, Optional, None),
            field("created_unix", 2, Type::Int64, Optional, None),
            field(
                "labels",
                3,
                Type::Message,
                Repeated,
                Some(&qualified("Common.LabelsEntry")),
            ),
            field("tags", 4, Type::String, Repeated, None),
            field("state", 5, Type::Enum, Optional, Some(&qualified("State"))),
        ],
        nested_type: vec![DescriptorProto {
            name: Some("LabelsEntry".to_owned()),
            field: vec![
                field("key", 1, Type::String, Optional, None),
                field("value", 2, Type::String, Optional, None),
            ],
            options: Some(MessageOptions {
                map_entry: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    }];
    let mut locations = Vec::new();
    let mut services = Vec::new();
    for s in 0..SERVICES_PER_PACKAGE {
        let mut service = ServiceDescriptorProto {
            name: Some(format!("P{index}Service{s}")),
            ..Default::default()
        };
        for m in 0..methods {
            let request = format!("S{s}M{m}Request");
            let response = format!("S{s}M{m}Response");
            let mut by_id = field("by_id", 4, Type::String, Optional, None);
            by_id.oneof_index = Some(0);
            let mut by_index = field("by_index", 5, Type::Int32, Optional, None);
            by_index.oneof_index = Some(0);
            messages.push(DescriptorProto {
                name: Some(request.clone()),
                field: vec![
                    field("name", 1, Type::String, Optional, None),
                    field("page_size", 2, Type::Int64, Optional, None),
                    field(
                        "common",
                        3,
                        Type::Message,
                        Optional,
                        Some(&qualified("Common")),
                    ),
                    by_id,
                    by_index,
                    field(
                        "items",
                        6,
                        Type::Message,
                        Repeated,
                        Some(&qualified("Common")),
                    ),
                    field("flag", 7, Type::Bool, Optional, None),
                    field("ratio", 8, Type::Double, Optional, None),
                    field("blob", 9, Type::Bytes, Optional, None),
                ],
                oneof_decl: vec![OneofDescriptorProto {
                    name: Some("selector".to_owned()),
                    ..Default::default()
                }],
                ..Default::default()
            });
            messages.push(DescriptorProto {
                name: Some(response.clone()),
                field: vec![
                    field(
                        "results",
                        1,
                        Type::Message,
                        Repeated,
                        Some(&qualified("Common")),
                    ),
                    field("next_page_token", 2, Type::String, Optional, None),
                ],
                ..Default::default()
            });
            locations.push(Location {
                path: vec![6, s as i32, 2, m as i32],
                span: vec![0, 0, 1],
                leading_comments: Some(format!(
                    " Method {m} of service {s}: finds the matching records and returns a page.\n"
                )),
                ..Default::default()
            });
            service.method.push(MethodDescriptorProto {
                name: Some(format!("Method{m}")),
                input_type: Some(qualified(&request)),
                output_type: Some(qualified(&response)),
                ..Default::default()
            });
        }
        services.push(service);
    }
    FileDescriptorProto {
        name: Some(format!("bench/p{index}.proto")),
        package: Some(package),
        message_type: messages,
        enum_type: vec![EnumDescriptorProto {
            name: Some("State".to_owned()),
            value: ["STATE_UNSPECIFIED", "STATE_ACTIVE", "STATE_ARCHIVED"]
                .iter()
                .enumerate()
                .map(|(number, name)| EnumValueDescriptorProto {
                    name: Some((*name).to_owned()),
                    number: Some(number as i32),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        service: services,
        source_code_info: Some(SourceCodeInfo {
            location: locations,
        }),
        syntax: Some("proto3".to_owned()),
        ..Default::default()
    }
}

fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The texts of `ToolDef`s as the plugin would write them (schemas as pretty JSON text), per
/// service, each with the descriptor set of its package (one per package, shared by its
/// services, as generated `MCP_DESCRIPTORS` are), written to `out` as
/// length-prefixed records: per package its set and a count of services, then per service a
/// count of tools and nine texts per tool.
fn write_generated_defs(pool: &DescriptorPool, out: &mut Vec<u8>) {
    let options = Options::default();
    let generator = tonic_mcp_schema_context(pool, &options);
    let mut put = |bytes: &[u8]| {
        out.extend_from_slice(&u32::try_from(bytes.len()).expect("record").to_le_bytes());
        out.extend_from_slice(bytes);
    };
    for file in pool.files() {
        let set = FileDescriptorSet {
            file: vec![file.file_descriptor_proto().clone()],
        }
        .encode_to_vec();
        put(&set);
        put(&u32::try_from(file.services().len())
            .expect("count")
            .to_le_bytes());
        for service in file.services() {
            let tools = generator.service_tools(&service).expect("tools");
            put(&u32::try_from(tools.tools.len())
                .expect("count")
                .to_le_bytes());
            for spec in tools.tools {
                // The bench's API is unary, with no confirmation option: the two fields the
                // reader sets without reading them.
                assert!(spec.task_support == TaskSupport::Forbidden && spec.confirm.is_none());
                let input = serde_json::to_string_pretty(&spec.input_schema).expect("json");
                let output = serde_json::to_string_pretty(&spec.output_schema).expect("json");
                for text in [
                    spec.meta().to_string().as_str(),
                    &spec.name,
                    &spec.title,
                    &spec.description,
                    &spec.rpc_path,
                    &spec.input_type,
                    &spec.output_type,
                    &input,
                    &output,
                ] {
                    put(text.as_bytes());
                }
            }
        }
    }
}

/// The `ToolDef`s [`write_generated_defs`] wrote, borrowing every text from `data`: the
/// definitions and descriptor sets of a generated module are the binary's read-only data.
fn read_generated_defs(
    data: &'static [u8],
) -> Vec<(&'static tonic_mcp::codegen::Descriptors, &'static [ToolDef])> {
    fn take(rest: &mut &'static [u8]) -> &'static [u8] {
        let (length, tail) = rest.split_at(4);
        let length = u32::from_le_bytes(length.try_into().expect("length")) as usize;
        let (record, tail) = tail.split_at(length);
        *rest = tail;
        record
    }
    let mut rest = data;
    let mut out = Vec::new();
    let count =
        |rest: &mut &'static [u8]| u32::from_le_bytes(take(rest).try_into().expect("count"));
    while !rest.is_empty() {
        // What a generated module's `MCP_DESCRIPTORS` static is, one per package.
        let set: &'static tonic_mcp::codegen::Descriptors = Box::leak(Box::new(
            tonic_mcp::codegen::Descriptors::new(take(&mut rest)),
        ));
        for _ in 0..count(&mut rest) {
            let tools = count(&mut rest);
            let mut text = || std::str::from_utf8(take(&mut rest)).expect("utf-8");
            let defs: Vec<ToolDef> = (0..tools)
                .map(|_| ToolDef {
                    meta: text(),
                    name: text(),
                    title: text(),
                    description: text(),
                    rpc_path: text(),
                    kind: RpcKind::Unary,
                    input_type: text(),
                    output_type: text(),
                    input_schema: text(),
                    output_schema: text(),
                    annotations: ToolAnnotations::NONE,
                    json_names: false,
                    emit_defaults: false,
                    timeout: None,
                    max_messages: None,
                    max_result_bytes: None,
                    output_omitted: &[],
                    task_support: TaskSupport::Forbidden,
                    confirm: None,
                    required_scopes: &[],
                    wait_for_operation: None,
                    operation_metadata_type: None,
                })
                .collect();
            out.push((set, &*Box::leak(defs.into_boxed_slice())));
        }
    }
    out
}

fn tonic_mcp_schema_context<'a>(
    pool: &DescriptorPool,
    options: &'a Options,
) -> tonic_mcp::schema::Context<'a> {
    tonic_mcp::schema::Context::new(pool, options)
}

async fn first_list(server: McpServer) -> usize {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(client_io);
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"startup\",\"version\":\"0\"}}}\n")
        .await
        .expect("write");
    reader.read_until(b'\n', &mut line).await.expect("read");
    write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")
        .await
        .expect("write");
    line.clear();
    reader.read_until(b'\n', &mut line).await.expect("read");
    assert!(
        line.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\""),
        "{}",
        String::from_utf8_lossy(&line[..200.min(line.len())])
    );
    line.len()
}

/// The synthetic API's descriptor set (`PACKAGES` × 10 services × `METHODS` methods).
fn synthetic_set() -> Vec<u8> {
    let packages = test_kit::env_or("PACKAGES", 10);
    let methods = test_kit::env_or("METHODS", 100);
    FileDescriptorSet {
        file: (0..packages).map(|i| package_file(i, methods)).collect(),
    }
    .encode_to_vec()
}

fn child(mode: &str, path: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let transport = || tonic::transport::Channel::from_static("http://127.0.0.1:9").connect_lazy();
        let (started, sets, before_rss): (Instant, Vec<ToolSet>, u64) = match mode {
            "dynamic" | "lazy" => {
                let set = std::fs::read(path).expect("descriptor set");
                let before_rss = rss_kib().0;
                let started = Instant::now();
                let pool = DescriptorTools::decode_pool(&set).expect("pool");
                let options = Options::default();
                let mut tools = DescriptorTools::new(&pool, &options);
                if mode == "lazy" {
                    tools = tools.lazy_schemas();
                }
                let all = tools.all(transport()).expect("tools");
                (started, vec![all], before_rss)
            }
            "decoded" => {
                let set = std::fs::read(path).expect("descriptor set");
                let before_rss = rss_kib().0;
                let started = Instant::now();
                let decoded = DescriptorTools::decode(&set).expect("descriptors");
                let options = Options::default();
                let tools = DescriptorTools::of(&decoded, &options).lazy_schemas();
                let all = tools.all(transport()).expect("tools");
                (started, vec![all], before_rss)
            }
            "gateway" => {
                let set = std::fs::read(path).expect("descriptor set");
                let before_rss = rss_kib().0;
                let started = Instant::now();
                let (files, comments) = SetPools::decode(&set).expect("descriptors");
                let options = Options::default();
                let tools = DescriptorTools::of_set(&Arc::new(files), Arc::new(comments), &options)
                    .lazy_schemas();
                let all = tools.all(transport()).expect("tools");
                (started, vec![all], before_rss)
            }
            _ => {
                // The parent wrote the definitions (their making is not this process's);
                // read in one block and leaked, they stand for the binary's read-only data.
                let data: &'static [u8] =
                    Box::leak(std::fs::read(path).expect("definitions").into_boxed_slice());
                let defs = read_generated_defs(data);
                let before_rss = rss_kib().0;
                let started = Instant::now();
                let sets = defs
                    .iter()
                    .map(|(descriptors, defs)| {
                        tonic_mcp::codegen::tool_set(
                            descriptors,
                            defs,
                            BoxTransport::new(transport()),
                        )
                            .expect("tool set")
                    })
                    .collect();
                (started, sets, before_rss)
            }
        };
        let built = started.elapsed();
        let tools: usize = sets.iter().map(ToolSet::len).sum();
        let mut builder = McpServer::builder("startup", "0");
        for set in sets {
            builder = builder.tool_set(set).expect("tool set");
        }
        let server = builder.build();
        let bytes = first_list(server).await;
        let listed = started.elapsed();
        let (rss, hwm) = rss_kib();
        println!(
            "| {mode} | {tools} | {:.0} ms | {:.0} ms | {:.1} MB | {:.0} MiB | {:.0} MiB | {:.0} MiB |",
            built.as_secs_f64() * 1e3,
            listed.as_secs_f64() * 1e3,
            bytes as f64 / 1e6,
            rss as f64 / 1024.0,
            hwm as f64 / 1024.0,
            before_rss as f64 / 1024.0,
        );
        let _ = std::io::stdout().flush();
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        let at = args.iter().position(|a| a == flag)?;
        args.get(at + 1).map(String::as_str)
    };
    if let Some(mode) = value("--mode") {
        child(mode, value("--input").expect("--input FILE"));
        return;
    }
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` / `cargo bench -- --list`: nothing to list or test.
    }
    println!(
        "| start | tools | tool sets built | first tools/list answered | tools/list size | RSS after | peak RSS | RSS at start |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let exe = std::env::current_exe().expect("current exe");
    // Both inputs are made here and read by each child from a file, as a server reads its
    // descriptor set (or has its generated definitions in its binary), so that no child's
    // memory holds the making of them.
    let temp = |name: &str| {
        std::env::temp_dir().join(format!("startup-{name}-{}.bin", std::process::id()))
    };
    let (set_path, defs_path) = (temp("set"), temp("defs"));
    let set = synthetic_set();
    std::fs::write(&set_path, &set).expect("write the descriptor set");
    let pool = DescriptorPool::decode(set.as_slice()).expect("pool");
    let mut defs = Vec::new();
    write_generated_defs(&pool, &mut defs);
    std::fs::write(&defs_path, &defs).expect("write the definitions");
    for mode in ["dynamic", "lazy", "decoded", "gateway", "generated"] {
        let input = if mode == "generated" {
            &defs_path
        } else {
            &set_path
        };
        let status = std::process::Command::new(&exe)
            .args(["--mode", mode, "--input"])
            .arg(input)
            .status()
            .expect("child");
        assert!(status.success(), "{mode} failed");
    }
    let _ = std::fs::remove_file(&set_path);
    let _ = std::fs::remove_file(&defs_path);
}
