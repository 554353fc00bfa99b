"""Bulk statements in bounded chunks: every multi-row INSERT and every IN-list of the store goes through here.

A statement may carry only so many bound parameters: asyncpg counts them in a 16-bit field (32,767), SQLite stops at
its build's SQLITE_MAX_VARIABLE_NUMBER (32,766 on stock builds since 3.32, 999 before, more on some distributions).
A mirror of 50,000 members (8 parameters each) overflows both in one statement, so rows are cut into chunks sized
from the limit of the connection that runs them:

    for rows in await row_chunks(session, Member, member_rows):
        await session.execute(insert(Member).values(rows))
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession


T = TypeVar("T")

POSTGRES_MAX_PARAMETERS = 32_767  # asyncpg: the Bind message counts parameters in a signed 16-bit integer
# Parameters a chunked statement may carry besides its rows (a workspace id in a WHERE clause, ON CONFLICT SET).
RESERVED_PARAMETERS = 16
# More rows per statement save nothing measurable and cost compile time and memory (a 125,000-row INSERT).
MAX_ROWS_PER_STATEMENT = 5_000


async def parameter_limit(session: AsyncSession | AsyncConnection) -> int:
    """Bound parameters one statement may carry on the session's connection."""
    connection = await session.connection() if isinstance(session, AsyncSession) else session
    if connection.dialect.name != "sqlite":
        return POSTGRES_MAX_PARAMETERS
    raw = await connection.get_raw_connection()
    return sqlite_variable_limit(raw.driver_connection._conn)  # type: ignore[union-attr]  # aiosqlite's sqlite3


def sqlite_variable_limit(connection: sqlite3.Connection) -> int:
    """This connection's SQLITE_MAX_VARIABLE_NUMBER (a build may lower it, a connection may lower it further)."""
    return connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)


def chunk_size(limit: int, per_item: int) -> int:
    """Items per statement when each takes `per_item` parameters under a `limit` of them."""
    if per_item < 1:
        raise ValueError(f"per_item must be at least 1, not {per_item}")
    return max(1, min(MAX_ROWS_PER_STATEMENT, (limit - RESERVED_PARAMETERS) // per_item))


def split(items: Sequence[T], size: int) -> list[list[T]]:
    return [list(items[start : start + size]) for start in range(0, len(items), size)]


async def row_chunks(session: AsyncSession, table: type[Any], rows: Sequence[T]) -> list[list[T]]:
    """Rows of a multi-row INSERT into `table`: every column counts, since columns with a Python-side default
    (a version, a timestamp) are rendered as parameters of each row too."""
    return await chunks(session, rows, per_item=len(table.__table__.columns))


async def chunks(session: AsyncSession | AsyncConnection, items: Sequence[T], *, per_item: int) -> list[list[T]]:
    """`items` cut so that each chunk's statement stays under the connection's parameter limit."""
    if not items:
        return []
    return split(items, chunk_size(await parameter_limit(session), per_item))
