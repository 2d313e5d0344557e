#!/usr/bin/env bash
# The plugin on a real-world corpus: every googleapis file that declares a service, from the
# pinned npm package `google-proto-files`, one protoc run per file. Not part of the default test
# run (a fixed subset runs in CI: protoc-gen-rust-mcp/tests/corpus.rs).
#
# Usage: scripts/corpus.sh [install] [--plugin PATH] [--opt OPTIONS] [--jobs N] [--keep DIR]
#   install        only install the corpus into .tools/corpus and exit
#   --plugin PATH  the plugin binary (default: cargo build --release, target/release/...)
#   --opt OPTIONS  extra plugin options, for example `max_schema_bytes=0`
#   --jobs N       protoc runs in parallel (default: nproc)
#   --keep DIR     keep every output in DIR (default: a temporary directory, removed)
#   --files LIST   only the files listed (one path under the corpus root per line)
#
# Prints: files generated and failed (with each failure's first error), tool count, minified
# input and output schema sizes (p50/p90/p99/max), tools the schema budget shrank, generated
# Rust bytes per tool, and the total wall time. Schemas are also checked against the 2020-12
# meta-schema when Python's `jsonschema` is available (scripts/install-tools.sh python).
set -euo pipefail

CORPUS_PACKAGE=google-proto-files
CORPUS_VERSION=6.0.1

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# lib.sh made the root the working directory; the paths among the arguments are the caller's.
cd "$OLDPWD"
CORPUS="$ROOT/.tools/corpus"
CORPUS_ROOT="$CORPUS/node_modules/$CORPUS_PACKAGE"

install_corpus() {
  local have=""
  if [[ -f $CORPUS_ROOT/package.json ]]; then
    have="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$CORPUS_ROOT/package.json")"
  fi
  if [[ $have == "$CORPUS_VERSION" ]]; then
    return
  fi
  log "installing $CORPUS_PACKAGE@$CORPUS_VERSION with npm into .tools/corpus"
  mkdir -p "$CORPUS"
  with_retries "$CORPUS_PACKAGE" npm install --prefix "$CORPUS" --no-audit --no-fund --loglevel=error \
    "$CORPUS_PACKAGE@$CORPUS_VERSION" >&2
}

install_corpus
if [[ ${1:-} == install ]]; then
  exit 0
fi

PLUGIN=""
ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --plugin) PLUGIN=$2; shift 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
if [[ -z $PLUGIN ]]; then
  (cd "$ROOT" && cargo build -q --release -p protoc-gen-rust-mcp)
  PLUGIN="$ROOT/target/release/protoc-gen-rust-mcp"
fi
# The vendored protoc of protoc-bin-vendored (the one the e2e crate's `protoc` binary runs).
PROTOC_DIR="$("$ROOT/scripts/vendored-protoc.sh")" || die "no vendored protoc found"

exec python3 "$ROOT/scripts/corpus.py" --corpus "$CORPUS_ROOT" --plugin "$PLUGIN" \
  --protoc "$PROTOC_DIR/bin/protoc" --include "$PROTOC_DIR/include" ${ARGS[@]+"${ARGS[@]}"}
