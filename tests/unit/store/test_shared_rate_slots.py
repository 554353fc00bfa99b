"""Slack's budgets kept in the database are shared by every process on it: two processes (two engines on one
database) taking turns of one method in one workspace get slots a whole interval apart, a Retry-After one of them meets
holds the other, and a turn a caller will not wait for is not taken from the others."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adapters.slack.rate_limits import MethodBudgets
from bot.errors import PlatformRateLimitedError
from bot.settings import Settings
from bot.store.db import Database
from bot.store.rate_slots import RateSlots


INTERVAL_S = 0.2


class Clock:
    """One wall clock both processes read; sleeping records the wait without passing time."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


@pytest.fixture
async def second_process(db: Database, settings: Settings) -> AsyncIterator[Database]:
    """Another engine on the same database, as a second process would open it."""
    other = await Database.open(settings, url=db.engine.url.render_as_string(hide_password=False), migrate=False)
    try:
        yield other
    finally:
        await other.close()


def budgets(db: Database, clock: Clock) -> MethodBudgets:
    return MethodBudgets(clock=lambda: clock.now, sleep=clock.sleep, slots=RateSlots(db))


async def test_two_processes_share_one_pace(db: Database, second_process: Database) -> None:
    clock = Clock()
    serve, worker = budgets(db, clock), budgets(second_process, clock)
    calls = [b.acquire("T1", "conversations.history", INTERVAL_S) for _ in range(3) for b in (serve, worker)]
    waits = await asyncio.gather(*calls)
    slots = sorted(clock.now + wait for wait in waits)
    assert all(later - earlier >= INTERVAL_S - 1e-9 for earlier, later in zip(slots, slots[1:], strict=False))
    assert slots[0] == clock.now and slots[-1] == pytest.approx(clock.now + 5 * INTERVAL_S)
    assert serve.waited_s + worker.waited_s == pytest.approx(sum(waits))
    # Another workspace and another method have paces of their own.
    assert await worker.acquire("T2", "conversations.history", INTERVAL_S) == 0.0
    assert await serve.acquire("T1", "conversations.replies", INTERVAL_S) == 0.0
    clock.now += 10.0  # long after: the next turn is at once
    assert await worker.acquire("T1", "conversations.history", INTERVAL_S) == 0.0


async def test_a_retry_after_one_process_meets_holds_the_other(db: Database, second_process: Database) -> None:
    clock = Clock()
    serve, worker = budgets(db, clock), budgets(second_process, clock)
    assert await worker.acquire("T1", "chat.update") == 0.0  # read the database's holds: none yet
    serve.retry_after("T1", "conversations.history", 30.0)
    serve.retry_after("T1", "chat.update", 5.0)
    await serve.flush()
    assert await worker.acquire("T1", "conversations.history", INTERVAL_S) == pytest.approx(30.0)
    clock.now += worker.refresh_s  # an unpaced method sees others' holds within `refresh_s`
    assert await worker.acquire("T1", "chat.update") == pytest.approx(5.0 - worker.refresh_s)
    with pytest.raises(PlatformRateLimitedError):
        await worker.acquire("T1", "chat.update", max_wait_s=1.0)


async def test_a_turn_not_waited_for_is_left_to_others(db: Database, second_process: Database) -> None:
    clock = Clock()
    serve, worker = budgets(db, clock), budgets(second_process, clock)
    assert await serve.acquire("T1", "conversations.replies", 60.0) == 0.0  # a paced backfill took this minute
    with pytest.raises(PlatformRateLimitedError) as refused:
        await worker.acquire("T1", "conversations.replies", 60.0, max_wait_s=20.0)  # a member's read: bounded
    assert refused.value.retry_after == pytest.approx(60.0)
    assert await serve.acquire("T1", "conversations.replies", 60.0) == pytest.approx(60.0)  # nothing was reserved
    clock.now += 100.0
    assert await worker.acquire("T1", "conversations.replies", 60.0, max_wait_s=20.0) == pytest.approx(20.0)
