#!/usr/bin/env bash
# The messages docs/troubleshooting.md quotes, each made to happen and read from the program
# that prints it: the vendored protoc, real buf, the plugin, rustc, the demo (stdio and HTTP),
# the gateway, and a real gRPC server (grpcio) with no reflection and a method slower than the
# call's deadline. A quote holds when the chapter writes it (in backticks) and the program's
# output has it, `…` standing for any text and a few numbers for the ones the check provokes
# (a 300 ms deadline for the chapter's default of 30000 ms). Every quote that opens an entry of
# the chapter (its bold lead) must be checked here, or named with the reason it is not.
#
# Usage: scripts/troubleshooting.sh
# Needs: the debug binaries of `cargo test --workspace --all-features` (the plugin, the demo,
# the gateway), rustc, python3, and what scripts/install-tools.sh installs for buf and interop
# (buf from npm, the grpcio venv).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

CHAPTER=docs/troubleshooting.md
PLUGIN="$TARGET/debug/protoc-gen-rust-mcp"
DEMO="$TARGET/debug/demo"
GATEWAY="$TARGET/debug/grpc-mcp-gateway"
for bin in "$PLUGIN" "$DEMO" "$GATEWAY"; do
  [[ -x $bin ]] || die "no $bin: run cargo test --workspace --all-features first"
done
scripts/install-tools.sh buf interop >/dev/null
BUF="$ROOT/.tools/buf/node_modules/.bin/buf"
GRPCIO_PYTHON="$ROOT/.tools/venv-grpcio/bin/python"
PROTOC="$(scripts/vendored-protoc.sh)/bin/protoc"

