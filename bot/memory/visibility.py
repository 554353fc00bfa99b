"""Who can see what. Every memory read is scoped by `visible_channels(viewer)`: the channels the viewer belongs to
(channel membership, DMs they are party to) minus the channels their policy excludes. There is no other read path.
"""

from __future__ import annotations

from sqlalchemy import Select, and_, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.errors import UnknownMemberError
from bot.memory.types import Viewer
from bot.store import models


def visible_channels(viewer: Viewer) -> Select[tuple[int]]:
    """A subquery of the channel ids `viewer` may read."""
    excluded = select(models.MemberExclusion.channel_id).where(models.MemberExclusion.member_id == viewer.member_id)
    return select(models.Membership.channel_id).where(
        and_(models.Membership.member_id == viewer.member_id, models.Membership.channel_id.not_in(excluded))
    )


async def visible_channel_ids(session: AsyncSession, viewer: Viewer) -> list[int]:
    return list((await session.execute(visible_channels(viewer))).scalars())


async def resolve_viewer(session: AsyncSession, workspace_id: int, who: str) -> Viewer:
    """The viewer for a member named by handle (with or without @) or platform id."""
    wanted = who.lstrip("@")
    row = (
        await session.execute(
            select(models.Member.id, models.Member.name).where(
                models.Member.workspace_id == workspace_id,
                (models.Member.platform_id == wanted) | (models.Member.name == wanted),
            )
        )
    ).first()
    if row is None:
        raise UnknownMemberError(who)
    return Viewer(workspace_id=workspace_id, member_id=row[0], name=row[1])
