"""The 2.x line of the official Python MCP SDK against the `demo` binary.

tests/python/test_demo.py covers the 1.x line; this script covers the 2.x client (`mcp.Client`),
which speaks protocol revision 2026-07-28 (no `initialize` handshake) with `mode="auto"` and the
2025-11-25 handshake with `mode="legacy"`. Run it with scripts/python-e2e.sh, which installs the
pinned SDK into .tools/venv-mcp2 and builds the demo. By hand:

    .tools/venv-mcp2/bin/python tests/python/test_demo_mcp2.py [-k SUBSTRING] [-v]

DEMO_BIN overrides the binary (default: target/debug/demo, or $CARGO_TARGET_DIR/debug/demo).

Every scenario runs for every transport (stdio, streamable HTTP with sessions, streamable HTTP
`--stateless`) and mode (auto, legacy), each against a fresh demo process, and asserts the
negotiated protocol revision. Every request has a timeout, every scenario a deadline, and
every process started here is killed at the end; the demo's logs are kept under
target/python-e2e/. The last line reads `N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from typing import Any, AsyncIterator, Awaitable, Callable

import mcp_types
from jsonschema import Draft202012Validator
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from demo_support import (
    COPIES,
    DEMO,
    EXPECTED_HINTS,
    OPERATION_TOOLS,
    PAGE_SIZE,
    PENDING,
    RPC_META,
    STATUS_META,
    TASK_TOOLS,
    TERMINATIONS,
    TOOLS,
    http_demo,
    log,
    log_path,
    main,
    settle,
)

# The revision each mode must negotiate with the demo.
PROTOCOL = {"auto": "2026-07-28", "legacy": "2025-11-25"}
TRANSPORTS = {"stdio": None, "http": (), "http-stateless": ("--stateless",)}
REQUEST_TIMEOUT = 20.0


@contextlib.asynccontextmanager
async def connect(
    label: str, transport: str, mode: str, *args: str, user: User | None = None
) -> AsyncIterator[Client]:
    """A connected `mcp.Client` to a fresh demo started with `args`, after checking the
    negotiated protocol revision. Over HTTP the client is the SDK's default for a URL (with its
    default limits, such as 1 MiB for one server-sent event). With a `user`, the client answers
    elicitations (and so declares the capability)."""
    async with contextlib.AsyncExitStack() as stack:
        flags = TRANSPORTS[transport]
        if flags is None:
            params = StdioServerParameters(
                command=str(DEMO),
                args=list(args),
                env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "info"), "NO_COLOR": "1"},
            )
            errlog = stack.enter_context(open(log_path(label), "w"))
            server: Any = stdio_client(params, errlog=errlog)
        else:
            server = await stack.enter_async_context(http_demo(label, *flags, *args))
        extra: dict[str, Any] = {"elicitation_callback": user} if user else {}
        client = await stack.enter_async_context(
            Client(server, mode=mode, read_timeout_seconds=REQUEST_TIMEOUT, **extra)
        )
        assert client.protocol_version == PROTOCOL[mode], (mode, client.protocol_version)
        if mode == "auto":
            # 2026-07-28: `server/discover`, no initialize handshake.
            assert client.session.discover_result is not None, "auto mode did not discover"
            assert client.session.initialize_result is None, "auto mode did an initialize handshake"
        else:
            assert client.session.initialize_result is not None, "legacy mode did not initialize"
        assert client.server_info is not None and client.server_info.name == "demo", client.server_info
        log(f"{transport} {mode}: protocol {client.protocol_version}")
        yield client


# --- checks -----------------------------------------------------------------------------


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


async def list_tools(client: Client) -> dict[str, mcp_types.Tool]:
    listed = await client.list_tools()
    assert listed.next_cursor is None, "13 tools fit on one page"
    return {tool.name: tool for tool in listed.tools}


async def call(client: Client, name: str, arguments: dict[str, Any], **kw: Any) -> mcp_types.CallToolResult:
    result = await client.call_tool(name, arguments, read_timeout_seconds=REQUEST_TIMEOUT, **kw)
    log(f"{name} {json.dumps(arguments)} -> is_error={result.is_error}")
    return result


def structured(result: mcp_types.CallToolResult, tool: mcp_types.Tool) -> dict[str, Any]:
    """The structured content of a successful result, valid under the tool's output schema, and
    the same JSON as the text content."""
    assert not result.is_error, f"unexpected error result: {text_of(result)}"
    content = result.structured_content
    assert isinstance(content, dict), f"no structured content: {result}"
    assert tool.output_schema is not None, f"{tool.name} has no output schema"
    Draft202012Validator(tool.output_schema).validate(content)
    return content


def expect_error(result: mcp_types.CallToolResult, status: str, *needles: str) -> str:
    text = text_of(result)
    assert result.is_error, f"expected an error result, got {text}"
    assert result.meta and result.meta[STATUS_META]["name"] == status, result.meta
    for needle in needles:
        assert needle in text, f"{needle!r} not in the error text:\n{text}"
    return text


async def tools(client: Client) -> None:
    """The 13 demo tools, each naming its RPC in `_meta`, with 2020-12 schemas."""
    by_name = await list_tools(client)
    if client.session.discover_result is not None:
        # Revision 2026-07-28: the server's caching hints (5 minutes, anyone may cache), not the
        # SDK's fallback for absent hints (0 ms, private). The 2025-11-25 result has no such
        # fields; the SDK fills in that fallback, so absence is checked with rmcp's client.
        listed = await client.list_tools()
        assert (listed.ttl_ms, listed.cache_scope) == (300_000, "public"), listed
    assert len(by_name) == 13 and set(by_name) == TOOLS, sorted(by_name)
    for name, tool in by_name.items():
        rpc = (tool.meta or {}).get(RPC_META)
        assert rpc is not None, f"{name} has no {RPC_META} in _meta: {tool.meta}"
        service, method = name.split("_", 1)
        package = "demo.v1" if service == "TaskService" else "google.longrunning"
        assert rpc["path"] == f"/{package}.{service}/{method}", (name, rpc)
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema.get("type") == "object", f"{name} input schema"
        assert tool.output_schema is not None, f"{name} has no output schema"
        Draft202012Validator.check_schema(tool.output_schema)
    hints = {
        name: (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
        for name in EXPECTED_HINTS
        for a in [by_name[name].annotations]
    }
    assert hints == EXPECTED_HINTS, hints
    assert by_name["TaskService_AddComment"].annotations is None


async def calls(client: Client) -> None:
    """A task found, one not found, and arguments of the wrong type named by their path."""
    by_name = await list_tools(client)
    get_task = by_name["TaskService_GetTask"]
    found = await call(client, "TaskService_GetTask", {"id": "task-1"})
    task = structured(found, get_task)
    assert task["id"] == "task-1" and task["state"] == "STATE_IN_PROGRESS", task
    assert json.loads(text_of(found)) == task, "the text is not the JSON of the structured content"
    assert found.meta and found.meta[STATUS_META] == {"code": 0, "name": "OK"}, found.meta

    missing = await call(client, "TaskService_GetTask", {"id": "task-404"})
    expect_error(missing, "NOT_FOUND", "task-404")

    # `id` is a string in the schema; the runtime checks the arguments before calling.
    assert get_task.input_schema["properties"]["id"]["type"] == "string", get_task.input_schema
    wrong_type = await call(client, "TaskService_GetTask", {"id": 5})
    expect_error(wrong_type, "INVALID_ARGUMENT", "$.id", "expected string")
    # `state` is an enum of the State names.
    states = by_name["TaskService_ListTasks"].input_schema["properties"]["state"]["enum"]
    assert "STATE_DONE" in states and "STATE_NOPE" not in states, states
    bad_enum = await call(client, "TaskService_ListTasks", {"state": "STATE_NOPE"})
    expect_error(bad_enum, "INVALID_ARGUMENT", "$.state", "STATE_NOPE")

    try:
        await client.call_tool("TaskService_Nope", {}, read_timeout_seconds=REQUEST_TIMEOUT)
    except MCPError as error:
        assert error.code == -32602, error.error
    else:
        raise AssertionError("an unknown tool must be a JSON-RPC error")


async def long_running(client: Client) -> None:
    """`TaskService_ArchiveTasks` waits for its operation, with progress carrying the metadata;
    past the tool's 5 s deadline it is a pending operation, later redeemed by name."""
    by_name = await list_tools(client)
    archive = by_name["TaskService_ArchiveTasks"]
    messages: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    archived = structured(
        await call(
            client,
            "TaskService_ArchiveTasks",
            {"state": "STATE_DONE", "per_task": "0.6s"},
            progress_callback=on_progress,
        ),
        archive,
    )
    assert [t["id"] for t in archived["tasks"]] == ["task-3"], archived
    await settle(lambda: messages)
    operations = [m for m in messages if m.startswith("operation operations/")]
    assert operations, f"no progress message names the operation: {messages}"
    # The message carries the unpacked ArchiveTasksMetadata as JSON after the operation name.
    metadata = [json.loads(m[m.index("{") :]) for m in operations if "{" in m]
    assert any(m.get("total") == 1 for m in metadata), messages
    log(f"progress: {messages}")

    # One task in progress (task-1) at 6 s per task: past the tool's 5 s deadline.
    pending_result = await call(client, "TaskService_ArchiveTasks", {"state": "STATE_IN_PROGRESS", "per_task": "6s"})
    pending = structured(pending_result, archive)
    assert list(pending) == [PENDING], pending
    assert set(pending[PENDING]) <= {"name", "metadata"}, pending
    # Nothing archived yet (the default 0 is left out), one task to go.
    assert pending[PENDING].get("metadata") == {"total": 1}, pending
    name = pending[PENDING]["name"]
    assert name.startswith("operations/"), pending
    get_operation = by_name["Operations_GetOperation"]
    deadline = time.monotonic() + 15
    while True:
        operation = structured(await call(client, "Operations_GetOperation", {"name": name}), get_operation)
        if operation.get("done"):
            break
        assert time.monotonic() < deadline, f"{name} not done in 15 s: {operation}"
        await asyncio.sleep(0.2)
    result = operation["result"]
    assert result["case"] == "response", operation
    assert [t["id"] for t in result["value"]["value"]["tasks"]] == ["task-1"], operation


