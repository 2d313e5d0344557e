#!/usr/bin/env python3
"""README's ```json blocks against the real programs (called by scripts/readme.sh).

Every mode first parses the block into its pieces: whole JSON values, `"key": value` members
(the `_meta` lines) and `→` arrows (request → response pairs); text that is none of these
fails, with its line. Then, by mode:

  host BLOCK [--replace OLD NEW]... [--expect-tools N] [--rpc-prefix P] [--stderr-has TEXT]
            [--needs-env]
      BLOCK is an MCP host's config ({"mcpServers": {NAME: {command, args, env}}}). After the
      replacements (each OLD must occur in the config), the server is started as a host starts
      it: `command` (looked up on PATH) with `args`, the environment plus `env`, MCP over stdio.
      It must answer initialize and list tools: N of them, with --expect-tools; only tools
      whose RPC path (_meta protoc-gen-rust-mcp/rpc) starts with P, with --rpc-prefix. With
      --stderr-has its stderr must contain TEXT; with --needs-env, started without one of the
      variables of `env`, it must exit with an error that names the variable.
  listing BLOCK -- COMMAND...
      BLOCK is one tool as tools/list shows it; the MCP server COMMAND (stdio) must list exactly
      one tool, whose every key the block shows has the block's value.
  calls BLOCK -- COMMAND...
      BLOCK is `{"name": TOOL, "arguments": {...}}` → RESULT pairs; COMMAND must list each
      TOOL, and calling it with those arguments must answer RESULT as its structuredContent.
  meta BLOCK -- COMMAND...
      BLOCK is `"_meta": {KEY: VALUE}` members. For the key protoc-gen-rust-mcp/rpc, the tool of
      COMMAND whose RPC has that path must carry exactly VALUE; for protoc-gen-rust-mcp/status,
      the result of the call given by --status-call TOOL ARGUMENTS must.
"""

import argparse
import json
import os
import subprocess
import sys

from mcp_session import TIMEOUT, Session, fail


def pieces(text):
    """The block as ("value", v), ("member", key, v) and ("arrow",) pieces."""
    decoder, out, i = json.JSONDecoder(), [], 0

    def skip(i):
        while i < len(text) and text[i].isspace():
            i += 1
        return i

    def decode(i):
        try:
            return decoder.raw_decode(text, i)
        except json.JSONDecodeError as e:
            fail(f"not JSON at line {e.lineno}, column {e.colno} of the block: {e.msg}")

    while (i := skip(i)) < len(text):
        if text[i] == "→":
            out.append(("arrow",))
            i += 1
            continue
        value, i = decode(i)
        colon = skip(i)
        if isinstance(value, str) and colon < len(text) and text[colon] == ":":
            member, i = decode(skip(colon + 1))
            out.append(("member", value, member))
        else:
            out.append(("value", value))
    if not out:
        fail("the block is empty")
    return out


def shape(parts, kinds, what):
    got = [p[0] for p in parts]
    if got != kinds:
        fail(f"expected {what}, got the pieces {got}")


def host(block, args):
    text = block
    for old, new in args.replace or []:
        if old not in text:
            fail(f"the config has no {old!r} to replace")
        text = text.replace(old, new)
    parts = pieces(text)
    shape(parts, ["value"], "one JSON object")
    servers = parts[0][1].get("mcpServers")
    if not isinstance(servers, dict) or len(servers) != 1:
        fail(f"expected one server under mcpServers, got {servers!r}")
    (name, server), = servers.items()
    unknown = set(server) - {"command", "args", "env"}
    if unknown:
        fail(f"{name}: keys this check does not know how to run: {sorted(unknown)}")
    argv, config_env = [server["command"], *server.get("args", [])], server.get("env", {})
    session = Session(argv, {**os.environ, **config_env})
    info = session.initialize().get("serverInfo", {})
    tools = session.tools()
    session.close()
    said = [f"{name}: {info.get('name')} {info.get('version')} answered initialize and listed "
            f"{len(tools)} tools"]
    if not tools or (args.expect_tools is not None and len(tools) != args.expect_tools):
        session.die(f"{name}: listed {len(tools)} tools, expected {args.expect_tools or 'some'}")
    if args.rpc_prefix:
        other = [t["name"] for t in tools if not t.get("_meta", {}).get(
            "protoc-gen-rust-mcp/rpc", {}).get("path", "").startswith(args.rpc_prefix)]
        if other:
            session.die(f"{name}: tools of RPCs outside {args.rpc_prefix}: {other}")
        said.append(f"all of {args.rpc_prefix}")
    if args.stderr_has:
        if args.stderr_has not in session.stderr_text():
            session.die(f"{name}: its stderr does not say {args.stderr_has}")
        said.append(f"its log says {args.stderr_has}")
    if args.needs_env:
        for variable in config_env:
            env = {k: v for k, v in {**os.environ, **config_env}.items() if k != variable}
            try:
                without = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                                         capture_output=True, text=True, timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                fail(f"{name}: without {variable} it still runs after {TIMEOUT} s")
            if without.returncode == 0 or variable not in without.stderr:
                fail(f"{name}: without {variable} it exits with status {without.returncode}, "
                     f"and its stderr does not name {variable}:\n{without.stderr[-2000:]}")
        said.append(f"without {', '.join(config_env)} it refuses to start")
    print("; ".join(said))


