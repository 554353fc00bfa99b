"""Channels named by a member (platform id, or name with or without #) resolved to the store's ids, for exclusions;
and every channel of a workspace, by platform id.

async with db.session() as session:
    ids = await resolve_channels(session, workspace_id, ["#random", "C0123"])   # UnknownChannelError if none
channels = await workspace_channel_ids(db, workspace_id)                        # {"C0123": 7, ...}
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.errors import UnknownChannelError
from bot.store import models
from bot.store.chat_store import ChatStore
from bot.store.db import Database


async def workspace_channel_ids(db: Database, workspace_id: int) -> dict[str, int]:
    """Platform id -> database id of every channel the workspace stores."""
    async with db.session() as session:
        return await ChatStore(db).channel_ids(session, workspace_id)


async def resolve_channels(session: AsyncSession, workspace_id: int, refs: Iterable[str]) -> list[int]:
    """The database ids of channels named by platform id or by name (with or without #), for writing exclusions.

    A name shared by several channels names them all (an exclusion errs on the side of hiding). A reference that
    names no channel raises UnknownChannelError naming it: an exclusion that silently excluded nothing would let the
    member's agent read what they meant to keep out.
    """
    wanted = [ref.strip() for ref in refs]
    if not wanted:
        return []
    if blank := next((ref for ref in wanted if not ref.lstrip("#")), None):
        raise UnknownChannelError(blank)
    names = [ref.lstrip("#") for ref in wanted]
    rows = (
        await session.execute(
            select(models.Channel.id, models.Channel.platform_id, models.Channel.name).where(
                models.Channel.workspace_id == workspace_id,
                or_(models.Channel.platform_id.in_(wanted), models.Channel.name.in_(names)),
            )
        )
    ).all()
    ids: list[int] = []
    for ref, name in zip(wanted, names, strict=True):
        found = [row.id for row in rows if row.platform_id == ref] or [row.id for row in rows if row.name == name]
        if not found:
            raise UnknownChannelError(ref)
        ids.extend(found)
    return sorted(set(ids))
