"""Retrieval and cost of the gateway's tool-search mode on googleapis; see
scripts/tool-search-eval.sh, which installs what this needs and runs it.

Steps:
1. one descriptor set of every googleapis file that declares a service (files that do not
   compile together are skipped and counted), and one of the demo's protos;
2. the eval set (tests/tool-search/queries.jsonl) checked: every expected RPC path must exist
   in that descriptor set;
3. the gateway without --tool-search: the full tools/list (every page), its tokens
   (tiktoken o200k_base) and the gateway's memory, for googleapis and the demo;
4. the gateway with --tool-search (and, given --search-embeddings, its embedding flags, after
   waiting for `ranking: hybrid`): the discovery listing's tokens, `search_tools` (limit 5)
   for every query and then for every request's `retry` (first try hit@1 and hit@5, retry
   alone hit@5, two tries hit@5, API family hit@5; overall, per kind, per half and per API;
   the misses go to a JSONL file), its latency, the gateway's memory, and the tokens of one
   search -> describe -> call sequence.

The report is printed as Markdown; --out writes it with the figures as JSON.

Step 4 needs a gateway that has --tool-search; without it the report says so and the run
exits with status 3 after writing what it measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

SERVICE = re.compile(rb"^service\s", re.MULTILINE)
# A package segment that names an API version: v1, v1beta2, v2alpha, v22, v1p1beta1, v1beta4.
VERSION = re.compile(r"^v\d+(?:[a-z]+\d*)*$")
# protoc's error lines: `path/to/file.proto:12:3: message` (or `path/to/file.proto: message`).
PROTOC_ERROR = re.compile(r"^([\w./-]+\.proto)(?::\d+:\d+)?: (.*)$")
DUPLICATE_NAMES = "--tool-names package"
NO_TOOL_SEARCH = "the gateway has no --tool-search"
SEARCH_LIMIT = 5
# A target that answers nothing: listing and searching need no backend.
DEAD_TARGET = "http://127.0.0.1:1"
LIST_TIMEOUT = timedelta(minutes=10)
CALL_TIMEOUT = timedelta(seconds=60)
# The request whose search -> describe -> call sequence is measured (a query of the eval set:
# the tool called is the first of the top 5 that satisfies it, else the top one).
SEQUENCE_QUERY = "publish a message to the order-events topic"


# --- descriptors -------------------------------------------------------------------------


def service_files(corpus: Path) -> list[str]:
    """Every .proto under `corpus` (outside node_modules) that declares a service, relative."""
    found: list[str] = []
    for path in corpus.rglob("*.proto"):
        rel = path.relative_to(corpus)
        if "node_modules" in rel.parts:
            continue
        if SERVICE.search(path.read_bytes()):
            found.append(rel.as_posix())
    return sorted(found)


def run_protoc(protoc: Path, includes: list[Path], files: list[str], out: Path) -> list[str]:
    """Runs protoc once over `files`; returns its error lines (empty on success)."""
    argv = [str(protoc), *(f"-I{i}" for i in includes), "--include_imports",
            "--include_source_info", f"-o{out}", *files]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode == 0:
        return []
    errors = [line for line in done.stderr.splitlines()
              if line.strip() and ": warning: " not in line]
    return errors or [f"protoc exited with status {done.returncode}"]


def build_descriptor_set(protoc: Path, includes: list[Path], files: list[str],
                         out: Path) -> dict[str, str]:
    """Compiles `files` together into `out`, leaving out the ones that fail; returns the
    skipped files with their first error. A failing file is found from protoc's error lines,
    else by compiling each remaining file alone."""
    skipped: dict[str, str] = {}
    remaining = list(files)
    while remaining:
        errors = run_protoc(protoc, includes, remaining, out)
        if not errors:
            return skipped
        named: dict[str, str] = {}
        for line in errors:
            match = PROTOC_ERROR.match(line)
            if match and match.group(1) in remaining:
                named.setdefault(match.group(1), match.group(2))
        if not named:
            # The error is in an imported file or names none: try each file on its own.
            single = out.with_suffix(".single")
            for rel in remaining:
                alone = run_protoc(protoc, includes, [rel], single)
                if alone:
                    named[rel] = alone[0]
            single.unlink(missing_ok=True)
            if not named:
                raise SystemExit("protoc fails on the files together but on none alone:\n"
                                 + "\n".join(errors[:20]))
        skipped.update(named)
        remaining = [rel for rel in remaining if rel not in named]
    raise SystemExit("no file of the corpus compiles")


def varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """The (field number, value) pairs of one protobuf message, in wire order."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 2:
            size, at = varint(data, at)
            value, at = data[at:at + size], at + size
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, value


def rpc_paths(descriptor_set: Path) -> set[str]:
    """Every `/package.Service/Method` of a FileDescriptorSet: file (1) -> package (2),
    service (6) -> name (1), method (2) -> name (1)."""
    paths: set[str] = set()
    for number, file in fields(descriptor_set.read_bytes()):
        if number != 1 or not isinstance(file, bytes):
            continue
        package = ""
        services: list[bytes] = []
        for key, value in fields(file):
            if key == 2 and isinstance(value, bytes):
                package = value.decode()
            elif key == 6 and isinstance(value, bytes):
                services.append(value)
        for service in services:
            name = ""
            methods: list[str] = []
            for key, value in fields(service):
                if key == 1 and isinstance(value, bytes):
                    name = value.decode()
                elif key == 2 and isinstance(value, bytes):
                    methods += [v.decode() for k, v in fields(value)
                                if k == 1 and isinstance(v, bytes)]
            prefix = f"{package}." if package else ""
            paths.update(f"/{prefix}{name}/{method}" for method in methods)
    return paths


