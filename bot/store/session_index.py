"""The fuzzy indexer's units of work (`bot.memory.indexer.SessionIndexer`): each stage's reads in a session of their
own and each write in one transaction, so a kill part-way loses and duplicates nothing.

    changed = await changed_channels(db, workspace_id)
    lines, stored = await channel_sessions(db, changed[:100])
    added = await replace_sessions(db, workspace_id, gone=[s.id for s in dropped], new=spans)

The statements themselves are `bot.store.memory_sessions`'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import select

from bot.store import memory_sessions as rows
from bot.store import models, truth
from bot.store.db import Database
from bot.store.memory_sessions import SessionLine, SessionSpan, StoredSession


async def changed_channels(db: Database, workspace_id: int) -> list[int]:
    """`memory_sessions.changed_channels`: the channels to cut into sessions again."""
    async with db.session() as session:
        return await rows.changed_channels(session, workspace_id)


async def channel_sessions(
    db: Database, channel_ids: Sequence[int]
) -> tuple[dict[int, list[SessionLine]], dict[str, StoredSession]]:
    """The channels' messages as session lines and the sessions stored for them now, read together."""
    async with db.session() as session:
        return await rows.channel_lines(session, channel_ids), await rows.stored_sessions(session, channel_ids)


async def replace_sessions(db: Database, workspace_id: int, *, gone: Sequence[int], new: Sequence[SessionSpan]) -> int:
    """Drop the sessions `gone` (ids) and store `new` in one transaction; returns how many were new."""
    async with db.session() as session, session.begin():
        await truth.delete_sessions(session, gone)
        return await rows.insert_sessions(db, session, workspace_id, new)


async def pending_work(db: Database, workspace_id: int) -> int:
    """How many stage steps are left: one per session still to summarize, one per session still to embed."""
    async with db.session() as session:
        flags = (
            await session.execute(
                select(models.MemorySession.summarized, models.MemorySession.embedded).where(
                    models.MemorySession.workspace_id == workspace_id,
                    ~(models.MemorySession.summarized & models.MemorySession.embedded),
                )
            )
        ).all()
    return sum((not summarized) + (not embedded) for summarized, embedded in flags)


async def next_unsummarized(db: Database, workspace_id: int, *, after: int, limit: int) -> list[tuple[int, str]]:
    """The next sessions (by id, past `after`) that still need a summary: (id, content hash)."""
    async with db.session() as session:
        stmt = (
            select(models.MemorySession.id, models.MemorySession.content_hash)
            .where(
                models.MemorySession.workspace_id == workspace_id,
                models.MemorySession.summarized.is_(False),
                models.MemorySession.id > after,
            )
            .order_by(models.MemorySession.id)
            .limit(limit)
        )
        return [(id_, content_hash) for id_, content_hash in (await session.execute(stmt)).all()]


async def session_lines(db: Database, session_ids: Sequence[int]) -> dict[int, list[SessionLine]]:
    """`memory_sessions.session_lines` in a session of its own."""
    async with db.session() as session:
        return await rows.session_lines(session, session_ids)


async def mark_summarized(db: Database, session_ids: Sequence[int]) -> None:
    async with db.session() as session, session.begin():
        await rows.mark_summarized(session, session_ids)


async def next_unembedded(
    db: Database, workspace_id: int, *, after: int, limit: int, with_lines: bool
) -> tuple[list[tuple[int, str, int, str]], dict[int, list[SessionLine]]]:
    """The next summarized sessions (by id, past `after`) not yet in the vector index, as (id, key, channel id,
    summary), and with `with_lines` their lines (read in the same session)."""
    async with db.session() as session:
        stmt = (
            select(
                models.MemorySession.id,
                models.MemorySession.key,
                models.MemorySession.channel_id,
                models.SessionSummary.text,
            )
            .join(models.SessionSummary, models.SessionSummary.content_hash == models.MemorySession.content_hash)
            .where(
                models.MemorySession.workspace_id == workspace_id,
                models.MemorySession.summarized.is_(True),
                models.MemorySession.embedded.is_(False),
                models.MemorySession.id > after,
            )
            .order_by(models.MemorySession.id)
            .limit(limit)
        )
        found = [(id_, key, channel_id, text) for id_, key, channel_id, text in (await session.execute(stmt)).all()]
        lines = await rows.session_lines(session, [row[0] for row in found]) if with_lines else {}
    return found, lines


async def mark_embedded(db: Database, window_counts: Mapping[int, int]) -> None:
    async with db.session() as session, session.begin():
        await rows.mark_embedded(session, window_counts)
