"""Who may see or act on an ask: its requester, the members whose agents took part, the workspace's admins, and,
for an ask answered in a channel, the members of that channel (they saw the answer posted there)."""

from __future__ import annotations

from sqlalchemy import select

from bot.agents.roster import MemberProfile
from bot.asks import models
from bot.settings import Settings
from bot.store import models as store_models
from bot.store.db import Database


def is_admin(settings: Settings, profile: MemberProfile) -> bool:
    admins = settings.admin_names
    return profile.handle in admins or profile.platform_id in admins


async def participants(db: Database, ask: models.Ask) -> set[str]:
    """The requester, the colleagues asked and every member whose agent was brought in."""
    async with db.session() as session:
        rows = await session.execute(
            select(models.Conversation.participants).where(models.Conversation.ask_id == ask.id)
        )
        brought_in = {handle for members in rows.scalars() for handle in members}
    return {ask.requester, *ask.colleagues, *brought_in}


async def in_channel(db: Database, workspace_id: int, channel_platform_id: str, profile: MemberProfile) -> bool:
    stmt = (
        select(store_models.Membership.member_id)
        .join(store_models.Channel, store_models.Channel.id == store_models.Membership.channel_id)
        .join(store_models.Member, store_models.Member.id == store_models.Membership.member_id)
        .where(
            store_models.Channel.workspace_id == workspace_id,
            store_models.Channel.platform_id == channel_platform_id,
            store_models.Member.platform_id == profile.platform_id,
        )
    )
    async with db.session() as session:
        return (await session.execute(stmt.limit(1))).first() is not None


async def may_view(db: Database, settings: Settings, ask: models.Ask, profile: MemberProfile) -> bool:
    if profile.handle == ask.requester or is_admin(settings, profile):
        return True
    if profile.handle in await participants(db, ask):
        return True
    return bool(ask.origin_channel_id) and await in_channel(db, ask.workspace_id, ask.origin_channel_id, profile)
