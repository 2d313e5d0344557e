"""MCP authorization end to end: the official Python MCP SDK 2.x as an OAuth client, a real
authorization server (oidc-provider, scripts/auth-server.mjs) on loopback, and the demo and
the gateway as resource servers. Run it with scripts/auth-e2e.sh, which installs the server
and the SDK, builds the binaries and starts the authorization server. By hand:

    AUTH_ISSUER=http://127.0.0.1:PORT .tools/venv-mcp2/bin/python tests/python/test_auth.py [-v]

The SDK discovers everything itself: the 401 challenge names the protected resource metadata,
which names the authorization server, whose metadata names the token endpoint; it asks for a
token for the resource (RFC 8707) with the client-credentials grant. Raw requests check what
the SDK does not show: the challenges, and tokens the server must refuse. The last line reads
`N passed, N failed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
from mcp import Client
from mcp.client.auth import TokenStorage
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from demo_support import DEMO, STARTUP_TIMEOUT, TOOLS, TARGET, free_port, http_demo, log, log_path, main

ISSUER = os.environ.get("AUTH_ISSUER", "")
GATEWAY = Path(os.environ.get("GATEWAY_BIN") or TARGET / "debug" / "grpc-mcp-gateway")
AUTH_FLAGS = ("--auth-issuer", ISSUER, "--auth-scope", "mcp", "--auth-write-scope", "tasks.write")
CLIENTS = {
    "agent": ("agent-secret", "mcp tasks.write"),
    "reader": ("reader-secret", "mcp"),
    "opaque-agent": ("opaque-agent-secret", "mcp tasks.write"),
}


class Memory(TokenStorage):
    """Tokens and client information in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@contextlib.asynccontextmanager
async def oauth_client(url: str, client_id: str) -> AsyncIterator[Client]:
    secret, scope = CLIENTS[client_id]
    provider = ClientCredentialsOAuthProvider(
        server_url=url, storage=Memory(), client_id=client_id, client_secret=secret, scope=scope,
        issuer=ISSUER,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=20.0) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            yield client


async def token(resource: str | None, client_id: str = "agent") -> str:
    """A token straight from the token endpoint (for the requests the SDK would not make)."""
    secret, scope = CLIENTS[client_id]
    form = {"grant_type": "client_credentials", "scope": scope}
    if resource:
        form["resource"] = resource
    async with httpx2.AsyncClient(timeout=10.0) as http:
        answer = await http.post(f"{ISSUER}/token", data=form, auth=(client_id, secret))
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


async def raw(url: str, bearer: str | None) -> httpx2.Response:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if bearer:
        headers["authorization"] = f"Bearer {bearer}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    async with httpx2.AsyncClient(timeout=10.0) as http:
        return await http.post(url, json=body, headers=headers)


# --- scenarios ----------------------------------------------------------------------------


async def sdk_client_credentials(url: str) -> None:
    """The SDK discovers the authorization server, gets a token and calls tools."""
    async with oauth_client(url, "agent") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert TOOLS <= tools, sorted(TOOLS - tools)
        found = await client.call_tool("TaskService_GetTask", {"id": "task-1"})
        assert not found.is_error, found
        created = await client.call_tool("TaskService_CreateTask", {"task": {"title": "from an OAuth client"}})
        assert not created.is_error, created


async def sdk_reader_lacks_the_write_scope(url: str) -> None:
    """A token without `tasks.write` reads, and is refused a write with 403."""
    async with oauth_client(url, "reader") as client:
        found = await client.call_tool("TaskService_GetTask", {"id": "task-1"})
        assert not found.is_error, found
    # On the 403 the SDK asks for the scope the challenge names (step-up authorization); the
    # authorization server does not grant `tasks.write` to this client, so the call fails.
    refused: BaseException | None = None
    try:
        async with oauth_client(url, "reader") as client:
            await client.call_tool("TaskService_CreateTask", {"task": {"title": "not allowed"}})
    except BaseException as error:  # noqa: BLE001 - the SDK raises what the refusal becomes
        refused = error
    assert refused is not None, "a write without tasks.write succeeded"
    assert "invalid_scope" in repr(refused) or "insufficient_scope" in repr(refused), repr(refused)
    bearer = await token(url, "reader")
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "TaskService_CreateTask", "arguments": {"task": {"title": "x"}}}}
    async with httpx2.AsyncClient(timeout=10.0) as http:
        answer = await http.post(url, json=body, headers={
            "authorization": f"Bearer {bearer}", "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25"})
    challenge = answer.headers.get("www-authenticate", "")
    assert answer.status_code == 403, (answer.status_code, answer.text)
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp tasks.write"' in challenge, challenge


