"""The gateway in front of gRPC servers nobody here wrote: etcd 3.4 (Debian's etcd-server, by a
descriptor set of its vendored protos), a Python grpcio server of stock servicers (health and
reflection, v1alpha) and a Node @grpc/grpc-js server with @grpc/reflection. The client is the
official Python MCP SDK 2.x over stdio. Run it with scripts/interop.sh, which installs the
servers, builds the gateway and the descriptor set, and passes their paths:

    ETCD_BIN=... ETCD_DESCRIPTORS=... GRPCIO_PYTHON=... NODE_BIN=... GATEWAY_BIN=... \\
        .tools/venv-mcp2/bin/python tests/interop/test_interop.py [-v] [-k SUBSTRING]

Every scenario starts its own server on a free loopback port and its own gateway, checks the
tools are portable to model hosts, and calls them. The last line reads `N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, AsyncIterator

import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from demo_support import LOG_DIR, free_port, kill_all, log, main  # noqa: E402

GATEWAY = Path(os.environ.get("GATEWAY_BIN", ROOT / "target" / "debug" / "grpc-mcp-gateway"))
ETCD_MCP = Path(os.environ.get("ETCD_MCP_BIN", ROOT / "target" / "debug" / "etcd-mcp"))
ETCD = os.environ.get("ETCD_BIN", str(ROOT / ".tools" / "etcd" / "usr" / "bin" / "etcd"))
ETCD_DESCRIPTORS = os.environ.get("ETCD_DESCRIPTORS", "")
GRPCIO_PYTHON = os.environ.get("GRPCIO_PYTHON", str(ROOT / ".tools" / "venv-grpcio" / "bin" / "python"))
NODE = os.environ.get("NODE_BIN", "node")
HERE = Path(__file__).resolve().parent
TOOL_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")
_started: list[subprocess.Popen[bytes]] = []


async def wait_port(port: int, process: subprocess.Popen[bytes], log_file: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        assert process.poll() is None, f"the server exited with {process.returncode}; see {log_file}"
        assert time.monotonic() < deadline, f"nothing listens on {port} after 30 s; see {log_file}"
        await asyncio.sleep(0.1)


def start(label: str, command: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    path = LOG_DIR / f"interop-{label}.log"
    with open(path, "ab") as log_file:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT)
    _started.append(process)
    return process, path


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


@contextlib.asynccontextmanager
async def etcd_server(data_dir: str, port: int, peer_port: int | None = None) -> AsyncIterator[None]:
    peer = peer_port or free_port()
    process, path = start("etcd", [
        ETCD, "--name", "interop", "--data-dir", data_dir,
        "--listen-client-urls", f"http://127.0.0.1:{port}", "--advertise-client-urls", f"http://127.0.0.1:{port}",
        "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
        "--initial-cluster", f"interop=http://127.0.0.1:{peer}",
    ])
    try:
        await wait_port(port, process, path)
        yield
    finally:
        stop(process)


@contextlib.asynccontextmanager
async def gateway(label: str, port: int, *flags: str) -> AsyncIterator[Client]:
    async with mcp_client(f"{label}-gateway", GATEWAY, "--target", f"http://127.0.0.1:{port}", *flags) as client:
        yield client


@contextlib.asynccontextmanager
async def mcp_client(label: str, command: Path, *args: str) -> AsyncIterator[Client]:
    """An MCP client of `command`, launched over stdio as a host does; its stderr goes to the
    log directory."""
    path = LOG_DIR / f"interop-{label}.log"
    params = StdioServerParameters(
        command=str(command), args=list(args), env={**os.environ, "RUST_LOG": "info", "NO_COLOR": "1"},
    )
    with open(path, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=30.0) as client:
            yield client


async def tools_of(client: Client) -> dict[str, mcp_types.Tool]:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name, tool in tools.items():
        check_portable(name, tool)
    return tools


def check_portable(name: str, tool: mcp_types.Tool) -> None:
    """What model hosts ask of a tool: a name of [A-Za-z0-9_] up to 64, an object at the root of
    both schemas without a root union, no type arrays, every `$ref` resolvable in `$defs`."""
    assert TOOL_NAME.match(name), name
    for schema in (tool.input_schema, tool.output_schema or {"type": "object"}):
        assert schema.get("type") == "object", (name, schema.get("type"))
        assert not {"anyOf", "oneOf", "allOf"} & schema.keys(), (name, "root union")
        defs = schema.get("$defs", {})

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                assert not isinstance(node.get("type"), list), (name, node)
                ref = node.get("$ref")
                if isinstance(ref, str):
                    assert ref == "#" or (ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in defs), (name, ref)
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(schema)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    result = await client.call_tool(name, arguments)
    log(f"{name} {json.dumps(arguments)[:120]} -> {'isError ' if result.is_error else ''}"
        f"{json.dumps(result.structured_content)[:200] if result.structured_content else result.content[0].text[:200]}")
    return result


def ok(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text if result.content else result
    assert result.structured_content is not None, result
    return result.structured_content


def error_text(result: mcp_types.CallToolResult, status: str) -> str:
    assert result.is_error, result.structured_content
    got = (result.meta or {}).get("protoc-gen-rust-mcp/status", {}).get("name")
    assert got == status, (got, status, result.content[0].text)
    return result.content[0].text


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- etcd ---------------------------------------------------------------------------------


async def down_then_back(client: Client, data: str, port: int, key: str) -> dict[str, Any]:
    """A Range while etcd is down fails in the transport with its cause; once etcd is started
    again on the same port and data, the same client's calls go through: the Range's result."""
    text = error_text(await call(client, "KV_Range", {"key": b64(key)}), "UNAVAILABLE")
    assert "refused" in text.lower() or "connect" in text.lower(), text
    async with etcd_server(data, port):
        for attempt in range(40):
            result = await call(client, "KV_Range", {"key": b64(key)})
            if not result.is_error:
                break
            await asyncio.sleep(0.25)
        log(f"recovered after {attempt + 1} attempts")
        return ok(result)


async def etcd_kv_lease_txn_and_errors() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        async with etcd_server(data, port), gateway("etcd", port, "--descriptor-set", ETCD_DESCRIPTORS) as client:
            tools = await tools_of(client)
            assert len(tools) == 46 and {"KV_Put", "KV_Range", "Watch_Watch", "Lease_LeaseGrant", "Lock_Lock"} <= tools.keys(), sorted(tools)
            put = ok(await call(client, "KV_Put", {"key": b64("greeting"), "value": b64("hello, etcd"), "prev_kv": True}))
            revision = int(put["header"]["revision"])
            got = ok(await call(client, "KV_Range", {"key": b64("greeting")}))
            assert got["count"] == "1" and got["kvs"][0]["value"] == b64("hello, etcd"), got
            assert int(got["kvs"][0]["mod_revision"]) == revision, got
            lease = ok(await call(client, "Lease_LeaseGrant", {"TTL": "60"}))
            assert int(lease["ID"]) > 0 and lease["TTL"] == "60", lease
            ok(await call(client, "KV_Put", {"key": b64("leased"), "value": b64("x"), "lease": lease["ID"]}))
            alive = ok(await call(client, "Lease_LeaseTimeToLive", {"ID": lease["ID"], "keys": True}))
            assert alive["keys"] == [b64("leased")], alive
            txn = ok(await call(client, "KV_Txn", {
                "compare": [{"key": b64("greeting"), "target": "VALUE", "result": "EQUAL", "value": b64("hello, etcd")}],
                "success": [{"request": {"case": "request_put", "value": {"key": b64("greeting"), "value": b64("swapped")}}}],
                "failure": [{"request": {"case": "request_range", "value": {"key": b64("greeting")}}}],
            }))
            assert txn["succeeded"] is True and txn["responses"][0]["response"]["case"] == "response_put", txn
            got = ok(await call(client, "KV_Range", {"key": b64("greeting")}))
            assert got["kvs"][0]["value"] == b64("swapped"), got
            # The gateway's deadline is 30 s; the call asks for a 800 ms window on a watch that
            # never ends, and for one message on another.
            started = time.monotonic()
            watch = ok(await call(client, "Watch_Watch", {
                "messages": [{"create_request": {"key": b64("greeting"), "start_revision": "1"}}],
                "mcp.stream": {"windowMs": 800}}))
            assert watch.get("truncated") is True and time.monotonic() - started < 5, watch
            assert any(e["kv"]["value"] == b64("swapped") for m in watch["messages"] for e in m.get("events", [])), watch
            one = ok(await call(client, "Watch_Watch", {
                "messages": [{"create_request": {"key": b64("greeting"), "start_revision": "1"}}],
                "mcp.stream": {"maxMessages": 1}}))
            assert len(one["messages"]) == 1 and one["messages"][0].get("created") is True, one
            text = error_text(await call(client, "Lease_LeaseRevoke", {"ID": "12345"}), "NOT_FOUND")
            assert "lease not found" in text, text
            text = error_text(await call(client, "KV_Put", {"key": 7}), "INVALID_ARGUMENT")
            assert "key" in text, text


async def etcd_streams_windows_and_a_restart() -> None:
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        async with etcd_server(data, port):
            async with gateway("etcd-streams", port, "--descriptor-set", ETCD_DESCRIPTORS, "--timeout", "1s") as client:
                ok(await call(client, "KV_Put", {"key": b64("watched"), "value": b64("1")}))
                # etcd never ends a watch: the 1 s window ends it, and that is truncation.
                for _ in range(3):
                    watch = ok(await call(client, "Watch_Watch", {"messages": [
                        {"create_request": {"key": b64("watched"), "start_revision": "1"}}]}))
                    assert watch.get("truncated") is True, watch
                    events = [e for m in watch["messages"] for e in m.get("events", [])]
                    assert events and events[0]["kv"]["value"] == b64("1"), watch
                quiet = ok(await call(client, "Watch_Watch", {"messages": [{"create_request": {"key": b64("quiet")}}]}))
                assert quiet.get("truncated") is True, quiet
                observe = ok(await call(client, "Election_Observe", {"name": b64("no-leader")}))
                assert observe == {"messages": [], "truncated": True}, observe
        # The backend goes away: calls fail with a cause, then work again once it is back.
        async with gateway("etcd-restart", port, "--descriptor-set", ETCD_DESCRIPTORS) as client:
            got = await down_then_back(client, data, port, "watched")
            assert got["kvs"][0]["value"] == b64("1"), got


# The same calls through code generated from etcd's protos (tests/interop/etcd-mcp) and through
# the gateway reading them as a descriptor set. Each path gets its own fresh etcd on the same
# ports and data directory path, so that the cluster and member IDs, revisions and raft terms in
# every response header are the same; the lease ID is given, not drawn. Nothing is left out of
# the comparison.
ETCD_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("KV_Put", {"key": b64("compare/a"), "value": b64("1")}),
    ("KV_Put", {"key": b64("compare/b"), "value": b64("\u00e9\u0000\u00ff"), "prev_kv": True}),
    ("KV_Put", {"key": b64("compare/a"), "value": b64("2"), "prev_kv": True}),
    ("KV_Range", {"key": b64("compare/"), "range_end": b64("compare0"), "sort_order": "DESCEND", "sort_target": "KEY"}),
    ("KV_Range", {"key": b64("compare/"), "range_end": b64("compare0"), "count_only": True}),
    ("KV_Range", {"key": b64("nothing here")}),
    ("KV_Txn", {
        "compare": [{"key": b64("compare/a"), "target": "VALUE", "result": "EQUAL", "value": b64("2")}],
        "success": [{"request": {"case": "request_put", "value": {"key": b64("compare/c"), "value": b64("3")}}},
                    {"request": {"case": "request_range", "value": {"key": b64("compare/a")}}}],
        "failure": [{"request": {"case": "request_delete_range", "value": {"key": b64("compare/a")}}}],
    }),
    ("KV_Txn", {
        "compare": [{"key": b64("compare/a"), "target": "MOD", "result": "GREATER", "mod_revision": "1000"}],
        "failure": [{"request": {"case": "request_delete_range", "value": {"key": b64("compare/b"), "prev_kv": True}}}],
    }),
    ("Lease_LeaseGrant", {"TTL": "60", "ID": "7001"}),
    ("KV_Put", {"key": b64("compare/leased"), "value": b64("x"), "lease": "7001"}),
    ("Lease_LeaseLeases", {}),
    ("Lock_Lock", {"name": b64("compare-lock"), "lease": "7001"}),
    ("Watch_Watch", {"messages": [{"create_request": {"key": b64("compare/"), "range_end": b64("compare0"),
                                                      "start_revision": "1", "prev_kv": True}}],
                     "mcp.stream": {"windowMs": 800}}),
    ("Watch_Watch", {"messages": [{"create_request": {"key": b64("compare/a"), "start_revision": "1"}}],
                     "mcp.stream": {"maxMessages": 1}}),
    ("Election_Observe", {"name": b64("no-leader"), "mcp.stream": {"windowMs": 300}}),
    ("Cluster_MemberList", {}),
    ("Lease_LeaseRevoke", {"ID": "7001"}),
    ("KV_Range", {"key": b64("compare/leased")}),
    ("Lease_LeaseRevoke", {"ID": "7001"}),
    ("KV_Put", {"key": 7}),
    ("KV_Range", {"key": b64("compare/"), "sort_order": "SIDEWAYS"}),
    ("Election_Proclaim", {"leader": {"name": b64("nobody"), "key": b64("nobody/1"), "rev": "1", "lease": "1"},
                           "value": b64("v")}),
]


async def run_etcd_calls(client: Client) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every tool as listed, and every call of ETCD_CALLS as answered: the structured content,
    or the error's status and text."""
    listed = (await client.list_tools()).tools
    for tool in listed:
        check_portable(tool.name, tool)
    tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed]
    answers = []
    for name, arguments in ETCD_CALLS:
        result = await call(client, name, arguments)
        status = (result.meta or {}).get("protoc-gen-rust-mcp/status", {}).get("name")
        answers.append({"call": name, "isError": bool(result.is_error), "status": status,
                        "structuredContent": result.structured_content,
                        "text": result.content[0].text if result.is_error else None})
    return tools, answers


