"""aiosqlite as SQLAlchemy's SQLite driver: one trip to the connection's thread per write, none per read in WAL mode.

aiosqlite runs each call of a connection in that connection's own thread, and SQLAlchemy's adapter makes four such
calls per statement: open a cursor, execute, fetch the rows, close the cursor. Alone, a trip costs microseconds.
Under load, each trip means waiting for the interpreter lock in the thread and then for the event loop to pick up
the result. The sqlite3 module also lets go of the lock while SQLite steps to each row and then waits to take it back.
Under 100 concurrent asks a search statement of 1-2 ms of work took 16-56 ms that way. So here:

- a write is executed, read to the end and its cursor closed in one trip, and waits in the thread (for another
  connection's write lock, up to the busy timeout) without holding up the event loop;
- a read (SELECT, or WITH ... SELECT) of a database in WAL mode, where a reader never waits for a writer, goes to a
  reader process (`bot.store.sqlite_readers`) when the connection has some and no transaction of its own is open
  (so it needs none of this connection's uncommitted rows); otherwise it runs on the event loop's own thread, which
  holds the interpreter lock already;
- commit and rollback take no trip when no transaction is open (a pooled connection is rolled back after each read).

The cursor keeps the rows, `description`, `rowcount` and `lastrowid` for the adapter to read afterwards:

    engine = create_async_engine(url, async_creator=partial(connect, "askwith.db", timeout=30))
"""

from __future__ import annotations

import re
import sqlite3
from collections import deque
from functools import partial
from typing import Any, NamedTuple

import aiosqlite

from bot.store.sqlite_readers import ReaderGone, ReaderProcesses, plain


class Outcome(NamedTuple):
    """What a statement left for the DB-API cursor to report, once its sqlite3 cursor is closed."""

    description: Any
    rowcount: int
    lastrowid: int | None
    rows: list[Any]


NOT_RUN = Outcome(None, -1, None, [])  # as a fresh sqlite3 cursor answers


class OneTripCursor(aiosqlite.Cursor):
    """A cursor whose statement runs whole in one call, on the connection's thread (or, a read in WAL mode, in a
    reader process or on the event loop's thread); the rows wait here."""

    arraysize = 1  # rows per fetchmany() by default, as sqlite3's
    _conn: OneTripConnection

    def __init__(self, conn: OneTripConnection) -> None:
        super().__init__(conn, None)  # type: ignore[arg-type]  # the sqlite3 cursor is made by each statement
        self._outcome = NOT_RUN
        self._rows: deque[Any] = deque()

    async def execute(self, sql: str, parameters: Any = None) -> OneTripCursor:  # noqa: ANN401 - DB-API parameters
        if self._conn.reads_here and reads_only(sql):
            return self._keep(await self._conn.read(sql, parameters or ()))
        return self._keep(await self._execute(_statement, self._conn._conn, sql, parameters or (), many=False))

    async def executemany(self, sql: str, parameters: Any) -> OneTripCursor:  # noqa: ANN401 - DB-API parameters
        return self._keep(await self._execute(_statement, self._conn._conn, sql, parameters, many=True))

    def _keep(self, outcome: Outcome) -> OneTripCursor:
        self._outcome, self._rows = outcome, deque(outcome.rows)
        return self

    async def fetchone(self) -> Any:  # noqa: ANN401 - a row
        return self._rows.popleft() if self._rows else None

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        wanted = self.arraysize if size is None else size
        return [self._rows.popleft() for _ in range(min(wanted, len(self._rows)))]

    async def fetchall(self) -> list[Any]:
        rows, self._rows = list(self._rows), deque()
        return rows

    async def close(self) -> None:
        self._rows = deque()  # the sqlite3 cursor was closed after its last row

    @property
    def description(self) -> Any:  # noqa: ANN401 - DB-API description
        return self._outcome.description

    @property
    def rowcount(self) -> int:
        return self._outcome.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._outcome.lastrowid


_READ = re.compile(r"\s*(?:SELECT|WITH)\b", re.IGNORECASE)
_WRITE = re.compile(r"\b(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


def reads_only(sql: str) -> bool:
    """A SELECT (or WITH ... SELECT) that writes nothing: it never waits for a lock in WAL mode."""
    return bool(_READ.match(sql)) and not _WRITE.search(sql)


def _statement(
    connection: sqlite3.Connection,
    sql: str,
    parameters: Any,  # noqa: ANN401 - DB-API parameters
    *,
    many: bool,
) -> Outcome:
    """Execute, read every row, close: on the connection's thread, or on the event loop's for a read in WAL mode."""
    cursor = connection.cursor()
    try:
        if many:
            cursor.executemany(sql, parameters)
            rows = []
        else:
            cursor.execute(sql, parameters)
            rows = cursor.fetchall() if cursor.description else []
        return Outcome(cursor.description, cursor.rowcount, cursor.lastrowid, rows)
    finally:
        cursor.close()


class OneTripConnection(aiosqlite.Connection):
    # Set once the database is known to be in WAL mode, where a reader never waits for a writer.
    reads_here = False
    # The database's reader processes, if it has any: reads outside a transaction go there.
    readers: ReaderProcesses | None = None

    def cursor(self) -> OneTripCursor:  # type: ignore[override]  # made here: no trip to the thread for it
        return OneTripCursor(self)

    async def read(self, sql: str, parameters: Any) -> Outcome:  # noqa: ANN401 - DB-API parameters
        """A read in WAL mode: in a reader process when no transaction of this connection is open (a reader
        cannot see its uncommitted rows) and the parameters travel as they are; else here, on the loop's thread."""
        if self.readers is not None and self.readers.count and not self._conn.in_transaction and plain(parameters):
            try:
                description, rows = await self.readers.read(sql, parameters)
                return Outcome(description, -1, None, rows)
            except ReaderGone:
                pass  # read here instead
        return _statement(self._conn, sql, parameters, many=False)

    async def commit(self) -> None:
        if self._conn.in_transaction:  # nothing to commit is a no-op in sqlite3 too: spare the trip
            await super().commit()

    async def rollback(self) -> None:
        if self._conn.in_transaction:  # a pooled connection is rolled back after every read
            await super().rollback()


async def connect(
    database: str,
    *,
    readers: ReaderProcesses | None = None,
    **kwargs: Any,  # noqa: ANN401 - sqlite3.connect's options
) -> OneTripConnection:
    """`aiosqlite.connect`, with one-trip cursors (SQLAlchemy's `async_creator`), reading through `readers` when the
    database turns out to be in WAL mode. The sqlite3 connection is used from its own thread and, for reads in WAL
    mode, from the event loop's: never from both at once."""
    options = {**kwargs, "check_same_thread": False}
    connection = OneTripConnection(partial(sqlite3.connect, database, **options), iter_chunk_size=64)
    connection.readers = readers
    connection._thread.daemon = True  # as SQLAlchemy's own aiosqlite adapter does: never keeps the process alive
    return await connection
