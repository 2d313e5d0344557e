#!/usr/bin/env bash
# Every test of the project: unit, golden, schema, end-to-end (Rust), the real buf and protoc
# workflows, and the official Python MCP SDK against the demo. Installs what it needs into .tools/.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
echo "== cargo test --workspace"
cargo test --workspace --all-features
if [ -x scripts/workflows.sh ]; then
  echo "== buf and protoc workflows"
  scripts/workflows.sh
fi
if [ -x scripts/python-e2e.sh ]; then
  echo "== Python MCP SDK against the demo"
  scripts/python-e2e.sh
fi
echo "== all tests passed in $((SECONDS - start)) s"
