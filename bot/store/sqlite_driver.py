"""aiosqlite as SQLAlchemy's SQLite driver: one trip to the connection's thread per write, none per read in WAL mode.

aiosqlite runs each call of a connection in that connection's own thread, and SQLAlchemy's adapter makes four such
calls per statement: open a cursor, execute, fetch the rows, close the cursor. Alone, a trip costs microseconds.
Under load, each trip means waiting for the interpreter lock in the thread and then for the event loop to pick up
the result. The sqlite3 module also lets go of the lock while SQLite steps to each row and then waits to take it back.
Under 100 concurrent asks a search statement of 1-2 ms of work took 16-56 ms that way. So here:

- a write is executed, read to the end and its cursor closed in one trip, and waits in the thread (for another
  connection's write lock, up to the busy timeout) without holding up the event loop;
- a read (SELECT, or WITH ... SELECT) of a database in WAL mode, where a reader never waits for a writer, runs on
  the event loop's own thread, which holds the interpreter lock already;
- commit and rollback take no trip when no transaction is open (a pooled connection is rolled back after each read).

The cursor keeps the rows, `description`, `rowcount` and `lastrowid` for the adapter to read afterwards:

    engine = create_async_engine(url, async_creator=partial(connect, "askwith.db", timeout=30))
"""

from __future__ import annotations

import re
import sqlite3
from collections import deque
from functools import partial
from typing import Any

import aiosqlite


class OneTripCursor(aiosqlite.Cursor):
    """A cursor whose statement runs whole in one call, on the connection's thread (or, a read in WAL mode, on the
    event loop's); the rows wait here."""

    def __init__(self, conn: aiosqlite.Connection, *, reads_here: bool = False) -> None:
        super().__init__(conn, None)  # type: ignore[arg-type]  # the sqlite3 cursor is made by each statement
        self._rows: deque[Any] = deque()
        self._reads_here = reads_here

    async def execute(self, sql: str, parameters: Any = None) -> OneTripCursor:  # noqa: ANN401 - DB-API parameters
        return await self._trip(sql, parameters or (), many=False)

    async def executemany(self, sql: str, parameters: Any) -> OneTripCursor:  # noqa: ANN401 - DB-API parameters
        return await self._trip(sql, parameters, many=True)

    async def _trip(self, sql: str, parameters: Any, *, many: bool) -> OneTripCursor:  # noqa: ANN401
        if not many and self._reads_here and reads_only(sql):
            self._cursor, rows = _statement(self._conn._conn, sql, parameters, many=False)
        else:
            self._cursor, rows = await self._execute(_statement, self._conn._conn, sql, parameters, many=many)
        self._rows = deque(rows)
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
        self._rows = deque()  # the sqlite3 cursor was closed in its thread, after its last row

    # Before a first statement there is no sqlite3 cursor: answer as a fresh one would.
    @property
    def description(self) -> Any:  # noqa: ANN401 - DB-API description
        return None if self._cursor is None else self._cursor.description

    @property
    def rowcount(self) -> int:
        return -1 if self._cursor is None else self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return None if self._cursor is None else self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        return 1 if self._cursor is None else self._cursor.arraysize


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
) -> tuple[sqlite3.Cursor, list[Any]]:
    """Execute, read every row, close: on the connection's thread, or on the event loop's for a read in WAL mode."""
    cursor = connection.cursor()
    try:
        if many:
            cursor.executemany(sql, parameters)
            return cursor, []
        cursor.execute(sql, parameters)
        return cursor, cursor.fetchall() if cursor.description else []
    finally:
        cursor.close()


class OneTripConnection(aiosqlite.Connection):
    # Set once the database is known to be in WAL mode, where a reader never waits for a writer.
    reads_here = False

    def cursor(self) -> OneTripCursor:  # type: ignore[override]  # made here: no trip to the thread for it
        return OneTripCursor(self, reads_here=self.reads_here)

    async def commit(self) -> None:
        if self._conn.in_transaction:  # nothing to commit is a no-op in sqlite3 too: spare the trip
            await super().commit()

    async def rollback(self) -> None:
        if self._conn.in_transaction:  # a pooled connection is rolled back after every read
            await super().rollback()


async def connect(database: str, **kwargs: Any) -> OneTripConnection:  # noqa: ANN401 - sqlite3.connect's options
    """`aiosqlite.connect`, with one-trip cursors (SQLAlchemy's `async_creator`). The sqlite3 connection is used from
    its own thread and, for reads in WAL mode, from the event loop's: never from both at once."""
    options = {**kwargs, "check_same_thread": False}
    connection = OneTripConnection(partial(sqlite3.connect, database, **options), iter_chunk_size=64)
    connection._thread.daemon = True  # as SQLAlchemy's own aiosqlite adapter does: never keeps the process alive
    return await connection
