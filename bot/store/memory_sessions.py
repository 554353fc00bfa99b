"""The statements of fuzzy indexing, within a caller's session: which channels changed, their messages as session
lines, and writing or marking `memory_session` / `session_message` rows. `bot.store.session_index` runs them as the
indexer's units of work; agents read through `FuzzyMemory`.

    async with db.session() as session:
        changed = await changed_channels(session, workspace_id)
        lines = await channel_lines(session, changed)     # {channel id: [SessionLine, ...]} oldest first

A session line and a session span are the store's records of what `bot.memory.sessions` cuts and hashes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import bulk, models, truth
from bot.store.db import Database, as_utc


@dataclass(frozen=True)
class SessionLine:
    """One stored message as sessionizing sees it."""

    message_id: int  # database id
    sender: str  # sender's handle
    ts: datetime
    text: str

    def transcript(self) -> str:
        return f"{self.sender}: {self.text}"


@dataclass(frozen=True)
class SessionSpan:
    """A computed session of one channel: its messages, its key and the hash of its content."""

    channel_id: int  # database id
    lines: tuple[SessionLine, ...]
    key: str
    content_hash: str

    @property
    def first_ts(self) -> datetime:
        return self.lines[0].ts

    @property
    def last_ts(self) -> datetime:
        return self.lines[-1].ts

    @property
    def message_ids(self) -> list[int]:
        return [line.message_id for line in self.lines]


@dataclass(frozen=True)
class StoredSession:
    id: int
    key: str
    embedded: bool


async def changed_channels(session: AsyncSession, workspace_id: int) -> list[int]:
    """Channels whose stored messages no longer match their sessions: new messages, or messages gone (the
    session_message rows of a deleted message cascade away, so the link count drops below the session sizes)."""
    messages = await _count_by_channel(
        session,
        select(models.Message.channel_id, func.count())
        .where(models.Message.workspace_id == workspace_id)
        .group_by(models.Message.channel_id),
    )
    sized = await _count_by_channel(
        session,
        select(models.MemorySession.channel_id, func.sum(models.MemorySession.message_count))
        .where(models.MemorySession.workspace_id == workspace_id)
        .group_by(models.MemorySession.channel_id),
    )
    linked = await _count_by_channel(
        session,
        select(models.MemorySession.channel_id, func.count())
        .join(models.SessionMessage, models.SessionMessage.session_id == models.MemorySession.id)
        .where(models.MemorySession.workspace_id == workspace_id)
        .group_by(models.MemorySession.channel_id),
    )
    channels = set(messages) | set(sized)
    return sorted(c for c in channels if not messages.get(c, 0) == sized.get(c, 0) == linked.get(c, 0))


async def _count_by_channel(session: AsyncSession, stmt) -> dict[int, int]:  # noqa: ANN001 - a 2-column Select
    return {channel: int(count) for channel, count in (await session.execute(stmt)).all()}


async def channel_lines(session: AsyncSession, channel_ids: Sequence[int]) -> dict[int, list[SessionLine]]:
    """Each channel's messages as session lines, oldest first."""
    stmt = (
        _lines(models.Message.channel_id)
        .where(models.Message.channel_id.in_(list(channel_ids)))
        .order_by(models.Message.channel_id, models.Message.ts, models.Message.id)
    )
    return await _grouped_lines(session, stmt)


async def stored_sessions(session: AsyncSession, channel_ids: Sequence[int]) -> dict[str, StoredSession]:
    stmt = select(models.MemorySession.id, models.MemorySession.key, models.MemorySession.embedded).where(
        models.MemorySession.channel_id.in_(list(channel_ids))
    )
    return {key: StoredSession(id_, key, embedded) for id_, key, embedded in (await session.execute(stmt)).all()}


async def session_lines(session: AsyncSession, session_ids: Sequence[int]) -> dict[int, list[SessionLine]]:
    """The lines of the given sessions, oldest first."""
    stmt = (
        _lines(models.SessionMessage.session_id, by_session=True)
        .where(models.SessionMessage.session_id.in_(list(session_ids)))
        .order_by(models.SessionMessage.session_id, models.Message.ts, models.Message.id)
    )
    return await _grouped_lines(session, stmt)


def _lines(group: ColumnElement[int], *, by_session: bool = False) -> Select[Any]:
    """(group, message id, sender handle, time, text) of messages: read from `message`, or `by_session` from the
    sessions' links (`session_message`) to their messages."""
    stmt = select(group, models.Message.id, models.Member.name, models.Message.ts, models.Message.text)
    if by_session:
        stmt = stmt.join(models.Message, models.Message.id == models.SessionMessage.message_id)
    return stmt.join(models.Member, models.Member.id == models.Message.sender_id)


async def _grouped_lines(session: AsyncSession, stmt: Select[Any]) -> dict[int, list[SessionLine]]:
    lines: dict[int, list[SessionLine]] = defaultdict(list)
    for group, message_id, sender, ts, text in (await session.execute(stmt)).all():
        lines[group].append(SessionLine(message_id, sender, as_utc(ts), text))
    return lines


async def insert_sessions(db: Database, session: AsyncSession, workspace_id: int, spans: Sequence[SessionSpan]) -> int:
    """Store new sessions and their message links; returns how many were new (a concurrent indexer may have
    stored some already: those are skipped, never duplicated)."""
    by_key = {span.key: span for span in spans}
    created: list[tuple[int, str]] = []
    for batch in await bulk.chunks(session, list(by_key), per_item=len(models.MemorySession.__table__.columns)):
        rows = [_session_row(workspace_id, by_key[key]) for key in batch]
        stmt = (
            db.insert(models.MemorySession)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["key"])
            .returning(models.MemorySession.id, models.MemorySession.key)
        )
        created.extend((key_id[0], key_id[1]) for key_id in (await session.execute(stmt)).all())
    links = [{"session_id": id_, "message_id": m} for id_, key in created for m in by_key[key].message_ids]
    for rows in await bulk.row_chunks(session, models.SessionMessage, links):
        await session.execute(db.insert(models.SessionMessage).values(rows))
    return len(created)


def _session_row(workspace_id: int, span: SessionSpan) -> dict[str, object]:
    return {
        "key": span.key,
        "workspace_id": workspace_id,
        "channel_id": span.channel_id,
        "content_hash": span.content_hash,
        "first_ts": span.first_ts,
        "last_ts": span.last_ts,
        "message_count": len(span.lines),
        "summarized": False,
        "embedded": False,
    }


async def mark_summarized(session: AsyncSession, session_ids: Sequence[int]) -> None:
    """Sessions whose summary is stored (their vectors come next, `mark_embedded`)."""
    for batch in await bulk.chunks(session, session_ids, per_item=1):
        await session.execute(
            update(models.MemorySession).where(models.MemorySession.id.in_(batch)).values(summarized=True)
        )


async def mark_embedded(session: AsyncSession, window_counts: Mapping[int, int]) -> None:
    """Sessions (id -> how many message windows were written with them) are in the vector index now."""
    by_count: dict[int, list[int]] = defaultdict(list)
    for id_, count in window_counts.items():
        by_count[count].append(id_)
    for count, ids in by_count.items():  # a handful of distinct counts: one statement each per chunk
        for batch in await bulk.chunks(session, ids, per_item=1):
            await session.execute(
                update(models.MemorySession)
                .where(models.MemorySession.id.in_(batch))
                .values(embedded=True, window_count=count)
            )
    await truth.bump_memory_versions(session, list(window_counts))  # their vectors were just written
