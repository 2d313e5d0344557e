"""A task through the load balancer of scripts/scale-out.sh's tasks phase, with the official
Python SDK 1.x's own task client (`session.experimental`, revision 2025-11-25): three stateless
gateway replicas on one Redis task store behind nginx round robin, so that the task's start,
its polls and its result land on different replicas.

Run by scripts/scale-out.sh, which starts them and passes the URL:

    .tools/venv/bin/python tests/python/test_scale_out_tasks.py http://127.0.0.1:18080/mcp
"""

from __future__ import annotations

import sys
import warnings
from typing import Awaitable, Callable

import mcp.types

from demo_support import main
from test_demo import session_over, structured

REVISION = "2025-11-25"
STREAM = "InventoryService_ListItems"
RELATED_TASK = "io.modelcontextprotocol/related-task"
URL = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].startswith("http") else ""

warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated")


async def a_task_through_the_load_balancer() -> None:
    """Started, polled to the end and fetched through nginx: equal to the direct call."""
    assert URL, "pass the load balancer's URL"
    async with session_over("http", REVISION, URL) as (session, init):
        assert init.protocolVersion == REVISION, init.protocolVersion
        arguments = {"namePrefix": "slow"}
        for _ in range(5):
            created = await session.experimental.call_tool_as_task(STREAM, arguments, ttl=60_000)
            task_id = created.task.taskId
            assert created.task.status == "working", created
            statuses = [s.status async for s in session.experimental.poll_task(task_id)]
            assert statuses[-1] == "completed", statuses
            assert len(statuses) > 1, f"the task ended before its first poll: {statuses}"
            fetched = await session.experimental.get_task_result(task_id, mcp.types.CallToolResult)
            assert fetched.meta and fetched.meta[RELATED_TASK] == {"taskId": task_id}, fetched.meta
            direct = await session.call_tool(STREAM, arguments)
            assert structured(fetched, REVISION) == structured(direct, REVISION), (fetched, direct)


def scenarios() -> list[tuple[str, Callable[[], Awaitable[None]]]]:
    return [("a 2025-11-25 task through nginx and three replicas", a_task_through_the_load_balancer)]


if __name__ == "__main__":
    main(scenarios(), needs=[])