async def challenges_and_refused_tokens(url: str) -> None:
    """401 without a token, with the metadata URL; the metadata; tokens the server refuses."""
    answer = await raw(url, None)
    assert answer.status_code == 401, answer.text
    challenge = answer.headers["www-authenticate"]
    found = re.search(r'resource_metadata="([^"]+)"', challenge)
    assert found and "error=" not in challenge, challenge
    async with httpx2.AsyncClient(timeout=10.0) as http:
        metadata = (await http.get(found.group(1))).json()
    assert metadata["resource"] == url and metadata["authorization_servers"] == [ISSUER], metadata
    assert set(metadata["scopes_supported"]) == {"mcp", "tasks.write"}, metadata
    for label, bearer, needle in [
        ("a token for another resource", await token("http://127.0.0.1:1/mcp"), "not meant for this resource"),
        ("an opaque token", await token(None), "not a JWT"),
        ("a token from the server, altered", (await token(url))[:-4] + "AAAA", "signature"),
    ]:
        answer = await raw(url, bearer)
        challenge = answer.headers.get("www-authenticate", "")
        assert answer.status_code == 401 and 'error="invalid_token"' in challenge, (label, answer.status_code, challenge)
        assert needle in challenge, (label, challenge)
    good = await raw(url, await token(url))
    assert good.status_code == 200, good.text


async def hostile_bodies_get_no_further(url: str) -> None:
    """A reader's token does not get past the write scope through the JSON-RPC text: escapes
    in the method or the tool's name are read as the call reads them (403), and a message
    naming the method, the tool or `params` twice is refused (400). Nothing under the metadata
    prefix but the metadata answers (404), even with a writer's token. No task is created."""
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json",
              "mcp-protocol-version": "2025-11-25"}
    reader = {**accept, "authorization": f"Bearer {await token(url, 'reader')}"}
    writer = {**accept, "authorization": f"Bearer {await token(url, 'agent')}"}
    create = '{"name":"TaskService_CreateTask","arguments":{"task":{"title":"hostile"}}}'
    message = '{"jsonrpc":"2.0","id":2,"method":"%s","params":%s}'
    cases = [
        ("escaped solidus", message % ("tools\\/call", create), 403),
        ("escaped letter", message % ("tools/c\\u0061ll", create), 403),
        ("escaped tool name", message % ("tools/call", create.replace("CreateTask", "Cre\\u0061teTask")), 403),
        ("tool name twice", message % ("tools/call", create.replace(
            '"name":"TaskService_CreateTask"', '"name":"TaskService_GetTask","name":"TaskService_CreateTask"')), 400),
        ("method twice", '{"jsonrpc":"2.0","id":2,"method":"tools/list","method":"tools/call","params":%s}' % create, 400),
        ("params twice", '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"TaskService_GetTask"},"params":%s}' % create, 400),
    ]
    origin = url.removesuffix("/mcp")
    prefix = f"{origin}/.well-known/oauth-protected-resource"
    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}})
    async with httpx2.AsyncClient(timeout=10.0) as http:
        async def session(headers: dict[str, str]) -> dict[str, str]:
            opened = await http.post(url, content=initialize, headers=headers)
            assert opened.status_code == 200, opened.text
            found = opened.headers.get("mcp-session-id")
            if not found:
                return headers
            headers = {**headers, "mcp-session-id": found}
            await http.post(url, content='{"jsonrpc":"2.0","method":"notifications/initialized"}', headers=headers)
            return headers

        async def task_count(headers: dict[str, str]) -> int:
            listed = await http.post(url, headers=headers, content=message % (
                "tools/call", '{"name":"TaskService_ListTasks","arguments":{"pageSize":1}}'))
            assert listed.status_code == 200, listed.text
            lines = [listed.text] if listed.text.startswith("{") else [
                line[5:] for line in listed.text.splitlines() if line.startswith("data:") and line[5:].strip()]
            answer = [json.loads(line) for line in lines][-1]
            return int(answer["result"]["structuredContent"].get("totalSize", "0"))

        reader = await session(reader)
        before = await task_count(reader)
        for label, body, status in cases:
            answer = await http.post(url, content=body.encode(), headers=reader)
            assert answer.status_code == status, (label, answer.status_code, answer.text)
            if status == 403:
                challenge = answer.headers.get("www-authenticate", "")
                assert 'error="insufficient_scope"' in challenge, (label, challenge)
        # (httpx resolves `..` before sending: runtime/tests/authorization.rs sends it as written.)
        for path in [f"{prefix}X", f"{prefix}/anything", f"{prefix}/mcp/x"]:
            answer = await http.post(path, content=message % ("tools/call", create), headers=writer)
            assert answer.status_code == 404, (path, answer.status_code, answer.text)
            answer = await http.post(path, content=initialize, headers=writer)
            assert answer.status_code == 404, (path, answer.status_code, answer.text)
        assert await task_count(reader) == before, "a refused request created a task"


