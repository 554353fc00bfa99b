"""SQLite reads in reader processes: the same rows and errors as a read in this process, never a transaction's
uncommitted rows missed, and a reader that dies, is cancelled on or outlives its event loop costs no read."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import signal
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store import sqlite_driver
from bot.store.db import create_engine
from bot.store.sqlite_readers import ReaderProcesses, plain


# About a second of SQLite's work: long enough to act on a read while a reader runs it.
LONG_READ = text("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < :n) SELECT count(*) FROM c")
LONG_N = 3_000_000


@pytest.fixture
async def readers(tmp_path: Path) -> AsyncIterator[ReaderProcesses]:
    group = ReaderProcesses(str(tmp_path / "d.db"), count=1)
    yield group
    group.close()


@pytest.fixture
async def engine(tmp_path: Path, readers: ReaderProcesses) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'd.db'}", readers=readers)
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)"))
        await conn.execute(text("INSERT INTO item (name, n) VALUES ('committed', 1)"))
    yield engine
    await engine.dispose()


@pytest.fixture
def read_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements run in this process."""
    ran: list[str] = []
    original = sqlite_driver._statement

    def counted(connection: Any, sql: str, parameters: Any, *, many: bool) -> Any:  # noqa: ANN401
        ran.append(sql)
        return original(connection, sql, parameters, many=many)

    monkeypatch.setattr(sqlite_driver, "_statement", counted)
    return ran


async def until(condition: Callable[[], bool], *, deadline_s: float = 30.0) -> None:
    ends = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < ends, "condition not met before the deadline"
        await asyncio.sleep(0.01)


async def test_a_read_outside_a_transaction_runs_in_a_reader_process(
    engine: AsyncEngine, readers: ReaderProcesses, read_here: list[str]
) -> None:
    async with engine.connect() as conn:
        rows = (await conn.execute(text("SELECT name AS who, n FROM item WHERE n >= :n"), {"n": 1})).all()
    assert [tuple(r) for r in rows] == [("committed", 1)]
    assert rows[0].who == "committed"  # the column names come from the reader's description
    assert read_here == []
    assert len(readers.pids()) == 1 and os.getpid() not in readers.pids()


async def test_a_transaction_reads_its_own_uncommitted_rows_here(engine: AsyncEngine, read_here: list[str]) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("INSERT INTO item (name, n) VALUES ('pending', 2)"))
        read_here.clear()
        names = (await conn.execute(text("SELECT name FROM item ORDER BY id"))).scalars().all()
        assert names == ["committed", "pending"]
        assert read_here == ["SELECT name FROM item ORDER BY id"]
        async with engine.connect() as other:  # another connection, through the reader: the last commit only
            assert (await other.execute(text("SELECT name FROM item"))).scalars().all() == ["committed"]
    async with engine.connect() as conn:  # committed: the reader sees it at once
        assert (await conn.execute(text("SELECT count(*) FROM item"))).scalar_one() == 2


async def test_a_reader_raises_the_error_the_read_would_raise_here(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        with pytest.raises(OperationalError, match="no such table: missing"):
            await conn.execute(text("SELECT * FROM missing"))
        assert (await conn.execute(text("SELECT n FROM item"))).scalar_one() == 1  # the reader is still in step


async def test_a_reader_cannot_write(readers: ReaderProcesses, engine: AsyncEngine) -> None:
    with pytest.raises(Exception, match="readonly|read-only|query_only"):
        await readers.read("UPDATE item SET n = 5", ())


async def test_a_read_whose_reader_dies_runs_here_and_the_reader_is_replaced(
    engine: AsyncEngine, readers: ReaderProcesses, read_here: list[str]
) -> None:
    async with engine.connect() as conn:
        long_read = asyncio.ensure_future(conn.execute(LONG_READ, {"n": LONG_N}))
        await until(lambda: readers.pending() == 1)
        (first,) = readers.pids()
        os.kill(first, signal.SIGKILL)
        assert (await long_read).scalar_one() == LONG_N
    assert any("RECURSIVE" in sql for sql in read_here)  # answered here, not lost
    async with engine.connect() as conn:
        assert (await conn.execute(text("SELECT n FROM item"))).scalar_one() == 1
    assert readers.pids() and first not in readers.pids()


async def test_a_cancelled_read_leaves_the_reader_answering_the_next(
    engine: AsyncEngine, readers: ReaderProcesses
) -> None:
    async with engine.connect() as conn:
        long_read = asyncio.ensure_future(conn.execute(LONG_READ, {"n": LONG_N}))
        await until(lambda: readers.pending() == 1)
        long_read.cancel()
        with pytest.raises(asyncio.CancelledError):
            await long_read
    async with engine.connect() as conn:
        rows = (await conn.execute(text("SELECT name, n FROM item"))).all()
    assert [tuple(r) for r in rows] == [("committed", 1)]


def test_each_event_loop_gets_readers_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "loops.db"
    with sqlite3.connect(path) as setup:
        setup.execute("PRAGMA journal_mode=WAL")
        setup.execute("CREATE TABLE t (x)")
        setup.execute("INSERT INTO t VALUES (42)")
    readers = ReaderProcesses(str(path), count=1)
    try:
        first = asyncio.run(readers.read("SELECT x FROM t", ()))
        pids = readers.pids()
        second = asyncio.run(readers.read("SELECT x + ? FROM t", (1,)))
        assert first[1] == [(42,)] and second[1] == [(43,)]
        assert readers.pids() != pids  # the first loop's reader ended with it
    finally:
        readers.close()


def test_only_plain_parameters_travel_to_a_reader() -> None:
    assert plain((1, 2.5, "a", b"b", None))
    assert plain({"a": 1})
    assert not plain((dt.datetime(2026, 1, 1),))
