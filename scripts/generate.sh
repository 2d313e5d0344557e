#!/usr/bin/env bash
# Runs the built plugin through real protoc (protoc-bin-vendored) over testdata/ into
# target/generated/, with the same options as golden/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/generated
rm -rf "$out" && mkdir -p "$out"
cargo build -q -p protoc-gen-rust-mcp -p e2e --bin protoc-gen-rust-mcp --bin protoc
files=$(cd testdata && find . -name '*.proto' -not -path './errors/*' -not -path './google/*' -not -path './buf/*' | sed 's|^\./||' | sort)
# shellcheck disable=SC2086
target/debug/protoc --plugin=protoc-gen-rust-mcp=target/debug/protoc-gen-rust-mcp \
  --rust-mcp_out="$out" --rust-mcp_opt=tools_json,flat_output_dir \
  -Itestdata -Iproto $files
echo "wrote $(find "$out" -type f | wc -l) files to $out"
