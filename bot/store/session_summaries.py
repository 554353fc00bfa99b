"""Stored session summaries (`session_summary`), keyed by the content hash of what a session says: which are stored,
and adding new ones without ever duplicating one another indexer stored meanwhile.

    stored = await stored_summary_hashes(db, ["3f2a...", "9bc1..."])
    added = await add_summaries(db, [{"content_hash": "9bc1...", "text": "...", "method": "llm", "model": "m",
                                      "created_at": now}])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import select

from bot.store import bulk, models
from bot.store.db import Database


async def stored_summary_hashes(db: Database, content_hashes: Sequence[str]) -> set[str]:
    """Which of these content hashes already have a summary."""
    async with db.session() as session:
        stmt = select(models.SessionSummary.content_hash).where(
            models.SessionSummary.content_hash.in_(list(content_hashes))
        )
        return set((await session.execute(stmt)).scalars())


async def add_summaries(db: Database, rows: Sequence[Mapping[str, object]]) -> int:
    """Store summary rows in one transaction; returns how many were really added."""
    added = 0
    async with db.session() as session, session.begin():
        for chunk in await bulk.row_chunks(session, models.SessionSummary, rows):
            stmt = (
                db.insert(models.SessionSummary)
                .values(chunk)
                .on_conflict_do_nothing(index_elements=["content_hash"])
                .returning(models.SessionSummary.content_hash)
            )
            # Another indexer may have stored the same content meanwhile: only rows really added count.
            added += len((await session.execute(stmt)).all())
    return added
