#!/usr/bin/env bash
# MCP authorization end to end (tests/python/test_auth.py): a real authorization server
# (npm oidc-provider, configured by scripts/auth-server.mjs) on loopback, the official Python
# MCP SDK 2.x as an OAuth client (client-credentials grant, discovery from the 401 challenge),
# and the demo and the gateway as resource servers, over HTTP with sessions and stateless.
#
# Usage: scripts/auth-e2e.sh [-v] [-k SUBSTRING]   (arguments go to the test script)
# Needs: cargo, npm, Python >= 3.10 with venv and pip.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start=$SECONDS
scripts/install-tools.sh python2 auth-server
cargo build --quiet -p demo -p grpc-mcp-gateway

mkdir -p "$TARGET/python-e2e"
server_log="$TARGET/python-e2e/auth-server.log"
.tools/auth-server/run >"$server_log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
issuer=""
for _ in $(seq 100); do
  issuer="$(sed -n 's/^issuer //p' "$server_log")"
  [[ -n $issuer ]] && break
  kill -0 "$server" 2>/dev/null || { cat "$server_log" >&2; log "the authorization server exited"; exit 1; }
  sleep 0.1
done
[[ -n $issuer ]] || { cat "$server_log" >&2; log "the authorization server did not start"; exit 1; }
log "authorization server (oidc-provider) at $issuer"

status=0
AUTH_ISSUER="$issuer" DEMO_BIN="$TARGET/debug/demo" GATEWAY_BIN="$TARGET/debug/grpc-mcp-gateway" \
  .tools/venv-mcp2/bin/python tests/python/test_auth.py "$@" || status=$?
log "done in $((SECONDS - start))s"
exit "$status"
