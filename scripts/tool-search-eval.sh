#!/usr/bin/env bash
# Retrieval quality and cost of the gateway's tool-search mode on a real-world corpus: every
# googleapis file that declares a service (the pinned npm package `google-proto-files`, as
# scripts/corpus.sh), compiled into ONE descriptor set and served by one grpc-mcp-gateway.
# Not part of the default test run.
#
# Usage: scripts/tool-search-eval.sh [--out FILE] [--misses FILE] [--gateway PATH] [--check-only]
#   --out FILE      also write the summary table as Markdown to FILE
#   --misses FILE   the queries whose expected RPC is not in the top 5, as JSONL (default:
#                   FILE of --out with the suffix .misses.jsonl)
#   --gateway PATH  the gateway binary (default: cargo build --release -p grpc-mcp-gateway,
#                   in $CARGO_TARGET_DIR or target/)
#   --check-only    build the descriptor set and check the eval set, then stop
#
# The eval set is bench/tool-search/queries.jsonl: {"query", "expected": [RPC paths], "api"}
# per line. Every expected path must exist in the descriptor set (the run fails listing the
# missing ones); an RPC of any API version counts (v1, v1beta2, v2alpha, v22... are dropped
# from the package when comparing).
#
# Prints: the descriptor set (files compiled, skipped, RPCs); the eval set check; the tokens
# (tiktoken o200k_base) of the full tools/list of googleapis and of the demo, and of the
# --tool-search listing; hit@1 and hit@5 of `search_tools` (limit 5) overall and per API;
# its latency (p50/p99, client-observed and server-side when the result carries it); the
# gateway's VmRSS/VmHWM; the tokens of one search -> describe -> call sequence. The gateway
# runs over stdio under the official MCP Python SDK (.tools/venv) with the target
# http://127.0.0.1:1, which answers nothing (listing and searching need no backend). When the
# default tool names collide it is run with --tool-names package, and the output says so.
# Exits 3, after reporting what it measured, when the gateway has no --tool-search.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORPUS_ROOT="$ROOT/.tools/corpus/node_modules/google-proto-files"

GATEWAY=""
CHECK_ONLY=""
ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --gateway) GATEWAY=$2; shift 2 ;;
    --check-only) CHECK_ONLY=1; ARGS+=("$1"); shift ;;
    --out | --misses) ARGS+=("$1" "$(realpath -m "$2")"); shift 2 ;;
    -h | --help) sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "[tool-search-eval] unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

"$ROOT/scripts/corpus.sh" install
"$ROOT/scripts/install-tools.sh" python tokens

# The vendored protoc of protoc-bin-vendored (the one the e2e crate's `protoc` binary runs).
PROTOC_DIR="$("$ROOT/scripts/vendored-protoc.sh")" || { echo "[tool-search-eval] no vendored protoc found" >&2; exit 1; }

if [[ -z $GATEWAY && -z $CHECK_ONLY ]]; then
  (cd "$ROOT" && cargo build -q --release -p grpc-mcp-gateway)
  GATEWAY="${CARGO_TARGET_DIR:-$ROOT/target}/release/grpc-mcp-gateway"
fi
[[ -z $GATEWAY ]] || ARGS+=(--gateway "$(realpath "$GATEWAY")")

export TIKTOKEN_CACHE_DIR="$ROOT/.tools/tiktoken/cache"
exec "$ROOT/.tools/venv/bin/python" "$ROOT/scripts/tool_search_eval.py" --root "$ROOT" \
  --corpus "$CORPUS_ROOT" --protoc "$PROTOC_DIR/bin/protoc" --include "$PROTOC_DIR/include" \
  ${ARGS[@]+"${ARGS[@]}"}
