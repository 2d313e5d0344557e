#!/usr/bin/env bash
# Retrieval quality and cost of the gateway's tool-search mode on a real-world corpus: every
# googleapis file that declares a service (the pinned npm package `google-proto-files`, as
# scripts/corpus.sh), compiled into ONE descriptor set and served by one grpc-mcp-gateway.
# Not part of the default test run.
#
# Usage: scripts/tool-search-eval.sh [--out FILE] [--misses FILE] [--gateway PATH] [--check-only]
#          [--limit-requests N] [--search-only] [--search-embeddings URL
#          [--search-embeddings-model NAME] [--embeddings-timeout SECONDS]]
#   --out FILE      write the report: FILE.json gets the figures as JSON and FILE.md the summary
#                   as Markdown; any other FILE gets the Markdown, the JSON going beside it
#                   (suffix .json)
#   --misses FILE   the queries whose expected RPC is not in the top 5, as JSONL, each with its
#                   retry's top 5 (default: FILE of --out with the suffix .misses.jsonl)
#   --gateway PATH  the gateway binary (default: cargo build --release -p grpc-mcp-gateway,
#                   in $CARGO_TARGET_DIR or target/)
#   --check-only    build the descriptor set and check the eval set, then stop
#   --limit-requests N  evaluate only the first N requests (a quick run)
#   --search-only   skip the full tools/list listings of googleapis and the demo (their tokens
#                   and memory, and the check that the gateway serves every expected RPC)
#   --search-embeddings URL, --search-embeddings-model NAME
#                   passed to the --tool-search gateway as the flags of the same names; before
#                   evaluating, search_tools is polled until its result says `ranking: hybrid`
#                   with no `ranking_note`, at most --embeddings-timeout seconds (default 1800;
#                   after it the run evaluates as it is and exits 4)
#
# The eval set is tests/tool-search/queries.jsonl: {"query", "expected": [RPC paths], "api",
# "retry", "kind"} per line (see tests/tool-search/README.md). Every expected path must exist in
# the descriptor set (the run fails listing the missing ones); an RPC of any API version counts
# (v1, v1beta2, v2alpha, v22... are dropped from the package when comparing).
#
# Prints: the descriptor set (files compiled, skipped, RPCs); the eval set check; the tokens
# (tiktoken o200k_base) of the full tools/list of googleapis and of the demo, and of the
# --tool-search listing; `search_tools` (limit 5) for every query and every retry: first try
# hit@1 and hit@5, retry alone hit@5, two tries hit@5 and API family hit@5 (from the result's
# `apis`, else derived from its tools), overall, per kind, per half (lines 2, 4...: tuned on;
# lines 1, 3...: held out) and per API, with the ranking the result reports; its latency (p50/p99,
# client-observed and server-side when the result carries it, first queries only); the
# gateway's VmRSS/VmHWM; the tokens of one search -> describe -> call sequence. The gateway
# runs over stdio under the official MCP Python SDK (.tools/venv) with the target
# http://127.0.0.1:1, which answers nothing (listing and searching need no backend). When the
# default tool names collide it is run with --tool-names package, and the output says so.
# Exits 3, after reporting what it measured, when the gateway has no --tool-search, and 4 when
# --search-embeddings was given and the hybrid ranking was not ready in time.
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
    --search-only) ARGS+=("$1"); shift ;;
    --out | --misses) ARGS+=("$1" "$(realpath -m "$2")"); shift 2 ;;
    --limit-requests | --search-embeddings | --search-embeddings-model | --embeddings-timeout)
      [[ $# -ge 2 ]] || { echo "[tool-search-eval] $1 needs a value" >&2; exit 2; }
      ARGS+=("$1" "$2"); shift 2 ;;
    -h | --help) sed -n '2,44p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
