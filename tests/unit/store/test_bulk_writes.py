"""Bulk writes stay under each engine's bound-parameter limit: asyncpg's 32,767, SQLite's stock 32,766 and old 999.

A mirror of 4,096 members (8 parameters each) is one parameter past asyncpg's limit in one statement; 8,200 channels
(4 each) too. The SQLite cases lower the connections' SQLITE_LIMIT_VARIABLE_NUMBER to what those builds compile in.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.exc import DBAPIError, OperationalError

from bot.platform import port
from bot.store import bulk, models, truth
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database


MEMBERS = 4_096  # x 8 parameters = 32,768: one past asyncpg's limit
CHANNELS = 8_200  # x 4 parameters = 32,800
SMALL = 300  # x 4 or more parameters: past 999


@pytest.fixture(params=[pytest.param(32_766, marks=pytest.mark.slow), 999], ids=["sqlite-stock", "sqlite-old"])
async def limited_sqlite(request: pytest.FixtureRequest, sqlite_db: Database) -> AsyncIterator[Database]:
    """A SQLite database whose connections accept only as many variables as a stock (or an old) build."""

    def lower_limit(dbapi_connection: object, _record: object) -> None:
        raw = dbapi_connection.driver_connection._conn  # type: ignore[attr-defined]
        raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, request.param)

    event.listen(sqlite_db.engine.sync_engine, "connect", lower_limit)
    await sqlite_db.engine.dispose()  # connections opened while migrating had the build's limit
    yield sqlite_db


def _members(count: int) -> list[port.Member]:
    return [port.Member(id=f"U{i:06d}", name=f"member{i}", display_name=f"Member {i}") for i in range(count)]


def _channels(count: int, member_ids: list[str]) -> list[port.Channel]:
    return [
        port.Channel(
            id=f"C{i:06d}", name=f"chan{i}", kind=port.ChannelKind.PUBLIC, member_ids=member_ids[i % 7 :: 1000]
        )
        for i in range(count)
    ]


async def _mirror_and_count(db: Database, size: int) -> tuple[int, int, int]:
    store = ChatStore(db)
    members = _members(MEMBERS if size > 999 else SMALL)
    channels = _channels(CHANNELS if size > 999 else SMALL, [m.id for m in members])
    async with db.session() as session, session.begin():
        workspace_id = await store.ensure_workspace(session, WorkspaceKey("slack", "T1"), "big")
        member_ids = await store.upsert_members(session, workspace_id, members)
        await store.upsert_channels(session, workspace_id, channels, member_ids)
    async with db.session() as session:
        counts = [
            (await session.execute(select(func.count()).select_from(table))).scalar_one()
            for table in (models.Member, models.Channel, models.Membership)
        ]
    return counts[0], counts[1], counts[2]


def _expected(size: int) -> tuple[int, int, int]:
    members, channels = (MEMBERS, CHANNELS) if size > 999 else (SMALL, SMALL)
    return members, channels, sum(len(range(i % 7, members, 1000)) for i in range(channels))


async def test_the_parameter_limit_is_real(limited_sqlite: Database) -> None:
    """The lowered limit is enforced by the engine, so the tests below would fail on one big statement."""
    limit = await _limit(limited_sqlite)
    rows = [{"workspace_id": 1, "platform_id": f"x{i}", "name": "n", "kind": "public"} for i in range(limit // 4 + 1)]
    async with limited_sqlite.session() as session, session.begin():
        await ChatStore(limited_sqlite).ensure_workspace(session, WorkspaceKey("slack", "T1"), "big")
        with pytest.raises(OperationalError, match="too many SQL variables"):
            await session.execute(limited_sqlite.insert(models.Channel).values(rows))


async def _limit(db: Database) -> int:
    async with db.session() as session:
        return await bulk.parameter_limit(session)


async def test_a_mirror_past_sqlite_limits_is_written_in_chunks(limited_sqlite: Database) -> None:
    limit = await _limit(limited_sqlite)
    assert limit in (32_766, 999)
    assert await _mirror_and_count(limited_sqlite, limit) == _expected(limit)


@pytest.mark.postgres
@pytest.mark.slow
async def test_a_mirror_past_asyncpg_limit_is_written_in_chunks(db: Database) -> None:
    if db.dialect != "postgresql":
        pytest.skip("the asyncpg half")
    assert await _limit(db) == bulk.POSTGRES_MAX_PARAMETERS
    assert await _mirror_and_count(db, MEMBERS) == _expected(MEMBERS)
    # The same statement in one piece is what used to fail.
    rows = [{"workspace_id": 1, "platform_id": f"x{i}", "name": "n", "kind": "public"} for i in range(CHANNELS)]
    async with db.session() as session:
        with pytest.raises(DBAPIError):
            await session.execute(db.insert(models.Channel).values(rows).on_conflict_do_nothing())


async def test_memberships_shrink_in_chunks(limited_sqlite: Database) -> None:
    """Memberships a later mirror no longer lists are deleted in bounded statements, not one by one."""
    limit = await _limit(limited_sqlite)
    await _mirror_and_count(limited_sqlite, limit)
    store = ChatStore(limited_sqlite)
    async with limited_sqlite.session() as session, session.begin():
        workspace_id = await store.ensure_workspace(session, WorkspaceKey("slack", "T1"), "big")
        member_ids = await store.member_ids(session, workspace_id)
        await store.upsert_channels(session, workspace_id, _channels(_expected(limit)[1], []), member_ids)
    async with limited_sqlite.session() as session:
        assert (await session.execute(select(func.count()).select_from(models.Membership))).scalar_one() == 0


async def test_deleting_many_messages_tombstones_them_in_chunks(limited_sqlite: Database) -> None:
    ids = [f"C1-{i}" for i in range(SMALL * 3)]  # 3 parameters a tombstone: 3,000 of them
    async with limited_sqlite.session() as session, session.begin():
        workspace_id = await ChatStore(limited_sqlite).ensure_workspace(session, WorkspaceKey("slack", "T1"), "w")
        await truth.delete_messages(limited_sqlite, session, workspace_id, ids)
        assert await truth.tombstoned(session, workspace_id, ids) == set(ids)


def test_chunk_sizes_follow_the_limit() -> None:
    assert bulk.chunk_size(bulk.POSTGRES_MAX_PARAMETERS, 8) == (32_767 - bulk.RESERVED_PARAMETERS) // 8
    assert bulk.chunk_size(999, 8) == (999 - bulk.RESERVED_PARAMETERS) // 8
    assert bulk.chunk_size(250_000, 1) == bulk.MAX_ROWS_PER_STATEMENT
    assert bulk.split(list(range(5)), 2) == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError):
        bulk.chunk_size(999, 0)