def split_version(path: str) -> tuple[str, str]:
    """`/google.cloud.kms.v1.KeyManagementService/Encrypt` ->
    (`/google.cloud.kms.KeyManagementService/Encrypt`, `v1`)."""
    _, service, method = path.split("/")
    segments = service.split(".")
    kept = [s for s in segments[:-1] if not VERSION.match(s)]
    versions = [s for s in segments[:-1] if VERSION.match(s)]
    return f"/{'.'.join([*kept, segments[-1]])}/{method}", ".".join(versions)


def normalise(path: str) -> str:
    return split_version(path)[0]


def family(path: str) -> str:
    """The API family of an RPC path: its package without version segments, a dot, and the
    service (`/google.cloud.kms.v1.KeyManagementService/Encrypt` ->
    `google.cloud.kms.KeyManagementService`)."""
    return normalise(path).split("/")[1]


def normalise_family(api: str) -> str:
    """An `apis` entry of search_tools, versions dropped as for paths (they should have none)."""
    segments = api.strip("/").split(".")
    return ".".join([s for s in segments[:-1] if not VERSION.match(s)] + segments[-1:])


# --- eval set ----------------------------------------------------------------------------


KINDS = ("plain", "indirect", "no_product")
FIELDS = {"query", "expected", "api", "retry", "kind"}


@dataclass(frozen=True)
class Query:
    query: str
    expected: tuple[str, ...]
    api: str
    retry: str  # the second query a model would send, in the API's words
    kind: str  # one of KINDS
    line: int  # the line of the eval set, from 1 (its parity gives the half)

    @property
    def half(self) -> str:
        return HALVES[self.line % 2]

    @property
    def families(self) -> set[str]:
        return {family(e) for e in self.expected}


# The eval set's halves (docs/benchmark-history.md): ranking changes are chosen on the requests
# at odd positions counted from 0, the file's lines 2, 4, 6... counted from 1, and checked on
# lines 1, 3, 5... (the history's per-half figures are these, not the other way round).
HALVES = ("tuned on (lines 2, 4, ...)", "held out (lines 1, 3, ...)")


def load_queries(path: Path) -> list[Query]:
    queries: list[Query] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise SystemExit(f"{path}:{number}: not JSON ({error})")
        if (not isinstance(item, dict) or set(item) != FIELDS
                or not all(isinstance(item[k], str) and item[k].strip()
                           for k in ("query", "api", "retry"))
                or not isinstance(item["expected"], list) or not item["expected"]
                or not all(isinstance(e, str) for e in item["expected"])
                or item["kind"] not in KINDS):
            raise SystemExit(f"{path}:{number}: not {{query: str, expected: [str, ...], api: str, "
                             f"retry: str, kind: {' | '.join(KINDS)}}}")
        queries.append(Query(item["query"], tuple(item["expected"]), item["api"],
                             item["retry"], item["kind"], number))
    return queries


@dataclass
class EvalSetCheck:
    queries: int
    apis: int
    missing: list[tuple[str, str]]  # (query, expected path not in the corpus)
    duplicates: list[str]
    multi_version: int  # queries with an expected RPC present in two or more API versions


def check_queries(queries: list[Query], corpus_rpcs: set[str]) -> EvalSetCheck:
    versions: dict[str, set[str]] = defaultdict(set)
    for path in corpus_rpcs:
        plain, version = split_version(path)
        versions[plain].add(version)
    missing = [(q.query, e) for q in queries for e in q.expected if e not in corpus_rpcs]
    seen: set[str] = set()
    duplicates = []
    for q in queries:
        if q.query.lower() in seen:
            duplicates.append(q.query)
        seen.add(q.query.lower())
    multi = sum(1 for q in queries if any(len(versions[normalise(e)]) > 1 for e in q.expected))
    return EvalSetCheck(len(queries), len({q.api for q in queries}), missing, duplicates, multi)


# --- the gateway over MCP ----------------------------------------------------------------


def memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def child_pid() -> int:
    """The pid of the gateway: the live child of this process started last (the SDK starts
    the gateway as a child; one session is open at a time)."""
    children: list[tuple[int, int]] = []  # (start time in clock ticks, pid)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the command name: state (3), ppid (4), ..., starttime (22).
        after = stat[stat.rindex(")") + 2:].split()
        if int(after[1]) == os.getpid() and after[0] != "Z":
            children.append((int(after[19]), int(entry.name)))
    if not children:
        raise RuntimeError("the gateway process was not found among this process's children")
    return max(children)[1]


@contextlib.asynccontextmanager
async def gateway_session(gateway: Path, args: list[str], log: Path) -> AsyncIterator[tuple[Any, int]]:
    """An initialized MCP session with the gateway over stdio, and the gateway's pid."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=str(gateway), args=args,
                                   env={**os.environ, "RUST_LOG": "warn"})
    with open(log, "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=LIST_TIMEOUT) as session:
                await session.initialize()
                yield session, child_pid()


def as_json(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def list_all(session: Any) -> list[dict[str, Any]]:
    """Every tool of tools/list, following nextCursor, as the JSON it came as."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(cursor)
        tools += [as_json(tool) for tool in page.tools]
        cursor = page.nextCursor
        if not cursor:
            return tools


