"""A throwaway database on a PostgreSQL server, for benchmarks that measure the PostgreSQL path."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from sqlalchemy.engine import make_url


@asynccontextmanager
async def scratch_postgres(server_url: str, *, prefix: str = "askwith_bench") -> AsyncIterator[str]:
    """A new database on the server of `server_url` (any driver), dropped afterwards even when the benchmark fails;
    yields its SQLAlchemy URL with the asyncpg driver. The URL's own database (else `postgres`) takes the admin
    statements."""
    server = make_url(server_url)
    admin = server.set(drivername="postgresql", database=server.database or "postgres")
    admin_dsn = admin.render_as_string(hide_password=False)
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    await _admin(admin_dsn, f'CREATE DATABASE "{name}"')
    try:
        yield server.set(drivername="postgresql+asyncpg", database=name).render_as_string(hide_password=False)
    finally:
        await _admin(admin_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _admin(dsn: str, statement: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()
