"""The reads of a fuzzy memory search (`bot.memory.fuzzy`) after its vector queries, on one connection: which memory
sessions the best messages belong to, the summaries of the sessions found, and the messages of those kept.

    async with session_search_reads(db) as reads:
        in_sessions = await reads.sessions_of_messages([41, 97], visible=[3, 9])
        summaries = await reads.summaries(workspace_id, ["<session key>", ...], visible=[3, 9])
        messages = await reads.session_messages(["<session key>"])

The reads that turn vector matches into sessions and messages (`sessions_of_messages`, `summaries`) are limited to
the channels bound as `visible` (the viewer's, read by the caller), so a vector left behind by an interrupted
re-index, or a channel excluded since, cannot show anything. `session_messages` is not: it reads the messages of
sessions `summaries` already kept, each in the one channel of its session. Rows come back as the statements read
them; the caller shapes its hits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

from sqlalchemy import Row, Select, bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store import models
from bot.store.db import Database
from bot.store.message_views import MESSAGE_VIEW, with_channel_and_sender


@asynccontextmanager
async def session_search_reads(db: Database) -> AsyncIterator[SessionSearchReads]:
    """The reads of one search, all on one connection."""
    async with db.read() as conn:
        yield SessionSearchReads(conn)


class SessionSearchReads:
    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def sessions_of_messages(self, message_ids: Sequence[int], visible: Collection[int]) -> Sequence[Row[Any]]:
        """(message id, session key, *`MESSAGE_VIEW`) of each message in a session of a visible channel."""
        params = {"ids": list(message_ids), "visible": list(visible)}
        return (await self._conn.execute(_in_sessions_statement(), params)).all()

    async def summaries(self, workspace_id: int, keys: Sequence[str], visible: Collection[int]) -> Sequence[Row[Any]]:
        """(session key, channel platform id, channel name, summary text, summary method, first time, last time) of
        the live sessions among `keys` in visible channels."""
        params = {"workspace_id": workspace_id, "keys": list(keys), "visible": list(visible)}
        return (await self._conn.execute(_summaries_statement(), params)).all()

    async def session_messages(self, keys: Sequence[str]) -> Sequence[Row[Any]]:
        """(session key, *`MESSAGE_VIEW`) of every message of these sessions, by session, oldest first."""
        return (await self._conn.execute(_session_messages_statement(), {"keys": list(keys)})).all()


# The statements of a search are built once (their construction cost as much as their execution), with their lists
# of keys, ids and channels bound at execution.
@cache
def _summaries_statement() -> Select[Any]:
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


@cache
def _session_messages_statement() -> Select[Any]:
    sessions = select(models.MemorySession.key, *MESSAGE_VIEW).join(
        models.SessionMessage, models.SessionMessage.session_id == models.MemorySession.id
    )
    return (
        with_channel_and_sender(sessions.join(models.Message, models.Message.id == models.SessionMessage.message_id))
        .where(models.MemorySession.key.in_(bindparam("keys", expanding=True)))
        .order_by(models.MemorySession.key, models.Message.ts, models.Message.id)
    )


@cache
def _in_sessions_statement() -> Select[Any]:
    messages = select(models.Message.id, models.MemorySession.key, *MESSAGE_VIEW).join(
        models.SessionMessage, models.SessionMessage.message_id == models.Message.id
    )
    return with_channel_and_sender(
        messages.join(models.MemorySession, models.MemorySession.id == models.SessionMessage.session_id)
    ).where(
        models.Message.id.in_(bindparam("ids", expanding=True)),
        models.Message.channel_id.in_(bindparam("visible", expanding=True)),
        models.MemorySession.channel_id.in_(bindparam("visible", expanding=True)),
    )
