"""Alembic environment: migrations run on a connection handed over by `Database.migrate`, or on
ASKWITH_DATABASE_URL when invoked through the `alembic` command line."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from bot.settings import Settings
from bot.store import lease_models, negotiation_models  # noqa: F401  (registers their tables)
from bot.store.db import create_engine
from bot.store.models import Base


target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_from_settings() -> None:
    engine = create_engine(Settings.load().resolved_database_url)
    async with engine.begin() as conn:
        await conn.run_sync(run_on)
    await engine.dispose()


connection = context.config.attributes.get("connection")
if connection is not None:
    run_on(connection)
else:
    asyncio.run(run_from_settings())