class Tokens:
    """Token counts with tiktoken's o200k_base, of compact JSON."""

    def __init__(self) -> None:
        import tiktoken

        self.encoding = tiktoken.get_encoding("o200k_base")

    def json(self, value: Any) -> tuple[int, int]:
        """(bytes, tokens) of `value` as compact JSON."""
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        return len(text.encode()), len(self.encoding.encode_ordinary(text))


def gateway_has_tool_search(gateway: Path) -> bool:
    done = subprocess.run([str(gateway), "--help"], capture_output=True, text=True)
    return "--tool-search" in done.stdout


async def gateway_naming(gateway: Path, descriptor_set: Path, log: Path) -> list[str]:
    """The extra flags the gateway needs to serve `descriptor_set`: none, or `--tool-names
    package` when it refuses to start because two tools would share a name."""
    for extra in ([], ["--tool-names", "package"]):
        offset = log.stat().st_size
        try:
            async with gateway_session(gateway, ["--descriptor-set", str(descriptor_set),
                                                 "--target", DEAD_TARGET, *extra], log):
                return extra
        except Exception:
            said = log.read_text(encoding="utf-8", errors="replace")[offset:]
            if DUPLICATE_NAMES in said and not extra:
                continue
            last = said.strip().splitlines()[-1:] or ["no message"]
            raise SystemExit(f"the gateway did not start ({last[0]}); see {log}")
    raise AssertionError("unreachable")


# --- measurements ------------------------------------------------------------------------


@dataclass
class Listing:
    label: str
    tools: int
    pages_bytes: int
    tokens: int
    seconds: float


FAMILIES_FROM_APIS = "the result's `apis` list"
FAMILIES_FROM_TOOLS = ("derived from the `tools` list (each result's `rpc` family, in order, "
                       "deduplicated)")


@dataclass
class SearchOutcome:
    query: Query
    returned: list[dict[str, Any]]
    client_ms: float
    server_ms: float | None
    error: str | None = None
    apis: list[dict[str, Any]] | None = None  # the result's `apis`, when it has one
    ranking: str | None = None  # the result's `ranking`, when it has one
    ranking_note: str | None = None
    server_key: str | None = None  # where server_ms came from

    def distinct(self, k: int) -> int:
        """How many different RPCs, versions aside, the top k hold."""
        return len({normalise(t["rpc"]) for t in self.returned[:k] if isinstance(t.get("rpc"), str)})

    def hit(self, k: int) -> bool:
        wanted = {normalise(e) for e in self.query.expected}
        return any(isinstance(t.get("rpc"), str) and normalise(t["rpc"]) in wanted
                   for t in self.returned[:k])

    @property
    def family_source(self) -> str:
        return FAMILIES_FROM_TOOLS if self.apis is None else FAMILIES_FROM_APIS

    def families(self) -> list[str]:
        """The API families of the result, best first: its `apis` list, else the families of
        its tools' `rpc` in order, each once."""
        if self.apis is not None:
            return [normalise_family(a["api"]) for a in self.apis
                    if isinstance(a, dict) and isinstance(a.get("api"), str)]
        seen: list[str] = []
        for t in self.returned:
            if isinstance(t.get("rpc"), str) and family(t["rpc"]) not in seen:
                seen.append(family(t["rpc"]))
        return seen

    def family_hit(self, k: int) -> bool:
        return bool(self.query.families & set(self.families()[:k]))


@dataclass
class Report:
    corpus_files: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    corpus_rpcs: int = 0
    descriptor_bytes: int = 0
    check: EvalSetCheck | None = None
    naming: list[str] = field(default_factory=list)
    unserved: list[str] = field(default_factory=list)
    listings: list[Listing] = field(default_factory=list)
    memory: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    searches: list[SearchOutcome] = field(default_factory=list)
    retries: list[SearchOutcome] = field(default_factory=list)  # aligned with searches
    ranking_wait: str = ""  # how the wait for the hybrid ranking went, when asked for
    embeddings: list[str] = field(default_factory=list)  # the gateway's embedding flags
    server_latency_key: str | None = None
    sequence: list[tuple[str, int, int]] = field(default_factory=list)  # (step, bytes, tokens)
    sequence_note: str = ""
    notes: list[str] = field(default_factory=list)


async def measure_full_listing(label: str, gateway: Path, args: list[str], log: Path,
                               tokens: Tokens, report: Report) -> list[dict[str, Any]]:
    start = time.perf_counter()
    async with gateway_session(gateway, args, log) as (session, pid):
        report.memory.append((f"{label}, no --tool-search, after initialize", memory(pid)))
        tools = await list_all(session)
        seconds = time.perf_counter() - start
        report.memory.append((f"{label}, no --tool-search, after the full tools/list", memory(pid)))
    size, count = tokens.json({"tools": tools})
    report.listings.append(Listing(f"{label}: full tools/list", len(tools), size, count, seconds))
    return tools


# The names a server-side duration may come under, in the result's _meta or structuredContent.
LATENCY_KEY = re.compile(r"(elapsed|took|duration|latency|time)[_-]?(ms|us|micros|ns|s)?$", re.I)


