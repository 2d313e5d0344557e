#!/usr/bin/env bash
# Every test of the project: unit, golden, schema, end-to-end (Rust), the real buf and protoc
# workflows, every code block of README run or checked (scripts/readme.sh), the official Python
# MCP SDK and the MCP Inspector's CLI against the demo, and the official MCP conformance suite
# against the demo and the gateway.
# Installs what it needs into .tools/.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
echo "== corpus subset (googleapis from npm google-proto-files, pinned)"
# protoc-gen-rust-mcp/tests/corpus.rs runs on a fixed subset of it; required here so that CI
# cannot skip it silently.
scripts/corpus.sh install
export RUST_MCP_CORPUS_REQUIRED=1
echo "== cargo test --workspace"
cargo test --workspace --all-features
if [ -x scripts/workflows.sh ]; then
  echo "== buf and protoc workflows"
  scripts/workflows.sh
fi
if [ -x scripts/readme.sh ]; then
  echo "== every code block of README: sh run as written, buf.gen.yaml, nginx, JSON against the real servers (or the test that checks it)"
  scripts/readme.sh
fi
if [ -x scripts/python-e2e.sh ]; then
  echo "== Python MCP SDK against the demo"
  scripts/python-e2e.sh
fi
if [ -x scripts/inspector-e2e.sh ]; then
  echo "== MCP Inspector CLI against the demo (2,301 tools, paginated)"
  scripts/inspector-e2e.sh
fi
if [ -x scripts/auth-e2e.sh ]; then
  echo "== MCP authorization: a real authorization server, the Python SDK as OAuth client"
  scripts/auth-e2e.sh
fi
if [ -x scripts/interop.sh ]; then
  echo "== third-party gRPC servers behind the gateway: etcd, grpcio, grpc-js"
  scripts/interop.sh
fi
if [ -x scripts/deploy-check.sh ]; then
  echo "== the deployment files: Kubernetes manifests against Kubernetes' schemas, the Dockerfile linted"
  scripts/deploy-check.sh
fi
if [ -x scripts/conformance.sh ]; then
  echo "== the official MCP conformance suite against the demo and the gateway (HTTP, both modes)"
  scripts/conformance.sh
fi
echo "== all tests passed in $((SECONDS - start)) s"
