"""`Database.read()`: a connection for reads only, in autocommit on PostgreSQL (no BEGIN, no ROLLBACK), and the pooled
connection it used goes back to ordinary transactions."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store.db import Database


class Undone(Exception):
    pass


async def _in_transaction(conn: AsyncConnection) -> bool:
    """PostgreSQL: whether two statements run in one transaction (the same start time)."""
    started = text("SELECT xact_start FROM pg_stat_activity WHERE pid = pg_backend_pid()")
    first = (await conn.execute(started)).scalar()
    await asyncio.sleep(0.01)
    return first == (await conn.execute(started)).scalar()


async def test_reads_see_what_was_committed_and_leave_writes_transactional(db: Database) -> None:
    async with db.begin() as conn:
        await conn.execute(text("CREATE TABLE t (x INTEGER)"))
        await conn.execute(text("INSERT INTO t VALUES (1)"))
    async with db.read() as conn:
        assert (await conn.execute(text("SELECT x FROM t"))).scalars().all() == [1]
        if db.dialect == "postgresql":
            assert not await _in_transaction(conn)  # autocommit: each statement is its own
    if db.dialect == "postgresql":  # the one pooled connection it used is back to transactions
        async with db.engine.connect() as conn:
            assert await _in_transaction(conn)
    with pytest.raises(Undone):
        async with db.begin() as conn:
            await conn.execute(text("INSERT INTO t VALUES (2)"))
            raise Undone  # a failed unit of work leaves nothing behind
    async with db.read() as conn:
        assert (await conn.execute(text("SELECT x FROM t"))).scalars().all() == [1]
