"""The record of an ask in a live-memory workspace keeps only what was shared, and only for a while.

With live memory nothing a search returned is stored as memory; the ask's own record would otherwise keep it (the
lines each agent read, the prompts that showed them, what a private model extracted). Once the ask has ended, its
record is cut to what left an agent: evidence lines passed on (`released`) or cited by the answer stay; every other
line an agent read is dropped, with the prompts and extracted facts; utterances, plans and the consensus (which went
through the agents' sharing gate) stay. Asks older than ASKWITH_TRANSCRIPT_RETENTION_DAYS are deleted (0: at once).

    await keep_only_shared(db, ask_id)
    await expire_transcripts(db, workspace_id, days=30)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select

from bot.asks import models
from bot.store.db import Database


async def keep_only_shared(db: Database, ask_id: int) -> int:
    """Cut the ask's record to what was shared; returns how many evidence lines were dropped."""
    async with db.session() as session, session.begin():
        conversations = select(models.Conversation.id).where(models.Conversation.ask_id == ask_id)
        turns = await session.execute(select(models.Turn).where(models.Turn.conversation_id.in_(conversations)))
        rows = list(turns.scalars())
        consensus = await session.scalar(select(models.Consensus).where(models.Consensus.ask_id == ask_id))
        shared = _released([r.data for r in rows] + ([consensus.data] if consensus is not None else []))
        dropped = 0
        for row in rows:
            row.data, cut = _scrub(row.data, shared)
            dropped += cut
        if consensus is not None:
            consensus.data, cut = _scrub(consensus.data, shared)
            dropped += cut
        turn_ids = select(models.Turn.id).where(models.Turn.conversation_id.in_(conversations))
        queries = await session.execute(select(models.MemoryQuery).where(models.MemoryQuery.turn_id.in_(turn_ids)))
        for query in queries.scalars():
            query.hit_ids = [h for h in query.hit_ids if h in shared]
    return dropped


SHARED_KEYS = ("released", "cited", "sources")  # ids passed on, and ids the answer's claims rest on


def _released(records: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key in SHARED_KEYS:
                found.update(i for i in value.get(key) or [] if isinstance(i, str))
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    for record in records:
        walk(record)
    return found


def _scrub(value: Any, shared: set[str]) -> tuple[Any, int]:
    """A copy of a record with unshared evidence lines, prompts and extracted facts left out."""
    if isinstance(value, list):
        parts = [_scrub(v, shared) for v in value]
        return [p for p, _ in parts], sum(n for _, n in parts)
    if not isinstance(value, dict):
        return value, 0
    out: dict[str, Any] = {}
    dropped = 0
    for key, child in value.items():
        if key == "evidence" and isinstance(child, list):
            kept = [e for e in child if isinstance(e, dict) and e.get("id") in shared]
            out[key], dropped = kept, dropped + len(child) - len(kept)
        elif key == "evidence" and isinstance(child, dict):  # the consensus's lines, by id
            out[key] = {k: e for k, e in child.items() if k in shared}
            dropped += len(child) - len(out[key])
        elif key == "prompt" and isinstance(child, list):
            out[key] = []
        elif key == "facts":
            out[key] = None
        else:
            out[key], cut = _scrub(child, shared)
            dropped += cut
    return out, dropped


async def expire_transcripts(db: Database, workspace_id: int, *, days: int) -> int:
    """Delete the workspace's finished asks older than `days` (0: every finished ask); returns how many."""
    cutoff = datetime.now(UTC) - timedelta(days=days)
    finished = models.Ask.final_text.is_not(None)
    async with db.session() as session, session.begin():
        old = select(models.Ask.id).where(
            models.Ask.workspace_id == workspace_id, models.Ask.created_at <= cutoff, finished
        )
        ids = list((await session.execute(old)).scalars())
        if ids:
            await session.execute(delete(models.Ask).where(models.Ask.id.in_(ids)))
    return len(ids)
