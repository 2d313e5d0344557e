#!/usr/bin/env bash
# The official MCP Inspector's CLI (npm @modelcontextprotocol/inspector, pinned, in
# .tools/inspector) against the demo serving 2,301 tools, over stdio and streamable HTTP: it must
# list every tool, following `nextCursor` through every page. It also calls the demo's
# server-streaming ExportTasks and long-running ArchiveTasks and must get their results (the
# Inspector declares MCP tasks but never polls one: the demo answers calls that end within its
# 2 s inline wait with their result). See tests/python/test_inspector.py.
#
# Usage: scripts/inspector-e2e.sh [-v]   (arguments go to the test script)
# Needs: cargo, Node with npm, python3 (standard library only).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start=$SECONDS
t=$SECONDS
scripts/install-tools.sh inspector
log "Inspector ready in $((SECONDS - t))s"

t=$SECONDS
cargo build --quiet -p demo
log "demo built in $((SECONDS - t))s"

t=$SECONDS
status=0
DEMO_BIN="$TARGET/debug/demo" python3 tests/python/test_inspector.py "$@" || status=$?
log "tests ran in $((SECONDS - t))s (total $((SECONDS - start))s)"
exit "$status"
