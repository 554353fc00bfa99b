"""The SQLite driver: one trip to the connection's thread per statement (none for a read of a WAL database), and the
DB-API answers SQLAlchemy reads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from bot.store.db import create_engine
from bot.store.sqlite_driver import reads_only


@pytest.fixture
async def engine(tmp_path: Path) -> Any:  # noqa: ANN401 - an AsyncEngine
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'd.db'}")
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)"))
    yield engine
    await engine.dispose()


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The calls sent to any connection's thread, by name."""
    sent: list[str] = []
    original = aiosqlite.Connection._execute

    async def counted(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN401
        sent.append(getattr(fn, "__name__", repr(fn)))
        return await original(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
    return sent


async def test_a_write_takes_one_trip_to_the_thread(engine: Any, trips: list[str]) -> None:  # noqa: ANN401
    async with engine.begin() as conn:
        await conn.execute(text("SELECT 1"))  # the pool's connection is out and warm
        trips.clear()
        await conn.execute(text("INSERT INTO item (name, n) VALUES (:name, :n)"), {"name": "a", "n": 1})
        assert trips == ["_statement"]  # not cursor, execute, fetchall and close: four trips
    async with engine.connect() as conn:
        rows = (await conn.execute(text("SELECT name AS who, n FROM item"))).all()
    assert [tuple(r) for r in rows] == [("a", 1)]
    assert rows[0].who == "a"  # the column names come from the cursor's description


async def test_a_read_of_a_wal_database_runs_on_the_event_loop(engine: Any, trips: list[str]) -> None:  # noqa: ANN401
    async with engine.connect() as conn:
        await conn.execute(text("SELECT 1"))
        trips.clear()
        statement = text("WITH t(a, b) AS (SELECT :a, :b) SELECT a, b FROM t")
        rows = (await conn.execute(statement, {"a": 1, "b": "x"})).all()
    assert [tuple(r) for r in rows] == [(1, "x")]
    assert trips == []  # no trip for the read, nor for the rollback of a connection that began no transaction


async def test_a_read_never_waits_for_another_connections_write(engine: Any) -> None:  # noqa: ANN401
    async with engine.begin() as writer:
        await writer.execute(text("INSERT INTO item (name, n) VALUES ('committed', 1)"))
    async with engine.begin() as writer:
        await writer.execute(text("INSERT INTO item (name, n) VALUES ('pending', 2)"))  # holds the write lock
        async with engine.connect() as reader:  # a second connection of the pool
            names = (await asyncio.wait_for(reader.execute(text("SELECT name FROM item")), timeout=10)).scalars()
            assert list(names) == ["committed"]  # the snapshot before the open write
        own = (await writer.execute(text("SELECT name FROM item ORDER BY id"))).scalars()
        assert list(own) == ["committed", "pending"]  # a transaction reads its own writes


async def test_a_memory_database_reads_on_the_connections_thread(trips: list[str]) -> None:
    engine = create_engine("sqlite+aiosqlite://")  # no WAL: a reader could wait for a writer, never on the loop
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
            trips.clear()
            assert (await conn.execute(text("SELECT 2"))).scalar_one() == 2
        assert trips[0] == "_statement"
    finally:
        await engine.dispose()


def test_only_statements_that_write_nothing_count_as_reads() -> None:
    assert reads_only("SELECT ask.updated_at FROM ask")
    assert reads_only("  with hits as (select 1) select * from hits")
    assert not reads_only("WITH x AS (SELECT 1) INSERT INTO item (n) SELECT * FROM x")
    assert not reads_only("INSERT INTO item (n) VALUES (1)")
    assert not reads_only("UPDATE item SET n = 1 RETURNING id")
    assert not reads_only("PRAGMA journal_mode=WAL")
    assert not reads_only("SELECT 1; DELETE FROM item")


async def test_writes_report_what_sqlalchemy_reads_from_the_cursor(engine: Any) -> None:  # noqa: ANN401
    async with engine.begin() as conn:
        inserted = await conn.execute(text("INSERT INTO item (name, n) VALUES ('a', 1)"))
        assert inserted.lastrowid == 1
        await conn.execute(
            text("INSERT INTO item (name, n) VALUES (:name, :n)"), [{"name": "b", "n": 2}, {"name": "c", "n": 3}]
        )
        updated = await conn.execute(text("UPDATE item SET n = n + 10 WHERE n >= 2"))
        assert updated.rowcount == 2
        returned = (await conn.execute(text("UPDATE item SET n = 0 WHERE name = 'a' RETURNING id, n"))).all()
        assert [tuple(r) for r in returned] == [(1, 0)]
    async with engine.connect() as conn:
        names = (await conn.execute(text("SELECT name, n FROM item ORDER BY id"))).all()
        assert [tuple(r) for r in names] == [("a", 0), ("b", 12), ("c", 13)]
        streamed = [tuple(r) async for r in await conn.stream(text("SELECT name FROM item ORDER BY id"))]
        assert streamed == [("a",), ("b",), ("c",)]


async def test_a_failing_statement_raises_and_rolls_back(engine: Any) -> None:  # noqa: ANN401
    with pytest.raises(IntegrityError):
        async with engine.begin() as conn:
            await conn.execute(text("INSERT INTO item (name, n) VALUES ('a', 1)"))
            await conn.execute(text("INSERT INTO item (name, n) VALUES ('a', 2)"))
    async with engine.connect() as conn:
        assert (await conn.execute(text("SELECT count(*) FROM item"))).scalar_one() == 0
