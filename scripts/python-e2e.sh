#!/usr/bin/env bash
# The official Python MCP SDK (pinned, in .tools/venv) against the demo, over stdio and
# streamable HTTP, with the newest protocol revision the SDK speaks and with older clients'
# handshakes. See tests-python/test_demo.py.
#
# Usage: scripts/python-e2e.sh [-v] [-k SUBSTRING]   (arguments go to the test script)
# Needs: cargo, Python >= 3.10 (PYTHON overrides `python3`) with venv and pip.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
case $TARGET in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac

log() { printf '[python-e2e] %s\n' "$*" >&2; }

start=$SECONDS
t=$SECONDS
scripts/install-tools.sh python
log "venv ready in $((SECONDS - t))s"

t=$SECONDS
cargo build --quiet -p demo
log "demo built in $((SECONDS - t))s"

t=$SECONDS
status=0
DEMO_BIN="$TARGET/debug/demo" .tools/venv/bin/python tests-python/test_demo.py "$@" || status=$?
log "tests ran in $((SECONDS - t))s (total $((SECONDS - start))s)"
exit "$status"
