"""A PostgreSQL engine's connection pool is sized from the settings, within bounds; SQLite keeps its own pool."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from bot.errors import InvalidSettingError
from bot.settings import Settings
from bot.store.db import Database


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
