"""Operator totals from the asks' record: asks by status, and the language-model calls and tokens they used.

    totals = await ask_totals(db)
    totals.by_status.get("done", 0), totals.llm_calls, totals.prompt_tokens + totals.completion_tokens

Read from the database rather than from process memory, so they survive restarts and add up across the ask workers
sharing one database.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from bot.asks import models
from bot.store.db import Database


@dataclass(frozen=True)
class AskTotals:
    by_status: dict[str, int]  # an ask's status (queued, running, done, failed, ...) -> how many asks have it
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int


async def ask_totals(db: Database) -> AskTotals:
    calls = select(
        func.count(models.LLMCall.id),
        func.coalesce(func.sum(models.LLMCall.prompt_tokens), 0),
        func.coalesce(func.sum(models.LLMCall.completion_tokens), 0),
    )
    async with db.session() as session:
        by_status = (await session.execute(select(models.Ask.status, func.count()).group_by(models.Ask.status))).all()
        count, prompt, completion = (await session.execute(calls)).one()
    return AskTotals({status: int(n) for status, n in by_status}, int(count), int(prompt), int(completion))
