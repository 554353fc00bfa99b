"""What a member's own settings page lists besides the settings: their recent asks and what their agent shared, with
whom (the core's queries, the same as Slack's App Home and Discord's panel)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.asks.read_models.member_views import RecentAsk, SharedItem, read_recent_asks, read_shared_by
from bot.store.db import Database


RECENT_LIMIT = 10
SHARED_LIMIT = 20


@dataclass(frozen=True)
class MemberActivity:
    asks: list[RecentAsk]
    shared: list[SharedItem]


async def member_activity(db: Database, workspace_id: int, member: str) -> MemberActivity:
    async with db.session() as session:  # both lists through one connection
        return MemberActivity(
            await read_recent_asks(session, workspace_id, member, RECENT_LIMIT),
            await read_shared_by(session, workspace_id, member, SHARED_LIMIT),
        )
