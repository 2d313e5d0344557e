//! The `clap` command: every flag, its help, and the text after it.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Arg, ArgAction, Command};
use tonic_mcp_schema::options::{OPTIONS, Scope, help_table};

use crate::auth;
use crate::values::parse_bytes;

const ABOUT: &str = "Serve any gRPC server as MCP tools, with no code generation.\n\n\
The gateway reads the server's descriptors through gRPC server reflection (v1, else v1alpha) \
or from --descriptor-set, makes one MCP tool per RPC exactly as protoc-gen-rust-mcp would, \
and forwards every tool call to the server. It speaks MCP over stdio (the default: an MCP \
host starts it as a subprocess) or streamable HTTP at http://ADDR/mcp (--http ADDR).";

fn after_help() -> String {
    let of = |scope: Scope| OPTIONS.iter().filter(move |o| o.scope == scope);
    let mut text = String::from(
        "Plugin options (--opt KEY=VALUE, repeatable, or comma-separated as for protoc's \
         --rust-mcp_opt):\n",
    );
    text.push_str(&help_table(of(Scope::Tool)));
    let code: Vec<&str> = of(Scope::Code).map(|o| o.key).collect();
    text.push_str(&format!(
        "Code-generation options ({}) are refused: the gateway generates no code.\n\n",
        code.join(", ")
    ));
    text.push_str(
        "Examples:\n  \
         grpc-mcp-gateway --target http://127.0.0.1:50051\n  \
         grpc-mcp-gateway --target https://grpc.example.com --header 'authorization: Bearer …'\n  \
         grpc-mcp-gateway --target http://127.0.0.1:50051 --descriptor-set api.binpb \\\n      \
         --include 'shop.v1.*' --opt json_names --http 127.0.0.1:8080\n\n\
         Logs go to stderr (stdout carries MCP under stdio); RUST_LOG sets the level (default \
         info). Header values are never logged.\n",
    );
    text
}

/// The `clap` command.
pub(super) fn command() -> Command {
    auth::args(base_command())
}