def listing(block, args):
    parts = pieces(block)
    shape(parts, ["value"], "one tool")
    shown = parts[0][1]
    session = Session(args.command)
    session.initialize()
    tools = session.tools()
    session.close()
    if len(tools) != 1:
        fail(f"the server lists {len(tools)} tools, not one: {[t['name'] for t in tools]}")
    for key, value in shown.items():
        if tools[0].get(key) != value:
            fail(f"{key}: the block shows {json.dumps(value)}, the server lists "
                 f"{json.dumps(tools[0].get(key))}")
    print(f"{shown.get('name')}: {', '.join(shown)} as the server lists them")


def calls(block, args):
    parts = pieces(block)
    if len(parts) % 3 or len(parts) == 0:
        fail("expected request → result pairs")
    shape(parts, ["value", "arrow", "value"] * (len(parts) // 3), "request → result pairs")
    session = Session(args.command)
    session.initialize()
    listed = {t["name"] for t in session.tools()}
    for request, result in zip(parts[0::3], parts[2::3]):
        request, result = request[1], result[1]
        if set(request) != {"name", "arguments"} or request["name"] not in listed:
            session.die(f"not a call of a listed tool: {json.dumps(request)}")
        answer = session.request("tools/call", request)
        if answer.get("isError") or answer.get("structuredContent") != result:
            got = answer if answer.get("isError") else answer.get("structuredContent")
            session.die(f"{request['name']} answers {json.dumps(got)}, the block shows "
                        f"{json.dumps(result)}")
    session.close()
    print(f"{len(parts) // 3} calls answer what the block shows")


def meta(block, args):
    parts = pieces(block)
    shape(parts, ["member"] * len(parts), '"_meta": {...} members')
    session = Session(args.command)
    session.initialize()
    tools = session.tools()
    checked = []
    for _, key, value in parts:
        if key != "_meta" or not isinstance(value, dict) or len(value) != 1:
            session.die(f'expected "_meta": {{one key}}, got {key!r}: {json.dumps(value)}')
        (meta_key, shown), = value.items()
        if meta_key == "protoc-gen-rust-mcp/rpc":
            real = [t for t in tools
                    if t.get("_meta", {}).get(meta_key, {}).get("path") == shown.get("path")]
            if len(real) != 1:
                session.die(f"no tool has the RPC {shown.get('path')}")
            what = real[0]["name"]
            real = real[0]["_meta"][meta_key]
        elif meta_key == "protoc-gen-rust-mcp/status" and args.status_call:
            tool, arguments = args.status_call
            answer = session.request("tools/call", {"name": tool,
                                                    "arguments": json.loads(arguments)})
            what = f"{tool} {arguments}"
            real = answer.get("_meta", {}).get(meta_key)
        else:
            session.die(f"no way to check the _meta key {meta_key}")
        if real != shown:
            session.die(f"{meta_key}: the block shows {json.dumps(shown)}, {what} has "
                        f"{json.dumps(real)}")
        checked.append(f"{meta_key} of {what}")
    session.close()
    print("; ".join(checked))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["host", "listing", "calls", "meta"])
    parser.add_argument("block", help="a file holding the block's text")
    parser.add_argument("--replace", nargs=2, action="append", metavar=("OLD", "NEW"))
    parser.add_argument("--expect-tools", type=int)
    parser.add_argument("--rpc-prefix")
    parser.add_argument("--stderr-has")
    parser.add_argument("--needs-env", action="store_true")
    parser.add_argument("--status-call", nargs=2, metavar=("TOOL", "ARGUMENTS"))
    argv = sys.argv[1:]
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:len(argv) - len(command) - (1 if command else 0)])
    args.command = command
    with open(args.block, encoding="utf-8") as f:
        block = f.read()
    if args.mode != "host" and not args.command:
        fail(f"{args.mode} needs the server's command after --")
    {"host": host, "listing": listing, "calls": calls, "meta": meta}[args.mode](block, args)


if __name__ == "__main__":
    main()
