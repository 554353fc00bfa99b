"""Reading an ask's record back in tests."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from bot.asks import models
from bot.store import models as store_models
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


async def consensus_data(db: Database, ask_id: int) -> dict[str, Any]:
    """The consensus record's data ({} when the ask reached no consensus)."""
    async with db.session() as session:
        rows = await session.execute(select(models.Consensus.data).where(models.Consensus.ask_id == ask_id))
        return rows.scalar_one_or_none() or {}


async def llm_calls(db: Database, ask_id: int) -> list[models.LLMCall]:
    async with db.session() as session:
        rows = await session.execute(select(models.LLMCall).where(models.LLMCall.ask_id == ask_id))
        return list(rows.scalars())


async def session_channels(db: Database, keys: set[str]) -> set[str]:
    """Platform ids of the channels holding these fuzzy-memory sessions."""
    async with db.session() as session:
        rows = await session.execute(
            select(store_models.Channel.platform_id)
            .join(store_models.MemorySession, store_models.MemorySession.channel_id == store_models.Channel.id)
            .where(store_models.MemorySession.key.in_(keys))
        )
        return set(rows.scalars())


def hit_ids(turn: models.Turn) -> set[str]:
    return {h for q in turn.data["queries"] for h in q["hit_ids"]}
