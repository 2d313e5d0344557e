"""The official MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`, pinned in
scripts/install-tools.sh) lists every tool of a 2,301-tool server, over stdio and streamable HTTP.

Run it with scripts/inspector-e2e.sh, which installs the Inspector into .tools/inspector and
builds the demo. By hand:

    python3 tests/python/test_inspector.py [-v]

Needs only the Python standard library and Node. DEMO_BIN overrides the server binary (default:
target/debug/demo, or $CARGO_TARGET_DIR/debug/demo), INSPECTOR_BIN the Inspector's launcher.
(The Inspector 2.12.0 declares Node >= 22.19 in its package.json; its CLI mode, all this uses,
also runs on Node 20: this test passed on Node 20.20.)

The server is the demo with `--copies 286`: its 13 tools and 286 renamed copies of its 8
TaskService tools, 2,301 tools, served in pages of at most 500 tools and 512 KiB of tool JSON
(the runtime's defaults; the bytes bound first: about 120 of the demo's tools a page).
`mcp-inspector --cli --method tools/list` prints one list; this checks that it is every tool,
each once, in the server's order. Over stdio the Inspector talks to the demo through a
transparent relay (this script with `--relay`, which copies every line both ways and records
it), so the test also checks what went over the wire: the Inspector sent one `tools/list` per
page, the first without a cursor and each next one with the `nextCursor` of the page before,
and stopped at the page without one. A tool of the last page is then called through the
Inspector too.

The Inspector's CLI declares the MCP tasks extension (`io.modelcontextprotocol/tasks`, in
`initialize` and in each request's `_meta`) but never polls a task: a server that answered its
`tools/call` with `"resultType": "task"` would fail it ("declares an output schema but returned no
structured content"). The demo answers calls that end within its inline wait (`TaskMode::auto`,
2 s) with their result, so the Inspector calls the demo's server-streaming
`TaskService_ExportTasks` and its long-running `TaskService_ArchiveTasks` (the one task in
STATE_DONE, archived in half a second, the demo's default) as the getting-started guide's command line does, and
gets their results; over stdio the relay's record shows that the Inspector declared the extension
and that no answer was a task. The last line reads `N passed, N failed`.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from demo_support import (
    COPIES,
    DEMO,
    OPERATION_TOOLS,
    PAGE_SIZE,
    ROOT,
    STARTUP_TIMEOUT,
    TARGET,
    TASK_TOOLS,
    log,
)

INSPECTOR = Path(
    os.environ.get("INSPECTOR_BIN") or ROOT / ".tools" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
)

PAGE_BYTES = 512 * 1024  # the runtime's DEFAULT_PAGE_BYTES, for the tools of one page
ENVELOPE = 1024  # room for the JSON-RPC envelope and the cursor around a page's tools
EXPECTED = (
    TASK_TOOLS
    | OPERATION_TOOLS
    | {f"copy{i:03}_{name}" for i in range(1, COPIES + 1) for name in TASK_TOOLS}
)
LAST_PAGE_TOOL = f"copy{COPIES:03}_TaskService_GetTask"
RUN_TIMEOUT = 120
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


# --- the relay (runs as the stdio server the Inspector starts) ------------------------------


def relay(record: str, command: list[str]) -> int:
    """Starts `command`, copies stdin to it and its stdout back, line by line, and appends every
    line to `record` as `>` (client to server) or `<` (server to client) plus the line."""
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lock = threading.Lock()
    with open(record, "a", encoding="utf-8") as out:

        def note(direction: str, line: bytes) -> None:
            with lock:
                out.write(direction + line.decode("utf-8", "replace").rstrip("\n") + "\n")
                out.flush()

        def upstream() -> None:
            for line in sys.stdin.buffer:
                note(">", line)
                server.stdin.write(line)
                server.stdin.flush()
            server.stdin.close()

        threading.Thread(target=upstream, daemon=True).start()
        for line in server.stdout:
            note("<", line)
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
    return server.wait()


# --- the Inspector ----------------------------------------------------------------------------


def inspector(*args: str) -> dict:
    """Runs the Inspector's CLI with `--format json` and returns the JSON it printed."""
    command = [str(INSPECTOR), "--cli", "--format", "json", *args]
    log("$ " + " ".join(command))
    # The Inspector keeps state under ~/.mcp-inspector: give it a home of its own.
    home = TARGET / "python-e2e" / "inspector-home"
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=str(home))
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=ROOT, env=env)
    if done.returncode != 0:
        raise AssertionError(f"the Inspector exited with {done.returncode}:\n{done.stdout}\n{done.stderr[-4000:]}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"the Inspector printed no JSON ({e}):\n{done.stdout[:2000]}") from e


def check_listing(output: dict) -> None:
    tools = output["result"]["tools"]
    names = [t["name"] for t in tools]
    log(f"{len(names)} tools listed")
    assert len(names) == len(EXPECTED), (len(names), len(EXPECTED))
    assert len(set(names)) == len(names), "a tool was listed twice"
    assert set(names) == EXPECTED, sorted(set(names) ^ EXPECTED)[:10]
    assert names == sorted(names), "the pages were not joined in the server's order"
    assert all(t.get("inputSchema", {}).get("type") == "object" for t in tools)


def check_call(era: str, target: list[str]) -> None:
    """A tool of the last page, called through the Inspector (which looks it up in its list)."""
    output = inspector("--protocol-era", era, "--method", "tools/call", "--tool-name", LAST_PAGE_TOOL,
                       "--tool-args-json", '{"id": "task-1"}', *target)
    result = output["result"]
    assert not result.get("isError"), result
    assert result["structuredContent"]["id"] == "task-1", result


def check_long_running(era: str, target: list[str]) -> None:
    """The demo's server-streaming ExportTasks and long-running ArchiveTasks, called through the
    Inspector (which declares tasks but cannot poll one): each answered with its result."""
    output = inspector("--protocol-era", era, "--method", "tools/call", "--tool-name",
                       "TaskService_ExportTasks", *target)
    result = output["result"]
    assert not result.get("isError"), result
    exported = [task["id"] for task in result["structuredContent"]["messages"]]
    assert exported == ["task-1", "task-2", "task-3"], exported
    start = time.monotonic()
    output = inspector("--protocol-era", era, "--method", "tools/call", "--tool-name",
                       "TaskService_ArchiveTasks", "--tool-args-json", '{"state": "STATE_DONE"}', *target)
    log(f"ArchiveTasks through the Inspector: {time.monotonic() - start:.2f} s")
    result = output["result"]
    assert not result.get("isError"), result
    archived = [task["id"] for task in result["structuredContent"]["tasks"]]
    assert archived == ["task-3"], result


def check_no_task(record: str) -> None:
    """What the relay recorded of check_long_running's calls: the Inspector declared the tasks
    extension, and the demo answered each `tools/call` with its result, never a task."""
    declared, calls, answers = [], set(), []
    with open(record, encoding="utf-8") as f:
        for line in f:
            message = json.loads(line[1:])
            params = message.get("params") or {}
            if line[0] == ">" and message.get("method") == "initialize":
                declared.append(TASKS_EXTENSION in params["capabilities"].get("extensions", {}))
            elif line[0] == ">" and message.get("method") == "tools/call":
                calls.add(message["id"])
                capabilities = (params.get("_meta") or {}).get(CLIENT_CAPABILITIES)
                if capabilities is not None:
                    declared.append(TASKS_EXTENSION in capabilities.get("extensions", {}))
            elif line[0] == "<" and message.get("id") in calls:
                answers.append(message)
    assert declared and all(declared), f"the Inspector did not declare {TASKS_EXTENSION}: {declared}"
    assert len(answers) == 2, answers
    for answer in answers:
        result = answer.get("result")
        assert result is not None, answer
        assert result.get("resultType", "complete") == "complete", answer
        assert "structuredContent" in result, answer


def check_wire(record: str) -> None:
    """The `tools/list` requests the Inspector sent, and the pages the demo answered with."""
    requests, responses, sizes = {}, {}, {}
    with open(record, encoding="utf-8") as f:
        for line in f:
            message = json.loads(line[1:])
            if line[0] == ">" and message.get("method") == "tools/list":
                requests[message["id"]] = (message.get("params") or {}).get("cursor")
            elif line[0] == "<" and "id" in message and "result" in message:
                responses[message["id"]] = message["result"]
                sizes[message["id"]] = len(line[1:].rstrip("\n").encode())
    pages = [(requests[i], responses[i]) for i in requests]
    page_sizes = [sizes[i] for i in requests]
    log("tools/list pages: " + ", ".join(
        f"{len(r['tools'])} tools, {size} bytes (cursor {c!r})" for (c, r), size in zip(pages, page_sizes)
    ))
    counts = [len(r["tools"]) for _, r in pages]
    assert sum(counts) == len(EXPECTED), counts
    # The bytes bound before the count: several pages, none of the full count, each one on the
    # wire within the bound.
    assert len(pages) > 5 and max(counts) < PAGE_SIZE, counts
    assert max(page_sizes) <= PAGE_BYTES + ENVELOPE, page_sizes
    assert pages[0][0] is None, f"the first request carried a cursor: {pages[0][0]!r}"
    for (_, before), (cursor, _) in zip(pages, pages[1:]):
        assert before.get("nextCursor"), "a page before the last had no nextCursor"
        assert cursor == before["nextCursor"], (cursor, before["nextCursor"])
    assert "nextCursor" not in pages[-1][1], pages[-1][1].get("nextCursor")


def stdio_target(record: str, copies: bool = True) -> list[str]:
    """The demo (with `--copies` when `copies`) behind the relay, recording to `record`."""
    return ["--", sys.executable, str(Path(__file__).resolve()), "--relay", record, "--",
            str(DEMO), *(["--copies", str(COPIES)] if copies else [])]


# --- scenarios --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_demo():
    port = free_port()
    log_dir = TARGET / "python-e2e"
    log_dir.mkdir(parents=True, exist_ok=True)
    with open(log_dir / f"inspector-demo-http-{port}.log", "wb") as log_file:
        process = subprocess.Popen(
            [str(DEMO), "--http", f"127.0.0.1:{port}", "--copies", str(COPIES)],
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            assert process.poll() is None, f"the demo exited with {process.returncode}"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert time.monotonic() < deadline, "the demo did not listen in time"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(timeout=10)


def stdio(era: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "wire.jsonl")
        check_listing(inspector("--protocol-era", era, "--method", "tools/list", *stdio_target(record)))
        check_wire(record)
        os.remove(record)
        check_call(era, stdio_target(record))


def http(era: str) -> None:
    with http_demo() as url:
        check_listing(inspector("--protocol-era", era, "--method", "tools/list", url))
        check_call(era, [url])


def long_running_stdio(era: str) -> None:
    """As the getting-started guide's command line: the demo alone (no copies), over stdio."""
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "wire.jsonl")
        check_long_running(era, stdio_target(record, copies=False))
        check_no_task(record)


def long_running_http(era: str) -> None:
    with http_demo() as url:
        check_long_running(era, [url])


SCENARIOS = [
    ("stdio, protocol era legacy", lambda: stdio("legacy")),
    ("stdio, protocol era auto", lambda: stdio("auto")),
    ("streamable HTTP, protocol era legacy", lambda: http("legacy")),
    ("streamable HTTP, protocol era auto", lambda: http("auto")),
    ("streaming and long-running tools, stdio, protocol era legacy", lambda: long_running_stdio("legacy")),
    ("streaming and long-running tools, stdio, protocol era auto", lambda: long_running_stdio("auto")),
    ("streaming and long-running tools, streamable HTTP, protocol era legacy",
     lambda: long_running_http("legacy")),
    ("streaming and long-running tools, streamable HTTP, protocol era auto", lambda: long_running_http("auto")),
]


def main() -> int:
    if len(sys.argv) > 3 and sys.argv[1] == "--relay" and sys.argv[3] == "--":
        return relay(sys.argv[2], sys.argv[4:])
    for path, what in ((DEMO, "the demo (cargo build -p demo)"),
                       (INSPECTOR, "the Inspector (scripts/install-tools.sh inspector)")):
        if not path.exists():
            print(f"missing {what}: {path}", file=sys.stderr)
            return 2
    passed = failed = 0
    for name, scenario in SCENARIOS:
        start = time.monotonic()
        try:
            scenario()
        except Exception:  # noqa: BLE001 (report every failure, then go on)
            failed += 1
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()
        else:
            passed += 1
            print(f"ok   {name} ({time.monotonic() - start:.1f} s)", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
