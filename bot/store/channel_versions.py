"""The memory version of each channel a viewer may read, on a connection of its own: vectors kept in memory stay valid
while their channel's version stands. The channels come as a subquery of channel ids, the viewer's scope
(`bot.memory.visibility.visible_channels`), so it is read fresh at every call: a member removed from a channel is
out of the very next read.

    statement = channel_versions(visible_channels(viewer))
    versions = await read_channel_versions(db, statement)   # {channel id: memory version}

A caller that builds the statement once binds what varies as parameters (`params`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.store import models
from bot.store.db import Database


def channel_versions(channels: Select[tuple[int]]) -> Select[tuple[int, int]]:
    """(channel id, memory version) of the channels in `channels`."""
    return select(models.Channel.id, models.Channel.memory_version).where(models.Channel.id.in_(channels))


async def channel_versions_in(
    session: AsyncSession | AsyncConnection,
    statement: Select[tuple[int, int]],
    params: Mapping[str, Any] | None = None,
) -> dict[int, int]:
    """A `channel_versions` statement read within a caller's session or connection."""
    return {id_: version for id_, version in (await session.execute(statement, params)).all()}


async def read_channel_versions(
    db: Database, statement: Select[tuple[int, int]], params: Mapping[str, Any] | None = None
) -> dict[int, int]:
    """A `channel_versions` statement read on a connection of its own."""
    async with db.read() as conn:
        return await channel_versions_in(conn, statement, params)
