#!/usr/bin/env bash
# Runs every ```sh block of README.md and examples/demo/README.md as written, or says why not
# (issue 22: every snippet in README is compiled or run by a test). The catalogue names each
# block by its exact text; a block it does not name fails the script, so a new or changed
# snippet cannot go untested silently, and so does an entry whose block is gone. An entry gives
# one action for the block or one per line: a handler below, which runs the text taken from the
# file from the repository root and checks the outcome, or `not run: <reason>`.
# `<this repository's URL>` is replaced by a file:// URL of the repository root (so the `--git`
# install builds the last commit, not the work tree); `cargo install` runs with its
# CARGO_INSTALL_ROOT under target/readme-sh/ (.tools/cargo for protoc-gen-prost/-tonic, as
# install-tools.sh does) and one target directory shared by the installs.
#
# Usage: scripts/readme.sh
# Needs: cargo, git, npm (Node 22 from scripts/install-tools.sh conformance when the machine's
# is older), python3, curl, free ports 50051 and 8080, network access to crates.io and npm.
# Exits non-zero on the first failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
case $TARGET in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
export CARGO_TARGET_DIR="$TARGET"
WORK="$TARGET/readme-sh"
FILES=(README.md examples/demo/README.md)

die() { printf '[readme] error: %s\n' "$*" >&2; exit 1; }

# Entries: `@@ action[ | action]...`, then the block's exact text.
CATALOGUE=$(cat <<'END'
@@ stdio_closed | not run: it is the command that runs this script (scripts/test.sh calls scripts/readme.sh)
cargo run -p demo        # generate, then serve MCP (stdio) in front of an embedded gRPC service
scripts/test.sh          # every test: Rust, golden, end to end, buf/protoc workflows, Python MCP SDK
@@ inspector
cargo build -p demo && npx -y @modelcontextprotocol/inspector@2.12.0 --cli target/debug/demo --method tools/call --tool-name TaskService_GetTask --tool-arg id=task-1
@@ stdin_session
cargo run -q -p demo <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"TaskService_GetTask","arguments":{"id":"task-1"}}}
EOF
@@ cargo_install | cargo_install
cargo install --locked --path protoc-gen-rust-mcp           # from a clone, at its root
cargo install --locked --git <this repository's URL> protoc-gen-rust-mcp
@@ install_prost_plugins
cargo install --locked protoc-gen-prost@0.5.0 protoc-gen-tonic@0.5.0
@@ not run: scripts/workflows.sh readme runs it as written and compiles its output
mkdir -p gen
protoc -I examples/demo/proto -I proto -I testdata \
  --prost_out=gen --tonic_out=gen \
  --rust-mcp_out=gen --rust-mcp_opt=include_in_prost,tools_json \
  examples/demo/proto/demo/v1/tasks.proto \
  testdata/google/longrunning/operations.proto testdata/google/rpc/status.proto
@@ cargo_install
cargo install --locked --path gateway   # from a checkout; `cargo install --locked grpc-mcp-gateway` once it is on crates.io
@@ demo_background | gateway_stdio
cargo run -p demo -- --grpc 127.0.0.1:50051 --http 127.0.0.1:8080 &   # the gRPC service on a fixed port
cargo run -p grpc-mcp-gateway -- --target http://127.0.0.1:50051      # its 13 tools, MCP over stdio
@@ not run: it needs an identity provider at a public https URL and a backend named tasks.internal; scripts/auth-e2e.sh runs the gateway with the same flags against a real authorization server on loopback
grpc-mcp-gateway --target http://tasks.internal:50051 --http 0.0.0.0:8080 \
  --auth-issuer https://id.example.com/realms/platform \
  --resource-url https://mcp.example.com/mcp \
  --auth-scope mcp --auth-write-scope tasks.write \
  --forward-claim sub=x-user-id --forward-claim client_id=x-client-id
@@ not run: it rewrites golden/ (CI=true refuses it); the golden test that cargo test runs covers the same code
UPDATE_GOLDEN=1 cargo test -p protoc-gen-rust-mcp --test golden
@@ stdio_closed | http_initialize | usage
cargo run -p demo                              # MCP over stdio
cargo run -p demo -- --http 127.0.0.1:8080     # MCP over streamable HTTP at http://127.0.0.1:8080/mcp
cargo run -p demo -- --help
@@ demo_background | gateway_stdio
cargo run -p demo -- --grpc 127.0.0.1:50051 --http 127.0.0.1:8080 &
cargo run -p grpc-mcp-gateway -- --target http://127.0.0.1:50051
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

# Every fenced sh (or bash, shell, console) block of the files, as `@@ file:line` records.
blocks() {
  local file
  for file in "${FILES[@]}"; do
    awk -v file="$file" '
      !inside && /^[ \t]*```(sh|bash|shell|console)[ \t]*$/ { inside = 1; print "@@ " file ":" NR; next }
      inside && /^[ \t]*```[ \t]*$/ { inside = 0; next }
      inside { print }
    ' "$file"
  done
}

