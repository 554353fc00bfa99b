"""Whole history: everything one viewer can see (or one channel/sender scope of it), read without searching.

    history = WholeHistory(db)
    size = await history.size(viewer)                 # HistorySize(messages=120, chars=9_800)
    views = await history.read(viewer)                # oldest first, fan-out copies once
    seen = await history.visible_ids(viewer, ["m1", "m7"])
    channels = await history.channels(viewer)         # {channel id: memory version}

When what a member can see fits an agent's evidence budget, the agent reads it whole (the paper's own setting for
Schedule and Needle in the Persona) instead of guessing keywords. Scoping is `visible_channels(viewer)`, as for every
memory read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Select, func, select

from bot.memory.types import MessageView, Viewer
from bot.memory.visibility import read_visible_channel_versions, visible_channels
from bot.store import models
from bot.store.db import Database, as_utc


@dataclass(frozen=True)
class HistorySize:
    messages: int
    chars: int
    more: bool = False  # there are more messages than the `limit` asked for (the figures count one past it)


class WholeHistory:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def size(
        self, viewer: Viewer, *, channel: str | None = None, sender: str | None = None, limit: int | None = None
    ) -> HistorySize:
        """How much is in scope; with `limit`, stop counting after that many messages (a large history is only
        ever asked whether it fits, so it is never scanned whole)."""
        lengths = _filtered(_scoped(select(func.length(models.Message.text).label("chars")), viewer), channel, sender)
        if limit is not None:
            lengths = lengths.limit(limit + 1)
        # Counted in the database: one row comes back, not one per message.
        scope = lengths.subquery()
        stmt = select(func.count(), func.coalesce(func.sum(scope.c.chars), 0))
        async with self.db.engine.connect() as conn:
            messages, chars = (await conn.execute(stmt)).one()
        return HistorySize(int(messages), int(chars), limit is not None and messages > limit)

    async def read(
        self, viewer: Viewer, *, channel: str | None = None, sender: str | None = None
    ) -> list[MessageView]:
        """Every visible message in scope, oldest first; copies of one line (same sender, text, time) once."""
        stmt = _scoped(
            select(
                models.Message.platform_id,
                models.Channel.platform_id,
                models.Channel.name,
                models.Member.name,
                models.Message.ts,
                models.Message.text,
            ),
            viewer,
        )
        stmt = _filtered(stmt, channel, sender).order_by(models.Message.ts, models.Message.id)
        async with self.db.session() as session:
            rows = (await session.execute(stmt)).all()
        seen: set[tuple[str, str, str]] = set()
        views = []
        for message_id, channel_id, channel_name, sender_name, ts, text in rows:
            key = (sender_name, text, as_utc(ts).isoformat())
            if key not in seen:
                seen.add(key)
                views.append(MessageView(message_id, channel_id, channel_name, sender_name, as_utc(ts), text))
        return views

    async def channels(self, viewer: Viewer) -> dict[int, int]:
        """The channels the viewer can see now, each with its memory version (`visible_channel_versions`)."""
        return await read_visible_channel_versions(self.db, viewer)

    async def visible_ids(self, viewer: Viewer, message_ids: Sequence[str]) -> set[str]:
        """Which of these messages (platform ids) the viewer can see now."""
        if not message_ids:
            return set()
        stmt = _scoped(select(models.Message.platform_id), viewer).where(
            models.Message.platform_id.in_(list(message_ids))
        )
        async with self.db.session() as session:
            return set((await session.execute(stmt)).scalars())


def _scoped(stmt: Select, viewer: Viewer) -> Select:  # type: ignore[type-arg]
    return (
        stmt.select_from(models.Message)
        .join(models.Channel, models.Channel.id == models.Message.channel_id)
        .join(models.Member, models.Member.id == models.Message.sender_id)
        .where(
            models.Message.workspace_id == viewer.workspace_id,
            models.Message.channel_id.in_(visible_channels(viewer)),
        )
    )


def _filtered(stmt: Select, channel: str | None, sender: str | None) -> Select:  # type: ignore[type-arg]
    if channel:
        name = channel.strip().lstrip("#")
        stmt = stmt.where((models.Channel.name == name) | (models.Channel.platform_id == name))
    if sender:
        name = sender.strip().lstrip("@")
        stmt = stmt.where((models.Member.name == name) | (models.Member.platform_id == name))
    return stmt