async def etcd_generated_code_answers_as_the_gateway() -> None:
    assert ETCD_MCP.is_file(), f"{ETCD_MCP} does not exist: cargo build -p etcd-mcp"
    port, peer = free_port(), free_port()
    runs = {}
    with tempfile.TemporaryDirectory() as parent:
        data = str(Path(parent) / "data")
        for label, command, args in [
            ("generated", ETCD_MCP, ["--target", f"http://127.0.0.1:{port}"]),
            ("gateway", GATEWAY, ["--target", f"http://127.0.0.1:{port}", "--descriptor-set", ETCD_DESCRIPTORS]),
        ]:
            shutil.rmtree(data, ignore_errors=True)
            async with etcd_server(data, port, peer_port=peer), mcp_client(f"etcd-{label}", command, *args) as client:
                runs[label] = await run_etcd_calls(client)
    (gen_tools, gen_answers), (gw_tools, gw_answers) = runs["generated"], runs["gateway"]
    assert len(gen_tools) == 46, [t["name"] for t in gen_tools]
    assert gen_tools == gw_tools, first_difference(gen_tools, gw_tools)
    assert gen_answers == gw_answers, first_difference(gen_answers, gw_answers)
    log(f"generated code and gateway: {len(gen_tools)} tools and {len(gen_answers)} answers identical")
    # What the calls must have done, on both paths.
    by_step = {i: a for i, a in enumerate(gen_answers)}
    assert by_step[2]["structuredContent"]["prev_kv"]["value"] == b64("1"), by_step[2]
    assert [kv["key"] for kv in by_step[3]["structuredContent"]["kvs"]] == [b64("compare/b"), b64("compare/a")], by_step[3]
    assert by_step[1]["structuredContent"] and by_step[3]["structuredContent"]["kvs"][0]["value"] == b64("\u00e9\u0000\u00ff")
    assert by_step[4]["structuredContent"]["count"] == "2", by_step[4]
    assert by_step[6]["structuredContent"]["succeeded"] is True, by_step[6]
    assert by_step[7]["structuredContent"].get("succeeded") is not True, by_step[7]
    assert by_step[7]["structuredContent"]["responses"][0]["response"]["case"] == "response_delete_range", by_step[7]
    assert by_step[8]["structuredContent"]["ID"] == "7001", by_step[8]
    assert by_step[12]["structuredContent"]["truncated"] is True, by_step[12]
    assert any(e.get("type") == "DELETE" for m in by_step[12]["structuredContent"]["messages"] for e in m.get("events", [])), by_step[12]
    assert by_step[13]["structuredContent"]["messages"][0]["created"] is True, by_step[13]
    assert by_step[14]["structuredContent"] == {"messages": [], "truncated": True}, by_step[14]
    assert by_step[17]["structuredContent"] == {"header": by_step[17]["structuredContent"]["header"]}, by_step[17]
    assert [a["status"] for a in gen_answers[18:]] == ["NOT_FOUND", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "UNKNOWN"], gen_answers[18:]
    # The generated path also survives its backend going away.
    with tempfile.TemporaryDirectory() as data:
        async with mcp_client("etcd-generated-restart", ETCD_MCP, "--target", f"http://127.0.0.1:{port}") as client:
            got = await down_then_back(client, data, port, "compare/a")
            assert got["header"]["revision"] == "1" and "kvs" not in got, got


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two JSON values first differ, for an assertion message a person can read."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                return first_difference(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}/{key}")
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}/{i}")
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items"
    return f"{path}: generated {json.dumps(a)[:300]} != gateway {json.dumps(b)[:300]}"


