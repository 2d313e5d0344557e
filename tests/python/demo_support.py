"""What the Python SDK tests of the demo share (test_demo.py for the 1.x SDK, test_demo_mcp2.py
for the 2.x SDK): the demo's paths and tools, demo processes over HTTP, the check that closing
an HTTP session succeeds, and the scenario runner. Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import re
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
DEMO = Path(os.environ.get("DEMO_BIN") or TARGET / "debug" / "demo")
LOG_DIR = TARGET / "python-e2e"

SCENARIO_TIMEOUT = 90.0
STARTUP_TIMEOUT = 30.0

TASK_TOOLS = {
    "TaskService_AddComment",
    "TaskService_ArchiveTasks",
    "TaskService_CreateTask",
    "TaskService_DeleteTask",
    "TaskService_ExportTasks",
    "TaskService_GetTask",
    "TaskService_ListTasks",
    "TaskService_UpdateTask",
}
# google.longrunning.Operations, served once (`--copies` copies the TaskService tools only).
OPERATION_TOOLS = {
    "Operations_CancelOperation",
    "Operations_DeleteOperation",
    "Operations_GetOperation",
    "Operations_ListOperations",
    "Operations_WaitOperation",
}
TOOLS = TASK_TOOLS | OPERATION_TOOLS
# Annotations of demo tools as (readOnlyHint, destructiveHint, idempotentHint, openWorldHint):
# known hints arrive explicitly, false included; unknown ones stay unset (None), so that the
# spec's defaults apply. TaskService_AddComment has no annotations at all.
EXPECTED_HINTS = {
    "TaskService_GetTask": (True, False, True, None),
    "TaskService_UpdateTask": (False, None, True, None),
    "TaskService_DeleteTask": (False, True, True, None),
}
RPC_META = "protoc-gen-rust-mcp/rpc"
STATUS_META = "protoc-gen-rust-mcp/status"
PENDING = "google.longrunning.Operation"
# `--copies` copies the 8 TaskService tools: with the 13 tools themselves, 2,301 tools, in pages
# of at most 500 tools and 512 KiB of tool JSON (about 120 of the demo's tools).
COPIES = 286
PAGE_SIZE = 500

URL_LINE = re.compile(r"serving MCP over streamable HTTP at (http://127\.0\.0\.1:\d+/mcp)")

VERBOSE = "-v" in sys.argv


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def settle(ready: Callable[[], object], seconds: float = 1.0) -> None:
    """Waits up to `seconds` for `ready()` to be true: notifications that travel before a result
    may still be running in the SDK when the result is returned. The caller asserts after."""
    for _ in range(int(seconds / 0.02)):
        if ready():
            return
        await asyncio.sleep(0.02)


def log(message: str) -> None:
    if VERBOSE:
        print(f"    {message}", flush=True)


class _SessionTermination(logging.Handler):
    """Records the SDK's "Session termination failed" warnings, each under the scenario that
    logged it (scenarios may run side by side). The server must answer the session DELETE a
    client sends on closing with a status the SDK counts as success (200 or 204); the runtime
    answers 204."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._failures: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Session termination failed"):
            self._failures.append((_SCENARIO.get(), record.getMessage()))

    @property
    def failures(self) -> list[str]:
        """The warnings logged by the scenario that asks, in order."""
        scenario = _SCENARIO.get()
        return [message for name, message in self._failures if name == scenario]


# The scenario the running task belongs to: the runner sets it in each scenario's task, whose
# context the SDK's own tasks inherit.
_SCENARIO: contextvars.ContextVar[str] = contextvars.ContextVar("scenario", default="")

TERMINATIONS = _SessionTermination()
# Both SDK lines log from this module.
logging.getLogger("mcp.client.streamable_http").addHandler(TERMINATIONS)


# --- processes --------------------------------------------------------------------------

_processes: list[subprocess.Popen[bytes]] = []


def track(process: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """`process`, killed at the end of the run if it still runs."""
    _processes.append(process)
    return process


def kill_all() -> None:
    for process in _processes:
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(Exception):
            process.wait(timeout=5)


def log_path(label: str) -> Path:
    """target/python-e2e/<label>.log, replaced by the next run."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    return LOG_DIR / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', label)}.log"


@contextlib.asynccontextmanager
async def http_demo(label: str, *flags: str) -> AsyncIterator[str]:
    """Starts `demo --http 127.0.0.1:0 FLAGS...`, logging to `log_path(label)`, and yields the
    MCP URL it logs."""
    path = log_path(label)
    with open(path, "wb") as log_file:
        process = subprocess.Popen(
            [str(DEMO), "--http", "127.0.0.1:0", *flags],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "info"), "NO_COLOR": "1"},
        )
    track(process)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            found = URL_LINE.search(path.read_text(errors="replace"))
            if found:
                break
            if process.poll() is not None:
                raise AssertionError(f"demo exited with {process.returncode} before listening; see {path}")
            if time.monotonic() > deadline:
                raise AssertionError(f"demo logged no URL in {STARTUP_TIMEOUT}s; see {path}")
            await asyncio.sleep(0.05)
        log(f"demo {' '.join(flags)} at {found.group(1)}, log {path}")
        yield found.group(1)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


# --- runner -----------------------------------------------------------------------------


async def _run(scenarios: list[tuple[str, Callable[[], Awaitable[None]]]],
               needs: list[Path], parallel: int) -> int:
    for binary in needs:
        if not binary.is_file():
            print(f"{binary} does not exist: build it with cargo", file=sys.stderr)
            return 2
    selected = None
    if "-k" in sys.argv:
        selected = sys.argv[sys.argv.index("-k") + 1]
    chosen = [(name, scenario) for name, scenario in scenarios if not selected or selected in name]
    slots = asyncio.Semaphore(parallel)

    async def one(name: str, scenario: Callable[[], Awaitable[None]]) -> bool:
        async with slots:
            _SCENARIO.set(name)
            started = time.monotonic()
            try:
                await asyncio.wait_for(scenario(), SCENARIO_TIMEOUT)
            except Exception as error:  # noqa: BLE001 - every failure is reported the same way
                print(f"FAIL {name} ({time.monotonic() - started:.1f}s)", flush=True)
                if isinstance(error, asyncio.TimeoutError):
                    print(f"    timed out after {SCENARIO_TIMEOUT}s", flush=True)
                traceback.print_exception(error)
                return False
            print(f"ok   {name} ({time.monotonic() - started:.1f}s)", flush=True)
            return True

    # Each scenario in a task of its own (a context of its own for `_SCENARIO`).
    results = await asyncio.gather(*(one(name, scenario) for name, scenario in chosen))
    passed = sum(results)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed")
    if selected and not passed and not failed:
        # scripts/python-e2e.sh hands the same -k to both scripts: a filter meant for the other
        # one selects nothing here, which is not a failure. Without -k, an empty run is one.
        return 0
    return 1 if failed or not passed else 0


def main(scenarios: list[tuple[str, Callable[[], Awaitable[None]]]],
         needs: list[Path] | None = None, parallel: int = 1) -> None:
    """Runs the scenarios (those whose name contains `-k SUBSTRING`, when given), each within
    SCENARIO_TIMEOUT, prints `N passed, N failed` last, kills every process started, and exits
    non-zero on a failure or an empty run. `needs`: the binaries the scenarios run (the demo).
    `parallel`: how many run at once, for scenarios that share nothing (each starts its own
    servers); their lines then come in the order they end."""
    code = 1
    try:
        code = asyncio.run(_run(scenarios, [DEMO] if needs is None else needs, parallel))
    finally:
        kill_all()
    sys.exit(code)
