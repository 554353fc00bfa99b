"""Who can see what. Every memory read is scoped by `visible_channels(viewer)`: the channels the viewer belongs to
(channel membership, DMs they are party to) minus the channels their policy excludes. There is no other read path.
The channels a member names for an exclusion are resolved by the store (`bot.store.channel_refs`).
"""

from __future__ import annotations

from functools import cache

from sqlalchemy import Integer, Select, and_, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from bot.errors import UnknownMemberError
from bot.memory.types import Viewer
from bot.store import models
from bot.store.db import Database


def visible_channels(viewer: Viewer) -> Select[tuple[int]]:
    """A subquery of the channel ids `viewer` may read."""
    excluded = select(models.MemberExclusion.channel_id).where(models.MemberExclusion.member_id == viewer.member_id)
    return select(models.Membership.channel_id).where(
        and_(models.Membership.member_id == viewer.member_id, models.Membership.channel_id.not_in(excluded))
    )


async def visible_channel_ids(session: AsyncSession, viewer: Viewer) -> list[int]:
    return list((await session.execute(visible_channels(viewer))).scalars())


async def visible_channel_versions(session: AsyncSession | AsyncConnection, viewer: Viewer) -> dict[int, int]:
    """The channels `viewer` may read, each with its memory version (for vectors kept in memory)."""
    rows = (await session.execute(_versions_statement(), {"viewer_id": viewer.member_id})).all()
    return {id_: version for id_, version in rows}


@cache
def _versions_statement() -> Select[tuple[int, int]]:
    """`visible_channel_versions` of the viewer bound as `viewer_id`: built once (it is read at every agent turn)."""
    viewer = Viewer(workspace_id=0, member_id=bindparam("viewer_id", type_=Integer))  # type: ignore[arg-type]
    return select(models.Channel.id, models.Channel.memory_version).where(
        models.Channel.id.in_(visible_channels(viewer))
    )


async def read_visible_channel_versions(db: Database, viewer: Viewer) -> dict[int, int]:
    """`visible_channel_versions` on a connection of its own."""
    async with db.engine.connect() as conn:
        return await visible_channel_versions(conn, viewer)


async def resolve_viewer(session: AsyncSession, workspace_id: int, who: str) -> Viewer:
    """The viewer for a member named by handle (with or without @) or platform id."""
    wanted = who.strip().lstrip("@")
    rows = (
        await session.execute(
            select(models.Member.id, models.Member.name, models.Member.platform_id).where(
                models.Member.workspace_id == workspace_id,
                (models.Member.platform_id == wanted)
                | (models.Member.name == wanted)
                | (func.lower(models.Member.name) == wanted.lower()),  # `--as Alice` is alice
            )
        )
    ).all()
    # An exact handle or id wins; otherwise a case-insensitive match counts only when it names one member.
    exact = [r for r in rows if wanted in (r[1], r[2])]
    row = exact[0] if exact else (rows[0] if len(rows) == 1 else None)
    if row is None:
        raise UnknownMemberError(who)
    return Viewer(workspace_id=workspace_id, member_id=row[0], name=row[1])