# --- grpcio -------------------------------------------------------------------------------


async def grpcio_health_by_v1alpha_reflection() -> None:
    port = free_port()
    process, path = start("grpcio", [GRPCIO_PYTHON, str(HERE / "grpcio_server.py"), str(port)])
    try:
        await wait_port(port, process, path)
        async with gateway("grpcio", port, "--service", "grpc.health.v1.Health", "--timeout", "1s") as client:
            tools = await tools_of(client)
            assert {"Health_Check", "Health_Watch"} <= tools.keys(), sorted(tools)
            assert ok(await call(client, "Health_Check", {"service": "interop.up"})) == {"status": "SERVING"}
            assert ok(await call(client, "Health_Check", {"service": "interop.down"})) == {"status": "NOT_SERVING"}
            error_text(await call(client, "Health_Check", {"service": "interop.nothing"}), "NOT_FOUND")
            watch = ok(await call(client, "Health_Watch", {"service": "interop.flapping"}))
            statuses = [m["status"] for m in watch["messages"]]
            assert watch.get("truncated") is True and len(statuses) >= 3, watch
            assert {"SERVING", "NOT_SERVING"} <= set(statuses), statuses
    finally:
        stop(process)


async def gateway_metrics_by_the_prometheus_parser() -> None:
    """`--metrics-addr`: a known sequence of calls, then `/metrics` read with the official
    Prometheus client's text-format parser; the backend stopped shows as down."""
    from prometheus_client.parser import text_string_to_metric_families

    port, metrics_port = free_port(), free_port()
    process, path = start("grpcio-metrics", [GRPCIO_PYTHON, str(HERE / "grpcio_server.py"), str(port)])

    def scrape() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as response:
            assert response.headers["Content-Type"].startswith("text/plain"), response.headers
            text = response.read().decode()
        return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
                for family in text_string_to_metric_families(text) for sample in family.samples}

    try:
        await wait_port(port, process, path)
        async with gateway("grpcio-metrics", port, "--service", "grpc.health.v1.Health",
                           "--metrics-addr", f"127.0.0.1:{metrics_port}", "--timeout", "2s") as client:
            await tools_of(client)
            assert ok(await call(client, "Health_Check", {"service": "interop.up"})) == {"status": "SERVING"}
            assert ok(await call(client, "Health_Check", {"service": "interop.up"})) == {"status": "SERVING"}
            error_text(await call(client, "Health_Check", {"service": "interop.nothing"}), "NOT_FOUND")
            error_text(await call(client, "Health_Check", {"service": 5}), "INVALID_ARGUMENT")
            samples = scrape()
            tool = ("tool", "Health_Check")

            def calls(outcome: str, code: str) -> float:
                return samples.get(("mcp_tool_calls_total", (("code", code), ("outcome", outcome), tool)), 0)

            assert calls("ok", "OK") == 2 and calls("error", "NOT_FOUND") == 1, samples
            assert calls("refused", "INVALID_ARGUMENT") == 1, samples
            assert samples[("mcp_tool_call_duration_seconds_count", (tool,))] == 4, samples
            # Bad arguments never reach the backend.
            assert samples[("mcp_grpc_call_duration_seconds_count", (tool,))] == 3, samples
            assert samples[("mcp_tool_calls_in_flight", ())] == 0, samples
            up = ("mcp_backend_up", (("backend", "default"), ("target", f"http://127.0.0.1:{port}")))
            assert samples[up] == 1, samples
            # The backend goes away: the next call fails in the transport, and the gauge says so.
            stop(process)
            error_text(await call(client, "Health_Check", {"service": "interop.up"}), "UNAVAILABLE")
            samples = scrape()
            assert samples[up] == 0, samples
            assert calls("error", "UNAVAILABLE") == 1, samples
    finally:
        stop(process)


