#!/usr/bin/env bash
# Checks every fenced block of README.md, examples/demo/README.md and the manual (every chapter
# of docs/SUMMARY.md, which must list every docs/*.md), of any language (issue 22: every
# snippet in README is compiled or run by a test; issue 41: the book's too), or says why not.
# The catalogue names
# each block by its language (the whole info string: `rust,ignore` is not `rust`) and its exact
# text; a block it does not name fails the script, so
# a new or changed snippet cannot go untested silently, and so does an entry whose block is
# gone. An entry (`@@ LANGUAGE: ACTIONS`, then the text) gives one action for the block or one
# per line:
#   - a handler, which runs or checks the text taken from the file and its outcome: the sh
#     handlers below run it from the repository root; those of buf.gen.yaml (real buf), the
#     nginx block (`nginx -t`) and the JSON blocks (against the real servers, through
#     scripts/readme-json.py) are in scripts/readme-blocks.sh;
#   - `checked by PATH (`REF`): WHAT`, for a block another test checks (compares it with the file
#     it shows, compiles it, or builds with it): PATH must exist and contain REF, the name under
#     which it checks the block (verified before any block runs). Such an entry may give the
#     block's first lines only, then a line `...`; it must then match exactly one block;
#   - `not run: <reason>`.
# A block that shows a file of the repository uses mdBook's `{{#include ../path}}`, so it is
# the file by construction; its handler `included` checks that every include target exists.
# The Rust blocks of the book are compiled and run by `cargo test -p e2e --doc` (tests/e2e/src/book.rs
# includes each chapter as the doc of an item); a `rust,ignore` block names the test that
# compiles it instead. docs/benchmark-history.md is an archive of dated measurements kept
# verbatim: its blocks are the commands of those runs, none run here (BENCHMARKS.md has the
# current ones). Before any block runs, every relative link of these files, BENCHMARKS.md and
# RELIABILITY.md must name a file that exists, and a `#fragment` into a Markdown file one of
# its headings (GitHub's and mdBook's ids).
# Shell blocks run first (they build and install what the others use), then the others, each
# set in file order. The JSON checks run examples/minimal and e2e-server as `cargo test
# --workspace --all-features` builds them: nothing to build after scripts/test.sh's cargo test,
# that whole build when this script runs alone.
# `<this repository's URL>` is replaced by a file:// URL of the repository root (so the `--git`
# install builds the last commit, not the work tree); `cargo install` runs with its
# CARGO_INSTALL_ROOT under target/readme-sh/ (.tools/cargo for protoc-gen-prost/-tonic, as
# install-tools.sh does), our own crates' in the debug profile and target/ (see cargo_install).
#
# Usage: scripts/readme.sh
#   README_RELEASE=1  README's host config of the release build (target/release/demo) runs that
#                     build, made as README says (`cargo build --release -p demo`: minutes of
#                     CI time); by default it runs the debug build in its place, which the sh
#                     blocks built, and says so.
#   README_CHECK_ONLY=1  only the checks before any block runs: every block named by the
#                     catalogue and every entry by a block, the claims of other tests, the
#                     links (seconds; nothing is built).
# Needs: cargo, git, npm (Node 22 from scripts/install-tools.sh conformance when the machine's
# is older; buf from install-tools.sh buf), python3, curl, openssl, apt-get and dpkg-deb (nginx
# from Debian's archive, unpacked into .tools/ without root: install-tools.sh nginx), free
# ports 50051 and 8080, network access to crates.io and npm.
# Exits non-zero on the first failure.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export CARGO_TARGET_DIR="$TARGET"
WORK="$TARGET/readme-sh"
# The chapters in the order of docs/SUMMARY.md.
mapfile -t CHAPTERS < <(grep -oE '\]\([^)]+\.md\)' "$ROOT/docs/SUMMARY.md" | sed 's/^](//; s/)$//; s|^|docs/|')
FILES=(README.md examples/demo/README.md "${CHAPTERS[@]}")
ARCHIVE=docs/benchmark-history.md
ARCHIVE_REASON="not run: a dated benchmark command of the archive ($ARCHIVE, verbatim); BENCHMARKS.md gives the current commands"
declare -A IN_SUMMARY=()
for doc in "${CHAPTERS[@]}"; do IN_SUMMARY[$doc]=1; done
for doc in "$ROOT"/docs/*.md; do
  doc=docs/${doc##*/}
  [[ $doc == docs/SUMMARY.md || -n ${IN_SUMMARY[$doc]:-} ]] \
    || die "$doc is not a chapter of docs/SUMMARY.md: the book would leave it out, and this script would not check it"
done

