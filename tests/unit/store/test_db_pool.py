"""A PostgreSQL engine's connection pool is sized from the settings, within bounds; a SQLite file's pool keeps its
connections and rolls back on return only what is open."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.dialects.sqlite.aiosqlite import AsyncAdapt_aiosqlite_connection

from bot.errors import InvalidSettingError
from bot.settings import Settings
from bot.store.db import SQLITE_POOL_SIZE, Database


# Nothing listens here: opening the engine without migrating connects to nothing.
UNREACHABLE = "postgresql+asyncpg://askwith@127.0.0.1:9/askwith"


async def test_the_pool_is_sized_from_the_settings() -> None:
    settings = Settings.load(env={"ASKWITH_DB_POOL_SIZE": "12", "ASKWITH_DB_MAX_OVERFLOW": "3"}, env_file=None)
    db = await Database.open(settings, url=UNREACHABLE, migrate=False)
    try:
        pool = db.engine.pool
        assert pool.size() == 12  # type: ignore[attr-defined]
        assert pool._max_overflow == 3  # type: ignore[attr-defined]  # no public reader of the overflow bound
    finally:
        await db.close()


async def test_the_defaults_are_five_and_ten() -> None:
    db = await Database.open(Settings.load(env={}, env_file=None), url=UNREACHABLE, migrate=False)
    try:
        assert (db.engine.pool.size(), db.engine.pool._max_overflow) == (5, 10)  # type: ignore[attr-defined]
    finally:
        await db.close()


@pytest.mark.parametrize(
    ("env", "raw"),
    [("ASKWITH_DB_POOL_SIZE", "0"), ("ASKWITH_DB_POOL_SIZE", "201"), ("ASKWITH_DB_MAX_OVERFLOW", "-1"),
     ("ASKWITH_DB_MAX_OVERFLOW", "1001"), ("ASKWITH_DB_POOL_SIZE", "many")],
)  # fmt: skip
def test_a_pool_size_out_of_bounds_is_refused_in_one_line(env: str, raw: str) -> None:
    with pytest.raises(InvalidSettingError) as refused:
        Settings.load(env={env: raw}, env_file=None)
    assert str(refused.value).startswith(env) and "\n" not in str(refused.value)


async def test_sqlite_ignores_the_pool_sizes(tmp_path: Path) -> None:
    settings = Settings.load(env={"ASKWITH_DB_POOL_SIZE": "1", "ASKWITH_DB_MAX_OVERFLOW": "0"}, env_file=None)
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{tmp_path / 'askwith.db'}")
    try:
        async with db.session() as one, db.session() as two:  # two connections at once still work
            assert await one.scalar(text("SELECT 1")) == 1
            assert await two.scalar(text("SELECT 1")) == 1
    finally:
        await db.close()


async def test_a_sqlite_file_keeps_the_connections_it_opened_under_load(tmp_path: Path) -> None:
    """Connections opened for many units of work at once stay open: the next burst opens none (each new one costs a
    driver thread, a file open and the pragmas)."""
    db = await Database.open(Settings.load(env={}, env_file=None), url=f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
    opened: list[object] = []
    event.listen(db.engine.sync_engine, "connect", lambda dbapi_connection, _record: opened.append(dbapi_connection))
    try:
        for burst in range(2):
            async with contextlib.AsyncExitStack() as stack:
                conns = [await stack.enter_async_context(db.engine.connect()) for _ in range(SQLITE_POOL_SIZE)]
                for conn in conns:
                    assert await conn.scalar(text("SELECT 1")) == 1
            assert len(opened) <= SQLITE_POOL_SIZE, f"burst {burst} opened connections again"
    finally:
        await db.close()


async def test_a_sqlite_connection_is_rolled_back_on_return_only_when_a_transaction_is_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a commit or reads only, nothing is open and the pool does not roll back (each rollback is a round trip
    to the driver's thread); a write left open on a returned connection is rolled back, its lock released."""
    db = await Database.open(Settings.load(env={}, env_file=None), url=f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
    rollbacks: list[object] = []
    original = AsyncAdapt_aiosqlite_connection.rollback

    def counted(self: AsyncAdapt_aiosqlite_connection) -> None:
        rollbacks.append(self)
        original(self)

    monkeypatch.setattr(AsyncAdapt_aiosqlite_connection, "rollback", counted)
    try:
        async with db.begin() as conn:
            await conn.execute(text("CREATE TABLE t (x INTEGER)"))
        async with db.begin() as conn:
            await conn.execute(text("INSERT INTO t VALUES (1)"))
        assert rollbacks == []  # committed: nothing to roll back on return

        def leave_a_write_open(sync_conn: Any) -> None:
            raw = sync_conn.engine.raw_connection()  # a second connection, returned without commit or rollback
            cursor = raw.cursor()
            cursor.execute("INSERT INTO t VALUES (2)")
            cursor.close()
            raw.close()

        async with db.engine.connect() as conn:
            await conn.run_sync(leave_a_write_open)
        assert len(rollbacks) == 1
        async with db.begin() as conn:  # the write lock was released, and the write undone
            await conn.execute(text("INSERT INTO t VALUES (3)"))
            assert (await conn.execute(text("SELECT x FROM t ORDER BY x"))).scalars().all() == [1, 3]
    finally:
        await db.close()