fn base_command() -> Command {
    let many = |arg: Arg| arg.action(ArgAction::Append);
    Command::new("grpc-mcp-gateway")
        .version(env!("CARGO_PKG_VERSION"))
        .about(ABOUT)
        .after_help(after_help())
        .max_term_width(100)
        .arg(
            Arg::new("config")
                .long("config")
                .value_name("FILE")
                .help_heading("Target")
                .value_parser(clap::value_parser!(PathBuf))
                .help(
                    "serve the backends of this TOML file, any number of [[backend]] tables \
                     (name, target, descriptor_set, prefix, include, exclude, headers, \
                     header_env, tls, timeouts and limits; see README), instead of the one \
                     the Target, Descriptors and Tools flags describe",
                ),
        )
        .arg(
            Arg::new("check")
                .long("check")
                .action(ArgAction::SetTrue)
                .help_heading("Target")
                .help(
                    "load every backend as serving would, print a table of the tools (name, \
                     backend, RPC, kind, schema bytes, shrunk or not) and warnings, and exit: \
                     non-zero when a backend cannot be loaded or the tools are in error (for \
                     CI before a rollout)",
                ),
        )
        .arg(
            Arg::new("target")
                .long("target")
                .value_name("URL")
                .required_unless_present("config")
                .help_heading("Target")
                .help(
                    "the gRPC server: http://HOST:PORT in plain text, or https://HOST[:PORT] \
                     over TLS verified against the system's root certificates",
                ),
        )
        .arg(
            Arg::new("tls-ca")
                .long("tls-ca")
                .value_name("FILE")
                .help_heading("Target")
                .value_parser(clap::value_parser!(PathBuf))
                .help("with https://: also trust the PEM certificates in FILE (a private CA)"),
        )
        .arg(
            Arg::new("tls-server-name")
                .long("tls-server-name")
                .value_name("NAME")
                .help_heading("Target")
                .help("with https://: the name the server's certificate must carry, when it is not the URL's host"),
        )
        .arg(
            Arg::new("tls-cert")
                .long("tls-cert")
                .value_name("FILE")
                .help_heading("Target")
                .requires("tls-key")
                .value_parser(clap::value_parser!(PathBuf))
                .help("with https://: present the PEM client certificate (chain) in FILE to servers that require one (mutual TLS, e.g. etcd --client-cert-auth); needs --tls-key"),
        )
        .arg(
            Arg::new("tls-key")
                .long("tls-key")
                .value_name("FILE")
                .help_heading("Target")
                .requires("tls-cert")
                .value_parser(clap::value_parser!(PathBuf))
                .help("with --tls-cert: the PEM private key of the client certificate"),
        )
        .arg(many(
            Arg::new("header")
                .long("header")
                .short('H')
                .value_name("NAME: VALUE")
                .help_heading("Target")
                .help(
                    "gRPC metadata sent with every call and reflection request, for example \
                     'authorization: Bearer …'; repeatable. A NAME ending in -bin takes base64. \
                     Values are never logged",
                ),
        ))
        .arg(many(
            Arg::new("header-env")
                .long("header-env")
                .value_name("NAME: VAR")
                .help_heading("Target")
                .help(
                    "as --header, with the value read from the environment variable VAR (keeps \
                     secrets off the command line); repeatable",
                ),
        ))
        .arg(
            Arg::new("connect-timeout")
                .long("connect-timeout")
                .value_name("DURATION")
                .default_value("10s")
                .help_heading("Target")
                .help("bound on connecting and on each reflection exchange (500ms, 10s, 1m)"),
        )
        .arg(
            Arg::new("timeout")
                .long("timeout")
                .value_name("DURATION")
                .help_heading("Target")
                .help(
                    "deadline of each tool call, sent as grpc-timeout (default 30s; a method's \
                     (rust_mcp.tool).timeout wins)",
                ),
        )
        .arg(
            Arg::new("max-messages")
                .long("max-messages")
                .value_name("N")
                .help_heading("Target")
                .value_parser(clap::value_parser!(u32).range(1..))
                .help("how many messages a server-streaming tool collects before it reports truncated (default 100)"),
        )
        .arg(
            Arg::new("max-result-bytes")
                .long("max-result-bytes")
                .value_name("BYTES")
                .help_heading("Target")
                .value_parser(parse_bytes)
                .help("the largest tool result, in bytes of JSON, e.g. 1MiB (default 320KiB): a stream's batch keeps what fits and says truncated, another result over it is an isError saying how to ask for less"),
        )
        .arg(
            Arg::new("max-decoding-message-size")
                .long("max-decoding-message-size")
                .value_name("BYTES")
                .help_heading("Target")
                .value_parser(parse_bytes)
                .help("the largest gRPC response message accepted, e.g. 16MiB (default 4MiB, tonic's); a larger one is an isError naming this flag"),
        )
        .arg(
            Arg::new("max-encoding-message-size")
                .long("max-encoding-message-size")
                .value_name("BYTES")
                .help_heading("Target")
                .value_parser(parse_bytes)
                .help("the largest gRPC request message sent, e.g. 1MiB (default: no limit beyond the 1 MiB of arguments)"),
        )
        .arg(
            Arg::new("descriptor-set")
                .long("descriptor-set")
                .value_name("FILE")
                .help_heading("Descriptors")
                .value_parser(clap::value_parser!(PathBuf))
                .help(
                    "read descriptors from FILE instead of server reflection: an encoded \
                     FileDescriptorSet with imports (protoc --include_imports \
                     --include_source_info --descriptor_set_out=FILE, or buf build -o FILE; \
                     source info carries the comments that become descriptions)",
                ),
        )
        .arg(many(
            Arg::new("service")
                .long("service")
                .value_name("NAME")
                .help_heading("Descriptors")
                .help(
                    "serve this service (full name, e.g. shop.v1.CartService); repeatable. \
                     Default: every service, except grpc.reflection.* and grpc.health.*",
                ),
        ))
        .arg(many(
            Arg::new("include")
                .long("include")
                .value_name("GLOB")
                .help_heading("Tools")
                .help("expose only RPCs whose full name (shop.v1.CartService.GetCart) matches; * globs; repeatable (--opt include=GLOB)"),
        ))
        .arg(many(
            Arg::new("exclude")
                .long("exclude")
                .value_name("GLOB")
                .help_heading("Tools")
                .help("leave out RPCs whose full name matches; repeatable (--opt exclude=GLOB)"),
        ))
        .arg(
            Arg::new("prefix")
                .long("prefix")
                .value_name("PREFIX")
                .help_heading("Tools")
                .help("prefix every tool name with PREFIX_ (--opt prefix=PREFIX)"),
        )
        .arg(
            Arg::new("tool-names")
                .long("tool-names")
                .value_name("SCHEME")
                .value_parser(["service_method", "method", "package"])
                .help_heading("Tools")
                .help("tool-name scheme: CartService_GetCart (service_method, the default), GetCart (method), shop_v1_CartService_GetCart (package) (--opt tool_names=SCHEME)"),
        )
        .arg(many(
            Arg::new("opt")
                .long("opt")
                .value_name("KEY[=VALUE]")
                .help_heading("Tools")
                .help("a protoc-gen-rust-mcp option, with the plugin's keys (listed below); repeatable"),
        ))
        .arg(
            Arg::new("http")
                .long("http")
                .value_name("ADDR")
                .help_heading("MCP")
                .value_parser(clap::value_parser!(SocketAddr))
                .help("serve streamable HTTP at http://ADDR/mcp instead of stdio, e.g. 127.0.0.1:8080 (port 0 picks one; the address is printed on stdout)"),
        )
        .arg(
            Arg::new("stateless")
                .long("stateless")
                .action(ArgAction::SetTrue)
                .requires("http")
                .help_heading("MCP")
                .help("with --http: no MCP sessions, every request stands alone (for replicas behind a load balancer)"),
        )
        .arg(
            Arg::new("replica")
                .long("replica")
                .value_name("NAME")
                .requires("http")
                .help_heading("MCP")
                .value_parser(|text: &str| crate::config_file::replica_name(text))
                .help("with --http: this gateway's name among the replicas behind one load balancer, letters, digits, - and _ (at most 63), unique to each replica: every MCP session id it opens starts with NAME. so that the load balancer can send each session's requests to the replica that holds it (docs/scaling-out.md); not needed with --stateless (config file: `replica`)"),
        )
        .arg(
            Arg::new("task-store")
                .long("task-store")
                .value_name("URL")
                .requires("http")
                .help_heading("MCP")
                .help("with --http: keep MCP tasks in this Redis-protocol server (Redis, Valkey), redis://HOST:PORT/DB, shared by the replicas behind one load balancer so that any of them answers tasks/get, tasks/result, tasks/list and tasks/cancel for a task another runs (docs/scaling-out.md); never with a password in it: see --task-store-password-env (config file: [task_store] url)"),
        )
        .arg(
            Arg::new("task-store-password-env")
                .long("task-store-password-env")
                .value_name("VAR")
                .requires("http")
                .help_heading("MCP")
                .help("with --task-store: the store's password is in the environment variable VAR (config file: [task_store] password_env)"),
        )
        .arg(
            Arg::new("task-store-password-file")
                .long("task-store-password-file")
                .value_name("PATH")
                .value_parser(clap::value_parser!(PathBuf))
                .requires("http")
                .help_heading("MCP")
                .help("with --task-store: the store's password is in the file PATH, a trailing newline dropped (a mounted secret; config file: [task_store] password_file)"),
        )
        .arg(
            Arg::new("task-store-prefix")
                .long("task-store-prefix")
                .value_name("PREFIX")
                .requires("http")
                .help_heading("MCP")
                .help("with --task-store: the prefix of the store's keys (default tonic-mcp:), the same for every replica, another for servers that are not replicas of one another and share a database (config file: [task_store] key_prefix)"),
        )
        .arg(
            Arg::new("task-key-file")
                .long("task-key-file")
                .value_name("PATH")
                .value_parser(clap::value_parser!(PathBuf))
                .requires("http")
                .help_heading("MCP")
                .help("with --http: the key, shared by every replica, that signs the ids of tasks waiting on a google.longrunning.Operation, so that any replica answers for them, with or without --task-store: a file of at least 32 random bytes (head -c 32 /dev/urandom > task.key), a trailing newline dropped (config file: [task_store] key_file)"),
        )
        .arg(many(
            Arg::new("allowed-host")
                .long("allowed-host")
                .value_name("HOST")
                .requires("http")
                .help_heading("MCP")
                .help("with --http: accept this Host header besides localhost, 127.0.0.1 and ::1 (DNS-rebinding protection); repeatable"),
        ))
        .arg(many(
            Arg::new("allowed-origin")
                .long("allowed-origin")
                .value_name("ORIGIN")
                .requires("http")
                .help_heading("MCP")
                .help("with --http: also accept requests carrying this Origin header, e.g. https://app.example.com:443 (loopback origins, http(s)://localhost, 127.0.0.1 and [::1] on any port, are accepted while Host is a loopback name; a request with any other Origin is refused with 403, as browsers send one); repeatable"),
        ))
        .arg(many(
            Arg::new("forward-header")
                .long("forward-header")
                .value_name("NAME")
                .requires("http")
                .help_heading("MCP")
                .help("with --http: forward this header of each MCP HTTP request to the gRPC call, e.g. authorization; repeatable"),
        ))
        .arg(
            Arg::new("max-connections")
                .long("max-connections")
                .value_name("N")
                .requires("http")
                .help_heading("MCP")
                .value_parser(clap::value_parser!(u32).range(1..))
                .help("with --http: the most HTTP connections open at once; at the cap the gateway accepts no more until one closes (default: three quarters of the limit on open files, ulimit -n, at most 10000)"),
        )
        .arg(
            Arg::new("header-read-timeout")
                .long("header-read-timeout")
                .value_name("DURATION")
                .requires("http")
                .help_heading("MCP")
                .help("with --http: close a connection that has not sent a request's headers within DURATION of opening, or of the request's first byte (default 10s)"),
        )
        .arg(
            Arg::new("body-read-timeout")
                .long("body-read-timeout")
                .value_name("DURATION")
                .requires("http")
                .help_heading("MCP")
                .help("with --http: answer 408 to a request whose body has not arrived within DURATION of its headers (default 30s)"),
        )
        .arg(
            Arg::new("connection-idle-timeout")
                .long("connection-idle-timeout")
                .value_name("DURATION")
                .requires("http")
                .help_heading("MCP")
                .help("with --http: close a connection with no request in flight that has not begun another within DURATION (default 75s; responses such as event streams are never cut)"),
        )
        .arg(
            Arg::new("tool-search")
                .long("tool-search")
                .action(ArgAction::SetTrue)
                .help_heading("MCP")
                .help("tool search, for servers with more tools than a model can be shown: tools/list lists search_tools, describe_tools and call_tool (and the --pin tools) instead of every RPC; every tool stays callable by name"),
        )
        .arg(many(
            Arg::new("pin")
                .long("pin")
                .value_name("TOOL")
                .requires("tool-search")
                .help_heading("MCP")
                .help("with --tool-search: list this tool directly as well; repeatable"),
        ))
        .arg(
            Arg::new("search-embeddings")
                .long("search-embeddings")
                .value_name("URL")
                .requires("tool-search")
                .requires("search-embeddings-model")
                .help_heading("MCP")
                .help("with --tool-search: rank by keywords and embeddings, fused; URL is an OpenAI-shaped embeddings API (https://api.openai.com/v1, Ollama's, vLLM's, TEI's, LiteLLM's http://host:port/v1). Tools are embedded in the background; until then, and while it fails, search ranks by keywords"),
        )
        .arg(
            Arg::new("search-embeddings-model")
                .long("search-embeddings-model")
                .value_name("NAME")
                .requires("search-embeddings")
                .help_heading("MCP")
                .help("with --search-embeddings: the model to ask for"),
        )
        .arg(
            Arg::new("search-embeddings-key-env")
                .long("search-embeddings-key-env")
                .value_name("VAR")
                .requires("search-embeddings")
                .help_heading("MCP")
                .help("with --search-embeddings: send the API key in the environment variable VAR as a bearer token"),
        )
        .arg(
            Arg::new("search-embeddings-cache")
                .long("search-embeddings-cache")
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .requires("search-embeddings")
                .help_heading("MCP")
                .help("with --search-embeddings: keep the tools' vectors in DIR between runs, so that only changed tools are embedded again (default $XDG_CACHE_HOME/grpc-mcp-gateway/embeddings)"),
        )
        .arg(
            Arg::new("max-tasks-per-owner")
                .long("max-tasks-per-owner")
                .value_name("N")
                .help_heading("MCP")
                .value_parser(clap::value_parser!(u32).range(1..))
                .help("the most MCP tasks one caller (token owner, else session) may have live, from creation until forgotten one task time-to-live after they end (default 256); a task-augmented tools/call past it is refused with a JSON-RPC error naming this flag"),
        )
        .arg(
            Arg::new("max-running-tasks")
                .long("max-running-tasks")
                .value_name("N")
                .help_heading("MCP")
                .value_parser(clap::value_parser!(u32).range(1..))
                .help("the most MCP tasks running at once, all callers together (default 256; the mcp_tasks_running gauge); past it a task-augmented tools/call is refused with a JSON-RPC error naming this flag"),
        )
        .arg(
            Arg::new("max-task-result-bytes")
                .long("max-task-result-bytes")
                .value_name("BYTES")
                .help_heading("MCP")
                .value_parser(parse_bytes)
                .help("the bytes of task results kept for clients to fetch, as JSON, e.g. 256MiB (default 64MiB); past it the oldest results are dropped (fetched ones first) and their tasks report failed, naming this flag"),
        )
        .arg(
            Arg::new("task-mode")
                .long("task-mode")
                .value_name("MODE")
                .help_heading("MCP")
                .value_parser(["auto", "always", "never"])
                .help("when a tools/call from a client that declared MCP tasks becomes a task (tools whose taskSupport is optional): auto (default) answers with the result when the call ends within --task-inline-wait and makes it a task after; always makes every such call a task at once; never answers every call with its result (for clients that declare tasks but cannot poll them). As tonic_mcp_tasks::Tasks::mode"),
        )
        .arg(
            Arg::new("task-inline-wait")
                .long("task-inline-wait")
                .value_name("DURATION")
                .help_heading("MCP")
                .help("with --task-mode auto: how long a call is waited for before it becomes a task carrying on the same call (default 2s)"),
        )
        .arg(
            Arg::new("reload-interval")
                .long("reload-interval")
                .value_name("DURATION")
                .default_value("60s")
                .help_heading("Operations")
                .help("load every backend again this often (reflection, descriptor-set files) and serve what changed: clients with a session get notifications/tools/list_changed, calls in flight finish on the old tools, a backend down at start gets its tools once it answers; SIGHUP reloads at once; `off`: only at start"),
        )
        .arg(
            Arg::new("metrics")
                .long("metrics")
                .action(ArgAction::SetTrue)
                .requires("http")
                .help_heading("Operations")
                .help("with --http: serve Prometheus metrics at GET /metrics of the MCP listener, without authorization (calls by tool and outcome, latencies, in flight, tasks, backend state)"),
        )
        .arg(
            Arg::new("metrics-addr")
                .long("metrics-addr")
                .value_name("ADDR")
                .value_parser(clap::value_parser!(SocketAddr))
                .help_heading("Operations")
                .help("serve Prometheus metrics at http://ADDR/metrics, a listener of their own that only Prometheus reaches (with stdio or --http)"),
        )
        .arg(
            Arg::new("otlp-endpoint")
                .long("otlp-endpoint")
                .value_name("URL")
                .help_heading("Operations")
                .help("export OpenTelemetry traces over OTLP/gRPC to this collector, e.g. http://otel-collector:4317: a span per tool call (the trace of the request's _meta.traceparent or traceparent header) and a child span per gRPC call, whose W3C trace context the backend receives as metadata; OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER and the other OTEL_* variables apply"),
        )
        .arg(
            Arg::new("name")
                .long("name")
                .value_name("NAME")
                .default_value("grpc-mcp-gateway")
                .help_heading("MCP")
                .help("the server name the MCP client sees"),
        )
}