# Entries: `@@ language: action[ | action]...`, then the block's exact text (for `checked by`,
# or its first lines and a line `...`). In the order of the files.
CATALOGUE=$(cat <<'END'
@@ sh: stdio_closed | not run: it is the command that runs this script (scripts/test.sh calls scripts/readme.sh)
cargo run -p demo        # generate, then serve MCP (stdio) in front of an embedded gRPC service
scripts/test.sh          # every test: Rust, golden, end to end, buf/protoc workflows, Python MCP SDK
@@ sh: stdin_session
cargo run -q -p demo <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"TaskService_GetTask","arguments":{"id":"task-1"}}}
EOF
@@ rust: checked by examples/minimal/tests/readme.rs (`readme_shows_the_build_script_as_it_is`): README shows the file as it is; cargo test builds the example and drives it (tests/stdio.rs)
// examples/minimal/build.rs
// Runs protoc (the bundled one), prost, tonic and protoc-gen-rust-mcp in one call;
// `rust_mcp/options.proto` is found without a copy.
fn main() -> Result<(), protoc_gen_rust_mcp::BuildError> {
    protoc_gen_rust_mcp::Builder::new()
        .compile_protos(&["proto/greeter/v1/greeter.proto"], &["proto"])
}
@@ rust: checked by scripts/readme-blocks.sh (`README's module tree`): buf_generate compiles the output of the book's buf.gen.yaml with it as src/lib.rs (and the book's copy must be the same text)
// src/lib.rs: gen/ is the output directory, beside src/
pub mod demo {
...
@@ sh: cargo_install | demo_background | gateway_stdio
cargo install --locked --path gateway   # from a checkout; `cargo install --locked grpc-mcp-gateway` once it is on crates.io
cargo run -p demo -- --grpc 127.0.0.1:50051 --http 127.0.0.1:8080 &   # the gRPC service on a fixed port
cargo run -p grpc-mcp-gateway -- --target http://127.0.0.1:50051      # its 13 tools, MCP over stdio
@@ toml: checked by gateway/src/config_file/tests.rs (`# gateway.toml`): readmes_example_loads loads README's copy as the gateway does (both backends, the header from SHOP_TOKEN, paths relative to the file, the error without SHOP_TOKEN); the book's copy (docs/gateway.md) has the same text, which this entry's full text holds it to
# gateway.toml
[[backend]]
name = "shop"                          # required, unique: logs and errors use it
target = "https://shop.internal:8443"  # required
prefix = "shop"                        # tools are shop_CartService_GetCart, ...
include = ["shop.v1.*"]
header_env = { authorization = "SHOP_TOKEN" }   # value from the environment, never logged
timeout = "10s"
tls = { ca = "certs/ca.pem", cert = "certs/client.pem", key = "certs/client.key" }

[[backend]]
name = "search"
target = "http://10.0.0.7:50051"
descriptor_set = "search.binpb"        # absent: gRPC server reflection
prefix = "search"
max_result_bytes = "1MiB"
@@ sh: stdio_closed | http_initialize | usage
cargo run -p demo                              # MCP over stdio
cargo run -p demo -- --http 127.0.0.1:8080     # MCP over streamable HTTP at http://127.0.0.1:8080/mcp
cargo run -p demo -- --help
@@ sh: demo_background | gateway_stdio
cargo run -p demo -- --grpc 127.0.0.1:50051 --http 127.0.0.1:8080 &
cargo run -p grpc-mcp-gateway -- --target http://127.0.0.1:50051
@@ json: host_demo_debug
{
  "mcpServers": {
    "tasks": {
      "command": "/path/to/checkout/target/debug/demo"
    }
  }
}
@@ sh: inspector
cargo build -p demo && npx -y @modelcontextprotocol/inspector@2.12.0 --cli target/debug/demo --method tools/call --tool-name TaskService_GetTask --tool-arg id=task-1
@@ sh: cargo_install | cargo_install
cargo install --locked --path protoc-gen-rust-mcp           # from a clone, at its root
cargo install --locked --git <this repository's URL> protoc-gen-rust-mcp
@@ toml: checked by scripts/workflows.sh (`## Install`): `workflows.sh readme` compiles the output of the manual's protoc example in a crate with these dependencies
[dependencies]
...
@@ sh: install_prost_plugins
cargo install --locked protoc-gen-prost@0.5.0 protoc-gen-tonic@0.5.0
@@ toml: included
# examples/minimal/Cargo.toml
{{#include ../examples/minimal/Cargo.toml}}
@@ proto: included
// examples/minimal/proto/greeter/v1/greeter.proto
{{#include ../examples/minimal/proto/greeter/v1/greeter.proto}}
@@ rust,ignore: included
// examples/minimal/build.rs
{{#include ../examples/minimal/build.rs}}
@@ rust,ignore: included
// examples/minimal/src/main.rs
{{#include ../examples/minimal/src/main.rs}}
@@ json: greeter_listing
{"name": "Greeter_SayHello", "title": "Say hello",
 "description": "Says hello to someone. Read-only: it changes nothing.",
 "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true}}
@@ yaml: buf_generate
# buf.gen.yaml
version: v2
plugins:
  - local: protoc-gen-prost
    out: gen
  - local: protoc-gen-tonic
    out: gen
  - local: protoc-gen-rust-mcp
    out: gen
    opt:
      - include_in_prost        # include!("<package>.pb.mcp.rs") from protoc-gen-prost's file
      - tools_json              # also write <package>.mcp.json for review
@@ yaml: checked by scripts/workflows.sh (`run_outside_buf`): `workflows.sh outside-buf` writes it as the buf.yaml of a buf workspace outside the repository's, where real buf builds a proto importing rust_mcp/options.proto
# buf.yaml
version: v2
modules:
  - path: proto
@@ sh: checked by scripts/workflows.sh (`run_outside_buf`): `workflows.sh outside-buf` runs it as written (the clone's path in place of path/to/clone) in that workspace, with real buf and the plugins on PATH, checks that no rust_mcp.rs is written, and compiles the output
ln -s path/to/clone/proto/rust_mcp proto/rust_mcp   # once (commit the link, or make it in CI)
buf generate --path proto/shop                       # your files only: no rust_mcp.rs
@@ yaml: checked by scripts/workflows.sh (`run_outside_buf`): `workflows.sh outside-buf` adds it to the buf.gen.yaml above, runs plain `buf generate` and checks that it writes what --path wrote, no rust_mcp.rs
# buf.gen.yaml (continued)
inputs:
  - directory: .
    exclude_paths:
      - proto/rust_mcp
@@ sh: checked by scripts/workflows.sh (`'## protoc'`): `workflows.sh readme` runs it as written, with the plugins on PATH, and compiles its output
mkdir -p gen
protoc -I examples/demo/proto -I proto -I testdata \
  --prost_out=gen --tonic_out=gen \
  --rust-mcp_out=gen --rust-mcp_opt=include_in_prost,tools_json \
  examples/demo/proto/demo/v1/tasks.proto \
  testdata/google/longrunning/operations.proto testdata/google/rpc/status.proto
@@ rust,ignore: checked by scripts/readme-blocks.sh (`the book's module tree`): buf_generate compiles the output of the buf.gen.yaml above with it as src/lib.rs; ignore for rustdoc, which has no gen/
// src/lib.rs: gen/ is the output directory, beside src/
pub mod demo {
...
@@ sh: vendored_protoc
cargo fetch --locked   # downloads protoc-bin-vendored with the workspace's other dependencies
ls "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/protoc-bin-vendored-linux-x86_64-*/bin/protoc
@@ rust,ignore: included
// examples/demo/build.rs
{{#include ../examples/demo/build.rs}}
@@ toml: checked by scripts/workflows.sh (`## Add to an existing build.rs`): `workflows.sh readme` builds a crate with it and the build.rs below, as written
[build-dependencies]
...
@@ rust,ignore: checked by scripts/workflows.sh (`## Add to an existing build.rs`): `workflows.sh readme` builds it as written (a build script: ignore for rustdoc)
// build.rs (written for examples/demo: paths are relative to that crate)
...
@@ rust,ignore: checked by examples/minimal/tests/readme_snippets.rs (`"serving"`): compiled there, and the book shows it as it is there (ignore for rustdoc, which has no greeter module)
use std::time::Duration;
...
@@ rust,ignore: checked by examples/minimal/tests/readme_snippets.rs (`"without_generated_code"`): compiled there, and the book shows it as it is there (ignore for rustdoc, which has no greeter module)
use tonic_mcp::schema::Options;
...
@@ rust,ignore: checked by examples/minimal/tests/readme_snippets.rs (`"migrating"`): compiled there, and the book shows it as it is there (ignore for rustdoc, which has no greeter module)
use greeter::v1::greeter_mcp;
...
@@ json: streaming_calls
{"name": "InventoryService_ListItems", "arguments": {"name_prefix": "item", "limit": 2}}
→ {"messages": [{"id": "1", "name": "item-1", "quantity": 10}, {"id": "2", "name": "item-2", "quantity": 20}]}
{"name": "InventoryService_UploadItems", "arguments": {"messages": [{"id": "a"}, {"id": "b"}]}}
→ {"stored": 2}
{"name": "InventoryService_Chat", "arguments": {"messages": [{"text": "hi"}]}}
→ {"messages": [{"sender": "server", "text": "echo: hi"}]}
@@ json: meta_example
"_meta": {"protoc-gen-rust-mcp/rpc": {
  "path": "/demo.v1.TaskService/DeleteTask", "inputType": "demo.v1.DeleteTaskRequest",
  "outputType": "google.protobuf.Empty", "streaming": "unary", "taskSupport": "forbidden",
  "category": "tasks", "confirm": {"unconfirmed": "proceed"}}}
"_meta": {"protoc-gen-rust-mcp/status": {"code": 5, "name": "NOT_FOUND"}}
@@ rust,ignore: checked by examples/minimal/tests/readme.rs (`the_book_shows_excerpts_of_main_rs_as_they_are`): the lines are src/main.rs's, which cargo test builds; tests/logs.rs runs the example with and without RUST_LOG and reads its stderr (ignore for rustdoc, an excerpt)
// examples/minimal/src/main.rs (excerpt)
// Logs go to stderr: stdout carries MCP. RUST_LOG sets what is logged; when it is unset,
...
@@ json: host_demo_release
{
  "mcpServers": {
    "demo": {
      "command": "/path/to/protoc-gen-rust-mcp/target/release/demo",
      "args": []
    }
  }
}
@@ sh: cargo_install
cargo install --locked --path gateway   # from a checkout; `cargo install --locked grpc-mcp-gateway` once it is on crates.io
@@ sh: demo_background | gateway_stdio
cargo run -p demo -- --grpc 127.0.0.1:50051 --http 127.0.0.1:8080 &   # the gRPC service on a fixed port
cargo run -p grpc-mcp-gateway -- --target http://127.0.0.1:50051      # its 13 tools, MCP over stdio
@@ json: host_gateway
{
  "mcpServers": {
    "shop": {
      "command": "grpc-mcp-gateway",
      "args": ["--target", "https://grpc.example.com", "--include", "shop.v1.*",
               "--header-env", "authorization: SHOP_TOKEN"],
      "env": {"SHOP_TOKEN": "Bearer …"}
    }
  }
}
@@ rust,ignore: checked by examples/minimal/tests/readme.rs (`the_book_shows_excerpts_of_main_rs_as_they_are`): the lines are src/main.rs's, which cargo test builds; tests/grpc.rs starts the example with --grpc and has the gateway read it by reflection and call it (ignore for rustdoc, an excerpt)
// examples/minimal/src/main.rs (excerpt)
/// Serves `Hello` over gRPC on `addr` (port 0: a free one), in the background, with gRPC
...
@@ sh: not run: no container engine runs on the machines the tests run on; scripts/deploy-check.sh lints deploy/Dockerfile (hadolint) and gateway/tests/deploy.rs runs the gateway with the Dockerfile's entrypoint
docker build -f deploy/Dockerfile -t grpc-mcp-gateway .
@@ sh: not run: it needs an identity provider at a public https URL and a backend named tasks.internal; scripts/auth-e2e.sh runs the gateway with the same flags against a real authorization server on loopback
grpc-mcp-gateway --target http://tasks.internal:50051 --http 0.0.0.0:8080 \
  --auth-issuer https://id.example.com/realms/platform \
  --resource-url https://mcp.example.com/mcp \
  --auth-scope mcp --auth-write-scope tasks.write \
  --forward-claim sub=x-user-id --forward-claim client_id=x-client-id
@@ sh: not run: it needs a backend and an embeddings endpoint on internal hosts; scripts/tool-search-e2e.sh runs the gateway with the same flags against the e2e services and a real embeddings server on loopback
grpc-mcp-gateway --target dns:///api.internal:443 --tool-search \
  --search-embeddings http://embeddings.internal:8080/v1 \
  --search-embeddings-model all-MiniLM-L6-v2 \
  --search-embeddings-key-env EMBEDDINGS_API_KEY
@@ rust,no_run: checked by tests/e2e/src/book.rs (`authorization.md`): compiled by cargo test -p e2e --doc against the testdata InventoryService's golden module (not run: it would serve)
# use e2e::testdata::streaming::inventory_service_mcp as inventory;
...
@@ json: not run: the shape of the protected resource metadata; addons/auth/tests/authorization.rs and scripts/auth-e2e.sh read the real document
   {"resource": "https://mcp.example.com/mcp",
...
@@ rust: checked by tests/e2e/src/book.rs (`tasks.md`): compiled and run by cargo test -p e2e --doc against the testdata InventoryService's golden module
# use e2e::testdata::streaming::inventory_service_mcp;
...
@@ rust: checked by tests/e2e/src/book.rs (`scaling-out.md`): compiled by cargo test -p e2e --doc against the testdata InventoryService's golden module (the function is compiled, not called: it needs Redis and a key file)
# async fn build(channel: tonic::transport::Channel) -> Result<tonic_mcp::McpServer, Box<dyn std::error::Error>> {
...
@@ nginx: nginx_test
upstream mcp_replicas {
    server 10.0.0.11:8080 max_fails=1 fail_timeout=10s;
    server 10.0.0.12:8080 max_fails=1 fail_timeout=10s;
    server 10.0.0.13:8080 max_fails=1 fail_timeout=10s;
    # No upstream keepalive: a pooled connection to a replica that just died fails only once a
    # POST is on it, and tool calls are not replayed. A fresh connection is refused first.
}
server {
    listen 443 ssl;
    server_name mcp.example.com;
    location = /mcp {
        proxy_pass http://mcp_replicas;
        proxy_http_version 1.1;
        proxy_set_header Host $host;      # and allowed_hosts = ["mcp.example.com"] on replicas
        proxy_buffering off;              # progress notifications stream as SSE
        proxy_read_timeout 120s;          # longer than your longest tool deadline
        proxy_next_upstream error timeout;
    }
    location = /healthz { proxy_pass http://mcp_replicas; }
    # With authorization: the protected resource metadata (exactly these two paths; the
    # server answers 404 to anything else under the prefix).
    location = /.well-known/oauth-protected-resource { proxy_pass http://mcp_replicas; }
    location = /.well-known/oauth-protected-resource/mcp { proxy_pass http://mcp_replicas; }
}
@@ nginx: nginx_test
# The replica named by the session id's prefix (`r1.<uuid>`): replicas started with
# --replica r1, r2 and r3. No session id yet (initialize) or a name not listed: any replica.
map $http_mcp_session_id $mcp_replica {
    default     mcp_any;
    "~^r1\."    mcp_r1;
    "~^r2\."    mcp_r2;
    "~^r3\."    mcp_r3;
}
upstream mcp_any {
    server 10.0.0.11:8080 max_fails=1 fail_timeout=10s;
    server 10.0.0.12:8080 max_fails=1 fail_timeout=10s;
    server 10.0.0.13:8080 max_fails=1 fail_timeout=10s;
}
# One upstream per replica, the others its backups: a session of a replica that died lands on
# a live one, which answers 404 (session not found), and the client initializes again.
upstream mcp_r1 {
    server 10.0.0.11:8080 max_fails=1 fail_timeout=10s;
    server 10.0.0.12:8080 backup;
    server 10.0.0.13:8080 backup;
}
upstream mcp_r2 {
    server 10.0.0.12:8080 max_fails=1 fail_timeout=10s;
    server 10.0.0.11:8080 backup;
    server 10.0.0.13:8080 backup;
}
upstream mcp_r3 {
    server 10.0.0.13:8080 max_fails=1 fail_timeout=10s;
    server 10.0.0.11:8080 backup;
    server 10.0.0.12:8080 backup;
}
server {
    listen 443 ssl;
    server_name mcp.example.com;
    location = /mcp {
        proxy_pass http://$mcp_replica;   # an upstream above, never a DNS name
        proxy_http_version 1.1;
        proxy_set_header Host $host;      # and allowed_hosts = ["mcp.example.com"] on replicas
        proxy_buffering off;              # progress notifications stream as SSE
        proxy_read_timeout 120s;          # longer than your longest tool deadline
        proxy_next_upstream error timeout;
    }
    location = /healthz { proxy_pass http://mcp_any; }
    location = /.well-known/oauth-protected-resource { proxy_pass http://mcp_any; }
    location = /.well-known/oauth-protected-resource/mcp { proxy_pass http://mcp_any; }
}
@@ proto: not run: an illustration of the options; testdata/tool_options.proto sets each of them and the golden tests check what they do
import "rust_mcp/options.proto";
...
@@ json: not run: an excerpt of a listed schema; golden/ holds the generated schemas of testdata/oneofs.proto, which the golden test compares
"filter": {
...
@@ text: not run: a diagram
protoc-gen-rust-mcp ─────────────────────────────┐
...
@@ text: not run: a diagram
tools/call ─► transport/  stdio.rs, http.rs (+ sessions.rs, origin.rs, guard.rs; an auth layer first)
...
@@ sh: not run: it rewrites golden/ (CI=true refuses it); the golden test that cargo test runs covers the same code
UPDATE_GOLDEN=1 cargo test -p protoc-gen-rust-mcp --test golden
@@ sh: checked by scripts/test.sh (`conformance.sh`): the test command runs it
scripts/conformance.sh
END
)

# Reads `@@ head` records from stdin into the arrays named $1 (heads) and $2 (texts).
parse() {
  local -n heads=$1 texts=$2
  local line
  while IFS= read -r line; do
    if [[ $line == '@@ '* ]]; then heads+=("${line#@@ }") texts+=(""); else
      texts[-1]+="${texts[-1]:+$'\n'}$line"; fi
  done
}

# Every fenced block of the files (``` or ~~~), as `@@ file:line language` records; `none` for
# a block without a language.
blocks() {
  local file
  for file in "${FILES[@]}"; do
    awk -v file="$file" '
      !inside && match($0, /^[ \t]*(```|~~~)/) {
        fence = substr($0, RSTART + RLENGTH - 3, 3)
        language = substr($0, RSTART + RLENGTH)
        sub(/^[`~]*[ \t]*/, "", language); sub(/[ \t].*$/, "", language)
        inside = 1; print "@@ " file ":" NR " " (language == "" ? "none" : language); next
      }
      inside && $0 ~ ("^[ \t]*" fence "+[ \t]*$") { inside = 0; next }
      inside { print }
      END { if (inside) { print "unclosed code fence in " file > "/dev/stderr"; exit 1 } }
    ' "$file"
  done
}

# Whether catalogue entry $2 names block $1: the same language, and the same text, or for an
# entry ending in a line `...`, the text begins with the entry's lines.
names_block() {
  local entry=${EXPECTED[$2]} prefix
  [[ ${LANGUAGES[$2]} == "${HEADS[$1]##* }" ]] || return 1
  if [[ $entry == *$'\n...' ]]; then
    prefix=${entry%...}
    [[ ${TEXTS[$1]} == "$prefix"* ]]
  else
    [[ ${TEXTS[$1]} == "$entry" ]]
  fi
}

# `checked by PATH (`REF`): WHAT`: PATH must exist and contain REF.
checked_by() {
  # shellcheck disable=SC2016 # backquotes of the action
  local re='^checked by ([^ ]+) \(`([^`]+)`\): (.+)$' path ref
  [[ $1 =~ $re ]] || die "not an action of the form checked by PATH (\`REF\`): WHAT: $1"
  path=${BASH_REMATCH[1]} ref=${BASH_REMATCH[2]}
  [[ -f $path ]] || die "the catalogue says $path checks a block, but there is no $path"
  grep -qF -- "$ref" "$path" || die "the catalogue says $path checks a block as $ref, but $path does not contain $ref"
  NOTE="$path: ${BASH_REMATCH[3]}"
}

BG=()
stop_background() {
  local pid
  for pid in "${BG[@]}"; do kill -- -"$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  BG=()
}
LINKED_TARGET=""
trap 'stop_background; unlink_target' EXIT

# Blocks that name target/ (README's paths) run while target/ is CARGO_TARGET_DIR: a link to it
# while they run, when there is no target/.
link_target() {
  if [[ ! -e $ROOT/target ]]; then ln -s "$TARGET" "$ROOT/target" && LINKED_TARGET=1; fi
  [[ $ROOT/target -ef $TARGET ]] || die "target/ is not CARGO_TARGET_DIR ($TARGET): the block would run another build"
}
unlink_target() {
  if [[ -n $LINKED_TARGET ]]; then rm -f "$ROOT/target" && LINKED_TARGET=""; fi
}

# Runs a line or block as written, from the repository root; output in $WORK/out, $WORK/err.
run() { bash -euo pipefail -c "$1" >"$WORK/out" 2>"$WORK/err"; }
fail() { die "$1"$'\n'"--- stdout:"$'\n'"$(tail -n 40 "$WORK/out")"$'\n'"--- stderr:"$'\n'"$(tail -n 40 "$WORK/err")"; }

INITIALIZE='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readme.sh","version":"1"}}}'
port_open() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
addresses() { grep -oE '127\.0\.0\.1:[0-9]+' <<<"$1" | sort -u; }

# Starts $1 in its own process group (killed after the block), once its addresses are free, and
# waits until they accept connections.
start_background() {
  local addr waited=0
  for addr in $(addresses "$1"); do
    port_open "$addr" && die "$addr is taken (another demo or gateway?); README's line needs it: $1"
  done
  set -m
  bash -c "$1"$'\n'"wait" </dev/null >"$WORK/bg.log" 2>&1 &
  BG+=("$!")
  set +m
  for addr in $(addresses "$1"); do
    until port_open "$addr"; do
      kill -0 "${BG[-1]}" 2>/dev/null || die "exited before listening on $addr: $1"$'\n'"$(tail -n 40 "$WORK/bg.log")"
      ((waited++ < 3000)) || die "nothing listens on $addr after 300 s: $1"
      sleep 0.1
    done
  done
}

# The JSON-RPC answers in $WORK/out must satisfy the Python expression $1 (over `answers`, a
# dict id -> message).
check_answers() {
  python3 - "$WORK/out" "$1" <<'PY' || fail "unexpected answers"
import json, sys
answers = {m["id"]: m for m in map(json.loads, filter(str.strip, open(sys.argv[1]))) if "id" in m}
sys.exit(0 if eval("(" + sys.argv[2] + ")") else f"not {sys.argv[2]}: {answers}")
PY
}

stdio_closed() {
  run "$1" </dev/null || fail "exited with status $? on stdin closed before initialize: $1"
  NOTE="exits 0 when stdin closes before initialize"
}

usage() {
  run "$1" </dev/null || fail "exited with status $?: $1"
  grep -q -- --http "$WORK/out" || fail "its output does not mention --http: $1"
  NOTE="exits 0, usage on stdout"
}

http_initialize() {
  local addr code
  start_background "$1"
  addr=$(addresses "$1" | head -n 1)
  code=$(curl -sS -o "$WORK/out" -w '%{http_code}' -X POST "http://$addr/mcp" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d "$INITIALIZE") \
    || die "curl failed against http://$addr/mcp"
  { [[ $code == 200 ]] && grep -q serverInfo "$WORK/out"; } || fail "POST initialize to http://$addr/mcp: HTTP $code"
  stop_background
  NOTE="POST initialize to http://$addr/mcp: 200 with serverInfo"
}

inspector() {
  local node
  scripts/install-tools.sh conformance >"$WORK/err" 2>&1 || fail "scripts/install-tools.sh conformance failed"
  node=$(sed -n 's/^exec "\([^"]*\)".*/\1/p' .tools/conformance/run)
  [[ -x $node ]] || die "no Node in .tools/conformance/run"
  # The line runs target/debug/demo.
  link_target
  PATH="$(dirname "$node"):$PATH" run "$1" </dev/null || fail "exited with status $?: $1"
  unlink_target
  { grep -q '"id": *"task-1"' "$WORK/out" && grep -q 'Write the release notes' "$WORK/out" \
    && ! grep -q '"isError": *true' "$WORK/out"; } || fail "the Inspector's output has no task-1"
  NOTE="the Inspector (Node $("$node" --version)) got task-1 (Write the release notes)"
}

stdin_session() {
  run "$1" </dev/null || fail "exited with status $?"
  check_answers 'sorted(answers) == [1, 2, 3]
    and "TaskService_GetTask" in [t["name"] for t in answers[2]["result"]["tools"]]
    and not answers[3]["result"].get("isError")'
  NOTE="answers ids 1, 2, 3, lists TaskService_GetTask, the call is not isError, exit 0"
}

# Installs into a fresh root (the `--git` line from a file:// URL of the repository root), then
# asks the binary: the plugin answers a CodeGeneratorRequest, the gateway its --help. The
# line is checked to install a working binary from the locked graph, not to optimise it: it
# runs with `--debug` in target/, the very build of the package alone that README's next
# line (`cargo run -p grpc-mcp-gateway`) makes, so the two share it (the release profile,
# even at opt-level 0, built the gateway's whole dependency tree a second time).
cargo_install() {
  local line=$1 url="<this repository's URL>" root bin
  [[ $line == *--locked* ]] || die "without --locked, cargo install ignores Cargo.lock: $line"
  [[ $line == "cargo install "* ]] || die "not a cargo install line: $line"
  line=${line//"$url"/"file://$ROOT"}
  line="cargo install --debug ${line#cargo install }"
  root="$WORK/install/$((INSTALLS += 1))"
  CARGO_INSTALL_ROOT=$root run "$line" || fail "failed: $line"
  bin=$(find "$root/bin" -type f | head -n 1)
  if [[ $bin == */grpc-mcp-gateway ]]; then
    "$bin" --help >"$WORK/out" 2>"$WORK/err" || fail "grpc-mcp-gateway --help failed"
    NOTE="installed (debug profile); grpc-mcp-gateway --help exits 0"
    return
  fi
  # A CodeGeneratorRequest whose parameter (field 2) is `bogus`: the answer names the option.
  printf '\x12\x05bogus' | "$bin" >"$WORK/out" 2>"$WORK/err" || fail "$bin failed on a request"
  # shellcheck disable=SC2016 # backquotes of the plugin's message
  grep -aq 'unknown option `bogus`' "$WORK/out" || fail "$bin did not answer the request"
  NOTE="installed $("$bin" --version) (debug profile), which answers a CodeGeneratorRequest"
}

install_prost_plugins() {
  CARGO_INSTALL_ROOT="$ROOT/.tools/cargo" CARGO_TARGET_DIR="$ROOT/.tools/cargo/target" run "$1" \
    || fail "failed: $1"
  [[ -x .tools/cargo/bin/protoc-gen-prost && -x .tools/cargo/bin/protoc-gen-tonic ]] || fail "not in .tools/cargo/bin"
  NOTE="protoc-gen-prost and protoc-gen-tonic in .tools/cargo/bin"
}

demo_background() {
  start_background "$1"
  NOTE="serves on $(addresses "$1" | paste -sd ' ')"
}

gateway_stdio() {
  printf '%s\n' "$INITIALIZE" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' >"$WORK/in"
  run "$1" <"$WORK/in" || fail "exited with status $?: $1"
  check_answers 'len(answers[2]["result"]["tools"]) == 13'
  stop_background
  NOTE="the gateway lists 13 tools over stdio"
}

# A block that shows files with mdBook's `{{#include PATH}}` (PATH relative to the chapter,
# optionally with `:anchor` or `:from:to`): every PATH must be a file, and the block nothing
# but its first line (naming the file) and the includes.
included() {
  local dir path n=0 line
  dir=$(dirname "$BLOCK_FILE")
  while IFS= read -r line; do
    [[ $line =~ \{\{#include\ ([^}:]+)(:[^}]*)?\}\} ]] || continue
    path=${BASH_REMATCH[1]}
    [[ -f $dir/$path ]] || die "$BLOCK_FILE: {{#include $path}} names no file ($dir/$path)"
    n=$((n + 1))
  done <<<"$1"
  ((n > 0)) || die "$BLOCK_FILE: the catalogue says this block is included, but it has no {{#include}}"
  NOTE="mdBook includes $path, which exists"
}

# The manual's command that prints the vendored protoc: it must print one executable that
# reports a libprotoc version.
vendored_protoc() {
  local protoc
  run "$1" </dev/null || fail "exited with status $?: $1"
  protoc=$(tail -n 1 "$WORK/out")
  [[ $(wc -l <"$WORK/out") == 1 && -x $protoc ]] || fail "it did not print one executable"
  NOTE="prints a protoc that reports $("$protoc" --version)"
}

# Every relative link of the files, BENCHMARKS.md and RELIABILITY.md: the file exists, and a
# fragment into a Markdown file is the id of one of its headings.
check_links() {
  python3 - "$@" <<'PY' || die "broken links (above)"
import os, re, sys

def ids(path):
    found, inside = set(), False
    for line in open(path, encoding="utf-8"):
        if re.match(r"^\s*(```|~~~)", line):
            inside = not inside
        m = None if inside else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)).lower()
            slug = "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")
            base, n = slug, 1
            while slug in found:
                slug, n = f"{base}-{n}", n + 1
            found.add(slug)
    return found

bad = []
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"(?ms)^\s*(```|~~~).*?^\s*\1\s*$", "", text)  # no links in code
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, fragment = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            bad.append(f"{path}: {target}: no {dest}")
        elif fragment and dest.endswith(".md") and fragment not in ids(dest):
            bad.append(f"{path}: {target}: no heading #{fragment} in {dest}")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# shellcheck source=scripts/readme-blocks.sh
source "$ROOT/scripts/readme-blocks.sh"

HEADS=() TEXTS=() NAMES=() EXPECTED=() ENTRY=() LANGUAGES=()
parse NAMES EXPECTED <<<"$CATALOGUE"
mkdir -p "$WORK"
blocks >"$WORK/blocks" || die "cannot read the code blocks of ${FILES[*]}"
parse HEADS TEXTS <"$WORK/blocks"
for j in "${!NAMES[@]}"; do
  [[ ${NAMES[j]} == *': '* ]] || die "a catalogue entry without its language: @@ ${NAMES[j]}"
  LANGUAGES[j]=${NAMES[j]%%: *} NAMES[j]=${NAMES[j]#*: }
done

# First every block against the catalogue, both ways, then run them.
declare -A USED=()
for i in "${!TEXTS[@]}"; do
  ENTRY[i]=""
  for j in "${!EXPECTED[@]}"; do
    names_block "$i" "$j" || continue
    [[ -z ${ENTRY[i]} ]] || die "${HEADS[i]}: two catalogue entries name this block:"$'\n'"${EXPECTED[${ENTRY[i]}]}"$'\n'"and"$'\n'"${EXPECTED[j]}"
    ENTRY[i]=$j USED[$j]=$((${USED[$j]:-0} + 1))
  done
  if [[ -z ${ENTRY[i]} && ${HEADS[i]%%:*} == "$ARCHIVE" ]]; then ENTRY[i]=archive; fi
  [[ -n ${ENTRY[i]} ]] || die "${HEADS[i]}: a ${HEADS[i]##* } block no test checks (add it to the catalogue in scripts/readme.sh):"$'\n'"${TEXTS[i]}"
done
for j in "${!EXPECTED[@]}"; do
  [[ -n ${USED[$j]:-} ]] || die "the catalogue of scripts/readme.sh names a ${LANGUAGES[j]} block no file has:"$'\n'"${EXPECTED[j]}"
  [[ ${EXPECTED[j]} != *$'\n...' || ${USED[$j]} == 1 ]] \
    || die "the catalogue entry that begins as below names ${USED[$j]} blocks; give more of its lines:"$'\n'"${EXPECTED[j]}"
  # The claims that another test checks a block, before anything runs.
  IFS='|' read -ra actions <<<"${NAMES[j]}"
  for action in "${actions[@]}"; do
    action=$(sed 's/^ *//; s/ *$//' <<<"$action")
    [[ $action != 'checked by '* ]] || checked_by "$action"
  done
done

check_links "${FILES[@]}" BENCHMARKS.md RELIABILITY.md
echo "readme: the relative links of ${#FILES[@]} files, BENCHMARKS.md and RELIABILITY.md resolve"
if [[ ${README_CHECK_ONLY:-} == 1 ]]; then
  echo "readme: ${#TEXTS[@]} blocks, each named by the catalogue (README_CHECK_ONLY=1: none run)"
  exit 0
fi

# Shell blocks first: they build and install what the checks of the other blocks use.
ORDER=()
for i in "${!TEXTS[@]}"; do [[ ${HEADS[i]##* } != sh ]] || ORDER+=("$i"); done
for i in "${!TEXTS[@]}"; do [[ ${HEADS[i]##* } == sh ]] || ORDER+=("$i"); done

INSTALLS=0
rm -rf "$WORK/install"
start=$SECONDS ran=0 checked=0 skipped=0
for i in "${ORDER[@]}"; do
  BLOCK_FILE=${HEADS[i]%%:*}
  if [[ ${ENTRY[i]} == archive ]]; then actions=("$ARCHIVE_REASON"); else
    IFS='|' read -ra actions <<<"${NAMES[${ENTRY[i]}]}"; fi
  mapfile -t lines <<<"${TEXTS[i]}"
  ((${#actions[@]} > 1)) || lines=("${TEXTS[i]}")
  ((${#actions[@]} == ${#lines[@]})) || die "${HEADS[i]}: the catalogue gives ${#actions[@]} actions for ${#lines[@]} lines"
  notes="" t=$SECONDS any=0 elsewhere=0
  for k in "${!actions[@]}"; do
    action=$(sed 's/^ *//; s/ *$//' <<<"${actions[k]}")
    ((${#lines[@]} == 1)) || notes+="${notes:+; }line $((k + 1)) "
    case $action in
      'not run:'*) notes+=$action ;;
      'checked by '*)
        checked_by "$action"
        notes+="checked by $NOTE" elsewhere=1
        ;;
      *)
        "$action" "${lines[k]}"
        notes+="ran: $NOTE" any=1
        ;;
    esac
  done
  if ((any)); then ran=$((ran + 1)) took=" ($((SECONDS - t)) s)"
  elif ((elsewhere)); then checked=$((checked + 1)) took=""
  else skipped=$((skipped + 1)) took=""; fi
  printf '%s%s: %s\n' "${HEADS[i]}" "$took" "$notes"
done
echo "readme: ${#TEXTS[@]} blocks, $ran ran or checked here, $checked checked by other tests, $skipped not run, in $((SECONDS - start)) s"
