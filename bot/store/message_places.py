"""Where stored messages were said, by their platform ids: the channel (and who reads it), or the thread.

    channels, readers = await message_places(db, workspace_id, ["C1:1700000000.000100"])
    threads = await thread_parents(db, workspace_id, ["m7", "m9"])        # {"m9": "T1"}: m9 was said in thread T1
    replies = await thread_reply_ids(db, workspace_id, "T1")               # every stored reply of thread T1

`channels` rows are (message id, channel database id, channel platform id, kind, name); `readers` rows are
(channel database id, handle) of the channels' members who are not bots.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select

from bot.store import models
from bot.store.db import Database


async def message_places(
    db: Database, workspace_id: int, message_ids: Iterable[str]
) -> tuple[list[tuple[str, int, str, str, str]], list[tuple[int, str]]]:
    """Each stored message's channel, and the handles of those channels' human members, read together."""
    stmt = (
        select(models.Message.platform_id, models.Channel.id, models.Channel.platform_id, models.Channel.kind,
               models.Channel.name)
        .join(models.Channel, models.Channel.id == models.Message.channel_id)
        .where(models.Message.workspace_id == workspace_id, models.Message.platform_id.in_(set(message_ids)))
    )  # fmt: skip
    async with db.session() as session:
        channels = [(m, i, c, k, n) for m, i, c, k, n in (await session.execute(stmt)).all()]
        readers = (
            await session.execute(
                select(models.Membership.channel_id, models.Member.name)
                .join(models.Member, models.Member.id == models.Membership.member_id)
                .where(models.Membership.channel_id.in_({r[1] for r in channels}), models.Member.is_bot.is_(False))
            )
        ).all()
    return channels, [(channel, name) for channel, name in readers]


async def thread_parents(db: Database, workspace_id: int, message_ids: Iterable[str]) -> dict[str, str]:
    """Message id -> the thread it was said in, for those of the messages stored as thread replies."""
    message = models.Message
    stmt = select(message.platform_id, message.thread_parent_platform_id).where(
        message.workspace_id == workspace_id,
        message.platform_id.in_(list(message_ids)),
        message.thread_parent_platform_id.is_not(None),
    )
    async with db.session() as session:
        return {m: t for m, t in (await session.execute(stmt)).all() if t}


async def thread_reply_ids(db: Database, workspace_id: int, parent_platform_id: str) -> list[str]:
    """The platform ids of the stored replies filed under a thread (or channel) `parent_platform_id`."""
    async with db.session() as session:
        replies = await session.execute(
            select(models.Message.platform_id).where(
                models.Message.workspace_id == workspace_id,
                models.Message.thread_parent_platform_id == parent_platform_id,
            )
        )
        return list(replies.scalars())
