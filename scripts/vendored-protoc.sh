#!/usr/bin/env bash
# Prints the directory of protoc-bin-vendored's protoc for this machine (bin/protoc and
# include/ below it): the protoc the e2e crate's `protoc` binary runs. Exits 1, saying so,
# when cargo knows no such package. Used by corpus.sh and tool-search-eval.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$(cd "$ROOT" && cargo metadata --format-version 1 2>/dev/null | python3 -c '
import json, os, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"].startswith("protoc-bin-vendored-linux-x86_64"):
        print(os.path.dirname(p["manifest_path"]))
')"
[[ -x $dir/bin/protoc ]] || { echo "no vendored protoc found" >&2; exit 1; }
echo "$dir"
