"""Who can see what, as SQL: the ids of the channels a member may read, those they belong to (channel membership,
DMs they are party to) minus those their policy excludes. Every memory read is scoped by this subquery
(`bot.memory.visibility.visible_channels` hands it a viewer's member id).

    visible = channels_visible_to(member_id)                  # a subquery of channel ids
    stmt = select(models.Message.id).where(models.Message.channel_id.in_(visible))

The member id may be a bind parameter, so a statement built once serves every member.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Select, and_, select

from bot.store import models


def channels_visible_to(member_id: int | ColumnElement[int]) -> Select[tuple[int]]:
    """A subquery of the channel ids the member `member_id` may read."""
    excluded = select(models.MemberExclusion.channel_id).where(models.MemberExclusion.member_id == member_id)
    return select(models.Membership.channel_id).where(
        and_(models.Membership.member_id == member_id, models.Membership.channel_id.not_in(excluded))
    )
