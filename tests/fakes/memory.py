"""A stand-in for clear memory in unit tests of the agents: viewer-scoped through `visible_channels`, keyword
matching with LIKE (ranked by how many keywords match). The real store search is `bot.memory.clear.ClearMemory`."""

from __future__ import annotations

from sqlalchemy import or_, select

from bot.memory.types import ClearHit, ClearQuery, MessageView, Viewer
from bot.memory.visibility import visible_channels
from bot.store import models
from bot.store.db import Database


class LikeClearMemory:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def search(self, viewer: Viewer, query: ClearQuery) -> list[ClearHit]:
        words = [k.lower() for k in query.keywords if k.strip()]
        if not words:
            return []
        stmt = (
            select(models.Message, models.Channel.platform_id, models.Channel.name, models.Member.name)
            .join(models.Channel, models.Channel.id == models.Message.channel_id)
            .join(models.Member, models.Member.id == models.Message.sender_id)
            .where(models.Message.channel_id.in_(visible_channels(viewer)))
            .where(or_(*(models.Message.text.ilike(f"%{w}%") for w in words)))
        )
        async with self.db.session() as session:
            rows = (await session.execute(stmt)).all()
        scored = []
        for message, channel_id, channel_name, sender in rows:
            score = sum(w in message.text.lower() for w in words)
            view = MessageView(message.platform_id, channel_id, channel_name, sender, message.ts, message.text)
            scored.append(ClearHit(view, float(score)))
        scored.sort(key=lambda h: (-h.score, h.message.id))
        return scored[: query.limit]
