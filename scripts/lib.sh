# Sourced, first thing after `set -euo pipefail`, by the scripts in this folder:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# It makes the repository root the working directory and sets
#   ROOT    the repository root;
#   TARGET  cargo's target directory as an absolute path (CARGO_TARGET_DIR, or ROOT/target);
# and defines log (a line on stderr, prefixed with the calling script's name) and die (log an
# error and exit 1).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
case $TARGET in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac

SCRIPT_NAME="$(basename "${BASH_SOURCE[1]}" .sh)"
log() { printf '[%s] %s\n' "$SCRIPT_NAME" "$*" >&2; }
die() { log "error: $*"; exit 1; }
