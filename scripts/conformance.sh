#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, every server
# scenario: --suite all) against the demo and against grpc-mcp-gateway in front of the demo's
# gRPC port (descriptors by reflection), each over streamable HTTP with sessions and stateless.
# Scenarios that cannot apply to a tools-only server are in scripts/conformance-baseline.yaml,
# each explained in docs/conformance.md; any other failure, or a listed scenario that passes,
# fails the run.
#
# Usage: scripts/conformance.sh
# Needs: cargo and npm (the suite and, on Node older than 22, Node 22 come from npm).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BASELINE=scripts/conformance-baseline.yaml
DOC=docs/conformance.md

# Every scenario the baseline lists is explained in the docs.
while read -r scenario; do
  grep -q "\`$scenario\`" "$DOC" || die "$BASELINE lists $scenario, but $DOC does not explain it"
done < <(sed -n 's/^  - \([a-z0-9-]*\).*/\1/p' "$BASELINE")

scripts/install-tools.sh conformance
cargo build --quiet -p demo -p grpc-mcp-gateway

WORK="$(mktemp -d)"
[[ -z ${KEEP_CONFORMANCE:-} ]] || log "results kept in $WORK"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -n ${KEEP_CONFORMANCE:-} ]] || rm -rf "$WORK"
}
trap cleanup EXIT

# Waits until FILE has a line matching the sed expression EXPR, and prints what it captures.
wait_for() {
  local file=$1 expr=$2 pid=$3 found=""
  for _ in $(seq 1 300); do
    found="$(sed -n "$expr" "$file" | head -n 1)"
    [[ -n $found ]] && { printf '%s\n' "$found"; return; }
    kill -0 "$pid" 2>/dev/null || die "process $pid exited; see its log:$(printf '\n'; cat "$file")"
    sleep 0.1
  done
  die "nothing matching '$expr' in $file after 30 s"
}

# Starts the demo (MCP over HTTP, gRPC on a free port) with ARGS; sets URL and GRPC.
start_demo() {
  local log="$WORK/demo-$#.log"
  "$TARGET/debug/demo" --http 127.0.0.1:0 --grpc 127.0.0.1:0 "$@" >"$log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  URL="$(wait_for "$log" 's/.*serving MCP over streamable HTTP at \(http:[^ ]*\).*/\1/p' "$pid")"
  GRPC="$(wait_for "$log" 's/.*grpc_addr=\([0-9.:]*\).*/\1/p' "$pid")"
}

# Starts the gateway in front of the gRPC address $1, with the rest as ARGS; sets URL.
start_gateway() {
  local grpc=$1 log="$WORK/gateway-$#.log"
  shift
  "$TARGET/debug/grpc-mcp-gateway" --target "http://$grpc" --http 127.0.0.1:0 "$@" >"$log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  URL="$(wait_for "$log" 's/.*serving MCP over streamable HTTP at \(http:[^ ]*\).*/\1/p' "$pid")"
}

# The baseline of each mode: with sessions, without the entries marked `# stateless`.
grep -v '# stateless' "$BASELINE" >"$WORK/baseline-sessions.yaml"
cp "$BASELINE" "$WORK/baseline-stateless.yaml"

status=0
run() {
  local name=$1 mode=$2 url=$3 start=$SECONDS ok=1
  log "== $name ($url)"
  if ! .tools/conformance/run server --url "$url" --suite all \
    --expected-failures "$WORK/baseline-$mode.yaml" \
    -o "$WORK/results-${name// /-}" >"$WORK/out.txt" 2>&1; then
    ok=0
    status=1
  fi
  # One line per scenario: passed, not applicable (in the baseline), or FAILED. The suite's own
  # summary is in $WORK/out.txt (kept with KEEP_CONFORMANCE=1); on failure it is printed whole.
  local passed=0 failed=0 skipped=0 line scenario
  while read -r line; do
    scenario="${line#* }"
    scenario="${scenario%%:*}"
    # A listed scenario did fail (with a warning, the suite's ✓ can still show): otherwise
    # the suite's baseline check reports it as stale and the run fails.
    if grep -qx "  - $scenario\( .*\)\?" "$WORK/baseline-$mode.yaml"; then
      skipped=$((skipped + 1))
      log "  not applicable  $scenario"
    elif [[ $line == ✓* ]]; then
      passed=$((passed + 1))
      log "  passed          $scenario"
    else
      failed=$((failed + 1))
      log "  FAILED          $scenario"
    fi
  done < <(sed -n '/=== SUMMARY ===/,/^Total:/p' "$WORK/out.txt" | grep -E '^(✓|✗) ')
  if [[ $ok == 0 ]]; then
    sed -n '/=== SUMMARY ===/,$p' "$WORK/out.txt" >&2
    log "$name: FAILED (the suite's baseline check above)"
  fi
  log "$name: $((SECONDS - start)) s"
  printf 'conformance: %d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
}

start_demo
demo_url=$URL grpc=$GRPC
start_demo --stateless
demo_stateless_url=$URL
start_gateway "$grpc"
gateway_url=$URL
start_gateway "$grpc" --stateless
gateway_stateless_url=$URL

run "demo, sessions" sessions "$demo_url"
run "demo, stateless" stateless "$demo_stateless_url"
run "gateway, sessions" sessions "$gateway_url"
run "gateway, stateless" stateless "$gateway_stateless_url"
exit "$status"
