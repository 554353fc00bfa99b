"""Vectors kept in memory by channel, for exact nearest-neighbour search within a viewer's channels.

    cache = VectorCache(capacity=100_000)
    matches = cache.nearest(("askwith", 1), query_vector, {3: 7, 9: 2}, top_k=10, read=read_channels)

Chroma's HNSW index filtered to a viewer's channels gets slower as the filter gets more selective: on a
1,000,000-message workspace a viewer sees about 24 of 9,150 channels, and the filtered query took 255 ms. The
vectors of those channels number a few thousand, and an exact dot product over them takes well under a millisecond.
So each channel's vectors are kept here (unit-length float32 rows) once read, and read again when the channel's
memory version moved: the database bumps it whenever the channel's sessions are embedded or dropped, by whichever
process does it, so a reader in another process notices on its next search. Scoping is by construction: only the
channels asked for are scored (`VectorIndex` reads a channel by the keys the database records for it, or by a
filter on the channel). Least recently used channels go when more than `capacity` vectors are held; a search
whose channels hold more than that returns None and the caller asks Chroma's index instead.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ChannelVectors:
    """One channel's vectors: keys, the payload returned with each, and the matrix (one row each)."""

    keys: tuple[str, ...]
    payloads: tuple[Any, ...]
    matrix: np.ndarray  # (len(keys), dim) float32, rows of unit length (zero rows stay zero)

    @classmethod
    def of(cls, keys: Sequence[str], payloads: Sequence[Any], vectors: Any) -> ChannelVectors:
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(keys), -1) if keys else np.zeros((0, 0), np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return cls(tuple(keys), tuple(payloads), matrix / np.where(norms > 0, norms, 1.0))


Scope = tuple[str, int]  # (index name, workspace id): the channels of one collection
ReadChannels = Callable[[list[int]], dict[int, ChannelVectors]]  # channel ids -> their vectors (every id present)


@dataclass
class _Held:
    version: int
    vectors: ChannelVectors


class VectorCache:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity  # vectors held at most
        self._held: OrderedDict[tuple[Scope, int], _Held] = OrderedDict()  # least recently used first
        self._sizes: dict[tuple[Scope, int], int] = {}  # vectors per channel when last read (kept after eviction)
        self._count = 0
        self._lock = threading.Lock()

    def nearest(
        self, scope: Scope, vector: Any, versions: Mapping[int, int], top_k: int, *, read: ReadChannels
    ) -> list[tuple[str, float, Any]] | None:
        """The `top_k` (key, cosine similarity, payload) nearest `vector` among the given channels (channel id ->
        memory version), best first; None when those channels hold more vectors than the cache may."""
        if sum(self._sizes.get((scope, c), 0) for c in versions) > self.capacity:
            return None
        if stale := self.stale(scope, versions):
            # Read outside the lock (it blocks on Chroma); a concurrent reader of the same channels stores the same.
            fresh = read(stale)
            with self._lock:
                for channel in stale:
                    self._store((scope, channel), _Held(versions[channel], fresh[channel]))
        with self._lock:
            held = [self._held.get((scope, c)) for c in versions]
            for channel in versions:
                if (scope, channel) in self._held:
                    self._held.move_to_end((scope, channel))
            self._evict()
        if any(h is None for h in held):  # more than the capacity: some were evicted at once
            return None
        return _top(np.asarray(vector, dtype=np.float32), [h.vectors for h in held if h is not None], top_k)

    def stale(self, scope: Scope, versions: Mapping[int, int]) -> list[int]:
        """The channels (channel id -> memory version) a search would read first: not held, or held at another
        version."""
        with self._lock:
            return [c for c, v in versions.items() if (h := self._held.get((scope, c))) is None or h.version != v]

    def _store(self, key: tuple[Scope, int], held: _Held) -> None:
        # Called with the lock held.
        if (old := self._held.pop(key, None)) is not None:
            self._count -= len(old.vectors.keys)
        self._held[key] = held
        self._count += len(held.vectors.keys)
        self._sizes[key] = len(held.vectors.keys)

    def _evict(self) -> None:
        # Called with the lock held.
        while self._count > self.capacity and self._held:
            _, old = self._held.popitem(last=False)
            self._count -= len(old.vectors.keys)


def _top(query: np.ndarray, channels: list[ChannelVectors], top_k: int) -> list[tuple[str, float, Any]]:
    filled = [c for c in channels if c.keys]
    if not filled or top_k < 1:
        return []
    norm = float(np.linalg.norm(query))
    scores = np.concatenate([c.matrix @ (query / norm if norm > 0 else query) for c in filled])
    take = min(top_k, len(scores))
    best = np.argpartition(-scores, take - 1)[:take]
    best = best[np.argsort(-scores[best], kind="stable")]
    offsets = np.cumsum([0] + [len(c.keys) for c in filled])
    found = []
    for row in best:
        which = int(np.searchsorted(offsets, row, side="right")) - 1
        channel, at = filled[which], int(row - offsets[which])
        found.append((channel.keys[at], float(scores[row]), channel.payloads[at]))
    return found
