"""Default-mode schema tokens: protoc-gen-rust-mcp against redpanda's protoc-gen-go-mcp.

Run through scripts/schema-tokens.sh, which installs tiktoken and finds protoc.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from tool_search_eval import Tokens  # noqa: E402

TESTDATA = "pkg/testdata"
FILES = ["testdata/test_service.proto", "testdata/edge_cases.proto"]
# runtime.Tool{Name: "...", Description: "...", RawInputSchema: json.RawMessage{0x7b, ...}, ...}
GO_TOOL = re.compile(
    r'runtime\.Tool\{Name: "([^"]+)", Description: "(?:[^"\\]|\\.)*", '
    r"RawInputSchema: json\.RawMessage\{([^}]*)\}, RawOutputSchema: json\.RawMessage\{([^}]*)\}\}")
TOKENS = Tokens()


def without_prose(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_prose(v) for k, v in value.items() if k not in ("description", "title")}
    if isinstance(value, list):
        return [without_prose(v) for v in value]
    return value


def tokens(tool: dict[str, Any], keys: tuple[str, ...]) -> int:
    return TOKENS.json(without_prose({k: tool[k] for k in keys if k in tool}))[1]


def theirs(checkout: Path) -> dict[str, dict[str, Any]]:
    """Their tools by method name, decoded from the byte literals of the generated Go."""
    tools: dict[str, dict[str, Any]] = {}
    for path in sorted((checkout / TESTDATA / "gen/go/testdata/testdatamcp").glob("*.pb.mcp.go")):
        for match in GO_TOOL.finditer(path.read_text(encoding="utf-8")):
            def raw(text: str) -> Any:
                return json.loads(bytes(int(b, 16) for b in text.split(", ") if b))
            tools[match.group(1).rsplit("_", 1)[1]] = {
                "name": match.group(1), "inputSchema": raw(match.group(2)),
                "outputSchema": raw(match.group(3))}
    return tools


def ours(plugin: Path, protoc: Path, descriptors: Path) -> dict[str, dict[str, Any]]:
    """Our tools by method name: the plugin with default options, from the same descriptors."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([str(protoc), f"--descriptor_set_in={descriptors}",
                        f"--plugin=protoc-gen-rust-mcp={plugin}", f"--rust-mcp_out={out}",
                        "--rust-mcp_opt=tools_json", *FILES], check=True)
        tools: dict[str, dict[str, Any]] = {}
        for path in sorted(Path(out).rglob("*.mcp.json")):
            listed = json.loads(path.read_text(encoding="utf-8"))
            for tool in listed["tools"] if isinstance(listed, dict) else listed:
                tools[tool["name"].rsplit("_", 1)[1]] = tool
        return tools


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redpanda", type=Path, required=True)
    parser.add_argument("--plugin", type=Path, required=True)
    parser.add_argument("--protoc", type=Path, required=True)
    args = parser.parse_args()
    them = theirs(args.redpanda)
    us = ours(args.plugin, args.protoc, args.redpanda / TESTDATA / "gen/descriptors.binpb")
    if not them or set(them) != set(us):
        print(f"the two sides do not list the same methods: theirs {sorted(them)}, ours "
              f"{sorted(us)}", file=sys.stderr)
        return 1
    print(f"{len(us)} tools, o200k tokens without descriptions and titles\n")
    print("| measure | redpanda | protoc-gen-rust-mcp | ratio |\n|---|---|---|---|")
    for label, keys in (("name + inputSchema", ("name", "inputSchema")),
                        ("name + inputSchema + outputSchema",
                         ("name", "inputSchema", "outputSchema"))):
        a = sum(tokens(t, keys) for t in them.values())
        b = sum(tokens(t, keys) for t in us.values())
        print(f"| {label} | {a:,} | {b:,} | {b / a:.3f} |")
    print("\n| method | input: redpanda | ours | output: redpanda | ours |\n|---|---|---|---|---|")
    for method in sorted(us):
        t, o = them[method], us[method]
        print(f"| {method} | {tokens(t, ('inputSchema',))} | {tokens(o, ('inputSchema',))} "
              f"| {tokens(t, ('outputSchema',))} | {tokens(o, ('outputSchema',))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
