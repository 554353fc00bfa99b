"""The reads of a message search: clear memory's full-text search and hybrid retrieval's scoped read of chosen ids,
run on a connection of their own. Memory hands over what to search and for whom, a `SearchShape` and its bind
parameters (the viewer's ids, the words, the filters); the statements are the store's (`bot.store.message_search_sql`,
built once per shape).

    rows = await read_chosen(db, shape, params)                 # one statement, one connection
    async with message_search_reads(db) as reads:               # a probe, then the search, on one connection
        matches = await reads.match_count(params)
        rows = await reads.search(shape, {**params, "match": match})
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Row, Select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store import message_search_sql
from bot.store.db import Database
from bot.store.message_search_sql import SearchShape


__all__ = ["MessageSearchReads", "SearchShape", "message_search_reads", "read_chosen"]


@asynccontextmanager
async def message_search_reads(db: Database) -> AsyncIterator[MessageSearchReads]:
    """The statements of one search (SQLite's match probe, then the search itself), on one connection."""
    async with db.read() as conn:
        yield MessageSearchReads(conn)


class MessageSearchReads:
    def __init__(self, conn: AsyncConnection) -> None:
        self._conn = conn

    async def search(self, shape: SearchShape, params: Mapping[str, Any]) -> Sequence[Row[Any]]:
        """The rows of `message_search_sql.search`: the ranked hits with their context and views."""
        return await self._rows(message_search_sql.search(shape), params)

    async def ranked(self, shape: SearchShape, params: Mapping[str, Any]) -> Sequence[Row[Any]]:
        """Only the ranked hits, (id, score), best first (`message_search_sql.ranked`)."""
        return await self._rows(message_search_sql.ranked(shape), params)

    async def match_count(self, params: Mapping[str, Any]) -> int:
        """How many messages of any channel match `match`, counted no further than `cap` (SQLite)."""
        statement = message_search_sql.sqlite_match_count()
        return (await self._conn.execute(statement, params)).scalar_one()

    async def scope_probe(self, params: Mapping[str, Any]) -> Sequence[Row[Any]]:
        """The viewer's visible channel ids, each row also carrying `match_count` (SQLite)."""
        return await self._rows(message_search_sql.sqlite_scope_probe(), params)

    async def _rows(self, statement: Select[Any], params: Mapping[str, Any]) -> Sequence[Row[Any]]:
        return (await self._conn.execute(statement, params)).all()


async def read_chosen(db: Database, shape: SearchShape, params: Mapping[str, Any]) -> Sequence[Row[Any]]:
    """The views of the chosen messages bound as `ids` (`message_search_sql.chosen`), on a connection of their own."""
    async with db.read() as conn:
        return (await conn.execute(message_search_sql.chosen(shape), params)).all()
