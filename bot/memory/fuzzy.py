"""Fuzzy memory: the sessions whose objective summaries are nearest to a question, seen by one viewer.

    fuzzy = FuzzyMemory(db, index)
    hits = await fuzzy.search(viewer, FuzzyQuery("who is moving to Paris?", top_k=3, expand=True))

Only sessions of channels the viewer can see right now (`visible_channel_ids`: membership minus exclusions) ever
come back: the vector query is filtered to those channels, and every match is checked against the database again,
so a vector left behind by an interrupted re-index, or a channel excluded since, cannot leak.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.memory.types import FuzzyHit, FuzzyQuery, MessageView, Viewer
from bot.memory.vector_index import VectorIndex, VectorMatch
from bot.memory.visibility import visible_channel_ids
from bot.store import models
from bot.store.db import Database, as_utc


# Asked of the index beyond top_k, so that a few matches dropped by the database check still leave top_k hits.
OVERFETCH = 4


class FuzzyMemory:
    def __init__(self, db: Database, index: VectorIndex) -> None:
        self.db = db
        self.index = index

    async def search(self, viewer: Viewer, query: FuzzyQuery) -> list[FuzzyHit]:
        """Top-k sessions by similarity of their summary to `query.text`, best first, within the viewer's sight."""
        if not query.text.strip() or query.top_k < 1:
            return []
        async with self.db.session() as session:
            visible = await visible_channel_ids(session, viewer)
        matches = await self.index.query(
            viewer.workspace_id, query.text, channel_ids=visible, top_k=query.top_k + OVERFETCH
        )
        async with self.db.session() as session:
            hits = await _hits(session, viewer.workspace_id, matches, visible)
            hits = hits[: query.top_k]
            if query.expand and hits:
                messages = await _session_messages(session, [hit.session_key for hit in hits])
                hits = [_with_messages(hit, messages.get(hit.session_key, ())) for hit in hits]
        return hits


async def _hits(
    session: AsyncSession, workspace_id: int, matches: Sequence[VectorMatch], visible: Sequence[int]
) -> list[FuzzyHit]:
    """The matches that are live sessions of visible channels, in match order."""
    if not matches:
        return []
    stmt = (
        select(models.MemorySession, models.Channel.platform_id, models.Channel.name, models.SessionSummary)
        .join(models.Channel, models.Channel.id == models.MemorySession.channel_id)
        .join(models.SessionSummary, models.SessionSummary.content_hash == models.MemorySession.content_hash)
        .where(
            models.MemorySession.workspace_id == workspace_id,
            models.MemorySession.key.in_([m.key for m in matches]),
            models.MemorySession.channel_id.in_(list(visible)),
        )
    )
    rows = {row[0].key: row for row in (await session.execute(stmt)).all()}
    return [_hit(match, *rows[match.key]) for match in matches if match.key in rows]


def _hit(
    match: VectorMatch,
    stored: models.MemorySession,
    channel_id: str,
    channel_name: str,
    summary: models.SessionSummary,
) -> FuzzyHit:
    return FuzzyHit(
        session_key=stored.key,
        channel_id=channel_id,
        channel_name=channel_name,
        summary=summary.text,
        summary_method=summary.method,
        score=match.score,
        first_ts=as_utc(stored.first_ts),
        last_ts=as_utc(stored.last_ts),
    )


async def _session_messages(session: AsyncSession, keys: Sequence[str]) -> dict[str, tuple[MessageView, ...]]:
    stmt = (
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
        .where(models.MemorySession.key.in_(list(keys)))
        .order_by(models.MemorySession.key, models.Message.ts, models.Message.id)
    )
    grouped: dict[str, list[MessageView]] = defaultdict(list)
    for key, message_id, channel_id, channel_name, sender, ts, text in (await session.execute(stmt)).all():
        grouped[key].append(MessageView(message_id, channel_id, channel_name, sender, as_utc(ts), text))
    return {key: tuple(views) for key, views in grouped.items()}


def _with_messages(hit: FuzzyHit, messages: tuple[MessageView, ...]) -> FuzzyHit:
    return dataclasses.replace(hit, messages=messages)
