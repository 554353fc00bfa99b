"""The async engine, sessions and schema migrations.

db = await Database.open(settings)   # creates the SQLite file if needed and migrates to the latest schema
async with db.session() as session:
    ...
async with db.read() as conn:        # reads only (autocommit on PostgreSQL)
    rows = (await conn.execute(select(...))).all()
if lost_connection(exc) and await db.reachable_within(60.0):
    ...  # the server restarted (or the network blinked): redo the unit of work that failed

The pool pings a connection before handing it out (as `pool_pre_ping` does) unless it came back to the pool moments ago
and the driver still sees it open (`_ping_when_idle`), so once the server is back a new unit of work gets a live
connection; what was under way when the connections were cut fails, and its caller redoes it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from filelock import AsyncFileLock
from sqlalchemy import event, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, InvalidatePoolError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import PoolResetState

from bot.settings import Settings


MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# PostgreSQL advisory-lock key held while migrating ("askwith" in ASCII), so `serve` and `worker` started together on a
# fresh database migrate one after the other instead of both inserting the first alembic_version row.
MIGRATION_LOCK_KEY = 0x61736B77697468
# How long a SQLite statement waits for another connection's write lock before it fails with "database is locked"
# (sqlite3's `timeout`, SQLite's busy_timeout). In WAL mode a read never waits for it; writers of this process and of
# a separate `askwith ingest` on the same file queue in SQLite's busy handler for at most this long.
SQLITE_BUSY_TIMEOUT_S = 30.0
# Connections a SQLite file's pool keeps open: as many as SQLAlchemy's default pool may hand out at once (5, plus 10
# under load), all kept. An overflow connection would be closed when returned, and a busy process would pay, again and
# again, a new driver thread, a file open and the pragmas below for each of them.
SQLITE_POOL_SIZE = 15
# A PostgreSQL connection back in the pool for less than this (and still open) is handed out without a ping.
PING_AFTER_IDLE_S = 1.0
_RETURNED_AT = "askwith_returned_at"  # the connection record's `info` key: when it last came back to the pool
PING_TIMEOUT_S = 5.0  # a server that does not answer a trivial query this fast is not back yet
RECONNECT_BACKOFF_S = (0.2, 0.5, 1.0, 2.0)  # waits between tries while the server is unreachable, the last repeated


class Database:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.sessions = async_sessionmaker(engine, expire_on_commit=False)
        # PostgreSQL reads in autocommit (`read`): the same pool, each connection set back when returned.
        self._reader = (
            engine.execution_options(isolation_level="AUTOCOMMIT") if self.dialect == "postgresql" else engine
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
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        db = cls(create_engine(url, pool_size=settings.db_pool_size, max_overflow=settings.db_max_overflow))
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

    def read(self) -> AsyncConnection:
        """A connection for reads only (Core statements, nothing written through it), closed when the block ends.

        On PostgreSQL it is in autocommit, as SQLAlchemy's "multiple isolation levels for a single engine" shows:
        its reads cost no BEGIN and no ROLLBACK round trip, and they read what they would in a transaction (under
        READ COMMITTED, PostgreSQL's default and askwith's, every statement reads its own snapshot either way). On
        SQLite it is an ordinary connection (switching autocommit there would cost a round trip to the driver's
        thread each way, and a read opens no transaction to end)."""
        return self._reader.connect()

    def begin(self) -> Any:  # noqa: ANN401 - engine.begin()'s async context manager
        """A connection in a write transaction (Core statements), committed when the block ends."""
        return self.engine.begin()

    async def close(self) -> None:
        await self.engine.dispose()

    async def analyze(self, tables: Sequence[str]) -> None:
        """PostgreSQL: refresh the planner's statistics of `tables` now (ANALYZE), after a bulk load changed them.

        Autovacuum would do it only once a tenth of a table changed and at its next round, or never where it is
        switched off; until then the planner takes a freshly loaded table for a few rows and picks nested loops
        that walk it once per channel. SQLite plans without such statistics: nothing to do."""
        if self.dialect != "postgresql":
            return
        async with self.engine.connect() as conn:
            await conn.execute(text(f"ANALYZE {', '.join(tables)}"))
            await conn.commit()

    async def check(self) -> None:
        """Run a trivial query through a session; raises what the database raised (a health probe reports why, where
        `ping` only says whether). Unbounded: an exhausted pool holds it for the pool's own timeout."""
        async with self.session() as session:
            await session.execute(text("SELECT 1"))

    async def ping(self) -> bool:
        """Whether the database answers a trivial query now."""
        try:
            async with asyncio.timeout(PING_TIMEOUT_S), self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception:  # any failure to answer is "not now"; the caller decides how long to wait
            return False
        return True

    async def reachable_within(self, seconds: float) -> bool:
        """Wait, backing off, until the database answers again; False if it has not within `seconds`."""
        loop = asyncio.get_running_loop()
        deadline, tries = loop.time() + seconds, 0
        while not await self.ping():
            wait = RECONNECT_BACKOFF_S[min(tries, len(RECONNECT_BACKOFF_S) - 1)]
            if loop.time() + wait > deadline:
                return False
            await asyncio.sleep(wait)
            tries += 1
        return True


