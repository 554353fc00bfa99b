"""The async engine, sessions and schema migrations.

db = await Database.open(settings)   # creates the SQLite file if needed and migrates to the latest schema
async with db.session() as session:
    ...
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from filelock import AsyncFileLock
from sqlalchemy import event, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from bot.settings import Settings
from bot.store import sqlite_driver
from bot.store.sqlite_readers import ReaderProcesses
from bot.store.write_turns import WriteTurns, in_turn


MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# PostgreSQL advisory-lock key held while migrating ("askwith" in ASCII), so `serve` and `worker` started together on a
# fresh database migrate one after the other instead of both inserting the first alembic_version row.
MIGRATION_LOCK_KEY = 0x61736B77697468


WRITE_TURNS = "write_turns"  # a session's `info` key: the database's WriteTurns, on SQLite


class TurnTakingSession(AsyncSession):
    """A session whose `begin()` waits for the process's turn to write when the database is SQLite."""

    def begin(self) -> Any:  # noqa: ANN401 - AsyncSessionTransaction, or the same behind a turn
        return in_turn(self.info.get(WRITE_TURNS), super().begin())


class Database:
    def __init__(self, engine: AsyncEngine, *, readers: ReaderProcesses | None = None) -> None:
        self.engine = engine
        self.readers = readers  # SQLite: the processes its reads go to (the engine's connections use them)
        # SQLite has one writer at a time: this process's writers queue here rather than in its busy handler.
        self.write_turns = WriteTurns() if engine.dialect.name == "sqlite" else None
        self.sessions = async_sessionmaker(
            engine, class_=TurnTakingSession, expire_on_commit=False, info={WRITE_TURNS: self.write_turns}
        )

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name  # "sqlite" | "postgresql"

    def insert(self, table: type[Any]):  # noqa: ANN201 - a dialect-specific Insert
        """An INSERT for this database's dialect, so callers can add ON CONFLICT clauses."""
        return (pg_insert if self.dialect == "postgresql" else sqlite_insert)(table)

    @classmethod
    async def open(cls, settings: Settings, *, url: str | None = None, migrate: bool = True) -> Database:
        url = url or settings.resolved_database_url
        parsed = make_url(url)
        readers = None
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            # ASKWITH_SQLITE_READERS is gone: reads run in the serving process (the reader processes are retired).
        db = cls(create_engine(url, readers=readers), readers=readers)
        if migrate:
            await db.migrate()
        return db

    async def migrate(self, revision: str = "head") -> None:
        """Bring the schema to `revision` with Alembic (idempotent; concurrent callers take turns)."""
        async with self._sqlite_migration_lock():
            async with self.engine.begin() as conn:
                if self.dialect == "postgresql":  # released when this transaction ends
                    await conn.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})"))
                await conn.run_sync(_upgrade, revision)

    @asynccontextmanager
    async def _sqlite_migration_lock(self) -> AsyncIterator[None]:
        """A lock file beside a SQLite database file (SQLite has no advisory locks); nothing for other databases."""
        path = self.engine.url.database
        if self.dialect != "sqlite" or path in (None, "", ":memory:"):
            yield
            return
        async with AsyncFileLock(f"{path}.migrate-lock", timeout=300):
            yield

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        async with self.sessions() as session:
            yield session

    def begin(self) -> Any:  # noqa: ANN401 - engine.begin()'s context manager, or the same behind a turn
        """A connection in a write transaction (Core statements), taking its turn on SQLite like a session's."""
        return in_turn(self.write_turns, self.engine.begin())

    async def close(self) -> None:
        await self.engine.dispose()
        if self.readers is not None:
            self.readers.close()


def as_utc(value: datetime) -> datetime:
    """A stored timestamp as an aware UTC datetime: SQLite hands back naive ones (stored as UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def create_engine(url: str, *, readers: ReaderProcesses | None = None) -> AsyncEngine:
    """The engine of `url`; on a SQLite file in WAL mode, reads outside a transaction go to `readers`."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        # A generous busy timeout: the ingestion worker and the ask worker may share one SQLite file.
        connect = partial(sqlite_driver.connect, parsed.database or ":memory:", readers=readers, timeout=30)
        engine = create_async_engine(url, async_creator=connect)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(url, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    wal = cursor.fetchone()[0] == "wal"  # a memory database stays "memory"
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
    dbapi_connection.driver_connection.reads_here = wal


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def _upgrade(sync_conn: Any, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = sync_conn
    command.upgrade(config, revision)


def run(coro: Any) -> Any:
    """Run a coroutine from synchronous code (the CLI)."""
    return asyncio.run(coro)
