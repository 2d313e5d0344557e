#!/usr/bin/env bash
# Release compile cost per tool in a user crate that instantiates every generated tool set.
#
# Scratch crates under target/compile-cost/ (each its own [workspace], sharing the workspace's
# target directory so dependencies build once) hold COPIES copies of the prost and tonic code
# of every testdata/ package (as e2e's build script writes it) and:
#
#   base    nothing else: the user's crate without MCP tools;
#   before  the golden MCP modules and runtime of git revision BEFORE (default 5f3e786, the last
#           revision with typed per-RPC closures), with a function calling every service's
#           `from_client(XxxClient::new(channel))`;
#   after   the golden modules and runtime of the working tree, with a function calling every
#           service's `from_channel(channel)`.
#
# Each crate is built once to warm its dependencies, then its own lib.rs is touched and rebuilt
# REPS times (`cargo build --release`); the median wall time of those rebuilds is its cost.
# Per tool: (median(variant) - median(base)) / tools.
#
# Usage: scripts/bench-compile.sh          Environment: COPIES (3), REPS (3), BEFORE (5f3e786)
#
# `scripts/bench-compile.sh --corpus` measures the same on googleapis instead (the pinned npm
# `google-proto-files` of scripts/corpus.sh): a fixed set of packages, listed and explained in
# scripts/bench-compile-corpus.py, with the prost and tonic code of everything they import, built
# in release without (`base`) and with the MCP modules of the working tree's plugin. Environment:
# REPS (3); CORPUS_PACKAGES (space-separated package directories) replaces the fixed set.
# Needs: cargo, git, python3 (and npm for --corpus).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
COPIES="${COPIES:-3}"
REPS="${REPS:-3}"
BEFORE="${BEFORE:-5f3e786}"

TARGET="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
WORK="$TARGET/compile-cost"
mkdir -p "$WORK"

if [[ ${1:-} == --corpus ]]; then
  scripts/corpus.sh install
  log "building the plugin (release)"
  cargo build --quiet --release -p protoc-gen-rust-mcp
  # The vendored protoc of protoc-bin-vendored, as scripts/corpus.sh finds it.
  PROTOC_DIR="$(scripts/vendored-protoc.sh)" || { log "no vendored protoc found"; exit 1; }
  exec python3 scripts/bench-compile-corpus.py --root "$ROOT" \
    --corpus "$ROOT/.tools/corpus/node_modules/google-proto-files" \
    --plugin "$TARGET/release/protoc-gen-rust-mcp" --protoc "$PROTOC_DIR/bin/protoc" \
    --include "$PROTOC_DIR/include" --target "$TARGET" --reps "$REPS"
fi

log "building e2e (its build script writes the prost and tonic code of testdata/)"
cargo build --quiet -p e2e --lib
OUT="$(ls -td "$TARGET"/debug/build/e2e-*/out | while read -r d; do [[ -f $d/testdata_tree.rs ]] && echo "$d" && break; done)"
[[ -n $OUT ]] || { log "no e2e build output"; exit 1; }

log "extracting revision $BEFORE into $WORK/before-src"
rm -rf "$WORK/before-src"
mkdir -p "$WORK/before-src"
git archive "$BEFORE" | tar -x -C "$WORK/before-src"

export WORK OUT ROOT COPIES REPS TARGET
exec python3 - <<'PY'
import os, re, statistics, subprocess, sys, time, shutil

sys.path.insert(0, "scripts")
from compile_cost import cargo_toml

WORK, OUT, ROOT = os.environ["WORK"], os.environ["OUT"], os.environ["ROOT"]
COPIES, REPS, TARGET = int(os.environ["COPIES"]), int(os.environ["REPS"]), os.environ["TARGET"]

packages = sorted(f[:-3] for f in os.listdir(OUT)
                  if f.endswith(".rs") and f != "testdata_tree.rs")

def tree(golden_dir):
    """Module tree: prost/tonic output per package, plus the golden MCP module if any."""
    root = {"body": "", "children": {}}
    for pkg in packages:
        node = root
        for part in [p for p in ("" if pkg == "_" else pkg).split(".") if p]:
            node = node["children"].setdefault(part, {"body": "", "children": {}})
        node["body"] += f'include!("{OUT}/{pkg}.rs");\n'
        if golden_dir:
            golden = os.path.join(golden_dir, f"{pkg}.pb.mcp.rs")
            if os.path.exists(golden):
                node["body"] += f'include!("{golden}");\n'
    def render(node):
        text = node["body"]
        for name, child in sorted(node["children"].items()):
            ident = "r#type" if name == "type" else name
            text += f"pub mod {ident} {{\n{render(child)}}}\n"
        return text
    return render(root)