def server_latency(result: Any) -> tuple[str, float] | None:
    """A server-side duration carried by a tool result, in milliseconds, with its key."""
    places = [("_meta", result.meta or {}), ("structuredContent", result.structuredContent or {})]
    for where, values in places:
        for key, value in values.items():
            match = LATENCY_KEY.search(key)
            if not match or not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            unit = (match.group(2) or "ms").lower()
            scale = {"ms": 1.0, "us": 1e-3, "micros": 1e-3, "ns": 1e-6, "s": 1e3}[unit]
            return f"{where}.{key}", float(value) * scale
    return None


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments with every required property of an input schema set to a plain value."""
    def value(name: str, node: dict[str, Any]) -> Any:
        kind = node.get("type")
        if "enum" in node:
            return node["enum"][0]
        if kind == "string":
            return "projects/example/locations/europe-west1" if name == "parent" else "example"
        if kind in ("integer", "number"):
            return 1
        if kind == "boolean":
            return False
        if kind == "array":
            return []
        return {}

    properties = schema.get("properties", {})
    return {name: value(name, properties.get(name, {})) for name in schema.get("required", [])}


async def search(session: Any, query: Query, text: str) -> SearchOutcome:
    """One `search_tools` call (limit 5) for `text`, on behalf of `query`."""
    from mcp.types import CallToolResult

    start = time.perf_counter()
    result: CallToolResult = await session.call_tool(
        "search_tools", {"query": text, "limit": SEARCH_LIMIT},
        read_timeout_seconds=CALL_TIMEOUT)
    client_ms = (time.perf_counter() - start) * 1e3
    latency = server_latency(result)
    content = result.structuredContent or {}
    if not isinstance(content, dict):
        content = {}
    error = None
    if result.isError:
        error = " ".join(c.text for c in result.content if hasattr(c, "text"))[:300]
    apis = content.get("apis")
    return SearchOutcome(query, content.get("tools", []), client_ms,
                         latency[1] if latency else None, error,
                         apis if isinstance(apis, list) else None,
                         content.get("ranking"), content.get("ranking_note"),
                         latency[0] if latency else None)


async def wait_for_hybrid(session: Any, timeout: float, report: Report) -> None:
    """Polls `search_tools` until its result says `ranking: hybrid` with no `ranking_note`
    (the embeddings are computed), at most `timeout` seconds, printing progress."""
    from mcp.types import CallToolResult

    start = time.perf_counter()
    polls = 0
    last = ""
    while True:
        polls += 1
        result: CallToolResult = await session.call_tool(
            "search_tools", {"query": "list", "limit": 1}, read_timeout_seconds=CALL_TIMEOUT)
        content = result.structuredContent or {}
        ranking = content.get("ranking") if isinstance(content, dict) else None
        note = content.get("ranking_note") if isinstance(content, dict) else None
        waited = time.perf_counter() - start
        if ranking == "hybrid" and not note:
            report.ranking_wait = (f"the ranking was `hybrid` with no `ranking_note` after "
                                   f"{waited:.0f} s ({polls} polls)")
            log(report.ranking_wait)
            return
        state = f"ranking {ranking!r}" + (f", note: {note}" if note else "")
        if state != last or polls % 6 == 0:
            log(f"waiting for the hybrid ranking ({waited:.0f} s of {timeout:.0f} s): {state}")
            last = state
        if waited >= timeout:
            report.ranking_wait = (f"the ranking was not `hybrid` without a note after "
                                   f"{waited:.0f} s (timeout; last: {state}); evaluated as it was")
            report.notes.append(report.ranking_wait)
            log(report.ranking_wait)
            return
        await asyncio.sleep(min(10.0, max(0.0, timeout - waited)))


async def measure_tool_search(gateway: Path, args: list[str], log_path: Path, tokens: Tokens,
                              queries: list[Query], report: Report,
                              options: argparse.Namespace) -> None:
    start = time.perf_counter()
    extra = ["--tool-search", *report.embeddings]
    async with gateway_session(gateway, [*args, *extra], log_path) as (session, pid):
        report.memory.append(("googleapis, --tool-search, after initialize", memory(pid)))
        tools = await list_all(session)
        size, count = tokens.json({"tools": tools})
        report.listings.append(Listing("googleapis: --tool-search tools/list", len(tools), size,
                                       count, time.perf_counter() - start))
        names = {t["name"] for t in tools}
        if not {"search_tools", "describe_tools", "call_tool"} <= names:
            report.notes.append(f"the --tool-search listing has {sorted(names)}, not the three "
                                "discovery tools")
        if report.embeddings:
            await wait_for_hybrid(session, options.embeddings_timeout, report)
        for number, query in enumerate(queries):
            outcome = await search(session, query, query.query)
            report.server_latency_key = outcome.server_key or report.server_latency_key
            report.searches.append(outcome)
            if number == 0:
                report.memory.append(("googleapis, --tool-search, after the first search",
                                      memory(pid)))
        report.memory.append((f"googleapis, --tool-search, after {len(queries)} searches",
                              memory(pid)))
        log(f"googleapis: search_tools for the {len(queries)} retries")
        for query in queries:
            report.retries.append(await search(session, query, query.retry))
        await measure_sequence(session, tokens, options.all_queries, report)


async def measure_sequence(session: Any, tokens: Tokens, queries: list[Query],
                           report: Report) -> None:
    """Tokens of search_tools -> describe_tools -> call_tool, each request and its result."""
    wanted = {normalise(e) for q in queries if q.query == SEQUENCE_QUERY for e in q.expected}

    async def step(label: str, name: str, arguments: dict[str, Any]) -> Any:
        request = {"method": "tools/call", "params": {"name": name, "arguments": arguments}}
        size, count = tokens.json(request)
        report.sequence.append((f"{label} request", size, count))
        result = await session.call_tool(name, arguments, read_timeout_seconds=CALL_TIMEOUT)
        size, count = tokens.json(as_json(result))
        report.sequence.append((f"{label} result", size, count))
        return result

    found = await step("search_tools", "search_tools",
                       {"query": SEQUENCE_QUERY, "limit": SEARCH_LIMIT})
    hits = (found.structuredContent or {}).get("tools", [])
    if not hits:
        report.sequence_note = f"search_tools found nothing for {SEQUENCE_QUERY!r}"
        return
    chosen = next((t for t in hits if normalise(t.get("rpc", "")) in wanted), hits[0])
    name = chosen["name"]
    rank = hits.index(chosen) + 1
    described = await step("describe_tools", "describe_tools", {"names": [name]})
    full = (described.structuredContent or {}).get("tools", [])
    schema = full[0].get("inputSchema", {}) if full else {}
    called = await step("call_tool", "call_tool",
                        {"name": name, "arguments": example_arguments(schema)})
    outcome = "an error result" if called.isError else "a result"
    which = "the expected tool" if normalise(chosen.get("rpc", "")) in wanted else \
        "not the expected tool (none of the top 5 was)"
    report.sequence_note = (
        f"Query {SEQUENCE_QUERY!r}; the tool described and called is result {rank}, "
        f"`{name}` ({chosen.get('rpc')}), {which}. The call goes to {DEAD_TARGET}, which "
        f"answers nothing, so call_tool returns {outcome}.")


# --- report ------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # nearest rank
    return ordered[int(rank) - 1]


def pct(hits: int, total: int) -> str:
    return f"{100 * hits / total:.1f} % ({hits}/{total})" if total else "-"


# The retrieval figures of each group of requests: (label, key in the JSON, test of one request
# given its first search and the search of its retry).
METRICS: list[tuple[str, str, Any]] = [
    ("first try hit@1", "first_try_hit@1", lambda first, retry: first.hit(1)),
    ("first try hit@5", "first_try_hit@5", lambda first, retry: first.hit(5)),
    ("retry alone hit@5", "retry_hit@5", lambda first, retry: retry.hit(5)),
    ("two tries hit@5", "two_tries_hit@5", lambda first, retry: first.hit(5) or retry.hit(5)),
    ("API family hit@5", "api_family_hit@5", lambda first, retry: first.family_hit(5)),
]


def groups(report: Report) -> dict[str, dict[str, list[tuple[SearchOutcome, SearchOutcome]]]]:
    """The (first search, retry search) pairs: all, by kind, by half and by API."""
    pairs = list(zip(report.searches, report.retries))
    by: dict[str, dict[str, list[tuple[SearchOutcome, SearchOutcome]]]] = {
        "overall": {"all": pairs},
        "kind": {k: [p for p in pairs if p[0].query.kind == k] for k in KINDS},
        "half": {h: [p for p in pairs if p[0].query.half == h] for h in HALVES},
        "api": defaultdict(list),
    }
    for pair in pairs:
        by["api"][pair[0].query.api].append(pair)
    by["api"] = {api: by["api"][api] for api in sorted(by["api"], key=str.lower)}
    return by


def figures(pairs: list[tuple[SearchOutcome, SearchOutcome]]) -> dict[str, Any]:
    out: dict[str, Any] = {"requests": len(pairs)}
    for _, key, test in METRICS:
        hits = sum(1 for first, retry in pairs if test(first, retry))
        out[key] = {"hits": hits, "pct": round(100 * hits / len(pairs), 1) if pairs else None}
    return out


def family_sources(report: Report) -> str:
    """Where the API families of the first searches came from, in words."""
    counts = defaultdict(int)
    for s in report.searches:
        counts[s.family_source] += 1
    if len(counts) == 1:
        return next(iter(counts))
    return "; ".join(f"{source} for {n} searches" for source, n in counts.items())


def rankings(report: Report) -> str:
    """The `ranking` the searches reported, in words (with any `ranking_note` seen)."""
    counts = defaultdict(int)
    notes: list[str] = []
    for s in [*report.searches, *report.retries]:
        counts[s.ranking or "not reported"] += 1
        if s.ranking_note and s.ranking_note not in notes:
            notes.append(s.ranking_note)
    text = ", ".join(f"`{r}` ({n} searches)" if r != "not reported" else
                     f"not reported by the result ({n} searches; the gateway's keyword ranking)"
                     for r, n in counts.items())
    if notes:
        text += "; `ranking_note`: " + " | ".join(notes[:3])
    return text


def render(report: Report, args: argparse.Namespace) -> str:
    lines = ["# Tool search evaluation", ""]
    lines += [
        f"- corpus: googleapis from npm `google-proto-files` (.tools/corpus), "
        f"{report.corpus_files} files declaring a service, {len(report.skipped)} skipped as not "
        f"compiling together, {report.corpus_rpcs:,} RPCs, descriptor set "
        f"{report.descriptor_bytes / 2**20:.1f} MiB",
    ]
    if report.check:
        c = report.check
        lines.append(f"- eval set: {c.queries} queries over {c.apis} APIs ({args.queries}); "
                     f"{c.multi_version} expect an RPC that exists in two or more API versions; "
                     "every expected path exists in the corpus")
    if report.naming:
        lines.append(f"- gateway flags: `{' '.join(report.naming)}` (two tools would share a name "
                     "under the default `service_method` names, so the gateway refused to start)")
    else:
        lines.append("- gateway: started with its default tool names")
    if report.unserved:
        lines.append(f"- expected RPCs the gateway serves no tool for: {', '.join(report.unserved)}")
    lines += [f"- note: {note}" for note in report.notes]

    if report.searches:
        total = len(report.searches)
        lines += ["", "## Retrieval (`search_tools`, limit 5)", "",
                  "| queries | hit@1 | hit@5 | distinct RPCs in the top 5 (mean) | errors |",
                  "| ---: | ---: | ---: | ---: | ---: |",
                  f"| {total} | {pct(sum(s.hit(1) for s in report.searches), total)} | "
                  f"{pct(sum(s.hit(5) for s in report.searches), total)} | "
                  f"{statistics.mean(s.distinct(SEARCH_LIMIT) for s in report.searches):.2f} | "
                  f"{sum(1 for s in report.searches if s.error)} |",
                  "", "An RPC of any API version counts; distinct RPCs counts the top 5 with "
                  "versions aside (5 when no two results are versions of one RPC).",
                  "", f"- ranking: {rankings(report)}"]
        if report.embeddings:
            lines.append(f"- gateway embedding flags: `{' '.join(report.embeddings)}`; "
                         f"{report.ranking_wait}")
        lines += [f"- API families: {family_sources(report)}; a request counts when an "
                  "expected RPC's family (package without versions, and service) is among "
                  "the first 5",
                  "- two tries: the request counts when the top 5 of its query or of its "
                  "`retry` (the second query a model would send, in the API's words) has an "
                  "expected RPC",
                  "", "| group | requests | " + " | ".join(l for l, _, _ in METRICS) + " |",
                  "| --- | ---: |" + " ---: |" * len(METRICS)]
        by = groups(report)

        def row(label: str, pairs: list[tuple[SearchOutcome, SearchOutcome]]) -> str:
            cells = [pct(sum(1 for f, r in pairs if test(f, r)), len(pairs))
                     for _, _, test in METRICS]
            return f"| {label} | {len(pairs)} | " + " | ".join(cells) + " |"

        lines.append(row("all", by["overall"]["all"]))
        lines += [row(f"kind `{k}`", pairs) for k, pairs in by["kind"].items()]
        lines += [row(f"half {h}", pairs) for h, pairs in by["half"].items()]
        lines += ["", "| API | " + " | ".join(["queries", *(l for l, _, _ in METRICS)]) + " |",
                  "| --- | ---: |" + " ---: |" * len(METRICS)]
        lines += [row(api, pairs) for api, pairs in by["api"].items()]
        client = [s.client_ms for s in report.searches]
        server = [s.server_ms for s in report.searches if s.server_ms is not None]
        lines += ["", "## `search_tools` latency", "",
                  "| measured | p50 | p99 | max |", "| --- | ---: | ---: | ---: |",
                  f"| client-observed (stdio round trip) | {percentile(client, 50):.2f} ms | "
                  f"{percentile(client, 99):.2f} ms | {max(client):.2f} ms |"]
        if server:
            lines.append(f"| server-side (`{report.server_latency_key}`) | "
                         f"{percentile(server, 50):.3f} ms | {percentile(server, 99):.3f} ms | "
                         f"{max(server):.3f} ms |")
        else:
            lines.append("| server-side | not carried by the result | | |")

    lines += ["", "## Tokens (tiktoken `o200k_base`, compact JSON of the tools array)", "",
              "| listing | tools | JSON bytes | tokens | start + list |",
              "| --- | ---: | ---: | ---: | ---: |"]
    for listing in report.listings:
        lines.append(f"| {listing.label} | {listing.tools:,} | {listing.pages_bytes:,} | "
                     f"{listing.tokens:,} | {listing.seconds:.2f} s |")
    if report.sequence:
        lines += ["", "One search -> describe -> call sequence (tools/call request params and "
                  "result JSON):", "", "| step | JSON bytes | tokens |", "| --- | ---: | ---: |"]
        for label, size, count in report.sequence:
            lines.append(f"| {label} | {size:,} | {count:,} |")
        lines.append(f"| total | {sum(s for _, s, _ in report.sequence):,} | "
                     f"{sum(t for _, _, t in report.sequence):,} |")
        lines += ["", report.sequence_note]

    if report.memory:
        lines += ["", "## Gateway memory (/proc/PID/status)", "",
                  "| when | VmRSS | VmHWM |", "| --- | ---: | ---: |"]
        for label, values in report.memory:
            lines.append(f"| {label} | {values.get('VmRSS', 0) / 1024:.1f} MiB | "
                         f"{values.get('VmHWM', 0) / 1024:.1f} MiB |")
    return "\n".join(lines) + "\n"


def write_misses(report: Report, path: Path) -> int:
    """The requests whose first query's top 5 has no expected RPC, each with its retry's top 5."""
    def top(outcome: SearchOutcome) -> list[dict[str, Any]]:
        return [{"rpc": t.get("rpc"), "name": t.get("name"), "score": t.get("score")}
                for t in outcome.returned[:SEARCH_LIMIT]]

    misses = [(s, r) for s, r in zip(report.searches, report.retries) if not s.hit(SEARCH_LIMIT)]
    with open(path, "w", encoding="utf-8") as out:
        for s, r in misses:
            out.write(json.dumps({
                "query": s.query.query, "api": s.query.api, "kind": s.query.kind,
                "line": s.query.line, "expected": list(s.query.expected),
                "returned": top(s), "families": s.families()[:SEARCH_LIMIT],
                "family_hit": s.family_hit(SEARCH_LIMIT),
                "retry": s.query.retry, "retry_hit": r.hit(SEARCH_LIMIT),
                "retry_returned": top(r),
                **({"error": s.error} if s.error else {}),
                **({"retry_error": r.error} if r.error else {}),
            }, ensure_ascii=False) + "\n")
    return len(misses)


def report_json(report: Report, args: argparse.Namespace) -> dict[str, Any]:
    """The report's figures as JSON (what render() prints, for tools)."""
    out: dict[str, Any] = {
        "corpus": {"files": report.corpus_files, "skipped": len(report.skipped),
                   "rpcs": report.corpus_rpcs, "descriptor_bytes": report.descriptor_bytes},
        "eval_set": None if report.check is None else {
            "path": str(args.queries), "requests": report.check.queries,
            "apis": report.check.apis, "multi_version": report.check.multi_version,
            "evaluated": len(report.searches)},
        "gateway_flags": report.naming + ["--tool-search"] + report.embeddings,
        "unserved": report.unserved,
        "notes": report.notes,
    }
    if report.searches:
        by = groups(report)
        out["retrieval"] = {
            "search_limit": SEARCH_LIMIT,
            "ranking": rankings(report),
            "rankings_reported": sorted({s.ranking or "" for s in report.searches} - {""}),
            "ranking_wait": report.ranking_wait or None,
            "family_source": family_sources(report),
            "distinct_rpcs_top5_mean": round(statistics.mean(
                s.distinct(SEARCH_LIMIT) for s in report.searches), 2),
            "errors": sum(1 for s in [*report.searches, *report.retries] if s.error),
            "overall": figures(by["overall"]["all"]),
            "by_kind": {k: figures(v) for k, v in by["kind"].items()},
            "by_half": {h: figures(v) for h, v in by["half"].items()},
            "by_api": {a: figures(v) for a, v in by["api"].items()},
        }
        client = [s.client_ms for s in report.searches]
        server = [s.server_ms for s in report.searches if s.server_ms is not None]
        out["latency_ms"] = {
            "client": {"p50": percentile(client, 50), "p99": percentile(client, 99),
                       "max": max(client)},
            "server": {"key": report.server_latency_key, "p50": percentile(server, 50),
                       "p99": percentile(server, 99), "max": max(server)} if server else None,
        }
    out["listings"] = [{"label": l.label, "tools": l.tools, "json_bytes": l.pages_bytes,
                        "tokens": l.tokens, "seconds": round(l.seconds, 2)}
                       for l in report.listings]
    out["sequence"] = {"steps": [{"step": step, "json_bytes": size, "tokens": count}
                                 for step, size, count in report.sequence],
                       "note": report.sequence_note}
    out["memory_kib"] = [{"when": label, **values} for label, values in report.memory]
    return out


