#!/usr/bin/env bash
# The official Python MCP SDK against the demo, over stdio and streamable HTTP, in both lines
# it is used in: 1.x (pinned, in .tools/venv; tests/python/test_demo.py: the newest protocol
# revision it speaks and older clients' handshakes) and 2.x (pinned, in .tools/venv-mcp2;
# tests/python/test_demo_mcp2.py: revision 2026-07-28 and the 2025-11-25 handshake), plus the
# 1.x SDK's own task client on tasks of revision 2025-11-25 (tests/python/test_tasks_2025.py).
# Every script runs; the exit status is non-zero if any fails.
#
# Usage: scripts/python-e2e.sh [-v] [-k SUBSTRING]   (arguments go to every test script)
# Needs: cargo, Python >= 3.10 (PYTHON overrides `python3`) with venv and pip.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start=$SECONDS
t=$SECONDS
scripts/install-tools.sh python python2
log "venvs ready in $((SECONDS - t))s"

t=$SECONDS
cargo build --quiet -p demo
log "demo built in $((SECONDS - t))s"

status=0
t=$SECONDS
DEMO_BIN="$TARGET/debug/demo" .tools/venv/bin/python tests/python/test_demo.py "$@" || status=$?
DEMO_BIN="$TARGET/debug/demo" .tools/venv/bin/python tests/python/test_tasks_2025.py "$@" || status=$?
log "SDK 1.x tests ran in $((SECONDS - t))s"

t=$SECONDS
DEMO_BIN="$TARGET/debug/demo" .tools/venv-mcp2/bin/python tests/python/test_demo_mcp2.py "$@" || status=$?
log "SDK 2.x tests ran in $((SECONDS - t))s (total $((SECONDS - start))s)"
exit "$status"