async def paging(client: Client) -> None:
    """2,301 tools listed page by page through the cursor: each once, over several pages."""
    names: list[str] = []
    pages = largest = 0
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        pages += 1
        largest = max(largest, len(page.tools))
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
        assert pages < 100, "the cursor never ends"
    expected = len(TASK_TOOLS) * (COPIES + 1) + len(OPERATION_TOOLS)
    assert expected == 2301
    assert len(names) == expected, (len(names), expected)
    assert len(set(names)) == expected, "a tool was listed twice"
    # Bounded by bytes (512 KiB of tool JSON, well under the SDK's 1 MiB for one server-sent
    # event) before count: several pages, none of the full PAGE_SIZE.
    assert pages > 5, f"{pages} page(s)"
    assert largest < PAGE_SIZE, f"a page of {largest} tools"
    assert set(names) >= TOOLS
    log(f"{len(names)} tools in {pages} pages")


class User:
    """Answers the server's confirmation requests (elicitation) with the queued answers.
    `reachable` is false where the server has no way to ask: stateless HTTP on 2025-11-25 has
    no channel for a server-to-client request, and `input_required` needs 2026-07-28."""

    def __init__(self, *answers: str, reachable: bool = True):
        self.answers = list(answers)
        self.asked: list[str] = []
        self.reachable = reachable

    async def __call__(self, context: Any, params: Any) -> mcp_types.ElicitResult:
        self.asked.append(params.message)
        return mcp_types.ElicitResult(action=self.answers.pop(0))