# --- main --------------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"[tool-search-eval] {message}", file=sys.stderr, flush=True)


async def measure(args: argparse.Namespace, report: Report, queries: list[Query],
                  googleapis: Path, demo: Path) -> int:
    if report.embeddings:
        done = subprocess.run([str(args.gateway), "--help"], capture_output=True, text=True)
        if "--search-embeddings" not in done.stdout:
            raise SystemExit("the gateway has no --search-embeddings (its --help does not list "
                             "it); run without --search-embeddings for the keyword ranking")

    tokens = Tokens()
    logs = args.work / "gateway.log"
    logs.write_text("")
    report.naming = await gateway_naming(args.gateway, googleapis, logs)
    if report.naming:
        log(f"the gateway refuses duplicate tool names; retrying with {' '.join(report.naming)}")
    base = ["--descriptor-set", str(googleapis), "--target", DEAD_TARGET, *report.naming]

    if args.search_only:
        report.notes.append("--search-only: the full tools/list listings (their tokens, memory "
                            "and the check that every expected RPC is served) were not measured")
    else:
        log("googleapis: full tools/list")
        tools = await measure_full_listing("googleapis", args.gateway, base, logs, tokens, report)
        served = {normalise(t.get("_meta", {}).get("protoc-gen-rust-mcp/rpc", {}).get("path", ""))
                  for t in tools}
        report.unserved = sorted({e for q in queries for e in q.expected
                                  if normalise(e) not in served})
        log("demo: full tools/list")
        await measure_full_listing("demo", args.gateway,
                                   ["--descriptor-set", str(demo), "--target", DEAD_TARGET],
                                   logs, tokens, report)

    if not gateway_has_tool_search(args.gateway):
        report.notes.append(f"{NO_TOOL_SEARCH}: retrieval, latency, the discovery listing and "
                            "the search -> describe -> call sequence were not measured")
        log(f"{NO_TOOL_SEARCH} (its --help does not list it): search not measured")
        return 3

    log("demo: --tool-search tools/list")
    start = time.perf_counter()
    async with gateway_session(args.gateway, ["--descriptor-set", str(demo), "--target",
                                              DEAD_TARGET, "--tool-search"], logs) as (session, _):
        demo_tools = await list_all(session)
        seconds = time.perf_counter() - start
    size, count = tokens.json({"tools": demo_tools})
    report.listings.append(Listing("demo: --tool-search tools/list", len(demo_tools), size,
                                   count, seconds))
    log(f"googleapis: search_tools for {len(queries)} queries"
        + (f" ({' '.join(report.embeddings)})" if report.embeddings else ""))
    await measure_tool_search(args.gateway, base, logs, tokens, queries, report, args)
    return 4 if report.embeddings and report.ranking_wait.startswith("the ranking was not") \
        else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="the repository root")
    parser.add_argument("--corpus", type=Path, required=True, help="google-proto-files' root")
    parser.add_argument("--protoc", type=Path, required=True)
    parser.add_argument("--include", type=Path, required=True, help="protoc's well-known types")
    parser.add_argument("--gateway", type=Path, help="the grpc-mcp-gateway binary")
    parser.add_argument("--queries", type=Path, default=Path("tests/tool-search/queries.jsonl"))
    parser.add_argument("--work", type=Path, default=Path(".tools/tool-search"),
                        help="descriptor sets and the gateway's log")
    parser.add_argument("--out", type=Path,
                        help="write the report here: FILE.json gets the figures as JSON and "
                        "FILE.md the summary as Markdown; any other name gets the Markdown, with "
                        "the JSON beside it (suffix .json)")
    parser.add_argument("--misses", type=Path,
                        help="the misses as JSONL (default: next to --out, .misses.jsonl)")
    parser.add_argument("--limit-requests", type=int, metavar="N",
                        help="evaluate only the first N requests of the set (a quick run; the "
                        "halves still go by the lines' parity)")
    parser.add_argument("--search-only", action="store_true",
                        help="skip the full tools/list listings (tokens, memory, served check)")
    parser.add_argument("--search-embeddings", metavar="URL",
                        help="passed to the --tool-search gateway as --search-embeddings URL; "
                        "the run first waits for the hybrid ranking")
    parser.add_argument("--search-embeddings-model", metavar="NAME",
                        help="passed to the --tool-search gateway as --search-embeddings-model")
    parser.add_argument("--embeddings-timeout", type=float, default=1800, metavar="SECONDS",
                        help="how long to wait for `ranking: hybrid` without a `ranking_note` "
                        "(default 1800); after it the run evaluates as it is and exits 4")
    parser.add_argument("--check-only", action="store_true",
                        help="build the descriptor set and check the eval set, nothing more")
    args = parser.parse_args()
    os.chdir(args.root)
    args.work.mkdir(parents=True, exist_ok=True)
    report = Report()

    files = service_files(args.corpus)
    googleapis = args.work / "googleapis.binpb"
    start = time.perf_counter()
    report.skipped = build_descriptor_set(args.protoc, [args.corpus, args.include], files,
                                          googleapis)
    report.corpus_files = len(files)
    report.descriptor_bytes = googleapis.stat().st_size
    corpus_rpcs = rpc_paths(googleapis)
    report.corpus_rpcs = len(corpus_rpcs)
    print(f"descriptor set: {len(files) - len(report.skipped)} of {len(files)} service files "
          f"compiled together, {len(report.skipped)} skipped, {len(corpus_rpcs):,} RPCs, "
          f"{report.descriptor_bytes / 2**20:.1f} MiB in {time.perf_counter() - start:.1f} s "
          f"({googleapis})")
    for rel, error in sorted(report.skipped.items()):
        print(f"  skipped {rel}: {error}")

    queries = load_queries(args.queries)
    report.check = check_queries(queries, corpus_rpcs)
    kinds = ", ".join(f"{sum(q.kind == k for q in queries)} {k}" for k in KINDS)
    print(f"eval set: {report.check.queries} queries, {report.check.apis} APIs, "
          f"{report.check.multi_version} expecting an RPC that exists in several API versions; "
          f"kinds: {kinds}; every request has a retry")
    if report.check.duplicates:
        print(f"eval set: repeated queries: {report.check.duplicates}")
        return 1
    if report.check.missing:
        print(f"eval set: {len(report.check.missing)} expected paths are not in the corpus:")
        for query, path in report.check.missing:
            print(f"  {path}  (query: {query!r})")
        return 1
    if args.check_only:
        return 0
    if not args.gateway:
        parser.error("--gateway is required unless --check-only")
    if args.search_embeddings_model and not args.search_embeddings:
        parser.error("--search-embeddings-model needs --search-embeddings")
    if args.search_embeddings:
        report.embeddings = ["--search-embeddings", args.search_embeddings]
        if args.search_embeddings_model:
            report.embeddings += ["--search-embeddings-model", args.search_embeddings_model]
    args.all_queries = queries
    if args.limit_requests is not None:
        if args.limit_requests < 1:
            parser.error("--limit-requests needs a positive number")
        queries = queries[:args.limit_requests]
        report.notes.append(f"--limit-requests {args.limit_requests}: only the first "
                            f"{len(queries)} of the {len(args.all_queries)} requests were "
                            "evaluated")

    demo = args.work / "demo.binpb"
    errors = run_protoc(args.protoc, [Path("examples/demo/proto"), Path("testdata"),
                                      Path("proto"), args.include],
                        ["demo/v1/tasks.proto", "google/longrunning/operations.proto"], demo)
    if errors:
        raise SystemExit("the demo's protos do not compile:\n" + "\n".join(errors))

    status = asyncio.run(measure(args, report, queries, googleapis, demo))
    text = render(report, args)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if args.out.suffix == ".json":
            markdown, figures = args.out.with_suffix(".md"), args.out
        else:
            markdown, figures = args.out, args.out.with_suffix(".json")
        markdown.write_text(text, encoding="utf-8")
        figures.write_text(json.dumps(report_json(report, args), indent=2, ensure_ascii=False)
                           + "\n", encoding="utf-8")
        print(f"summary written to {markdown}, figures (JSON) to {figures}")
    if report.searches:
        misses = args.misses or (args.out.with_suffix(".misses.jsonl") if args.out
                                 else args.work / "misses.jsonl")
        count = write_misses(report, misses)
        print(f"{count} misses (hit@{SEARCH_LIMIT}) written to {misses}")
    if status == 3:
        print(f"error: {NO_TOOL_SEARCH}", file=sys.stderr)
    if status == 4:
        print(f"error: {report.ranking_wait}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
