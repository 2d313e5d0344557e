"""The official Python MCP SDK against the `demo` binary, over stdio and streamable HTTP.

Run it with scripts/python-e2e.sh, which installs the pinned SDK into .tools/venv and builds
the demo. By hand:

    .tools/venv/bin/python tests/python/test_demo.py [-k SUBSTRING] [-v]

DEMO_BIN overrides the binary (default: target/debug/demo, or $CARGO_TARGET_DIR/debug/demo).

Every scenario runs twice per transport: with the newest protocol revision the SDK speaks,
and with the `initialize` of an older client (2025-03-26). A raw JSON-RPC exchange over
stdio checks the handshake of older clients without the SDK's help. Every request has a
timeout, every scenario a deadline, and every process started here is killed at the end.
The last line reads `N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from datetime import timedelta
from typing import Any, Awaitable, Callable

import mcp.types
from jsonschema import Draft202012Validator
from mcp import ClientSession, McpError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

from demo_support import (
    COPIES,
    DEMO,
    EXPECTED_HINTS,
    LOG_DIR,
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
    main,
    settle,
)

NEWEST = mcp.types.LATEST_PROTOCOL_VERSION
OLDER = "2025-03-26"
REQUEST_TIMEOUT = timedelta(seconds=20)

PROPERTY_KEY = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
COMBINATORS = ("oneOf", "anyOf", "allOf", "not", "enum")

@contextlib.contextmanager
def protocol_version(version: str):
    """The SDK always asks for `mcp.types.LATEST_PROTOCOL_VERSION` in `initialize`; an older
    client is simulated by lowering it for the duration of one handshake."""
    saved = mcp.types.LATEST_PROTOCOL_VERSION
    mcp.types.LATEST_PROTOCOL_VERSION = version
    try:
        yield
    finally:
        mcp.types.LATEST_PROTOCOL_VERSION = saved


@contextlib.asynccontextmanager
async def session_over(
    transport: str,
    version: str,
    url: str | None = None,
    args: tuple[str, ...] = (),
    elicitation_callback: Any = None,
):
    """An initialized SDK session to the demo, and the `initialize` result. With an
    `elicitation_callback`, the session declares the elicitation capability."""
    extra = {"elicitation_callback": elicitation_callback} if elicitation_callback else {}
    if transport == "stdio":
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        params = StdioServerParameters(
            command=str(DEMO),
            args=list(args),
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "info")},
        )
        with open(LOG_DIR / f"demo-stdio-{version}.log", "a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT, **extra) as session:
                    with protocol_version(version):
                        init = await session.initialize()
                    yield session, init
    else:
        assert url is not None
        before = len(TERMINATIONS.failures)
        async with streamablehttp_client(url, timeout=20, sse_read_timeout=60) as (read, write, _):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT, **extra) as session:
                with protocol_version(version):
                    init = await session.initialize()
                yield session, init
        assert len(TERMINATIONS.failures) == before, TERMINATIONS.failures[before:]


# --- checks -----------------------------------------------------------------------------


# The formats Gemini's schema subset takes, by type; it answers HTTP 400 to any other.
GEMINI_FORMATS = {"string": ("date-time", "enum"), "integer": ("int32", "int64"),
                  "number": ("float", "double")}


def check_portable(schema: dict[str, Any], where: str) -> None:
    """The 2020-12 meta-schema, plus the portability rules of docs/design.md §4.10."""
    Draft202012Validator.check_schema(schema)
    assert schema.get("type") == "object", f"{where}: root is not an object"
    for keyword in COMBINATORS:
        assert keyword not in schema, f"{where}: `{keyword}` at the root"
    defs = schema.get("$defs", {})

    def walk(node: Any, path: str) -> None:
        if isinstance(node, bool):
            raise AssertionError(f"{where}{path}: boolean schema")
        if not isinstance(node, dict):
            return
        assert not isinstance(node.get("type"), list), f"{where}{path}: type array"
        if node.get("type") == "array":
            assert "items" in node, f"{where}{path}: array without items"
        if "properties" in node or "required" in node:
            assert node.get("type") == "object", f"{where}{path}: properties on a non-object"
        if "format" in node:
            assert node["format"] in GEMINI_FORMATS.get(node.get("type"), ()), \
                f"{where}{path}: format {node['format']!r} on {node.get('type')!r}, which Gemini refuses"
        ref = node.get("$ref")
        if ref is not None:
            assert ref == "#" or ref.removeprefix("#/$defs/") in defs, f"{where}{path}: dangling {ref}"
        for key, child in node.get("properties", {}).items():
            assert PROPERTY_KEY.match(key), f"{where}{path}: property key {key!r}"
            walk(child, f"{path}/properties/{key}")
        for keyword in ("items", "additionalProperties", "propertyNames"):
            if isinstance(node.get(keyword), dict):
                walk(node[keyword], f"{path}/{keyword}")
        for keyword in ("oneOf", "anyOf", "allOf"):
            for i, branch in enumerate(node.get(keyword, [])):
                walk(branch, f"{path}/{keyword}/{i}")
        for name, child in node.get("$defs", {}).items():
            walk(child, f"{path}/$defs/{name}")

    walk(schema, "")


def text_of(result: mcp.types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, mcp.types.TextContent))


def structured(result: mcp.types.CallToolResult, version: str) -> dict[str, Any]:
    """The result object; with the newest protocol it must come as `structuredContent`, and the
    text content must carry the same JSON."""
    assert not result.isError, f"unexpected error result: {text_of(result)}"
    from_text = json.loads(text_of(result))
    if result.structuredContent is None:
        assert version != NEWEST, "no structuredContent"
        return from_text
    assert from_text == result.structuredContent, "text and structuredContent differ"
    return result.structuredContent


def expect_error(result: mcp.types.CallToolResult, *needles: str) -> str:
    text = text_of(result)
    assert result.isError, f"expected an error result, got {text}"
    for needle in needles:
        assert needle in text, f"{needle!r} not in the error text:\n{text}"
    return text


class Scenario:
    """The checks that run once per transport and protocol version."""

    def __init__(self, session: ClientSession, version: str):
        self.session = session
        self.version = version
        self.output_schemas: dict[str, dict[str, Any]] = {}

    async def call(self, name: str, arguments: dict[str, Any], **kw: Any) -> mcp.types.CallToolResult:
        result = await self.session.call_tool(name, arguments, read_timeout_seconds=REQUEST_TIMEOUT, **kw)
        log(f"{name} {json.dumps(arguments)} -> isError={result.isError}")
        if not result.isError and result.structuredContent is not None:
            Draft202012Validator(self.output_schemas[name]).validate(result.structuredContent)
        return result

    async def list_tools(self) -> None:
        listed = await self.session.list_tools()
        names = [t.name for t in listed.tools]
        assert set(names) == TOOLS, names
        assert names == sorted(names), f"tools/list is not sorted: {names}"
        for tool in listed.tools:
            check_portable(tool.inputSchema, f"{tool.name} inputSchema")
            assert tool.outputSchema is not None, f"{tool.name} has no outputSchema"
            check_portable(tool.outputSchema, f"{tool.name} outputSchema")
            self.output_schemas[tool.name] = tool.outputSchema
            assert tool.description, f"{tool.name} has no description"
        by_name = {t.name: t for t in listed.tools}
        # Every tool names its RPC in _meta.
        for tool in listed.tools:
            rpc = (tool.meta or {}).get(RPC_META)
            assert rpc is not None, f"{tool.name} has no {RPC_META} in _meta: {tool.meta}"
            service, method = tool.name.split("_", 1)
            package = "demo.v1" if service == "TaskService" else "google.longrunning"
            assert rpc["path"] == f"/{package}.{service}/{method}", rpc
        assert by_name["TaskService_ExportTasks"].meta[RPC_META] == {
            "path": "/demo.v1.TaskService/ExportTasks",
            "inputType": "demo.v1.ExportTasksRequest",
            "outputType": "demo.v1.Task",
            "streaming": "server_streaming",
            "taskSupport": "optional",
        }, by_name["TaskService_ExportTasks"].meta
        hints = {
            name: (a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint)
            for name in EXPECTED_HINTS
            for a in [by_name[name].annotations]
        }
        assert hints == EXPECTED_HINTS, hints
        assert by_name["TaskService_AddComment"].annotations is None
        # OUTPUT_ONLY fields are not inputs; REQUIRED ones are required.
        create = by_name["TaskService_CreateTask"].inputSchema
        task = create["properties"]["task"]
        assert "id" not in task["properties"] and "create_time" not in task["properties"], task
        assert create["required"] == ["task"], create
        assert "id" in by_name["TaskService_GetTask"].outputSchema["properties"]
        owner = task["properties"]["owner"]
        assert [b["properties"]["case"]["const"] for b in owner["oneOf"]] == ["person", "team"]
        # The recursive comment thread is a $def referencing itself.
        comment = by_name["TaskService_GetTask"].outputSchema["$defs"]["demo.v1.Comment"]
        assert comment["properties"]["replies"]["items"] == {"$ref": "#/$defs/demo.v1.Comment"}

    async def get_task(self) -> None:
        found = await self.call("TaskService_GetTask", {"id": "task-1"})
        assert found.meta and found.meta[STATUS_META] == {"code": 0, "name": "OK"}, found.meta
        missing = await self.call("TaskService_GetTask", {"id": "task-404"})
        assert missing.meta and missing.meta[STATUS_META] == {"code": 5, "name": "NOT_FOUND"}, missing.meta
        invalid = await self.call("TaskService_GetTask", {"idd": "task-1"})
        assert invalid.meta and invalid.meta[STATUS_META] == {
            "code": 3,
            "name": "INVALID_ARGUMENT",
            "local": True,
        }, invalid.meta
        task = structured(found, self.version)
        assert task["id"] == "task-1"
        assert task["state"] == "STATE_IN_PROGRESS" and task["priority"] == "PRIORITY_HIGH"
        assert task["owner"] == {"case": "person", "value": {"name": "Ada", "email": "ada@example.com"}}
        assert task["labels"] == {"area": "docs"}
        assert task["estimate"] == "5400s" and task["story_points"] == 3
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", task["due_time"]), task["due_time"]
        thread = task["comments"][0]
        assert thread["author"] == "Grace" and thread["replies"][0]["author"] == "Ada"

        expect_error(await self.call("TaskService_GetTask", {}), "id")
        expect_error(await self.call("TaskService_GetTask", {"id": "task-1", "colour": "red"}), "colour")
        expect_error(
            await self.call("TaskService_GetTask", {"id": "task-999"}),
            "NOT_FOUND",
            "task-999",
            "TASK_NOT_FOUND",
        )

    async def create_update_delete(self) -> None:
        created = structured(
            await self.call(
                "TaskService_CreateTask",
                {
                    "task": {
                        "title": "Ship the Python client test",
                        "priority": "PRIORITY_HIGH",
                        "labels": {"area": "tests"},
                        "owner": {"case": "team", "value": "qa"},
                        "due_time": "2030-01-02T03:04:05Z",
                        "estimate": "3600s",
                        "story_points": 0,
                        "parent_id": "task-1",
                        "time_logged": {"Grace": "90s"},
                    }
                },
            ),
            self.version,
        )
        task_id = created["id"]
        assert task_id.startswith("task-"), created
        assert created["state"] == "STATE_TODO", created
        assert created["owner"] == {"case": "team", "value": "qa"}, created
        assert created["due_time"] == "2030-01-02T03:04:05Z", created
        assert created["story_points"] == 0, "a set wrapper keeps its zero value"
        assert created["time_logged"] == {"Grace": "90s"}, created
        assert created["parent_id"] == "task-1", created

        # Invalid arguments, caught by the schema before any RPC.
        expect_error(
            await self.call("TaskService_CreateTask", {"task": {"title": "x", "state": "STATE_BOGUS"}}),
            "state",
        )
        expect_error(
            await self.call(
                "TaskService_CreateTask",
                {"task": {"title": "x", "owner": {"case": "person", "value": {"email": "a@b.c"}}}},
            ),
            "name",
        )
        # Invalid arguments the service rejects: INVALID_ARGUMENT with BadRequest details.
        expect_error(
            await self.call("TaskService_CreateTask", {"task": {"title": "  ", "story_points": -1}}),
            "INVALID_ARGUMENT",
            "task.title",
            "task.story_points",
        )

        updated = structured(
            await self.call(
                "TaskService_UpdateTask",
                {
                    "id": task_id,
                    "task": {"state": "STATE_DONE", "title": "ignored, not in the mask"},
                    "update_mask": "state",
                },
            ),
            self.version,
        )
        assert updated["state"] == "STATE_DONE" and updated["title"] == "Ship the Python client test"
        expect_error(
            await self.call("TaskService_UpdateTask", {"id": task_id, "task": {}, "update_mask": "id"}),
            "INVALID_ARGUMENT",
            "update_mask",
        )
        expect_error(
            await self.call("TaskService_UpdateTask", {"id": "task-404", "task": {"title": "x"}}),
            "NOT_FOUND",
            "task-404",
        )
        expect_error(await self.call("TaskService_UpdateTask", {"id": task_id}), "task")

        assert structured(await self.call("TaskService_DeleteTask", {"id": task_id}), self.version) == {}
        expect_error(await self.call("TaskService_DeleteTask", {"id": task_id}), "NOT_FOUND", task_id)

    async def comments(self) -> None:
        reply = structured(
            await self.call(
                "TaskService_AddComment",
                {"task_id": "task-1", "reply_to": "c-2", "author": "Linus", "text": "Agreed."},
            ),
            self.version,
        )
        assert reply["id"].startswith("c-") and reply["text"] == "Agreed.", reply
        task = structured(await self.call("TaskService_GetTask", {"id": "task-1"}), self.version)
        replies = task["comments"][0]["replies"][0]["replies"]
        assert any(r["id"] == reply["id"] for r in replies), task["comments"]

        expect_error(await self.call("TaskService_AddComment", {"task_id": "task-1", "author": "Linus"}), "text")
        expect_error(
            await self.call(
                "TaskService_AddComment",
                {"task_id": "task-1", "reply_to": "c-999", "author": "Linus", "text": "?"},
            ),
            "NOT_FOUND",
            "COMMENT_NOT_FOUND",
            "c-999",
        )

    async def list_and_export(self) -> None:
        done = structured(await self.call("TaskService_ListTasks", {"state": "STATE_DONE"}), self.version)
        assert [t["id"] for t in done["tasks"]] == ["task-3"], done
        assert done["total_size"] == "1", "int64 is a string"
        page = structured(await self.call("TaskService_ListTasks", {"page_size": 1}), self.version)
        assert len(page["tasks"]) == 1 and page["next_page_token"], page
        expect_error(await self.call("TaskService_ListTasks", {"page_size": "many"}), "page_size")
        expect_error(
            await self.call("TaskService_ListTasks", {"page_token": "garbage"}),
            "INVALID_ARGUMENT",
            "page_token",
        )

        progress: list[float] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append(done)

        exported = structured(
            await self.call("TaskService_ExportTasks", {}, progress_callback=on_progress), self.version
        )
        ids = [t["id"] for t in exported["messages"]]
        assert ids[:3] == ["task-1", "task-2", "task-3"], ids
        assert "truncated" not in exported, exported
        # Progress notifications travel before the result; give the SDK a moment to run them.
        await settle(lambda: len(progress) >= len(ids))
        assert len(progress) == len(ids), f"{len(progress)} progress notifications for {len(ids)} messages"
        expect_error(await self.call("TaskService_ExportTasks", {"state": 7.5}), "state")

    async def unknown_tool(self) -> None:
        try:
            await self.session.call_tool("TaskService_Nope", {}, read_timeout_seconds=REQUEST_TIMEOUT)
        except McpError as error:
            assert error.error.code == -32602, error.error
        else:
            raise AssertionError("an unknown tool must be a JSON-RPC error")

    async def run(self, init: mcp.types.InitializeResult) -> None:
        assert init.protocolVersion == self.version, (init.protocolVersion, self.version)
        assert init.serverInfo.name == "demo", init.serverInfo
        assert init.capabilities.tools is not None, init.capabilities
        await self.session.send_ping()
        await self.list_tools()
        await self.get_task()
        await self.create_update_delete()
        await self.comments()
        await self.list_and_export()
        await self.unknown_tool()


async def long_running(session: ClientSession) -> None:
    """`TaskService_ArchiveTasks` waits for its operation: progress notifications carry the
    unpacked metadata, the result is the unpacked response, a failed operation is an error, and
    an operation past the tool's 5 s deadline is a pending result, valid under the output schema
    (this SDK validates `structuredContent` against it), redeemed later by name."""
    scenario = Scenario(session, NEWEST)
    await scenario.list_tools()
    messages: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    archived = structured(
        await scenario.call(
            "TaskService_ArchiveTasks",
            {"state": "STATE_DONE", "per_task": "0.4s"},
            progress_callback=on_progress,
        ),
        NEWEST,
    )
    assert [t["id"] for t in archived["tasks"]] == ["task-3"], archived
    await settle(lambda: messages)
    assert any(m.startswith("operation operations/") and '"total":1' in m for m in messages), messages

    failed = await scenario.call("TaskService_ArchiveTasks", {"state": "STATE_DONE"})
    expect_error(failed, "FAILED_PRECONDITION", "no task is in state STATE_DONE", "STATE_EMPTY")
    assert failed.meta[STATUS_META]["code"] == 9, failed.meta

    result = await scenario.call("TaskService_ArchiveTasks", {"state": "STATE_TODO", "per_task": "6s"})
    assert not result.isError, text_of(result)
    # Not an error: an explanation for the model, then the JSON of `structuredContent`.
    explanation, as_json = (c.text for c in result.content)
    pending = result.structuredContent
    assert json.loads(as_json) == pending, (as_json, pending)
    name = pending[PENDING]["name"]
    assert name.startswith("operations/"), pending
    assert f'call the tool `Operations_GetOperation` with {{"name":"{name}"}}' in explanation, explanation
    for _ in range(100):
        operation = structured(await scenario.call("Operations_GetOperation", {"name": name}), NEWEST)
        if operation.get("done"):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"{name} not done in 10 s")
    response = operation["result"]
    assert response["case"] == "response", operation
    assert [t["id"] for t in response["value"]["value"]["tasks"]] == ["task-2"], operation


async def long_running_stdio() -> None:
    async with session_over("stdio", NEWEST) as (session, _):
        await long_running(session)


async def long_running_http() -> None:
    async with http_demo("demo-http-long-running") as url:
        async with session_over("http", NEWEST, url) as (session, _):
            await long_running(session)


async def sdk_stdio(version: str, *flags: str) -> None:
    async with session_over("stdio", version, args=flags) as (session, init):
        await Scenario(session, version).run(init)


async def sdk_http(version: str, *flags: str) -> None:
    async with http_demo(f"demo-http-{version}{''.join(flags)}", *flags) as url:
        async with session_over("http", version, url) as (session, init):
            await Scenario(session, version).run(init)


async def list_every_page(session: ClientSession) -> None:
    """2,301 tools: the SDK follows `nextCursor` through every page, each tool once, in order,
    and a tool from the last page answers."""
    names: list[str] = []
    pages: list[int] = []
    cursor = None
    while True:
        page = await session.list_tools(params=mcp.types.PaginatedRequestParams(cursor=cursor))
        pages.append(len(page.tools))
        names.extend(t.name for t in page.tools)
        cursor = page.nextCursor
        if cursor is None:
            break
    expected = len(TASK_TOOLS) * (COPIES + 1) + len(OPERATION_TOOLS)
    assert len(names) == expected, (len(names), expected)
    assert len(set(names)) == expected, "a tool was listed twice"
    assert names == sorted(names), "tools/list pages are not in order"
    # Bounded by bytes before count: several pages, none of the full count.
    assert len(pages) > 5 and max(pages) < PAGE_SIZE, pages
    assert set(names) >= TOOLS
    last = f"copy{COPIES:03}_TaskService_GetTask"
    assert last in names
    result = await session.call_tool(last, {"id": "task-1"}, read_timeout_seconds=REQUEST_TIMEOUT)
    assert not result.isError, result


async def paged_stdio(version: str) -> None:
    async with session_over("stdio", version, args=("--copies", str(COPIES))) as (session, _):
        await list_every_page(session)


async def paged_http(version: str) -> None:
    async with http_demo(f"demo-http-paged-{version}", "--copies", str(COPIES)) as url:
        async with session_over("http", version, url) as (session, _):
            await list_every_page(session)


class User:
    """Answers the server's confirmation requests (elicitation) with the queued answers."""

    def __init__(self, *answers: str):
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: mcp.types.ElicitRequestParams) -> mcp.types.ElicitResult:
        self.asked.append(params.message)
        return mcp.types.ElicitResult(action=self.answers.pop(0))


