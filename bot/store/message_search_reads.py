"""The reads of a message search: clear memory's full-text statements and hybrid retrieval's scoped read of chosen
ids, run on a connection of their own. The statements are built by `bot.memory.clear_sql` (once per shape, with the
viewer and the words bound as parameters); the store runs them, as `read_channel_versions` runs the scope's.

    rows = await read_message_rows(db, clear_sql.chosen(shape), params)     # one statement, one connection
    async with message_search_reads(db) as reads:                           # a probe, then the search, one connection
        matches = await reads.count(clear_sql.sqlite_match_count(), params)
        rows = await reads.rows(clear_sql.search(shape), {**params, "match": match})
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Row, Select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store.db import Database


@asynccontextmanager
async def message_search_reads(db: Database) -> AsyncIterator[MessageSearchReads]:
    """The statements of one search (SQLite's match probe, then the search itself), on one connection."""
    async with db.read() as conn:
        yield MessageSearchReads(conn)


class MessageSearchReads:
    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def rows(self, statement: Select[Any], params: Mapping[str, Any]) -> Sequence[Row[Any]]:
        return (await self._conn.execute(statement, params)).all()

    async def count(self, statement: Select[tuple[int]], params: Mapping[str, Any]) -> int:
        """The one number a counting statement reads."""
        return (await self._conn.execute(statement, params)).scalar_one()


async def read_message_rows(db: Database, statement: Select[Any], params: Mapping[str, Any]) -> Sequence[Row[Any]]:
    """The rows of one search statement, on a connection of its own."""
    async with message_search_reads(db) as reads:
        return await reads.rows(statement, params)