async def confirm(client: Client, user: User) -> None:
    """DeleteTask asks the user first, in either protocol revision (2025-11-25: the server sends
    `elicitation/create`; 2026-07-28: the call answers `input_required` and the SDK calls again
    with the answer): declined, the task stays; accepted, it is gone. Where the server cannot
    ask, the tool's `unconfirmed` choice applies: the demo's is to proceed."""
    if not user.reachable:
        deleted = await call(client, "TaskService_DeleteTask", {"id": "task-2"})
        assert not deleted.is_error, text_of(deleted)
        assert not user.asked, user.asked
        gone = await call(client, "TaskService_GetTask", {"id": "task-2"})
        expect_error(gone, "NOT_FOUND", "task-2")
        return
    declined = await call(client, "TaskService_DeleteTask", {"id": "task-2"})
    expect_error(declined, "PERMISSION_DENIED", "The user declined")
    assert len(user.asked) == 1 and "TaskService_DeleteTask" in user.asked[0], user.asked
    still_there = await call(client, "TaskService_GetTask", {"id": "task-2"})
    assert not still_there.is_error, "a declined deletion reached the backend"

    accepted = await call(client, "TaskService_DeleteTask", {"id": "task-2"})
    assert not accepted.is_error, text_of(accepted)
    assert len(user.asked) == 2, user.asked
    gone = await call(client, "TaskService_GetTask", {"id": "task-2"})
    expect_error(gone, "NOT_FOUND", "task-2")


def answer(result: mcp_types.CallToolResult) -> tuple[Any, ...]:
    """What a result says: its error flag, `_meta`, structured content, and text (as JSON when
    it is JSON)."""
    try:
        said: Any = json.loads(text_of(result))
    except ValueError:
        said = text_of(result)
    return (result.is_error, result.meta, result.structured_content, said)