async def confirm_delete(session: ClientSession, user: User) -> None:
    """DeleteTask asks the user first: declined, the task stays; accepted, it is gone."""
    declined = await session.call_tool("TaskService_DeleteTask", {"id": "task-2"}, read_timeout_seconds=REQUEST_TIMEOUT)
    assert declined.isError, declined
    assert "The user declined" in text_of(declined), text_of(declined)
    assert declined.meta and declined.meta[STATUS_META]["name"] == "PERMISSION_DENIED", declined.meta
    assert len(user.asked) == 1 and "TaskService_DeleteTask" in user.asked[0], user.asked
    still_there = await session.call_tool("TaskService_GetTask", {"id": "task-2"}, read_timeout_seconds=REQUEST_TIMEOUT)
    assert not still_there.isError, "a declined deletion reached the backend"

    accepted = await session.call_tool("TaskService_DeleteTask", {"id": "task-2"}, read_timeout_seconds=REQUEST_TIMEOUT)
    assert not accepted.isError, accepted
    assert len(user.asked) == 2, user.asked
    gone = await session.call_tool("TaskService_GetTask", {"id": "task-2"}, read_timeout_seconds=REQUEST_TIMEOUT)
    assert gone.isError and "NOT_FOUND" in text_of(gone), gone


async def confirm_stdio(version: str) -> None:
    user = User("decline", "accept")
    async with session_over("stdio", version, elicitation_callback=user) as (session, _):
        await confirm_delete(session, user)