async def grpcio_without_service_names_the_flag() -> None:
    port = free_port()
    process, path = start("grpcio-noservice", [GRPCIO_PYTHON, str(HERE / "grpcio_server.py"), str(port)])
    try:
        await wait_port(port, process, path)
        gateway_log = LOG_DIR / "interop-grpcio-noservice-gateway.log"
        done = subprocess.run([str(GATEWAY), "--target", f"http://127.0.0.1:{port}"], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=30)
        gateway_log.write_bytes(done.stderr)
        assert done.returncode != 0, "the gateway served a server with only health and reflection"
        assert b"--service grpc.health.v1.Health" in done.stderr, done.stderr[-600:]
    finally:
        stop(process)


# --- grpc-js ------------------------------------------------------------------------------


async def grpc_js_well_known_types_by_reflection() -> None:
    port = free_port()
    process, path = start("grpc-js", [NODE, str(HERE / "grpc_js_server.mjs"), str(port)])
    try:
        await wait_port(port, process, path)
        async with gateway("grpc-js", port, "--timeout", "2s") as client:
            tools = await tools_of(client)
            assert set(tools) == {"Notes_Put", "Notes_Get", "Notes_List"}, sorted(tools)
            note = {
                "id": "n1", "body": b64("bytes \u00e9\u00e8"), "kind": "KIND_TODO",
                "attributes": {"tags": ["a", "b"], "priority": 2, "nested": {"done": False, "none": None}},
                "due": "2026-12-01T10:00:00Z", "owner": {"case": "team", "value": "platform"},
            }
            stored = ok(await call(client, "Notes_Put", note))
            assert stored["version"] == "1" and stored["owner"] == note["owner"], stored
            assert stored["attributes"] == note["attributes"] and stored["due"] == note["due"], stored
            again = ok(await call(client, "Notes_Put", {**note, "owner": {"case": "user", "value": "ada"}}))
            assert again["version"] == "2" and again["owner"] == {"case": "user", "value": "ada"}, again
            got = ok(await call(client, "Notes_Get", {"id": "n1"}))
            assert got == again, (got, again)
            text = error_text(await call(client, "Notes_Get", {"id": "missing"}), "NOT_FOUND")
            assert "no note with id missing" in text, text
            error_text(await call(client, "Notes_Put", {"id": "n2", "owner": {"case": "group", "value": "b"}}), "INVALID_ARGUMENT")
            error_text(await call(client, "Notes_Put", {"body": b64("no id")}), "INVALID_ARGUMENT")
            listed = ok(await call(client, "Notes_List", {}))
            assert [n["id"] for n in listed["messages"]] == ["n1"] and not listed.get("truncated"), listed
            endless = ok(await call(client, "Notes_List", {"repeat": 1000}))
            assert endless.get("truncated") is True and len(endless["messages"]) > 5, endless
    finally:
        stop(process)


def scenarios() -> list[tuple[str, Any]]:
    assert GATEWAY.is_file(), f"{GATEWAY} does not exist: cargo build -p grpc-mcp-gateway"
    assert ETCD_DESCRIPTORS, "ETCD_DESCRIPTORS is not set: run scripts/interop.sh"
    return [
        ("etcd kv, lease, txn and errors", etcd_kv_lease_txn_and_errors),
        ("etcd streams, windows and a restart", etcd_streams_windows_and_a_restart),
        ("etcd generated code answers as the gateway", etcd_generated_code_answers_as_the_gateway),
        ("grpcio health by v1alpha reflection", grpcio_health_by_v1alpha_reflection),
        ("grpcio without --service names the flag", grpcio_without_service_names_the_flag),
        ("gateway metrics by the Prometheus parser", gateway_metrics_by_the_prometheus_parser),
        ("grpc-js well-known types by reflection", grpc_js_well_known_types_by_reflection),
    ]


if __name__ == "__main__":
    try:
        main(scenarios())
    finally:
        for process in _started:
            if process.poll() is None:
                process.kill()
        kill_all()