@contextlib.asynccontextmanager
async def gateway(label: str, *flags: str, env: dict[str, str] | None = None) -> AsyncIterator[str]:
    """The demo's gRPC service (without authorization) behind the gateway with authorization."""
    grpc_port = free_port()
    async with http_demo(f"{label}-backend", "--grpc", f"127.0.0.1:{grpc_port}"):
        path = log_path(label)
        with open(path, "wb") as log_file:
            process = subprocess.Popen(
                [str(GATEWAY), "--target", f"http://127.0.0.1:{grpc_port}", "--http", "127.0.0.1:0",
                 *AUTH_FLAGS, "--forward-claim", "sub=x-user-id", *flags],
                stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
                env={**os.environ, "RUST_LOG": "info", "NO_COLOR": "1", **(env or {})},
            )
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while not (found := re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", path.read_text(errors="replace"))):
                assert process.poll() is None, f"the gateway exited with {process.returncode}; see {path}"
                assert time.monotonic() < deadline, f"the gateway logged no URL; see {path}"
                await asyncio.sleep(0.05)
            yield found.group(1)
        finally:
            process.terminate()
            process.wait(timeout=10)


async def introspected_opaque_tokens() -> None:
    """The gateway with introspection: the SDK's opaque token works; one for another
    resource, or one the server never issued, is refused."""
    flags = ("--auth-introspection-client-id", "mcp-server")
    env = {"GRPC_MCP_GATEWAY_INTROSPECTION_SECRET": "mcp-server-secret"}
    async with gateway("gateway-introspection", *flags, env=env) as url:
        async with oauth_client(url, "opaque-agent") as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert TOOLS <= tools, sorted(TOOLS - tools)
            found = await client.call_tool("TaskService_GetTask", {"id": "task-1"})
            assert not found.is_error, found
        opaque = await token(url, "opaque-agent")
        assert opaque.count(".") != 2, "the server issued a JWT, not an opaque token"
        assert (await raw(url, opaque)).status_code == 200
        for label, bearer, needle in [
            ("another resource", await token("http://127.0.0.1:1/mcp", "opaque-agent"), "not meant for this resource"),
            ("never issued", "made-up-opaque-token", "not active"),
        ]:
            answer = await raw(url, bearer)
            challenge = answer.headers.get("www-authenticate", "")
            assert answer.status_code == 401 and needle in challenge, (label, answer.status_code, challenge)


def on_demo(check: Any, *flags: str) -> Any:
    async def scenario() -> None:
        async with http_demo(check.__name__, *flags, *AUTH_FLAGS) as url:
            await check(url)
    return scenario


def on_gateway(check: Any) -> Any:
    async def scenario() -> None:
        async with gateway(f"gateway-{check.__name__}") as url:
            await check(url)
    return scenario


def scenarios() -> list[tuple[str, Any]]:
    assert ISSUER, "AUTH_ISSUER is not set: run scripts/auth-e2e.sh"
    assert DEMO.is_file() and GATEWAY.is_file(), "build demo and grpc-mcp-gateway first"
    checks = [sdk_client_credentials, sdk_reader_lacks_the_write_scope, challenges_and_refused_tokens,
              hostile_bodies_get_no_further]
    found: list[tuple[str, Any]] = []
    for check in checks:
        found.append((f"demo http {check.__name__}", on_demo(check)))
        found.append((f"demo http-stateless {check.__name__}", on_demo(check, "--stateless")))
        found.append((f"gateway {check.__name__}", on_gateway(check)))
    found.append(("gateway introspected_opaque_tokens", introspected_opaque_tokens))
    return found


if __name__ == "__main__":
    main(scenarios())