async def confirm_http(version: str) -> None:
    user = User("decline", "accept")
    async with http_demo(f"demo-http-confirm-{version}") as url:
        async with session_over("http", version, url, elicitation_callback=user) as (session, _):
            await confirm_delete(session, user)


# --- raw JSON-RPC over stdio ------------------------------------------------------------


async def raw_stdio(version: str) -> None:
    """An older client's handshake byte for byte, without the SDK: stdout must carry only
    JSON-RPC, and the server answers with the version the client asked for."""
    process = await asyncio.create_subprocess_exec(
        str(DEMO),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin and process.stdout and process.stderr

    async def send(message: dict[str, Any]) -> None:
        process.stdin.write((json.dumps(message) + "\n").encode())
        await process.stdin.drain()

    async def receive(request_id: int) -> dict[str, Any]:
        while True:
            line = await asyncio.wait_for(process.stdout.readline(), REQUEST_TIMEOUT.total_seconds())
            assert line, "the demo closed stdout"
            message = json.loads(line)  # anything but JSON-RPC on stdout fails here
            assert message.get("jsonrpc") == "2.0", message
            if message.get("id") == request_id:
                return message

    async def call_tool(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        await send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        return (await receive(request_id))["result"]

    try:
        await send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        init = (await receive(1))["result"]
        assert init["protocolVersion"] == version, init
        assert init["serverInfo"]["name"] == "demo", init
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = (await receive(2))["result"]["tools"]
        assert {t["name"] for t in tools} == TOOLS
        for tool in tools:
            check_portable(tool["inputSchema"], tool["name"])
        result = await call_tool(3, "TaskService_GetTask", {"id": "task-2"})
        assert not result.get("isError"), result
        task = json.loads(result["content"][0]["text"])
        assert task["owner"] == {"case": "team", "value": "platform"}, task
        assert task["story_points"] == 0, task
        result = await call_tool(4, "TaskService_DeleteTask", {"id": "task-77"})
        assert result["isError"] is True and "NOT_FOUND" in result["content"][0]["text"], result
        await send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "Nope"}})
        assert (await receive(5))["error"]["code"] == -32602
        # End of input ends the server, cleanly.
        process.stdin.close()
        code = await asyncio.wait_for(process.wait(), 10)
        assert code == 0, f"demo exited with {code}"
        stderr = (await process.stderr.read()).decode(errors="replace")
        assert "serving MCP over stdio" in stderr, stderr
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