async def tool_search(client: Client, user: User) -> None:
    """`--tool-search`: the listing is the three discovery tools; search_tools finds tools by
    plain words, describe_tools gives their definitions, and call_tool answers as the direct
    call does (the tools stay callable by name): a success, an error, a stream, and a
    confirmation asked for the tool call_tool names."""
    listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == ["search_tools", "describe_tools", "call_tool"], listed
    found = await call(client, "search_tools", {"query": "look up one task by its id", "limit": 3})
    assert not found.is_error, text_of(found)
    names = [tool["name"] for tool in found.structured_content["tools"]]
    assert names[0] == "TaskService_GetTask", names
    described = await call(client, "describe_tools", {"names": ["TaskService_GetTask"]})
    get_task = mcp_types.Tool.model_validate(described.structured_content["tools"][0])
    assert get_task.input_schema["properties"]["id"]["type"] == "string", get_task.input_schema

    for name, arguments in [
        ("TaskService_GetTask", {"id": "task-1"}),
        ("TaskService_GetTask", {"id": "task-404"}),
        ("TaskService_GetTask", {"id": 5}),
        ("TaskService_ExportTasks", {}),
    ]:
        direct = await call(client, name, arguments)
        through = await call(client, "call_tool", {"name": name, "arguments": arguments})
        # The same result; the text compared as JSON, since a map's entries come in any order.
        assert answer(through) == answer(direct), (name, arguments, through, direct)
    structured(await call(client, "call_tool", {"name": "TaskService_GetTask", "arguments": {"id": "task-1"}}), get_task)
    expect_error(await call(client, "call_tool", {"name": "TaskService_Nope"}), "INVALID_ARGUMENT", "no tool is named")
    # A misremembered name comes back with the nearest names.
    expect_error(
        await call(client, "call_tool", {"name": "GetTask"}),
        "INVALID_ARGUMENT",
        "no tool is named `GetTask` (nearest: `TaskService_GetTask`, ",
    )

    # The confirmation is the one of the tool call_tool calls.
    if user.reachable:
        declined = await call(client, "call_tool", {"name": "TaskService_DeleteTask", "arguments": {"id": "task-2"}})
        expect_error(declined, "PERMISSION_DENIED", "The user declined")
        assert len(user.asked) == 1 and "TaskService_DeleteTask" in user.asked[0], user.asked
        accepted = await call(client, "call_tool", {"name": "TaskService_DeleteTask", "arguments": {"id": "task-2"}})
        assert not accepted.is_error, text_of(accepted)
    else:
        deleted = await call(client, "call_tool", {"name": "TaskService_DeleteTask", "arguments": {"id": "task-2"}})
        assert not deleted.is_error, text_of(deleted)
    gone = await call(client, "TaskService_GetTask", {"id": "task-2"})
    expect_error(gone, "NOT_FOUND", "task-2")


# --- runner -----------------------------------------------------------------------------

SCENARIOS: list[tuple[str, Callable[..., Awaitable[None]], tuple[str, ...]]] = [
    ("tools", tools, ()),
    ("calls", calls, ()),
    ("long-running", long_running, ()),
    (f"paging --copies {COPIES}", paging, ("--copies", str(COPIES))),
    ("confirm", confirm, ()),
    ("tool-search", tool_search, ("--tool-search",)),
]
# Scenarios that take the user answering elicitations, and the answers, in order.
ANSWERS = {"confirm": ("decline", "accept"), "tool-search": ("decline", "accept")}


def scenarios() -> list[tuple[str, Callable[[], Awaitable[None]]]]:
    out = []
    for name, run, args in SCENARIOS:
        for transport in TRANSPORTS:
            for mode in PROTOCOL:
                label = f"mcp2-{name.split()[0]}-{transport}-{mode}"

                async def scenario(
                    run=run, label=label, transport=transport, mode=mode, args=args,
                    answers=ANSWERS.get(name),
                ) -> None:
                    before = len(TERMINATIONS.failures)
                    reachable = not (transport == "http-stateless" and mode == "legacy")
                    user = User(*answers, reachable=reachable) if answers else None
                    async with connect(label, transport, mode, *args, user=user) as client:
                        await (run(client, user) if user else run(client))
                    assert len(TERMINATIONS.failures) == before, TERMINATIONS.failures[before:]

                out.append((f"mcp2 {name} {transport} {mode}", scenario))
    return out


if __name__ == "__main__":
    main(scenarios(), parallel=4)
