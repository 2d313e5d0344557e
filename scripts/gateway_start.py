#!/usr/bin/env python3
"""How long a gateway takes to answer `initialize`, and its memory then.

Starts the gateway with the given arguments (stdio transport), writes `initialize` at once,
and reports the seconds until the answer, then the first `tools/list` page, and VmRSS/VmHWM.
With IDLE=SECONDS in the environment it then waits that long and reports the CPU time the
gateway used meanwhile (its reloads, with `--reload-interval`).

    python3 scripts/gateway_start.py target/release/grpc-mcp-gateway \\
        --descriptor-set .tools/tool-search/googleapis.binpb \\
        --target http://127.0.0.1:1 --tool-names package
"""

import json
import os
import subprocess
import sys
import time


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    started = time.monotonic()
    gateway = subprocess.Popen(
        sys.argv[1:],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def send(message: dict) -> None:
        gateway.stdin.write((json.dumps(message) + "\n").encode())
        gateway.stdin.flush()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "gateway-start", "version": "0"}}})
    if not gateway.stdout.readline():
        sys.exit("the gateway ended before answering initialize")
    print(f"initialize answered after {time.monotonic() - started:.2f} s")
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    page = gateway.stdout.readline()
    print(f"first tools/list page after {time.monotonic() - started:.2f} s ({len(page)} bytes)")
    with open(f"/proc/{gateway.pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS", "VmHWM")):
                print(line.strip())
    idle = float(os.environ.get("IDLE", "0"))
    if idle > 0:
        before = cpu_seconds(gateway.pid)
        time.sleep(idle)
        print(f"CPU used in the next {idle:.0f} s: {cpu_seconds(gateway.pid) - before:.2f} s")
    gateway.kill()


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process `pid`, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
