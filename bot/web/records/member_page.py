"""What a member's own settings page lists besides the settings: their recent asks and what their agent shared."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.store.db import Database
from bot.web.records.asks import AskSummary, recent_asks


RECENT_LIMIT = 10


@dataclass(frozen=True)
class MemberActivity:
    asks: list[AskSummary]
    shared: list[object] = field(default_factory=list)


async def member_activity(db: Database, workspace_id: int, member: str) -> MemberActivity:
    asks = [a for a in await recent_asks(db, workspace_id=workspace_id) if a.requester == member][:RECENT_LIMIT]
    return MemberActivity(asks)
