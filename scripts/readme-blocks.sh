# shellcheck shell=bash disable=SC2034 # NOTE, set here, is read by readme.sh
# The handlers of scripts/readme.sh for README's blocks that are not shell: buf.gen.yaml run by
# real buf, the nginx block checked by `nginx -t`, and the JSON blocks against the real servers
# (scripts/readme-json.py: MCP host configs started as a host starts them, example output
# compared with what the servers answer). Sourced by readme.sh, whose ROOT, TARGET, WORK, NOTE,
# die, fail, start_background, stop_background, link_target and unlink_target they use. Each
# gets the block's text as $1.

# shellcheck source=scripts/nginx-conf.sh
source "$ROOT/scripts/nginx-conf.sh"

# The path of the binary $1 that README's `cargo install` lines installed (they run first).
installed() {
  local bin
  bin=$(find "$WORK/install" -path "*/bin/$1" -type f 2>/dev/null | head -n 1)
  [[ -n $bin ]] || die "no $1 installed by README's cargo install lines"
  printf '%s\n' "$bin"
}

# The first block in $2 (a fence line) of the file $1 that starts `// src/lib.rs`: the module
# tree that includes buf's or protoc's output into a crate.
module_tree() {
  awk -v fence="$2" '$0 == fence { inside = 1; first = 1; next }
    inside && first { first = 0; if ($0 !~ /^\/\/ src\/lib\.rs/) inside = 0 }
    inside && /^```$/ { exit } inside' "$1"
}

# The manual's buf.gen.yaml as written, in a directory of its own, run by real buf (npm
# @bufbuild/buf, as scripts/workflows.sh runs it) on the files README's protoc example compiles,
# with protoc-gen-prost, protoc-gen-tonic and the installed protoc-gen-rust-mcp on PATH, as the
# block names them. Its options must show in the output, which is then compiled with README's
# [dependencies] and its tool sets loaded.
buf_generate() {
  local dir="$WORK/buf" buf="$ROOT/.tools/buf/node_modules/.bin/buf" plugin package file names
  scripts/install-tools.sh buf >"$WORK/out" 2>"$WORK/err" || fail "scripts/install-tools.sh buf failed"
  [[ -x .tools/cargo/bin/protoc-gen-prost && -x .tools/cargo/bin/protoc-gen-tonic ]] \
    || die "no protoc-gen-prost and protoc-gen-tonic in .tools/cargo/bin (README's line installs them)"
  plugin=$(installed protoc-gen-rust-mcp)
  rm -rf "$dir" && mkdir -p "$dir/crate/src" "$dir/crate/tests"
  printf '%s\n' "$1" >"$dir/buf.gen.yaml"
  # One module (buf takes a directory as one, no -I) with the protos the protoc example includes.
  ln -s "$ROOT/examples/demo/proto/demo" "$dir/demo"
  ln -s "$ROOT/proto/rust_mcp" "$dir/rust_mcp"
  ln -s "$ROOT/testdata/google" "$dir/google"
  (cd "$dir" && PATH="$ROOT/.tools/cargo/bin:$(dirname "$plugin"):$PATH" "$buf" generate \
    --path demo/v1/tasks.proto --path google/longrunning/operations.proto \
    --path google/rpc/status.proto) >"$WORK/out" 2>"$WORK/err" \
    || fail "buf generate with README's buf.gen.yaml failed: $(grep -m 1 '^Failure:' "$WORK/err")"
  for package in demo.v1 google.longrunning; do
    file="$dir/gen/${package//.//}/$package"
    [[ -f $file.pb.mcp.rs ]] || fail "buf generate wrote no ${file#"$dir/"}.pb.mcp.rs"
    grep -qF "include!(\"$package.pb.mcp.rs\");" "$file.rs" \
      || fail "include_in_prost: ${file#"$dir/"}.rs does not include $package.pb.mcp.rs"
    [[ -f $file.mcp.json ]] || fail "tools_json: buf generate wrote no ${file#"$dir/"}.mcp.json"
  done
  # The crate of scripts/workflows.sh's readme workflow (README's [dependencies], the same
  # dev-dependency), so that after it nothing but the generated code is compiled.
  {
    printf '[package]\nname = "readme-buf"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
    awk '$0 == "## Install" { found = 1 } found && /^```toml$/ { inside = 1; next }
      inside && /^```$/ { exit } inside' docs/getting-started.md | sed "s#path/to/clone#$ROOT#"
    printf '\n[dev-dependencies]\ntokio = { version = "1", default-features = false, features = ["rt", "macros"] }\n\n[workspace]\n'
  } >"$dir/crate/Cargo.toml"
  cp Cargo.lock "$dir/crate/"
  ln -s ../gen "$dir/crate/gen"
  # The crate's src/lib.rs is the book's module tree (docs/generating-code.md, "A crate for the
  # generated code") as written, and README's module tree must be the same text.
  module_tree docs/generating-code.md '```rust,ignore' >"$dir/crate/src/lib.rs"
  [[ -s $dir/crate/src/lib.rs ]] || die "docs/generating-code.md has no module tree (a rust,ignore block starting // src/lib.rs)"
  [[ $(module_tree README.md '```rust') == "$(cat "$dir/crate/src/lib.rs")" ]] \
    || die "README's module tree is not the book's (docs/generating-code.md)"
  names=$(sed -n 's/^      "name": "\(.*\)",$/"\1",/p' "$dir"/gen/*/*/*.mcp.json | LC_ALL=C sort | paste -sd ' ')
  [[ -n $names ]] || fail "no tools in the tools JSON buf generate wrote"
  cat >"$dir/crate/tests/load.rs" <<EOF
#[tokio::test(flavor = "current_thread")]
async fn the_tool_sets_load_with_the_tools_of_the_tools_json() {
    let channel = tonic::transport::Channel::from_static("http://127.0.0.1:9").connect_lazy();
    let tasks = readme_buf::demo::v1::task_service_mcp::from_channel(channel.clone()).unwrap();
    let operations = readme_buf::google::longrunning::operations_mcp::from_channel(channel).unwrap();
    let mut names: Vec<&str> = tasks.names().chain(operations.names()).collect();
    names.sort();
    assert_eq!(names, [$names]);
}
EOF
  scratch_cargo test --quiet --manifest-path "$dir/crate/Cargo.toml" >"$WORK/out" 2>"$WORK/err" \
    || fail "the output of README's buf.gen.yaml does not compile or load"
  NOTE="buf $("$buf" --version) wrote prost, tonic and MCP code with include_in_prost and tools_json, which compiles, and $(wc -w <<<"$names") tools load"
}

