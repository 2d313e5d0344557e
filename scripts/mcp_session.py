"""An MCP client over the stdio of a child process, for the scripts that check what the
programs answer (readme-json.py, troubleshooting.sh)."""

import json
import queue
import subprocess
import sys
import tempfile
import threading

TIMEOUT = 60


def fail(message):
    sys.exit(f"{message}")


class Session:
    """An MCP client over the stdio of a child process, one JSON-RPC message per line."""

    def __init__(self, argv, env=None):
        self.argv = argv
        self.stderr = tempfile.TemporaryFile()
        try:
            self.child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self.stderr, env=env, text=True)
        except OSError as e:
            fail(f"cannot start {argv}: {e}")
        self.lines, self.next_id = queue.Queue(), 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.child.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def stderr_text(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-3000:]

    def send(self, message):
        try:
            self.child.stdin.write(json.dumps(message) + "\n")
            self.child.stdin.flush()
        except BrokenPipeError:
            self.die("closed its stdin")

    def die(self, what):
        self.child.kill()
        fail(f"{' '.join(self.argv)}: {what}\n--- its stderr:\n{self.stderr_text()}")

    def answer(self, method, params=None):
        """The whole answer to a request: its `result` or its `error`."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                   **({"params": params} if params is not None else {})})
        while True:
            try:
                line = self.lines.get(timeout=TIMEOUT)
            except queue.Empty:
                self.die(f"no answer to {method} in {TIMEOUT} s")
            if line is None:
                self.die(f"exited (status {self.child.wait()}) before answering {method}")
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                self.die(f"wrote a line that is not JSON on stdout: {line!r}")
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def request(self, method, params=None):
        """The result of a request; an error answer fails."""
        message = self.answer(method, params)
        if "error" in message:
            self.die(f"answered {method} with an error: {message['error']}")
        return message["result"]

    def initialize(self, client="readme.sh"):
        result = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": client, "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def tools(self):
        tools, params = [], {}
        while True:
            page = self.request("tools/list", params)
            tools += page["tools"]
            if not page.get("nextCursor"):
                return tools
            params = {"cursor": page["nextCursor"]}

    def close(self):
        self.child.stdin.close()
        try:
            status = self.child.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.die(f"still running {TIMEOUT} s after its stdin closed")
        if status != 0:
            self.die(f"exited with status {status} after its stdin closed")
