#!/usr/bin/env bash
# Prints the directory of protoc-bin-vendored's protoc for this machine (bin/protoc and
# include/ below it): the protoc the e2e crate's `protoc` binary runs. Exits 1, saying so,
# when cargo knows no such package. Used by corpus.sh, interop.sh, tool-search-eval.sh and
# troubleshooting.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$(cd "$ROOT" && cargo metadata --format-version 1 2>/dev/null | python3 -c '
import json, os, platform, sys
arch = {"x86_64": "x86_64", "aarch64": "aarch_64"}.get(platform.machine(), platform.machine())
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == f"protoc-bin-vendored-linux-{arch}":
        print(os.path.dirname(p["manifest_path"]))
        break
')"
[[ -x $dir/bin/protoc ]] || { echo "no vendored protoc found" >&2; exit 1; }
echo "$dir"
