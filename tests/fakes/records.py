"""Reading an ask's record back in tests."""

from __future__ import annotations

from sqlalchemy import select

from bot.asks import models
from bot.store.db import Database


async def conversations(db: Database, ask_id: int) -> list[models.Conversation]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.Conversation).where(models.Conversation.ask_id == ask_id).order_by(models.Conversation.id)
        )
        return list(rows.scalars())


async def turns(db: Database, conversation_id: int) -> list[models.Turn]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.Turn).where(models.Turn.conversation_id == conversation_id).order_by(models.Turn.idx)
        )
        return list(rows.scalars())


async def llm_calls(db: Database, ask_id: int) -> list[models.LLMCall]:
    async with db.session() as session:
        rows = await session.execute(select(models.LLMCall).where(models.LLMCall.ask_id == ask_id))
        return list(rows.scalars())


def hit_ids(turn: models.Turn) -> set[str]:
    return {h for q in turn.data["queries"] for h in q["hit_ids"]}
