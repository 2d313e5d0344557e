# Sourced, first thing after `set -euo pipefail`, by the scripts in this folder and .ci/run:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# It makes the repository root the working directory and sets
#   ROOT    the repository root;
#   TARGET  cargo's target directory as an absolute path (CARGO_TARGET_DIR, or ROOT/target);
# and defines log (a line on stderr, prefixed with the calling script's name), die (log an
# error and exit 1), with_retries, TEST_BUILD and scratch_cargo.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
case $TARGET in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac

SCRIPT_NAME="$(basename "${BASH_SOURCE[1]}" .sh)"
log() { printf '[%s] %s\n' "$SCRIPT_NAME" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Runs the command $2... up to three times, for the part $1: a registry's passing network error
# (a reset connection, a 5xx) must not fail a whole CI run. Each failure is logged.
with_retries() {
  local part=$1 attempt
  shift
  for attempt in 1 2 3; do
    "$@" && return 0
    ((attempt < 3)) || break
    log "$part: attempt $attempt of '$1 ${2:-}' failed; retrying in $((attempt * 10))s"
    sleep $((attempt * 10))
  done
  die "$part: '$*' failed three times"
}

# What scripts/test.sh's `cargo test` builds: `cargo test "${TEST_BUILD[@]}" …` after it builds
# nothing, and `--no-run` puts the binaries of every package with integration tests in
# $TARGET/debug. (`cargo build` of the same packages builds them anew: without the
# dev-dependencies, their dependencies' features differ.)
TEST_BUILD=(--workspace --all-features)

# cargo, for crates outside the workspace built in its target directory: the scratch crates of
# workflows.sh and readme-blocks.sh, the packaged crates .ci/run verifies. Such a crate is a
# workspace of its own, without this one's [profile] sections, so cargo's default dev profile
# would give every unit full debug info, which nothing reads. Debug info off, as the workspace
# builds its dependencies (units are then shared with its builds where their features agree).
scratch_cargo() { CARGO_PROFILE_DEV_DEBUG=false cargo "$@"; }
