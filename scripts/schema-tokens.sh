#!/usr/bin/env bash
# Default-mode schema tokens against redpanda's protoc-gen-go-mcp on its own test protos
# (issue 21's "structural tokens" measure). Not part of the default test run: the other side is
# a checkout of github.com/redpanda-data/protoc-gen-go-mcp, which no package registry serves.
#
# Usage: scripts/schema-tokens.sh --redpanda DIR [--plugin PATH]
#   --redpanda DIR  a checkout of protoc-gen-go-mcp (measured at 954bf16): its descriptor set
#                   pkg/testdata/gen/descriptors.binpb and its generated
#                   pkg/testdata/gen/go/testdata/testdatamcp/*.pb.mcp.go
#   --plugin PATH   the plugin binary (default: cargo build --release -p protoc-gen-rust-mcp)
#
# Our plugin runs with default options (plus `tools_json`, which writes the same tools as JSON)
# on the same files, from the same descriptor set. Both sides' tools are counted with the o200k
# tokenizer (tiktoken), as compact JSON with every `description` and `title` removed: the
# structure a host sends on every turn whatever the comments say. Prints the totals for
# name + inputSchema (what hosts show a model) and with outputSchema, and a row per tool.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REDPANDA=""
PLUGIN=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --redpanda) REDPANDA=$(realpath "$2"); shift 2 ;;
    --plugin) PLUGIN=$(realpath "$2"); shift 2 ;;
    -h | --help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -n $REDPANDA ]] || die "--redpanda DIR is required (see --help)"

"$ROOT/scripts/install-tools.sh" python tokens
PROTOC_DIR="$("$ROOT/scripts/vendored-protoc.sh")" || die "no vendored protoc found"
if [[ -z $PLUGIN ]]; then
  cargo build -q --release -p protoc-gen-rust-mcp
  PLUGIN="$TARGET/release/protoc-gen-rust-mcp"
fi

export TIKTOKEN_CACHE_DIR="$ROOT/.tools/tiktoken/cache"
exec "$ROOT/.tools/venv/bin/python" "$ROOT/scripts/schema_tokens.py" --redpanda "$REDPANDA" \
  --plugin "$PLUGIN" --protoc "$PROTOC_DIR/bin/protoc"