def lost_connection(exc: BaseException) -> bool:
    """Whether `exc` says the connection to the database went away (a server restart, a cut network) rather than that
    a statement was wrong: SQLAlchemy found the connection invalidated, or connecting failed at the socket (asyncpg
    raises that OSError itself)."""
    if isinstance(exc, DBAPIError):
        return exc.connection_invalidated
    return isinstance(exc, OSError)


def lost_reason(exc: BaseException) -> str:
    """One line saying why, for a log: the driver's own message, without the statement or its parameters (they may
    hold what members wrote)."""
    cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    return f"{type(cause).__name__}: {next(iter(str(cause).splitlines()), '')}"


def as_utc(value: datetime) -> datetime:
    """A stored timestamp as an aware UTC datetime: SQLite hands back naive ones (stored as UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def create_engine(url: str, *, pool_size: int = 5, max_overflow: int = 10) -> AsyncEngine:
    """The engine of `url`: SQLAlchemy's aiosqlite or asyncpg dialect as documented. A server database's pool keeps
    `pool_size` connections and opens up to `max_overflow` more under load (`ASKWITH_DB_POOL_SIZE`,
    `ASKWITH_DB_MAX_OVERFLOW`); a caller waits 30 s at most for one before an error. A SQLite file's pool keeps
    `SQLITE_POOL_SIZE` connections open, none beyond (the sizes mean nothing to one writer)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        # A file's pool resets a returned connection itself (`_sqlite_reset`); a memory database keeps SQLAlchemy's
        # single shared connection (StaticPool), reset as SQLAlchemy does.
        file_pool = {} if parsed.database in (None, "", ":memory:") else _SQLITE_FILE_POOL
        engine = create_async_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S}, **file_pool)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        # A connection closed after reads only is rolled back by SQLAlchemy: only an open transaction is, here.
        engine.sync_engine.dialect.do_rollback = _sqlite_rollback  # type: ignore[method-assign]
        if file_pool:
            event.listen(engine.sync_engine, "reset", _sqlite_reset)
        return engine
    engine = create_async_engine(url, pool_size=pool_size, max_overflow=max_overflow)
    _ping_when_idle(engine)
    return engine


def _ping_when_idle(engine: AsyncEngine) -> None:
    """Ping a PostgreSQL connection before handing it out (as `pool_pre_ping` would: one that does not answer is
    replaced, and the pool with it) unless it came back to the pool within `PING_AFTER_IDLE_S` and its socket is
    open. Under load the pool hands a connection out again milliseconds after it came back, and asyncpg's ping is
    three round trips (a transaction begun and rolled back around the query); a restarting server closes its
    connections, which the driver sees at once (`is_closed`), so those are still pinged."""
    dialect = engine.sync_engine.dialect

    def returned(_dbapi_connection: Any, record: Any) -> None:
        record.info[_RETURNED_AT] = time.monotonic()

    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        returned_at = record.info.get(_RETURNED_AT)
        recent = returned_at is not None and time.monotonic() - returned_at < PING_AFTER_IDLE_S
        if recent and not dbapi_connection.driver_connection.is_closed():
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            if dialect.is_disconnect(exc, dbapi_connection, None):
                raise InvalidatePoolError() from exc  # the pool reconnects, and drops its other connections
            raise

    event.listen(engine.sync_engine, "connect", returned)  # a new connection needs no ping
    event.listen(engine.sync_engine, "checkin", returned)
    event.listen(engine.sync_engine, "checkout", checkout)


_SQLITE_FILE_POOL: dict[str, Any] = {
    "pool_size": SQLITE_POOL_SIZE,
    "max_overflow": 0,
    "pool_reset_on_return": None,  # `_sqlite_reset` instead, as SQLAlchemy's "Custom Reset Schemes" describe
}


def _sqlite_reset(dbapi_connection: Any, _record: Any, reset_state: PoolResetState) -> None:
    """Reset a SQLite connection returned to the pool: roll back only a transaction still open on it.

    SQLAlchemy's default reset rolls back every returned connection, and through aiosqlite each rollback is a round
    trip to the connection's thread, even when there is nothing to roll back: after a commit, or after reads only
    (sqlite3 opens a transaction for a write, never for a SELECT). sqlite3 knows whether one is open
    (`in_transaction`, read without touching the database). A connection the `Connection` rolled back already, or one
    being discarded outside the event loop, is left as SQLAlchemy's own reset would leave it."""
    if reset_state.transaction_was_reset or not reset_state.asyncio_safe:
        return
    _sqlite_rollback(dbapi_connection)


def _sqlite_rollback(dbapi_connection: Any) -> None:
    """Roll back a SQLite connection's transaction, if one is open (the dialect's `do_rollback` on SQLite).

    SQLAlchemy rolls back the transaction it began on a connection when the connection closes, reads only or not,
    and through aiosqlite each rollback is a round trip to the connection's thread. sqlite3 opens a transaction for a
    write, never for a SELECT, and knows whether one is open (`in_transaction`, read without touching the database)."""
    try:
        open_transaction = dbapi_connection.driver_connection.in_transaction
    except ValueError:  # aiosqlite's connection is closed already: nothing is open on it
        return
    if open_transaction:
        dbapi_connection.rollback()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Each new SQLite connection: foreign keys enforced, and WAL mode, where readers never wait for the writer."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")  # a memory database stays "memory"
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


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
