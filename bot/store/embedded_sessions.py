"""The embedded memory sessions of some channels, with how many message windows each was embedded with: what the
vector keys of those channels are built from (`bot.memory.vector_keys`). One connection, the channel ids cut in chunks
under the statement's parameter limit.

    rows = await embedded_sessions(db, [3, 9])   # [(3, "<session key>", 4), (9, "<session key>", None), ...]

A window count of None marks a session embedded before window counts were kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, select

from bot.store import bulk, models
from bot.store.db import Database


async def embedded_sessions(db: Database, channel_ids: Sequence[int]) -> list[Row[Any]]:
    """(channel id, session key, window count) of every embedded session of these channels."""
    found: list[Row[Any]] = []
    async with db.read() as conn:
        for batch in await bulk.chunks(conn, list(channel_ids), per_item=1):
            stmt = select(
                models.MemorySession.channel_id, models.MemorySession.key, models.MemorySession.window_count
            ).where(models.MemorySession.channel_id.in_(batch), models.MemorySession.embedded.is_(True))
            found.extend((await conn.execute(stmt)).all())
    return found