WORK=$(mktemp -d)
SERVERS=()
cleanup() {
  local pid
  for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# The quotes checked and those left with a reason, for the last check.
CHECKED=()

# quoted QUOTE FILE [FROM=>TO]...: the chapter writes QUOTE in backticks, and FILE (what the
# program printed) has it, `…` standing for any text, after each FROM in QUOTE is made TO.
# White space is compared as one space either side.
quoted() {
  local quote=$1 file=$2
  shift 2
  python3 - "$CHAPTER" "$quote" "$file" "$@" <<'PY' || die "$CHAPTER: the quote above does not hold"
import re, sys

chapter, quote, path, *substitutions = sys.argv[1:]
flat = lambda text: re.sub(r"\s+", " ", text).strip()
spans = {flat(m.group(2)) for m in re.finditer(r"(`+)(.+?)\1", open(chapter).read(), re.S)}
if flat(quote) not in spans:
    sys.exit(f"not quoted in {chapter}: {quote}")
expected = flat(quote)
for substitution in substitutions:
    before, after = substitution.split("=>")
    expected = expected.replace(before, after)
printed = flat(open(path, errors="replace").read())
at = 0
for part in expected.split("…"):
    found = printed.find(part.strip(), at)
    if found < 0:
        sys.exit(f"{chapter} quotes: {quote}\nthe program printed:\n{printed[:3000]}")
    at = found + len(part.strip())
PY
  CHECKED+=("$quote")
  log "holds: $quote"
}

# not_checked QUOTE REASON: a quote of a bold lead that is no program's message, or is checked
# elsewhere.
not_checked() {
  CHECKED+=("$1")
  log "not checked here: $1 ($2)"
}

# calls PREFIX ARGUMENTS... -- COMMAND...: the MCP server COMMAND (stdio, through
# scripts/mcp_session.py) initialized, then each ARGUMENTS (a tools/call's params) called in
# turn; the text of the N-th answer (its result's text, or its error's code and message) to
# PREFIX.N.
calls() {
  local prefix=$1
  shift
  python3 - "$ROOT/scripts" "$prefix" "$@" <<'PY' || die "an MCP exchange over stdio failed (above)"
import json, sys

scripts, prefix, *rest = sys.argv[1:]
sys.path.insert(0, scripts)
from mcp_session import Session

split = rest.index("--")
session = Session(rest[split + 1:])
session.initialize("troubleshooting.sh")
for n, params in enumerate(rest[:split], 1):
    message = session.answer("tools/call", json.loads(params))
    if "error" in message:
        text = f"{message['error']['code']} {message['error']['message']}"
    else:
        text = "\n".join(c.get("text", "") for c in message["result"]["content"])
    with open(f"{prefix}.{n}", "w") as out:
        print(text, file=out)
session.close()
PY
}

# ---- Generating code
mkdir -p "$WORK/in/x/v1" "$WORK/in/rust_mcp" "$WORK/out"
cp proto/rust_mcp/options.proto "$WORK/in/rust_mcp/"
proto() { # FILE SERVICE... : a proto of package x.v1 with an rpc Say in each service
  local file=$1 service
  shift
  {
    printf 'syntax = "proto3";\npackage x.v1;\nimport "rust_mcp/options.proto";\n'
    printf 'message SayRequest { string name = 1; }\nmessage SayResponse { string text = 1; }\n'
    for service in "$@"; do
      printf 'service %s {\n  rpc Say(SayRequest) returns (SayResponse);\n}\n' "$service"
    done
  } >"$WORK/in/x/v1/$file"
}
protoc_in() { (cd "$WORK/in" && "$PROTOC" -I . "$@") >"$WORK/printed" 2>&1 && die "protoc succeeded: $*" || true; }

proto hello.proto Hello
mkdir -p "$WORK/bare/x/v1" && cp "$WORK/in/x/v1/hello.proto" "$WORK/bare/x/v1/"
(cd "$WORK/bare" && "$PROTOC" -I . -o /dev/null x/v1/hello.proto) >"$WORK/printed" 2>&1 && die "protoc found the options"
quoted 'rust_mcp/options.proto: File not found.' "$WORK/printed"
quoted 'Import "rust_mcp/options.proto" was not found or had errors.' "$WORK/printed"

sed -e '/^import/d' -e 's/returns (SayResponse);/returns (SayResponse) { option (rust_mcp.tool).name = "Say"; }/' \
  "$WORK/in/x/v1/hello.proto" >"$WORK/in/x/v1/unimported.proto"
protoc_in -o /dev/null x/v1/unimported.proto
quoted 'Option "(rust_mcp.tool)" unknown.' "$WORK/printed"
rm "$WORK/in/x/v1/unimported.proto"

# PATH without any folder that holds the plugin.
bare_path=$(python3 -c 'import os; print(":".join(d for d in os.environ["PATH"].split(":") if not os.access(os.path.join(d, "protoc-gen-rust-mcp"), os.X_OK)))')
printf 'version: v2\nplugins:\n  - local: protoc-gen-rust-mcp\n    out: %s\n' "$WORK/out" >"$WORK/buf.gen.yaml"
(cd "$WORK/in" && PATH=$bare_path "$BUF" generate --template "$WORK/buf.gen.yaml" --path x/v1/hello.proto) \
  >"$WORK/printed" 2>&1 && die "buf found a plugin that is not on PATH"
quoted 'Failure: plugin protoc-gen-rust-mcp: exec: "protoc-gen-rust-mcp": executable file not found
in $PATH' "$WORK/printed"
(cd "$WORK/in" && PATH=$bare_path "$PROTOC" -I . --rust-mcp_out="$WORK/out" x/v1/hello.proto) \
  >"$WORK/printed" 2>&1 && die "protoc found a plugin that is not on PATH"
quoted 'protoc-gen-rust-mcp: program not found or is not executable' "$WORK/printed"

with_plugin=(--plugin=protoc-gen-rust-mcp="$PLUGIN" --rust-mcp_out="$WORK/out")
protoc_in "${with_plugin[@]}" --rust-mcp_opt=bogus x/v1/hello.proto
quoted '--rust-mcp_out: option `…`: unknown option `…`; valid options are:' "$WORK/printed"

sed -i 's/returns (SayResponse);/returns (SayResponse) { option (rust_mcp.tool).name = "say hello"; }/' \
  "$WORK/in/x/v1/hello.proto"
protoc_in "${with_plugin[@]}" x/v1/hello.proto
quoted '--rust-mcp_out: x.v1.Hello.Say: option (rust_mcp.tool).name: …' "$WORK/printed"

proto hello.proto Hello Hello2
protoc_in "${with_plugin[@]}" --rust-mcp_opt=tool_names=method x/v1/hello.proto
quoted 'tool name `Say` is produced by both /x.v1.Hello/Say and /x.v1.Hello2/Say' "$WORK/printed"

# ---- Compiling the generated code: a module without the generated one, named two ways.
printf 'mod greeter { pub mod v1 {} }\npub fn tools() { greeter::v1::greeter_mcp::from_channel(); }\n' >"$WORK/path.rs"
printf 'mod greeter { pub mod v1 {} }\npub use greeter::v1::greeter_mcp;\n' >"$WORK/use.rs"
for form in path use; do
  rustc --edition 2024 --crate-type lib --emit=metadata -o "$WORK/$form.rmeta" "$WORK/$form.rs" \
    >"$WORK/$form.printed" 2>&1 && die "rustc compiled $WORK/$form.rs"
done
quoted 'cannot find `greeter_mcp` in `v1`' "$WORK/path.printed"
quoted 'unresolved import `greeter::v1::greeter_mcp`' "$WORK/use.printed"
not_checked 'tonic' "names a crate, not a message"
not_checked 'prost' "names a crate, not a message"

# ---- Serving: the demo over HTTP on a free port.
"$DEMO" --http 127.0.0.1:0 >"$WORK/demo.log" 2>&1 &
SERVERS+=("$!")
for _ in $(seq 300); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/mcp' "$WORK/demo.log" | head -n 1 || true)
  [[ -z $url ]] || break
  sleep 0.1
done
[[ -n $url ]] || die "the demo did not say where it serves MCP: $(cat "$WORK/demo.log")"
status=$(curl -s -o "$WORK/printed" -w '%{http_code}' "${url%/mcp}/")
[[ $status == 404 && ! -s $WORK/printed ]] || die "GET / answered $status with $(wc -c <"$WORK/printed") bytes, not 404 with an empty body"
log "holds: HTTP 404, empty body (GET ${url%/mcp}/)"
post() { curl -s -o "$WORK/printed" -w '%{http_code}' -X POST -H 'Content-Type: application/json' "$@" "$url" -d '{}'; }
[[ $(post) == 406 ]] || die "a POST without Accept was not refused with 406"
quoted 'Not Acceptable: Client must accept both application/json and text/event-stream' "$WORK/printed"
accept=(-H 'Accept: application/json, text/event-stream')
[[ $(post "${accept[@]}" -H 'Host: tasks.example.com') == 403 ]] || die "a foreign Host was not refused with 403"
quoted 'Forbidden: Host header is not allowed' "$WORK/printed"
[[ $(post "${accept[@]}" -H 'Origin: https://tasks.example.com') == 403 ]] || die "a foreign Origin was not refused with 403"
quoted 'Forbidden: Origin header is not allowed' "$WORK/printed"
not_checked 'WWW-Authenticate' "scripts/auth-e2e.sh reads the challenges of a real authorization server's setup"

# ---- The gateway: nothing at the target; a gRPC server (grpcio) without reflection whose
# ScalarService.Echo answers after 5 s.
"$GATEWAY" --target http://127.0.0.1:1 --connect-timeout 2s --check >"$WORK/printed" 2>&1 \
  && die "the gateway loaded a backend where nothing listens"
quoted "gRPC reflection failed: Unavailable: … is the server running, and is the URL's scheme
right?" "$WORK/printed"

"$GRPCIO_PYTHON" - >"$WORK/grpcio.port" 2>"$WORK/grpcio.log" <<'PY' &
import time
from concurrent import futures
import grpc

def echo(request, context):
    time.sleep(5)
    return request

handler = grpc.method_handlers_generic_handler(
    "testdata.scalars.ScalarService", {"Echo": grpc.unary_unary_rpc_method_handler(echo)})
server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), handlers=[handler])
print(server.add_insecure_port("127.0.0.1:0"), flush=True)
server.start()
server.wait_for_termination()
PY
SERVERS+=("$!")
for _ in $(seq 300); do [[ -s $WORK/grpcio.port ]] && break; sleep 0.1; done
[[ -s $WORK/grpcio.port ]] || die "the grpcio server did not start: $(cat "$WORK/grpcio.log")"
grpcio="http://127.0.0.1:$(cat "$WORK/grpcio.port")"
"$GATEWAY" --target "$grpcio" --check >"$WORK/printed" 2>&1 && die "the gateway reflected a server without reflection"
quoted 'gRPC reflection failed: Unimplemented: …; the server does not offer gRPC reflection: pass its
descriptors with --descriptor-set FILE' "$WORK/printed"