BG=()
stop_background() {
  local pid
  for pid in "${BG[@]}"; do kill -- -"$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  BG=()
}
LINKED_TARGET=""
trap 'stop_background; [[ -z $LINKED_TARGET ]] || rm -f "$ROOT/target"' EXIT

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
  # The line runs target/debug/demo: point target at CARGO_TARGET_DIR while it runs, if needed.
  if [[ ! -e $ROOT/target ]]; then ln -s "$TARGET" "$ROOT/target" && LINKED_TARGET=1; fi
  [[ $ROOT/target -ef $TARGET ]] || die "target/ is not CARGO_TARGET_DIR ($TARGET): the line would run another demo"
  PATH="$(dirname "$node"):$PATH" run "$1" </dev/null || fail "exited with status $?: $1"
  [[ -n $LINKED_TARGET ]] && rm -f "$ROOT/target" && LINKED_TARGET=""
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
# asks the binary: the plugin answers a CodeGeneratorRequest, the gateway its --help.
cargo_install() {
  local line=$1 url="<this repository's URL>" root bin
  [[ $line == *--locked* ]] || die "without --locked, cargo install ignores Cargo.lock: $line"
  line=${line//"$url"/"file://$ROOT"}
  root="$WORK/install/$((INSTALLS += 1))"
  CARGO_INSTALL_ROOT=$root CARGO_TARGET_DIR="$WORK/cargo-install" run "$line" || fail "failed: $line"
  bin=$(find "$root/bin" -type f | head -n 1)
  if [[ $bin == */grpc-mcp-gateway ]]; then
    "$bin" --help >"$WORK/out" 2>"$WORK/err" || fail "grpc-mcp-gateway --help failed"
    NOTE="installed; grpc-mcp-gateway --help exits 0"
    return
  fi
  # A CodeGeneratorRequest whose parameter (field 2) is `bogus`: the answer names the option.
  printf '\x12\x05bogus' | "$bin" >"$WORK/out" 2>"$WORK/err" || fail "$bin failed on a request"
  # shellcheck disable=SC2016 # backquotes of the plugin's message
  grep -aq 'unknown option `bogus`' "$WORK/out" || fail "$bin did not answer the request"
  NOTE="installed $("$bin" --version), which answers a CodeGeneratorRequest"
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

HEADS=() TEXTS=() NAMES=() EXPECTED=() ENTRY=()
parse NAMES EXPECTED <<<"$CATALOGUE"
parse HEADS TEXTS < <(blocks)

# First every block against the catalogue, both ways, then run them.
declare -A USED=()
for i in "${!TEXTS[@]}"; do
  ENTRY[i]=""
  for j in "${!EXPECTED[@]}"; do
    if [[ ${TEXTS[i]} == "${EXPECTED[j]}" ]]; then ENTRY[i]=$j USED[$j]=1; break; fi
  done
  [[ -n ${ENTRY[i]} ]] || die "${HEADS[i]}: an sh block no test runs (add it to the catalogue in scripts/readme.sh):"$'\n'"${TEXTS[i]}"
done
for j in "${!EXPECTED[@]}"; do
  [[ -n ${USED[$j]:-} ]] || die "the catalogue of scripts/readme.sh names a block no file has:"$'\n'"${EXPECTED[j]}"
done

INSTALLS=0
rm -rf "$WORK/install" && mkdir -p "$WORK"
start=$SECONDS ran=0 skipped=0
for i in "${!TEXTS[@]}"; do
  IFS='|' read -ra actions <<<"${NAMES[${ENTRY[i]}]}"
  mapfile -t lines <<<"${TEXTS[i]}"
  ((${#actions[@]} > 1)) || lines=("${TEXTS[i]}")
  ((${#actions[@]} == ${#lines[@]})) || die "${HEADS[i]}: the catalogue gives ${#actions[@]} actions for ${#lines[@]} lines"
  notes="" t=$SECONDS any=0
  for k in "${!actions[@]}"; do
    action=$(sed 's/^ *//; s/ *$//' <<<"${actions[k]}")
    ((${#lines[@]} == 1)) || notes+="${notes:+; }line $((k + 1)) "
    if [[ $action == 'not run:'* ]]; then notes+=$action; continue; fi
    "$action" "${lines[k]}"
    notes+="ran: $NOTE" any=1
  done
  if ((any)); then ran=$((ran + 1)) took=" ($((SECONDS - t)) s)"; else skipped=$((skipped + 1)) took=""; fi
  printf '%s%s: %s\n' "${HEADS[i]}" "$took" "$notes"
done
echo "readme: ${#TEXTS[@]} blocks, $ran ran, $skipped not run in $((SECONDS - start)) s"