# README's nginx block as written, inside events {} and http {} (with a self-signed certificate
# for its `listen 443 ssl`), checked by `nginx -t`: it parses the configuration, resolves the
# addresses, loads the certificate, and binds the listening ports, which for 443 needs root. So
# it runs as root of a user namespace, in a network namespace of its own (`unshare -rn`: no
# privilege outside it, no port there is taken); where the machine forbids that, without it,
# where a bind() refused for want of privilege is then the one failure allowed (said in the
# note).
nginx_test() {
  local dir="$WORK/nginx" nginx sandbox=() note
  nginx=$(nginx_bin 2>"$WORK/err") || fail "scripts/install-tools.sh nginx failed"
  rm -rf "$dir" && mkdir -p "$dir"
  printf '%s\n' "$1" >"$dir/readme.conf"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=mcp.example.com -keyout "$dir/key.pem" -out "$dir/cert.pem" >"$WORK/out" 2>"$WORK/err" \
    || fail "openssl could not make a self-signed certificate"
  {
    nginx_conf "$dir" "$dir/readme.conf" "ssl_certificate $dir/cert.pem;" "ssl_certificate_key $dir/key.pem;"
    # Root (of the namespace) owns the temporary directories: no other user is mapped there.
    echo "user root;"
  } >"$dir/nginx.conf"
  if unshare -rn true 2>/dev/null; then sandbox=(unshare -rn); fi
  note="$("$nginx" -v 2>&1 | sed 's/^nginx version: //') -t accepts it inside http {}, with a self-signed certificate for listen 443 ssl"
  if "${sandbox[@]}" "$nginx" -t -e stderr -p "$dir" -c "$dir/nginx.conf" >"$WORK/out" 2>"$WORK/err"; then
    NOTE="$note${sandbox[*]:+ (in unshare -rn)}"
  elif ((${#sandbox[@]} == 0)) && grep -q 'syntax is ok' "$WORK/err" \
    && [[ $(grep -c '\[emerg\]' "$WORK/err") == 1 ]] && grep -q 'emerg\] bind() to .* (13: Permission denied)' "$WORK/err"; then
    NOTE="$note, but for the bind() of its listen port, refused without root (unshare -rn is not allowed here)"
  else
    fail "nginx -t refuses README's nginx block (inside http {} of $dir/nginx.conf)"
  fi
}

# Runs scripts/readme-json.py with the arguments; its output in $WORK/out, $WORK/err.
readme_json() {
  printf '%s\n' "$BLOCK" >"$WORK/block.json"
  python3 "$ROOT/scripts/readme-json.py" "$1" "$WORK/block.json" "${@:2}" >"$WORK/out" 2>"$WORK/err"
}

# examples/minimal and e2e-server as the test build makes them (TEST_BUILD, scripts/lib.sh).
test_binaries() {
  [[ -z ${TEST_BINARIES_BUILT:-} ]] || return 0
  cargo test "${TEST_BUILD[@]}" --no-run >"$WORK/out" 2>"$WORK/err" \
    || fail "cargo test ${TEST_BUILD[*]} --no-run failed"
  TEST_BINARIES_BUILT=1
}

greeter_listing() {
  BLOCK=$1
  test_binaries
  readme_json listing -- "$TARGET/debug/minimal" || fail "not what examples/minimal lists"
  NOTE="examples/minimal lists $(cat "$WORK/out")"
}

streaming_calls() {
  BLOCK=$1
  test_binaries
  readme_json calls -- "$TARGET/debug/e2e-server" \
    || fail "not what e2e-server (the testdata services behind their generated tools) answers"
  NOTE="e2e-server (testdata/streaming.proto's service behind its generated tools): $(cat "$WORK/out")"
}

meta_example() {
  BLOCK=$1
  cargo build -q -p demo >"$WORK/out" 2>"$WORK/err" || fail "cargo build -p demo failed"
  readme_json meta --status-call TaskService_GetTask '{"id": "task-9"}' -- "$TARGET/debug/demo" \
    || fail "not the demo's _meta"
  NOTE="the demo answers the same: $(cat "$WORK/out")"
}

# examples/demo/README.md's host config: built as it says (`cargo build -p demo`), the
# placeholder path replaced by the repository root.
host_demo_debug() {
  BLOCK=$1
  cargo build -q -p demo >"$WORK/out" 2>"$WORK/err" || fail "cargo build -p demo failed"
  link_target
  readme_json host --replace /path/to/checkout "$ROOT" --expect-tools 13 || fail "the host config does not run"
  unlink_target
  NOTE="started as a host starts it: $(cat "$WORK/out")"
}

# README's host config for the release build (`cargo build --release -p demo`, in README's
# text), the placeholder path replaced by the repository root. The release build costs CI
# minutes for the code the debug build runs too: by default the config runs the debug build
# (target/release/ becomes target/debug/); README_RELEASE=1 builds and runs it as written.
host_demo_release() {
  local profile=debug
  BLOCK=$1
  if [[ ${README_RELEASE:-} == 1 ]]; then
    profile=release
    cargo build --release -p demo >"$WORK/out" 2>"$WORK/err" || fail "cargo build --release -p demo failed"
  else
    cargo build -q -p demo >"$WORK/out" 2>"$WORK/err" || fail "cargo build -p demo failed"
    BLOCK=${BLOCK//target\/release\/demo/target\/debug\/demo}
  fi
  link_target
  readme_json host --replace /path/to/protoc-gen-rust-mcp "$ROOT" --expect-tools 13 \
    || fail "the host config does not run"
  unlink_target
  NOTE="started as a host starts it, the $profile build$([[ $profile == release ]] || echo " in place of the release build (README_RELEASE=1 builds that)"): $(cat "$WORK/out")"
}

# README's gateway host config with its placeholders replaced by the demo (its gRPC service on
# 127.0.0.1:50051, its package demo.v1), run with the installed grpc-mcp-gateway on PATH. The
# include pattern must hold (only demo.v1 tools), the gateway must log the header the config
# names, and it must refuse to start without the config's env.
host_gateway() {
  local gateway
  BLOCK=$1
  gateway=$(installed grpc-mcp-gateway)
  cargo build -q -p demo >"$WORK/out" 2>"$WORK/err" || fail "cargo build -p demo failed"
  start_background "$TARGET/debug/demo --grpc 127.0.0.1:50051 --http 127.0.0.1:8080"
  PATH="$(dirname "$gateway"):$PATH" readme_json host --replace https://grpc.example.com \
    http://127.0.0.1:50051 --replace shop.v1.'*' 'demo.v1.*' --rpc-prefix /demo.v1. \
    --stderr-has 'headers=["authorization"]' --needs-env || fail "the gateway's host config does not run"
  stop_background
  NOTE="started as a host starts it, in front of the demo: $(cat "$WORK/out")"
}