# ---- Calls: the demo over stdio; the gateway from a descriptor set, to nothing and to grpcio.
calls "$WORK/demo" \
  '{"name":"TaskService_GetTask","arguments":{"id":5,"bogus":1}}' \
  "$(python3 -c 'import json; print(json.dumps({"name": "TaskService_GetTask", "arguments": {f"p{i}": i for i in range(150)}}))')" \
  '{"name":"TaskService_NoSuchTool","arguments":{}}' \
  -- "$DEMO"
quoted 'Invalid arguments for tool `…` (N problems):' "$WORK/demo.1" 'N=>2'
quoted 'more than 100 problems' "$WORK/demo.2"
quoted '-32602' "$WORK/demo.3"
quoted 'unknown tool `…`' "$WORK/demo.3"

"$PROTOC" -I testdata -I proto --include_imports -o "$WORK/scalars.binpb" testdata/scalars.proto
echo_call='{"name":"ScalarService_Echo","arguments":{}}'
calls "$WORK/nothing" "$echo_call" -- \
  "$GATEWAY" --descriptor-set "$WORK/scalars.binpb" --target http://127.0.0.1:1
quoted 'gRPC error UNAVAILABLE: the request could not be completed by the gRPC transport: the
connection was refused: the server is not running or not listening there' "$WORK/nothing.1"
calls "$WORK/slow" "$echo_call" -- \
  "$GATEWAY" --descriptor-set "$WORK/scalars.binpb" --target "$grpcio" --timeout 300ms
quoted 'gRPC error DEADLINE_EXCEEDED: the call did not complete within its deadline of 30000 ms' \
  "$WORK/slow.1" '30000 ms=>300 ms'

# ---- Every quote of a bold lead is checked above, or named with its reason.
python3 - "$CHAPTER" "${CHECKED[@]}" <<'PY' || die "$CHAPTER has quotes this script does not check (above)"
import re, sys

chapter, *checked = sys.argv[1:]
flat = lambda text: re.sub(r"\s+", " ", text).strip()
checked = {flat(quote) for quote in checked}
missing = []
for paragraph in re.split(r"\n\s*\n", open(chapter).read()):
    lead = re.match(r"\*\*(.+?)\*\*", paragraph, re.S)
    for m in re.finditer(r"(`+)(.+?)\1", lead.group(1) if lead else "", re.S):
        if flat(m.group(2)) not in checked:
            missing.append(flat(m.group(2)))
for quote in missing:
    print(f"not checked: {quote}", file=sys.stderr)
sys.exit(1 if missing else 0)
PY
log "${#CHECKED[@]} quotes of $CHAPTER: each checked against the program that prints it, or named with its reason"
