#!/usr/bin/env python3
"""How long a gateway takes to list every tool, as hosts do when they connect.

Starts the gateway with the given arguments (stdio transport), answers `initialize`, then
follows `tools/list` cursors to the last page, twice. Reports the seconds to `initialize`,
each whole listing's pages, tools, bytes, seconds and the gateway's CPU seconds, and VmRSS;
then the peak (VmHWM) of the whole run. With IDLE_SECONDS=N it then waits N seconds more
without asking anything, and reports the gateway's CPU seconds and the range of its VmRSS
over them (what reloads cost with `--reload-interval`).

    python3 scripts/gateway_listing.py target/release/grpc-mcp-gateway \\
        --descriptor-set .tools/tool-search/googleapis.binpb \\
        --target http://127.0.0.1:1 --tool-names package
"""

import json
import os
import subprocess
import sys
import time


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process `pid`, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int, field: str = "VmRSS") -> int:
    """`field` of /proc/PID/status (VmRSS now, VmHWM the peak so far), in MiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return 0


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    started = time.monotonic()
    gateway = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)

    def ask(message: dict) -> dict:
        gateway.stdin.write((json.dumps(message) + "\n").encode())
        gateway.stdin.flush()
        line = gateway.stdout.readline()
        if not line:
            sys.exit("the gateway ended")
        return json.loads(line)

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "gateway-listing", "version": "0"}}})
    print(f"initialize answered after {time.monotonic() - started:.2f} s, "
          f"VmRSS {rss_mib(gateway.pid)} MiB")
    gateway.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    ids = 1
    for listing in ("first", "again"):
        begun, cpu = time.monotonic(), cpu_seconds(gateway.pid)
        cursor, pages, tools, size = None, 0, 0, 0
        while True:
            params = {} if cursor is None else {"cursor": cursor}
            answer = ask({"jsonrpc": "2.0", "id": ids, "method": "tools/list", "params": params})
            ids += 1
            result = answer["result"]
            pages, tools = pages + 1, tools + len(result["tools"])
            size += len(json.dumps(result))
            cursor = result.get("nextCursor")
            if not cursor:
                break
        print(f"whole listing, {listing}: {pages} pages, {tools} tools, {size / 1e6:.1f} MB in "
              f"{time.monotonic() - begun:.2f} s ({time.monotonic() - started:.2f} s from start), "
              f"gateway CPU {cpu_seconds(gateway.pid) - cpu:.2f} s, VmRSS {rss_mib(gateway.pid)} MiB")
    print(f"peak VmHWM {rss_mib(gateway.pid, 'VmHWM')} MiB")
    idle = float(os.environ.get("IDLE_SECONDS", "0"))
    if idle > 0:
        cpu, rss = cpu_seconds(gateway.pid), []
        until = time.monotonic() + idle
        while time.monotonic() < until:
            rss.append(rss_mib(gateway.pid))
            time.sleep(0.05)
        print(f"idle {idle:g} s: gateway CPU {cpu_seconds(gateway.pid) - cpu:.2f} s, "
              f"VmRSS {min(rss)}-{max(rss)} MiB")
    gateway.kill()


if __name__ == "__main__":
    main()
