"""Reads of a whole history: the stored messages of the channels a viewer may see (given as a subquery of channel ids,
`bot.memory.visibility.visible_channels`), optionally narrowed to one channel or sender, read without searching.

    visible = visible_channels(viewer)
    messages, chars = await history_size(db, workspace_id, visible, limit=400)
    rows = await history_rows(db, workspace_id, visible, channel="#launch")   # oldest first
    seen = await visible_message_ids(db, workspace_id, visible, ["m1", "m7"])

Each row is (message id, channel id, channel name, sender handle, time, text), ids as the platform names them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select, func, select

from bot.store import models
from bot.store.db import Database
from bot.store.message_views import MESSAGE_VIEW, MessageViewRow, with_channel_and_sender


async def history_size(
    db: Database, workspace_id: int, visible: Select[tuple[int]], *, channel: str | None = None,
    sender: str | None = None, limit: int | None = None,
) -> tuple[int, int]:  # fmt: skip
    """(messages, characters) in scope; with `limit`, counted over at most `limit + 1` messages."""
    lengths = _filtered(
        _scoped(select(func.length(models.Message.text).label("chars")), workspace_id, visible), channel, sender
    )
    if limit is not None:
        lengths = lengths.limit(limit + 1)
    # Counted in the database: one row comes back, not one per message.
    scope = lengths.subquery()
    stmt = select(func.count(), func.coalesce(func.sum(scope.c.chars), 0))
    async with db.read() as conn:
        messages, chars = (await conn.execute(stmt)).one()
    return int(messages), int(chars)


async def history_rows(
    db: Database, workspace_id: int, visible: Select[tuple[int]], *, channel: str | None = None,
    sender: str | None = None,
) -> list[MessageViewRow]:  # fmt: skip
    """Every message in scope, oldest first (fan-out copies included)."""
    stmt = _scoped(select(*MESSAGE_VIEW), workspace_id, visible)
    stmt = _filtered(stmt, channel, sender).order_by(models.Message.ts, models.Message.id)
    async with db.session() as session:
        return [(m, c, cn, s, ts, text) for m, c, cn, s, ts, text in (await session.execute(stmt)).all()]


async def visible_message_ids(
    db: Database, workspace_id: int, visible: Select[tuple[int]], message_ids: Sequence[str]
) -> set[str]:
    """Which of these messages (platform ids) are in scope."""
    stmt = _scoped(select(models.Message.platform_id), workspace_id, visible).where(
        models.Message.platform_id.in_(list(message_ids))
    )
    async with db.session() as session:
        return set((await session.execute(stmt)).scalars())


def _scoped(stmt: Select, workspace_id: int, visible: Select[tuple[int]]) -> Select:  # type: ignore[type-arg]
    return with_channel_and_sender(stmt.select_from(models.Message)).where(
        models.Message.workspace_id == workspace_id, models.Message.channel_id.in_(visible)
    )


def _filtered(stmt: Select, channel: str | None, sender: str | None) -> Select:  # type: ignore[type-arg]
    if channel:
        name = channel.strip().lstrip("#")
        stmt = stmt.where((models.Channel.name == name) | (models.Channel.platform_id == name))
    if sender:
        name = sender.strip().lstrip("@")
        stmt = stmt.where((models.Member.name == name) | (models.Member.platform_id == name))
    return stmt
