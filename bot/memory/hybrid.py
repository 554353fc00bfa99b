"""Hybrid retrieval: clear memory's lexical ranking fused with dense search over message windows.

    hybrid = HybridMemory(ClearMemory(db), index.windows())
    hits = await hybrid.search(viewer, ClearQuery(keywords=("rehearsal",), question="when is the rehearsal?"))

The lexical side is clear memory's own ranking (FTS5 `bm25` / `ts_rank_cd`, viewer-scoped in SQL). The dense side
asks the window index (a few neighbouring messages embedded together with the same MiniLM model) for the windows
nearest to the question, filtered in Chroma to the viewer's visible channels. The two rankings are fused by
reciprocal rank (score = sum of weight / (RRF_K + rank)); every message of a window takes the window's rank. The
fused ids are then read in one SQL statement that checks each message, and each context neighbour, against the
viewer's scope and the query's filters again: a stale vector or a channel excluded since cannot show anything.

It answers the same call as `ClearMemory` (`search(viewer, ClearQuery)`), so it stands wherever clear memory does.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from bot.memory.clear import ClearMemory, assemble, check_query, filter_params, viewer_params
from bot.memory.keywords import phrase_of
from bot.memory.types import ClearHit, ClearQuery, Viewer
from bot.memory.vector_index import VectorIndex
from bot.memory.vector_keys import vector_keys
from bot.memory.visibility import read_visible_channel_versions
from bot.store.message_search_reads import SearchShape, read_chosen


RRF_K = 60  # the usual reciprocal-rank constant: a rank-1 hit counts 1/61, rank 10 1/70
LEXICAL_DEPTH = 30  # lexical hits fused
DENSE_DEPTH = 10  # windows fused (about 3 messages each)
DENSE_WEIGHT = 1.0


class HybridMemory:
    def __init__(
        self,
        clear: ClearMemory,
        windows: VectorIndex,
        *,
        lexical_depth: int = LEXICAL_DEPTH,
        dense_depth: int = DENSE_DEPTH,
        dense_weight: float = DENSE_WEIGHT,  # 0: lexical only
    ) -> None:
        self.clear = clear
        self.db = clear.db
        self.windows = windows
        self.lexical_depth = lexical_depth
        self.dense_depth = dense_depth
        self.dense_weight = dense_weight

    async def search(
        self, viewer: Viewer, query: ClearQuery, *, visible: Mapping[int, int] | None = None
    ) -> list[ClearHit]:
        """The best `query.limit` hits of both rankings fused, best first, each with its context window.
        `visible`: as for `fused`."""
        fused = await self.fused(viewer, query, visible=visible)
        # Read more than asked for: fan-out copies collapse and filters drop some.
        hits = await self._read(viewer, query, [id_ for id_, _ in fused[: query.limit * 3]])
        score = dict(fused)
        ranked = sorted(hits, key=lambda hit: -score[hit[0]])
        return [replace(hit, score=score[id_]) for id_, hit in _distinct(ranked)][: query.limit]

    async def fused(
        self, viewer: Viewer, query: ClearQuery, *, visible: Mapping[int, int] | None = None
    ) -> list[tuple[int, float]]:
        """Both rankings fused, (message database id, score), best first, unread and unfiltered: callers read
        them through a scoped statement (`search`) or map them to scoped sessions (fuzzy memory). `visible`: the
        viewer's channels with their memory versions, when the caller has just read them."""
        check_query(query)
        question = query.question.strip() or " ".join(query.keywords)
        # The two sides are independent: run them together (SQL on its connection, Chroma in a worker thread).
        lexical, dense = await asyncio.gather(
            self._lexical(viewer, query, visible) if any(map(phrase_of, query.keywords)) else _nothing(),
            self._dense(viewer, question, visible) if self.dense_weight > 0 and question else _nothing(),
        )
        return fuse(lexical, dense, dense_weight=self.dense_weight)

    async def _lexical(self, viewer: Viewer, query: ClearQuery, visible: Mapping[int, int] | None) -> list[int]:
        ranked = await self.clear.ranked(viewer, replace(query, limit=self.lexical_depth), visible=visible)
        return [id_ for id_, _ in ranked]

    async def _dense(self, viewer: Viewer, question: str, visible: Mapping[int, int] | None) -> list[tuple[int, ...]]:
        if visible is None:
            visible = await read_visible_channel_versions(self.db, viewer)
        keys = partial(vector_keys, self.db, windows=True)
        matches = await self.windows.query(
            viewer.workspace_id, question, channel_ids=visible, top_k=self.dense_depth, keys=keys
        )
        return [match.message_ids for match in matches]

    async def _read(self, viewer: Viewer, query: ClearQuery, ids: list[int]) -> list[tuple[int, ClearHit]]:
        if not ids:
            return []
        shape = SearchShape(
            dialect=self.db.dialect,
            context=query.context_window > 0,
            sender=bool(query.sender),
            channel=bool(query.channel),
            since=query.since is not None,
            until=query.until is not None,
        )
        params = {**viewer_params(viewer), **filter_params(query), "ids": ids, "window": query.context_window}
        rows = await read_chosen(self.db, shape, params)
        own_ids = {row.platform_id: row.id for row in rows if row.id == row.hit_id}
        return [(own_ids[hit.message.id], hit) for hit in assemble(rows, with_context=shape.context)]


def fuse(lexical: list[int], dense: list[tuple[int, ...]], *, dense_weight: float) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: (message id, score), best first; ties keep lexical order, then window order."""
    scores: dict[int, float] = defaultdict(float)
    order: dict[int, int] = {}
    for rank, id_ in enumerate(lexical, start=1):
        scores[id_] += 1.0 / (RRF_K + rank)
        order.setdefault(id_, len(order))
    for rank, window in enumerate(dense, start=1):
        for id_ in window:
            scores[id_] += dense_weight / (RRF_K + rank)
            order.setdefault(id_, len(order))
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))


async def _nothing() -> list[Any]:
    return []


def _distinct(ranked: list[tuple[int, ClearHit]]) -> list[tuple[int, ClearHit]]:
    """Fan-out copies (same sender, time and text, e.g. one line stored in several DMs) collapse into the first."""
    seen: set[tuple[str, str, str]] = set()
    kept = []
    for id_, hit in ranked:
        key = (hit.message.sender, hit.message.ts.isoformat(), hit.message.text)
        if key not in seen:
            seen.add(key)
            kept.append((id_, hit))
    return kept
