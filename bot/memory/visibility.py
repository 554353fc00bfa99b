"""Who can see what. Every memory read is scoped by `visible_channels(viewer)`: the channels the viewer belongs to
(channel membership, DMs they are party to) minus the channels their policy excludes, as the store writes it in SQL
(`bot.store.channel_scope`). There is no other read path. The channels a member names for an exclusion are resolved
by the store (`bot.store.channel_refs`); the store reads what this scope selects (`bot.store.channel_versions`,
`bot.store.history_reads`).

    versions = await read_visible_channel_versions(db, viewer)   # {channel id: memory version}, read fresh
"""

from __future__ import annotations

from functools import cache

from sqlalchemy import Integer, Select, bindparam
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.errors import UnknownMemberError
from bot.memory.types import Viewer
from bot.store.channel_scope import channels_visible_to
from bot.store.channel_versions import channel_versions, channel_versions_in, read_channel_versions
from bot.store.db import Database
from bot.store.member_directory import find_member


def visible_channels(viewer: Viewer) -> Select[tuple[int]]:
    """A subquery of the channel ids `viewer` may read."""
    return channels_visible_to(viewer.member_id)


async def visible_channel_ids(session: AsyncSession, viewer: Viewer) -> list[int]:
    return list((await session.execute(visible_channels(viewer))).scalars())


async def visible_channel_versions(session: AsyncSession | AsyncConnection, viewer: Viewer) -> dict[int, int]:
    """The channels `viewer` may read, each with its memory version (for vectors kept in memory)."""
    return await channel_versions_in(session, _versions_statement(), {"viewer_id": viewer.member_id})


@cache
def _versions_statement() -> Select[tuple[int, int]]:
    """The channel versions of the viewer bound as `viewer_id`: built once (it is read at every agent turn)."""
    return channel_versions(channels_visible_to(bindparam("viewer_id", type_=Integer)))


async def read_visible_channel_versions(db: Database, viewer: Viewer) -> dict[int, int]:
    """`visible_channel_versions` on a connection of its own."""
    return await read_channel_versions(db, _versions_statement(), {"viewer_id": viewer.member_id})


async def resolve_viewer(session: AsyncSession, workspace_id: int, who: str) -> Viewer:
    """The viewer for a member named by handle (with or without @) or platform id (`find_member`'s rule)."""
    return named_viewer(workspace_id, who, await find_member(session, workspace_id, who))


def named_viewer(workspace_id: int, who: str, found: tuple[int, str] | None) -> Viewer:
    """The viewer `find_member` found for `who`: UnknownMemberError when it found none."""
    if found is None:
        raise UnknownMemberError(who)
    return Viewer(workspace_id=workspace_id, member_id=found[0], name=found[1])
