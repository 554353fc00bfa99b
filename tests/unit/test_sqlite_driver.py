"""The SQLite driver: one trip to the connection's thread per statement, and the DB-API answers SQLAlchemy reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from bot.store.db import create_engine


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


async def test_a_query_takes_one_trip_to_the_thread(engine: Any, trips: list[str]) -> None:  # noqa: ANN401
    async with engine.connect() as conn:
        await conn.execute(text("SELECT 1"))  # the pool's connection is out and warm
        trips.clear()
        rows = (await conn.execute(text("SELECT :a AS a, :b AS b"), {"a": 1, "b": "x"})).all()
        assert trips == ["_statement"]  # not cursor, execute, fetchall and close: four trips
    assert [tuple(r) for r in rows] == [(1, "x")]
    assert rows[0].b == "x"  # the column names come from the cursor's description


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
