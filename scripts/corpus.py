"""Runs the plugin on every service file of the corpus; see scripts/corpus.sh."""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

SERVICE = re.compile(rb"^service\s", re.MULTILINE)


def service_files(corpus):
    out = []
    for dirpath, _, names in os.walk(corpus):
        if "node_modules" in os.path.relpath(dirpath, corpus).split(os.sep):
            continue
        for name in names:
            if name.endswith(".proto"):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    if SERVICE.search(f.read()):
                        out.append(os.path.relpath(path, corpus))
    return sorted(out)


def run_one(args, index, rel, out_root):
    out = os.path.join(out_root, str(index))
    os.makedirs(out, exist_ok=True)
    options = "tools_json" + (f",{args.opt}" if args.opt else "")
    argv = [
        args.protoc, f"-I{args.corpus}", f"-I{args.include}",
        f"--plugin=protoc-gen-rust-mcp={args.plugin}",
        f"--rust-mcp_out={out}", f"--rust-mcp_opt={options}", rel,
    ]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    stderr = done.stderr.splitlines()
    shrunk = [line for line in stderr if "protoc-gen-rust-mcp: shrank " in line]
    notes = [line for line in stderr if "protoc-gen-rust-mcp: note: " in line]
    errors = [line for line in stderr
              if line not in shrunk and line not in notes and line.strip()
              and ": warning: " not in line]
    result = {"file": rel, "ok": done.returncode == 0, "wall": wall, "shrunk": len(shrunk),
              "notes": len(notes), "error": errors[0] if errors else "", "tools": [],
              "rust_bytes": 0}
    for dirpath, _, names in os.walk(out):
        for name in names:
            path = os.path.join(dirpath, name)
            if name.endswith(".mcp.json"):
                with open(path, encoding="utf-8") as f:
                    for tool in json.load(f)["tools"]:
                        rpc = tool.get("_meta", {}).get("protoc-gen-rust-mcp/rpc", {})
                        result["tools"].append({
                            "name": tool["name"],
                            "long_running": rpc.get("longRunning", {}).get("wait"),
                            "input": minified(tool["inputSchema"]),
                            "output": minified(tool["outputSchema"]),
                            "schemas": [tool["inputSchema"], tool["outputSchema"]] if args.meta else [],
                        })
            elif name.endswith(".pb.mcp.rs"):
                result["rust_bytes"] += os.path.getsize(path)
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return result


def minified(schema):
    return len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def percentile(values, p):
    if not values:
        return 0
    values = sorted(values)
    rank = max(1, -(-len(values) * p // 100))  # nearest rank
    return values[int(rank) - 1]


def kb(n):
    return f"{n / 1024:.1f} KB"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--protoc", required=True)
    parser.add_argument("--include", required=True)
    parser.add_argument("--opt", default="")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--keep", default="")
    parser.add_argument("--files", default="")
    args = parser.parse_args()
    try:
        import jsonschema  # noqa: F401
        args.meta = True
    except ImportError:
        args.meta = False

    start = time.perf_counter()
    if args.files:
        with open(args.files) as f:
            files = [line.strip() for line in f if line.strip()]
    else:
        files = service_files(args.corpus)
    out_root = args.keep or tempfile.mkdtemp(prefix="corpus-")
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda item: run_one(args, item[0], item[1], out_root),
                                enumerate(files)))
    wall = time.perf_counter() - start
    if not args.keep:
        shutil.rmtree(out_root, ignore_errors=True)

    failed = [r for r in results if not r["ok"]]
    tools = [t for r in results for t in r["tools"]]
    inputs = [t["input"] for t in tools]
    outputs = [t["output"] for t in tools]
    rust = sum(r["rust_bytes"] for r in results if r["ok"])
    meta_bad = 0
    if args.meta:
        from jsonschema import Draft202012Validator
        for t in tools:
            for schema in t["schemas"]:
                try:
                    Draft202012Validator.check_schema(schema)
                except Exception:  # noqa: BLE001
                    meta_bad += 1
    biggest = max(tools, key=lambda t: t["input"], default=None)

    print(f"options: tools_json{',' + args.opt if args.opt else ''}")
    print(f"files: {len(results)} with a service; generated {len(results) - len(failed)}, "
          f"failed {len(failed)}")
    for r in failed:
        print(f"  FAILED {r['file']}: {r['error'][:300]}")
    print(f"tools: {len(tools)}")
    for label, sizes in (("input", inputs), ("output", outputs)):
        print(f"{label} schema (minified): p50 {kb(percentile(sizes, 50))}, "
              f"p90 {kb(percentile(sizes, 90))}, p99 {kb(percentile(sizes, 99))}, "
              f"max {kb(max(sizes, default=0))}; over 32 KB: {sum(s > 32768 for s in sizes)}")
    if biggest:
        print(f"largest input schema: {biggest['name']} ({kb(biggest['input'])})")
    print(f"tools shrunk by the schema budget: {sum(r['shrunk'] for r in results)}")
    waiting = sum(1 for t in tools if t["long_running"] is True)
    returning = sum(1 for t in tools if t["long_running"] is False)
    print(f"long-running tools (google.longrunning with operation_info): {waiting + returning}, "
          f"{waiting} waiting, {returning} returning the Operation; "
          f"notes: {sum(r['notes'] for r in results)}")
    if tools:
        print(f"generated Rust: {rust / 1048576:.1f} MB, {rust / len(tools) / 1024:.1f} KB per tool; "
              f"largest module {kb(max((r['rust_bytes'] for r in results), default=0))}")
    if args.meta:
        print(f"schemas failing the 2020-12 meta-schema: {meta_bad}")
    print(f"wall time: {wall:.0f} s ({args.jobs} protoc runs in parallel)")


main()
