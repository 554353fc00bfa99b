"""Migration 0004 (the FTS5 index with channel scope tokens) rebuilds from stored messages, both ways."""

from __future__ import annotations

from typing import Any

from alembic import command

from bot.memory.clear import ClearMemory
from bot.memory.types import ClearQuery
from bot.memory.visibility import resolve_viewer
from bot.store.db import Database, alembic_config
from bot.store.world import World
from bot.store.world_mirror import mirror_world


def _downgrade(sync_conn: Any, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = sync_conn
    command.downgrade(config, revision)


async def test_scoped_index_is_rebuilt_from_stored_messages(sqlite_db: Database, sample_world: World) -> None:
    workspace_id = await mirror_world(sqlite_db, sample_world)
    async with sqlite_db.engine.begin() as conn:
        await conn.run_sync(_downgrade, "-1")
    await sqlite_db.migrate()
    async with sqlite_db.session() as session:
        alice = await resolve_viewer(session, workspace_id, "alice")
    memory = ClearMemory(sqlite_db, scoped_match_max_channels=0)
    scoped = ClearMemory(sqlite_db, scoped_match_matches_per_channel=0)
    query = ClearQuery(keywords=("rehearsal",))
    assert len(await memory.search(alice, query)) == 4
    assert await scoped.search(alice, query) == await memory.search(alice, query)