def constructors(golden_dir, style):
    calls = []
    for pkg in packages:
        golden = os.path.join(golden_dir, f"{pkg}.pb.mcp.rs")
        if not os.path.exists(golden):
            continue
        text = open(golden).read()
        path = "COPY::" + ("" if pkg == "_" else "::".join("r#type" if p == "type" else p for p in pkg.split(".")) + "::")
        mods = re.findall(r"pub mod (\w+_mcp)\b", text)
        if style == "before":
            clients = list(dict.fromkeys(re.findall(r"super::(\w+_client::\w+)<", text)))
            assert len(clients) == len(mods), golden
            for mod, client in zip(mods, clients):
                calls.append(f"{path}{mod}::from_client({path}{client}::new(channel.clone()))")
        else:
            for mod in mods:
                calls.append(f"{path}{mod}::from_channel(channel.clone())")
    return calls

def tools_in(golden_dir):
    """`ToolDef` consts (not `TOOLS`) of every golden module."""
    return sum(len(re.findall(r"pub const [A-Z0-9_]+: [:\w]+ToolDef = ",
                              open(os.path.join(golden_dir, f)).read()))
               for f in os.listdir(golden_dir) if f.endswith(".pb.mcp.rs"))

def write_crate(name, runtime, golden_dir, style):
    crate = os.path.join(WORK, name)
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    open(os.path.join(crate, "Cargo.toml"), "w").write(cargo_toml(f"compile-cost-{name}", runtime))
    shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(crate, "Cargo.lock"))
    lib = "#![allow(warnings, clippy::all)]\n"
    for i in range(COPIES):
        lib += f"pub mod copy{i} {{\n{tree(golden_dir)}}}\n"
    if style:
        lib += "pub fn instantiate(channel: tonic::transport::Channel) -> Vec<Result<tonic_mcp::ToolSet, tonic_mcp::Error>> {\n    vec![\n"
        for i in range(COPIES):
            for call in constructors(golden_dir, style):
                lib += "        " + call.replace("COPY::", f"copy{i}::") + ",\n"
        lib += "    ]\n}\n"
    open(os.path.join(crate, "src", "lib.rs"), "w").write(lib)
    return crate

def build(crate):
    env = dict(os.environ, CARGO_TARGET_DIR=TARGET)
    cmd = ["cargo", "build", "--quiet", "--release", "--manifest-path", os.path.join(crate, "Cargo.toml")]
    subprocess.run(cmd, check=True, env=env)  # warm: dependencies
    times = []
    for _ in range(REPS):
        os.utime(os.path.join(crate, "src", "lib.rs"))
        start = time.monotonic()
        subprocess.run(cmd, check=True, env=env)
        times.append(time.monotonic() - start)
    return statistics.median(times), times

before_golden = os.path.join(WORK, "before-src", "golden")
after_golden = os.path.join(ROOT, "golden")
variants = [
    ("base", None, None, None),
    ("before", os.path.join(WORK, "before-src", "runtime"), before_golden, "before"),
    ("after", os.path.join(ROOT, "runtime"), after_golden, "after"),
]
results = {}
for name, runtime, golden, style in variants:
    crate = write_crate(name, runtime, golden, style)
    print(f"[bench-compile] building {name}", flush=True)
    results[name] = build(crate)
tools = tools_in(after_golden) * COPIES
assert tools_in(before_golden) * COPIES == tools
print()
print(f"{tools} tools ({COPIES} copies of the golden corpus); release rebuild of the user crate, median of {REPS}:")
print()
print("| crate | rebuild | per tool over base |")
print("|---|---|---|")
base = results["base"][0]
for name, _, _, _ in variants:
    median, times = results[name]
    per_tool = "" if name == "base" else f"{(median - base) / tools * 1000:.0f} ms"
    print(f"| {name} | {median:.2f} s ({', '.join(f'{t:.2f}' for t in times)}) | {per_tool} |")
PY
