#!/usr/bin/env bash
# The gateway in front of gRPC servers nobody here wrote (tests/interop/test_interop.py): etcd
# 3.4 (Debian's etcd-server, served from a descriptor set of the protos vendored under
# testdata/third_party/etcd/, built with the vendored protoc, and through code generated from
# the same protos, tests/interop/etcd-mcp, which must answer alike), a Python grpcio server of stock
# servicers and a Node @grpc/grpc-js server with @grpc/reflection; the official Python MCP SDK
# 2.x is the client; the gateway's metrics are read with the official Prometheus Python
# client's parser (install-tools part `metrics`).
#
# Usage: scripts/interop.sh [-v] [-k SUBSTRING]   (arguments go to the test script)
# Needs: cargo, npm, apt-get (download only, no root needed), Python >= 3.10 with venv and pip.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start=$SECONDS
scripts/install-tools.sh python2 conformance interop metrics
cargo build --quiet -p demo -p grpc-mcp-gateway -p etcd-mcp

# The vendored protoc (protoc-bin-vendored, a dependency of the workspace).
protoc="$("$ROOT/scripts/vendored-protoc.sh")/bin/protoc"
etcd_protos=testdata/third_party/etcd
descriptors="$TARGET/interop/etcd.binpb"
mkdir -p "$TARGET/interop"
"$protoc" -I "$etcd_protos" --include_imports --include_source_info -o "$descriptors" \
  etcd/etcdserver/etcdserverpb/rpc.proto \
  etcd/etcdserver/api/v3lock/v3lockpb/v3lock.proto \
  etcd/etcdserver/api/v3election/v3electionpb/v3election.proto
log "etcd descriptor set: $descriptors"

node="$(sed -n 's/^exec "\([^"]*\)".*/\1/p' .tools/conformance/run)"
status=0
ETCD_BIN="$ROOT/.tools/etcd/usr/bin/etcd" ETCD_DESCRIPTORS="$descriptors" \
  GRPCIO_PYTHON="$ROOT/.tools/venv-grpcio/bin/python" NODE_BIN="$node" \
  GATEWAY_BIN="$TARGET/debug/grpc-mcp-gateway" ETCD_MCP_BIN="$TARGET/debug/etcd-mcp" DEMO_BIN="$TARGET/debug/demo" \
  .tools/venv-mcp2/bin/python tests/interop/test_interop.py "$@" || status=$?
log "done in $((SECONDS - start))s"
exit "$status"
