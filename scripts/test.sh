#!/usr/bin/env bash
# Every test of the project: unit, golden, schema, end-to-end (Rust), the real buf and protoc
# workflows, the manual built with mdBook (warnings fail it), every code block of README and the
# manual run or checked (scripts/readme.sh), the messages the troubleshooting chapter quotes made
# to happen (scripts/troubleshooting.sh), the official Python
# MCP SDK and the MCP Inspector's CLI against the demo, hybrid tool search against a real
# embeddings server, replicas behind nginx sharing tasks on Redis, and the official MCP
# conformance suite against the demo and the gateway.
# Installs what it needs into .tools/. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

# A step's heading, with the seconds since the tests began (where the time goes).
heading() {
  echo "== [$((SECONDS - start)) s] $*"
}

# Runs scripts/$1, headed by what it tests ($2).
step() {
  heading "$2"
  "scripts/$1"
}

heading "corpus subset (googleapis from npm google-proto-files, pinned)"
# protoc-gen-rust-mcp/tests/corpus.rs runs on a fixed subset of it; required here so that CI
# cannot skip it silently.
scripts/corpus.sh install
export RUST_MCP_CORPUS_REQUIRED=1
heading "Redis (Debian's, for the task store's tests)"
scripts/install-tools.sh redis
export TONIC_MCP_REDIS_REQUIRED=1
heading "cargo test --workspace"
cargo test --workspace --all-features

step workflows.sh "buf and protoc workflows"
heading "the manual: mdbook build docs (a warning fails it)"
scripts/install-tools.sh mdbook
if ! book_log=$(.tools/cargo/bin/mdbook build docs 2>&1) || grep -qE 'WARN|ERROR' <<<"$book_log"; then
  printf '%s\n' "$book_log"
  echo "mdbook build docs failed or warned" >&2
  exit 1
fi
step readme.sh "every code block of README and the manual: sh run as written, buf.gen.yaml, nginx, JSON against the real servers (or the test that checks it)"
step python-e2e.sh "Python MCP SDK against the demo"
step inspector-e2e.sh "MCP Inspector CLI against the demo (2,301 tools, paginated)"
step tool-search-e2e.sh "hybrid tool search: a real embeddings server (all-MiniLM-L6-v2), rmcp's client and the Python SDK"
step auth-e2e.sh "MCP authorization: a real authorization server, the Python SDK as OAuth client"
step interop.sh "third-party gRPC servers behind the gateway: etcd, grpcio, grpc-js"
step troubleshooting.sh "the messages the manual's troubleshooting chapter quotes, each made to happen: protoc, buf, the plugin, rustc, the demo, the gateway"
step scale-out.sh "replicas behind nginx: stateless calls through a replica kill, sessions with affinity, tasks on a shared Redis through a replica kill and a Redis restart"
step deploy-check.sh "the deployment files: Kubernetes manifests against Kubernetes' schemas, the Dockerfile linted"
step conformance.sh "the official MCP conformance suite against the demo and the gateway (HTTP, both modes)"
echo "== all tests passed in $((SECONDS - start)) s"