# --- runner -----------------------------------------------------------------------------


def scenarios() -> list[tuple[str, Callable[[], Awaitable[None]]]]:
    return [
        (f"sdk stdio {NEWEST}", lambda: sdk_stdio(NEWEST)),
        (f"sdk stdio {OLDER}", lambda: sdk_stdio(OLDER)),
        (f"sdk stdio --in-process {NEWEST}", lambda: sdk_stdio(NEWEST, "--in-process")),
        (f"sdk http {NEWEST}", lambda: sdk_http(NEWEST)),
        (f"sdk http {OLDER}", lambda: sdk_http(OLDER)),
        (f"sdk http --stateless {NEWEST}", lambda: sdk_http(NEWEST, "--stateless")),
        (f"long-running stdio {NEWEST}", long_running_stdio),
        (f"long-running http {NEWEST}", long_running_http),
        (f"confirm stdio {NEWEST}", lambda: confirm_stdio(NEWEST)),
        (f"confirm http {NEWEST}", lambda: confirm_http(NEWEST)),
        (f"paged stdio --copies {COPIES} {NEWEST}", lambda: paged_stdio(NEWEST)),
        (f"paged http --copies {COPIES} {NEWEST}", lambda: paged_http(NEWEST)),
        ("raw stdio 2025-03-26", lambda: raw_stdio("2025-03-26")),
        ("raw stdio 2024-11-05", lambda: raw_stdio("2024-11-05")),
    ]


if __name__ == "__main__":
    main(scenarios(), parallel=4)
