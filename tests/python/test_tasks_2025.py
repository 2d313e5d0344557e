"""Tasks in the shape of MCP revision 2025-11-25 (SEP-1686), with the official Python SDK 1.x's
own task client (`session.experimental`), against the `demo` binary over stdio and streamable
HTTP. The SDK 2.x and rmcp's client cover the final tasks extension.

Run it with scripts/python-e2e.sh, or by hand:

    .tools/venv/bin/python tests/python/test_tasks_2025.py [-k SUBSTRING]
"""

from __future__ import annotations

import warnings
from typing import Awaitable, Callable

import mcp.types
from mcp import ClientSession, McpError

from demo_support import http_demo, main
from test_demo import session_over, structured

REVISION = "2025-11-25"
STREAM = "TaskService_ExportTasks"
SLOW = "TaskService_ArchiveTasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"

# The SDK warns that its SEP-1686 task API will go with 2.0; this test is about that shape.
warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated")


async def tasks_2025(session: ClientSession, init: mcp.types.InitializeResult) -> None:
    """Declared, listed, started, polled, fetched (equal to the direct call), listed, and
    cancelled, each through the SDK's typed models of revision 2025-11-25."""
    assert init.protocolVersion == REVISION, init.protocolVersion
    tasks = init.capabilities.tasks
    assert tasks is not None and tasks.list is not None and tasks.cancel is not None, tasks
    assert tasks.requests is not None and tasks.requests.tools is not None, tasks
    assert tasks.requests.tools.call is not None, tasks

    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert tools[STREAM].execution is not None, tools[STREAM]
    assert tools[STREAM].execution.taskSupport == "optional", tools[STREAM].execution
    assert tools["TaskService_GetTask"].execution is None, tools["TaskService_GetTask"]

    created = await session.experimental.call_tool_as_task(STREAM, {}, ttl=60_000)
    task_id = created.task.taskId
    assert created.task.status == "working" and created.task.ttl == 60_000, created
    statuses = [status.status async for status in session.experimental.poll_task(task_id)]
    assert statuses[-1] == "completed", statuses
    fetched = await session.experimental.get_task_result(task_id, mcp.types.CallToolResult)
    assert fetched.meta and fetched.meta[RELATED_TASK] == {"taskId": task_id}, fetched.meta
    direct = await session.call_tool(STREAM, {})
    assert not fetched.isError and not direct.isError, (fetched, direct)
    exported = structured(fetched, REVISION)
    assert exported == structured(direct, REVISION) and exported["messages"], exported

    listed = await session.experimental.list_tasks()
    assert task_id in [task.taskId for task in listed.tasks], listed

    # An archive at 6 s per task runs long; cancelled, it ends cancelled and has no result.
    slow = await session.experimental.call_tool_as_task(
        SLOW, {"state": "STATE_IN_PROGRESS", "per_task": "6s"}
    )
    cancelled = await session.experimental.cancel_task(slow.task.taskId)
    assert cancelled.taskId == slow.task.taskId and cancelled.status == "cancelled", cancelled
    try:
        await session.experimental.get_task_result(slow.task.taskId, mcp.types.CallToolResult)
    except McpError as error:
        assert "cancelled" in error.error.message, error.error
    else:
        raise AssertionError("a cancelled task answered tasks/result")

    # A tool that does not run as a task is refused, with what to do instead.
    try:
        await session.experimental.call_tool_as_task("TaskService_GetTask", {"id": "task-1"})
    except McpError as error:
        assert error.error.code == -32601, error.error
        assert "call it without `task`" in error.error.message, error.error
    else:
        raise AssertionError("a tool that does not run as a task made one")


async def over_stdio() -> None:
    async with session_over("stdio", REVISION) as (session, init):
        await tasks_2025(session, init)


async def over_http() -> None:
    async with http_demo(f"demo-http-tasks-{REVISION}") as url:
        async with session_over("http", REVISION, url) as (session, init):
            await tasks_2025(session, init)


def scenarios() -> list[tuple[str, Callable[[], Awaitable[None]]]]:
    return [
        (f"tasks {REVISION} stdio", over_stdio),
        (f"tasks {REVISION} http", over_http),
    ]


if __name__ == "__main__":
    main(scenarios())
