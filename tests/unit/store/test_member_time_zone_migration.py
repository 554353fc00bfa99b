"""Migration 0017 (members' time zones) upgrades a database that already holds members: they keep their rows and
settings and read times in the workspace's zone until a mirror brings their profile's or they pick one; a downgrade
drops the columns again."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import command

from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database, alembic_config
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import World
from bot.store.world_mirror import mirror_world


BEFORE = "0016_rate_slots"


def _downgrade(sync_conn: Any, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = sync_conn
    command.downgrade(config, revision)


def _member_columns(sync_conn: Any) -> set[str]:
    return {column["name"] for column in sa.inspect(sync_conn).get_columns("member")}


async def test_members_stored_before_the_migration_keep_their_rows_and_get_no_zone(
    sqlite_db: Database, sample_world: World
) -> None:
    await mirror_world(sqlite_db, sample_world)
    async with sqlite_db.engine.begin() as conn:
        await conn.run_sync(_downgrade, BEFORE)
        assert not {"time_zone", "platform_time_zone"} & await conn.run_sync(_member_columns)
        before = (await conn.execute(sa.text("SELECT platform_id, opted_in, share_policy FROM member"))).all()
    await sqlite_db.migrate()
    async with sqlite_db.engine.connect() as conn:
        assert {"time_zone", "platform_time_zone"} <= await conn.run_sync(_member_columns)
        after = (await conn.execute(sa.text("SELECT platform_id, opted_in, share_policy FROM member"))).all()
        zones = (await conn.execute(sa.text("SELECT time_zone, platform_time_zone FROM member"))).all()
    assert sorted(after) == sorted(before) and len(before) == len(sample_world.members)
    assert set(zones) == {(None, None)}
    store, key = MemberSettingsStore(sqlite_db), WorkspaceKey("local", sample_world.id)
    assert (await store.set_time_zone(key, "alice", "Europe/Paris")).time_zone == "Europe/Paris"
    async with sqlite_db.engine.begin() as conn:
        await conn.run_sync(_downgrade, BEFORE)
        assert not {"time_zone", "platform_time_zone"} & await conn.run_sync(_member_columns)
