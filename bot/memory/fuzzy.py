"""Fuzzy memory: the sessions that best answer a question, seen by one viewer.

    fuzzy = FuzzyMemory(db, index)
    hits = await fuzzy.search(viewer, FuzzyQuery("who is moving to Paris?", top_k=3, expand=True))

Two rankings of sessions are fused by reciprocal rank: by their objective summary's similarity to the question, and
by their best-matching messages (hybrid retrieval over messages, `bot.memory.hybrid`, with the question read by
`read_query`). A summary, above all an extractive one, leaves most lines out; the best message of a session often
holds the evidence the summary dropped. An extractive summary's rank only orders the sessions no message found
(`_fused`). Each hit carries those best-matching messages (`matches`).

Only sessions of channels the viewer can see right now (`visible_channel_versions`: membership minus exclusions) ever
come back: the vector queries are filtered to those channels, and every match is checked against the database
again, so a vector left behind by an interrupted re-index, or a channel excluded since, cannot leak.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from functools import cache, partial

from sqlalchemy import Select, bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.memory.clear import ClearMemory
from bot.memory.hybrid import RRF_K, HybridMemory
from bot.memory.query import interleaved, read_query
from bot.memory.types import ClearQuery, FuzzyHit, FuzzyQuery, MessageView, Viewer
from bot.memory.vector_index import VectorIndex, VectorMatch
from bot.memory.vector_keys import vector_keys
from bot.memory.visibility import read_visible_channel_versions
from bot.store import models
from bot.store.db import Database, as_utc


# Asked of the index beyond top_k, so that a few matches dropped by the database check still leave top_k hits.
OVERFETCH = 4
SESSION_POOL = 20  # sessions ranked by summary, fused with those ranked by messages
MESSAGE_POOL = 30  # best messages ranked (their sessions are candidates)
MATCHES_PER_HIT = 3


class FuzzyMemory:
    def __init__(self, db: Database, index: VectorIndex, *, by_messages: bool = True) -> None:
        self.db = db
        self.index = index
        self.by_messages = by_messages  # False: summaries only (fuzzy memory v1)

    async def search(
        self, viewer: Viewer, query: FuzzyQuery, *, visible: Mapping[int, int] | None = None
    ) -> list[FuzzyHit]:
        """Top-k sessions for `query.text`, best first, within the viewer's sight. `visible`: the viewer's channels
        with their memory versions (`visible_channel_versions`) when the caller has just read them."""
        if not query.text.strip() or query.top_k < 1:
            return []
        if visible is None:
            visible = await read_visible_channel_versions(self.db, viewer)
        pool = max(query.top_k + OVERFETCH, SESSION_POOL if self.by_messages else 0)
        keys = partial(vector_keys, self.db, windows=False)
        by_summary = await self.index.query(
            viewer.workspace_id, query.text, channel_ids=visible, top_k=pool, keys=keys
        )
        best = await self._best_messages(viewer, query.text, visible) if self.by_messages else []
        async with self.db.read() as conn:
            found = await _in_sessions(conn, [id_ for id_, _ in best], visible)
            sessions_of = {id_: key for id_, (key, _) in found.items()}
            by_message = list(dict.fromkeys(sessions_of[id_] for id_, _ in best if id_ in sessions_of))
            matches = _candidates(by_summary, by_message) if self.by_messages else by_summary
            hits = await _hits(conn, viewer.workspace_id, matches, visible)
            if self.by_messages:
                hits = _fused(hits, by_summary, by_message)
            hits = hits[: query.top_k]
            keys = [hit.session_key for hit in hits]
            wanted = [id_ for id_, _ in best if sessions_of.get(id_) in keys]
            views = {id_: found[id_][1] for id_ in wanted}
            hits = [_with_matches(hit, wanted, views, sessions_of) for hit in hits]
            if query.expand and hits:
                messages = await _session_messages(conn, keys)
                hits = [_with_messages(hit, messages.get(hit.session_key, ())) for hit in hits]
        return hits

    async def _best_messages(self, viewer: Viewer, text: str, visible: Mapping[int, int]) -> list[tuple[int, float]]:
        read = read_query(text, participants=[viewer.name])
        hybrid = HybridMemory(ClearMemory(self.db), self.index.windows())
        # A text of several questions: the best messages of each in turn, as typed searches take them.
        queries = [ClearQuery(part.keywords, limit=MESSAGE_POOL, question=part.text) for part in read.parts or (read,)]
        rankings = await asyncio.gather(*(hybrid.fused(viewer, query, visible=visible) for query in queries))
        return interleaved(rankings, key=lambda found: found[0])[:MESSAGE_POOL]


async def _hits(
    conn: AsyncConnection, workspace_id: int, matches: Sequence[VectorMatch], visible: Collection[int]
) -> list[FuzzyHit]:
    """The matches that are live sessions of visible channels, in match order."""
    if not matches:
        return []
    params = {"workspace_id": workspace_id, "keys": [m.key for m in matches], "visible": list(visible)}
    rows = {row[0]: row for row in (await conn.execute(_hits_statement(), params)).all()}
    return [_hit(match, *rows[match.key][1:]) for match in matches if match.key in rows]


# The statements of a search are built once (their construction cost as much as their execution), with their lists
# of keys, ids and channels bound at execution.
@cache
def _hits_statement() -> Select:  # type: ignore[type-arg]
    return (
        select(
            models.MemorySession.key,
            models.Channel.platform_id,
            models.Channel.name,
            models.SessionSummary.text,
            models.SessionSummary.method,
            models.MemorySession.first_ts,
            models.MemorySession.last_ts,
        )
        .join(models.Channel, models.Channel.id == models.MemorySession.channel_id)
        .join(models.SessionSummary, models.SessionSummary.content_hash == models.MemorySession.content_hash)
        .where(
            models.MemorySession.workspace_id == bindparam("workspace_id"),
            models.MemorySession.key.in_(bindparam("keys", expanding=True)),
            models.MemorySession.channel_id.in_(bindparam("visible", expanding=True)),
        )
    )


def _hit(
    match: VectorMatch,
    channel_id: str,
    channel_name: str,
    summary: str,
    summary_method: str,
    first_ts: datetime,
    last_ts: datetime,
) -> FuzzyHit:
    return FuzzyHit(
        session_key=match.key,
        channel_id=channel_id,
        channel_name=channel_name,
        summary=summary,
        summary_method=summary_method,
        score=match.score,
        first_ts=as_utc(first_ts),
        last_ts=as_utc(last_ts),
    )


async def _session_messages(conn: AsyncConnection, keys: Sequence[str]) -> dict[str, tuple[MessageView, ...]]:
    grouped: dict[str, list[MessageView]] = defaultdict(list)
    rows = (await conn.execute(_session_messages_statement(), {"keys": list(keys)})).all()
    for key, message_id, channel_id, channel_name, sender, ts, text in rows:
        grouped[key].append(MessageView(message_id, channel_id, channel_name, sender, as_utc(ts), text))
    return {key: tuple(views) for key, views in grouped.items()}


@cache
def _session_messages_statement() -> Select:  # type: ignore[type-arg]
    return (
        select(
            models.MemorySession.key,
            models.Message.platform_id,
            models.Channel.platform_id,
            models.Channel.name,
            models.Member.name,
            models.Message.ts,
            models.Message.text,
        )
        .join(models.SessionMessage, models.SessionMessage.session_id == models.MemorySession.id)
        .join(models.Message, models.Message.id == models.SessionMessage.message_id)
        .join(models.Channel, models.Channel.id == models.Message.channel_id)
        .join(models.Member, models.Member.id == models.Message.sender_id)
        .where(models.MemorySession.key.in_(bindparam("keys", expanding=True)))
        .order_by(models.MemorySession.key, models.Message.ts, models.Message.id)
    )


def _with_messages(hit: FuzzyHit, messages: tuple[MessageView, ...]) -> FuzzyHit:
    return dataclasses.replace(hit, messages=messages)


def _candidates(by_summary: Sequence[VectorMatch], by_message: Sequence[str]) -> list[VectorMatch]:
    """The sessions either ranking found: those of the best messages, then the summaries' (ranked by `_fused`).
    `by_message`: session keys in the order of their best message."""
    keys = dict.fromkeys([*by_message, *(m.key for m in by_summary)])
    return [VectorMatch(key, 0.0) for key in keys]


def _fused(hits: Sequence[FuzzyHit], by_summary: Sequence[VectorMatch], by_message: Sequence[str]) -> list[FuzzyHit]:
    """Sessions by reciprocal rank over their best message's rank and, for a model's summary, their summary's.

    An extractive summary is some of the session's own lines, which the lexical index and the windows already rank
    message by message; ranked by its own vector it only adds noise (FriendsTV, "right session in top 5": 0.58 by
    messages alone, 0.51 fused with extractive summaries). So such a summary's rank only orders the sessions no
    message found, after those that one did. A model's summary says what the session is about in other words, and
    is fused as an equal ranking."""
    message_rank = {key: rank for rank, key in enumerate(by_message, start=1)}
    summary_rank = {match.key: rank for rank, match in enumerate(by_summary, start=1)}
    unranked = len(summary_rank) + 1

    def score(hit: FuzzyHit) -> float:
        found = 1.0 / (RRF_K + message_rank[hit.session_key]) if hit.session_key in message_rank else 0.0
        if hit.summary_method != "extractive" and hit.session_key in summary_rank:
            found += 1.0 / (RRF_K + summary_rank[hit.session_key])
        return found

    scored = [dataclasses.replace(hit, score=score(hit)) for hit in hits]
    return sorted(scored, key=lambda hit: (-hit.score, summary_rank.get(hit.session_key, unranked)))


async def _in_sessions(
    conn: AsyncConnection, message_ids: Sequence[int], visible: Collection[int]
) -> dict[int, tuple[str, MessageView]]:
    """The session (key) of each message and its view, among sessions of visible channels."""
    if not message_ids:
        return {}
    params = {"ids": list(message_ids), "visible": list(visible)}
    return {
        row[0]: (row[1], MessageView(row[2], row[3], row[4], row[5], as_utc(row[6]), row[7]))
        for row in (await conn.execute(_in_sessions_statement(), params)).all()
    }


@cache
def _in_sessions_statement() -> Select:  # type: ignore[type-arg]
    return (
        select(
            models.Message.id,
            models.MemorySession.key,
            models.Message.platform_id,
            models.Channel.platform_id,
            models.Channel.name,
            models.Member.name,
            models.Message.ts,
            models.Message.text,
        )
        .join(models.SessionMessage, models.SessionMessage.message_id == models.Message.id)
        .join(models.MemorySession, models.MemorySession.id == models.SessionMessage.session_id)
        .join(models.Channel, models.Channel.id == models.Message.channel_id)
        .join(models.Member, models.Member.id == models.Message.sender_id)
        .where(
            models.Message.id.in_(bindparam("ids", expanding=True)),
            models.Message.channel_id.in_(bindparam("visible", expanding=True)),
            models.MemorySession.channel_id.in_(bindparam("visible", expanding=True)),
        )
    )


def _with_matches(
    hit: FuzzyHit, ranked_ids: Sequence[int], views: dict[int, MessageView], sessions_of: dict[int, str]
) -> FuzzyHit:
    own = [views[id_] for id_ in ranked_ids if sessions_of.get(id_) == hit.session_key and id_ in views]
    return dataclasses.replace(hit, matches=tuple(own[:MATCHES_PER_HIT]))
