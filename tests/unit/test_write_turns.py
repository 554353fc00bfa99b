"""SQLite writers of one process take turns in the event loop; a turn never deadlocks and never outlives its wait."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select, update

from bot.store import models
from bot.store.db import Database, create_engine
from bot.store.world_mirror import mirror_world
from bot.store.write_turns import WriteTurns
from bot.world import World


DEADLINE_S = 30.0  # generous: waits below end on events, this only bounds a failure
BEGIN_S = 1.0  # how long a writer that should be queued is given to begin anyway


async def test_sqlite_write_transactions_run_one_after_another(sqlite_db: Database, sample_world: World) -> None:
    await mirror_world(sqlite_db, sample_world)
    events: list[str] = []
    first_inside, second_began, release_first = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def first() -> None:
        async with sqlite_db.session() as session, session.begin():
            events.append("first begins")
            await session.execute(update(models.Member).values(display_name="first"))
            first_inside.set()
            await release_first.wait()
            events.append("first commits")

    async def second() -> None:
        await first_inside.wait()
        async with sqlite_db.begin() as conn:  # a Core transaction queues behind a session's
            events.append("second begins")
            second_began.set()
            await conn.execute(update(models.Member).values(display_name="second"))

    writers = asyncio.gather(first(), second())
    await asyncio.wait_for(first_inside.wait(), DEADLINE_S)
    # The second writer must stop at its turn while the first is open (without turns it begins at once, and only
    # its UPDATE waits, in SQLite): a second is far longer than beginning takes.
    try:
        await asyncio.wait_for(second_began.wait(), BEGIN_S)
    except TimeoutError:
        pass
    assert events == ["first begins"]
    release_first.set()
    await asyncio.wait_for(writers, DEADLINE_S)
    assert events == ["first begins", "first commits", "second begins"]
    async with sqlite_db.session() as session:
        titles = set((await session.execute(select(models.Member.display_name))).scalars())
    assert titles == {"second"}


async def test_a_transaction_inside_the_turn_does_not_wait_again(sqlite_db: Database, sample_world: World) -> None:
    await mirror_world(sqlite_db, sample_world)

    async def nested() -> int:
        async with sqlite_db.session() as outer, outer.begin():
            async with sqlite_db.session() as inner, inner.begin():  # same task: already its turn
                return (await inner.execute(select(func.count()).select_from(models.Member))).scalar_one()

    assert await asyncio.wait_for(nested(), DEADLINE_S) == len(sample_world.members)


async def test_a_turn_not_granted_in_time_is_given_up() -> None:
    turns = WriteTurns(wait_s=0.05)
    holder_inside, release = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def holder() -> None:
        async with turns.turn():
            holder_inside.set()
            await release.wait()
            order.append("holder done")

    held = asyncio.create_task(holder())
    await holder_inside.wait()
    async with turns.turn():  # waits 0.05 s, then goes ahead (SQLite's busy handler would decide)
        order.append("waiter went ahead")
    release.set()
    await asyncio.wait_for(held, DEADLINE_S)
    assert order == ["waiter went ahead", "holder done"]
    async with turns.turn():  # the holder released its turn: granted at once
        order.append("next")
    assert order[-1] == "next"


async def test_a_failed_transaction_gives_its_turn_back(sqlite_db: Database) -> None:
    class Boom(Exception):
        pass

    try:
        async with sqlite_db.session() as session, session.begin():
            raise Boom
    except Boom:
        pass
    async with asyncio.timeout(DEADLINE_S), sqlite_db.session() as session, session.begin():
        await session.execute(select(1))
    assert sqlite_db.write_turns is not None and not sqlite_db.write_turns._lock.locked()


def test_only_sqlite_takes_turns() -> None:
    assert Database(create_engine("postgresql+asyncpg://askwith@localhost/askwith")).write_turns is None
    assert Database(create_engine("sqlite+aiosqlite:///:memory:")).write_turns is not None
