"""A statement shared by concurrent callers is written once for them all; each caller learns its write's fate."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError

from bot.store import batched_write, models
from bot.store.batched_write import BatchedWrite
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


DEADLINE_S = 30.0  # only bounds a failure: nothing below waits on time


def _retitle() -> Any:  # noqa: ANN401 - an Update
    member = models.Member
    return update(member).where(member.platform_id == bindparam("member")).values(display_name=bindparam("title"))


def _counted(db: Database) -> list[int]:
    """Count the write transactions `db` begins from now on."""
    begun: list[int] = []
    begin = db.begin

    def counting() -> Any:  # noqa: ANN401 - begin()'s context manager
        begun.append(1)
        return begin()

    db.begin = counting  # type: ignore[method-assign]
    return begun


async def _titles(db: Database) -> dict[str, str]:
    async with db.session() as session:
        rows = (await session.execute(select(models.Member.platform_id, models.Member.display_name))).all()
    return dict(rows)


async def test_callers_that_come_together_share_one_transaction(db: Database, sample_world: World) -> None:
    await mirror_world(db, sample_world)
    writes = BatchedWrite(db, _retitle())
    begun = _counted(db)
    members = [m.id for m in sample_world.members.values()]
    calls = [writes.execute({"member": m, "title": f"title of {m}"}) for m in members]
    await asyncio.wait_for(asyncio.gather(*calls), DEADLINE_S)
    assert len(begun) == 1
    assert await _titles(db) == {m: f"title of {m}" for m in members}


async def test_a_batch_holds_at_most_max_batch_callers_and_the_rest_go_in_the_next(
    db: Database, sample_world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    await mirror_world(db, sample_world)
    members = list(sample_world.members)
    monkeypatch.setattr(batched_write, "MAX_BATCH", 2)
    writes = BatchedWrite(db, _retitle())
    begun = _counted(db)
    calls = [writes.execute({"member": m, "title": "bounded"}) for m in members]
    await asyncio.wait_for(asyncio.gather(*calls), DEADLINE_S)
    assert len(members) > 2 and len(begun) == -(-len(members) // 2)  # ceil: every caller written, two a write
    assert set((await _titles(db)).values()) == {"bounded"}


async def test_a_write_queued_while_one_is_in_flight_goes_in_the_next(db: Database, sample_world: World) -> None:
    await mirror_world(db, sample_world)
    writes = BatchedWrite(db, _retitle())
    first, *rest = list(sample_world.members)
    begun = _counted(db)
    in_flight = asyncio.ensure_future(writes.execute({"member": first, "title": "first"}))
    while not begun:  # the first write has begun its transaction
        await asyncio.sleep(0)
    later = [writes.execute({"member": m, "title": "later"}) for m in rest]
    await asyncio.wait_for(asyncio.gather(in_flight, *later), DEADLINE_S)
    assert len(begun) == 2
    assert await _titles(db) == {first: "first"} | dict.fromkeys(rest, "later")


async def test_every_caller_of_a_failed_write_gets_its_error_and_the_next_write_runs(
    db: Database, sample_world: World
) -> None:
    await mirror_world(db, sample_world)
    async with db.session() as session:
        workspace_id = (await session.execute(select(models.Workspace.id))).scalar_one()
    writes = BatchedWrite(db, models.Member.__table__.insert())
    row = {"workspace_id": workspace_id, "name": "dup", "display_name": "Dup"}
    twice = [writes.execute(row | {"platform_id": "U_DUP"}) for _ in range(2)]  # one batch: the second breaks it
    results = await asyncio.wait_for(asyncio.gather(*twice, return_exceptions=True), DEADLINE_S)
    assert all(isinstance(result, IntegrityError) for result in results)
    assert "U_DUP" not in await _titles(db)  # the whole batch rolled back
    await asyncio.wait_for(writes.execute(row | {"platform_id": "U_NEW"}), DEADLINE_S)
    assert (await _titles(db))["U_NEW"] == "Dup"


async def test_a_caller_that_stops_waiting_does_not_stop_the_others(db: Database, sample_world: World) -> None:
    await mirror_world(db, sample_world)
    writes = BatchedWrite(db, _retitle())
    members = list(sample_world.members)
    waiting = [asyncio.ensure_future(writes.execute({"member": m, "title": "kept"})) for m in members]
    await asyncio.sleep(0)  # every call has queued its parameters
    waiting[0].cancel()
    results = await asyncio.wait_for(asyncio.gather(*waiting, return_exceptions=True), DEADLINE_S)
    assert isinstance(results[0], asyncio.CancelledError)
    assert results[1:] == [None] * (len(members) - 1)
    assert set((await _titles(db)).values()) == {"kept"}  # what was queued is written, the cancelled call's too


async def test_a_batch_that_cannot_begin_fails_its_callers(db: Database) -> None:
    writes = BatchedWrite(db, _retitle())

    def broken() -> Any:  # noqa: ANN401 - as begin()
        raise RuntimeError("database gone")

    db.begin = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="database gone"):
        await asyncio.wait_for(writes.execute({"member": "U1", "title": "x"}), DEADLINE_S)


async def test_a_cancelled_writer_leaves_no_caller_waiting(db: Database) -> None:
    writes = BatchedWrite(db, _retitle())
    entered, go_on = asyncio.Event(), asyncio.Event()

    class CancelledInside:  # a transaction whose task is cancelled while it runs (the process shutting down)
        async def __aenter__(self) -> None:
            entered.set()
            await go_on.wait()
            raise asyncio.CancelledError

        async def __aexit__(self, *error: object) -> None:
            return None

    db.begin = CancelledInside  # type: ignore[method-assign,assignment]
    in_flight = asyncio.ensure_future(writes.execute({"member": "U1", "title": "x"}))
    await asyncio.wait_for(entered.wait(), DEADLINE_S)
    queued = asyncio.ensure_future(writes.execute({"member": "U2", "title": "y"}))  # waits for the next write
    await asyncio.sleep(0)
    go_on.set()
    results = await asyncio.wait_for(asyncio.gather(in_flight, queued, return_exceptions=True), DEADLINE_S)
    assert [type(result) for result in results] == [asyncio.CancelledError, asyncio.CancelledError]
