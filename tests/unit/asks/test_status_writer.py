"""The core's status message writer against a recording surface, on a fake clock (no real sleeps): the latest state
wins, edits are spaced by the minimum interval, a rate limit is waited out, and a failed or rate-limited edit does
not lose the final state; `stop` drops what waits, a message that is gone is left alone."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable

from bot.asks.status_writer import StatusWriter
from bot.errors import ChatPlatformError, PlatformObjectGoneError, PlatformRateLimitedError


INTERVAL_S = 1.0


class FakeClock:
    """Time moves only when the writer sleeps (or the test says so); `during_sleep` runs while it sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.during_sleep: Callable[[], None] | None = None

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if self.during_sleep is not None:
            self.during_sleep()
        self.now += seconds
        await asyncio.sleep(0)


class RecordingSurface:
    """Records each edit with the fake time it happened at; `failures` are raised by the next edits, in order."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.shown: list[tuple[float, str]] = []
        self.attempts: list[str] = []
        self.failures: list[Exception] = []

    async def edit(self, state: str) -> None:
        self.attempts.append(state)
        await asyncio.sleep(0)  # an edit takes a moment: states may arrive while it is on its way
        if self.failures:
            raise self.failures.pop(0)
        self.shown.append((self.clock.now, state))

    def shown_as(self, state: str) -> Hashable:
        return state.casefold()


def _writer() -> tuple[StatusWriter[str], RecordingSurface, FakeClock]:
    clock = FakeClock()
    surface = RecordingSurface(clock)
    return StatusWriter(surface, min_interval_s=INTERVAL_S, clock=clock, sleep=clock.sleep), surface, clock


async def _idle() -> None:
    for _ in range(100):
        await asyncio.sleep(0)


async def test_the_latest_state_wins_over_the_ones_waiting() -> None:
    writer, surface, clock = _writer()
    writer.show("planning")
    await _idle()
    for stage in ("asking Bob's agent", "asking Carol's agent", "agreeing"):
        writer.show(stage)
    assert await writer.finish("answered")
    assert [state for _, state in surface.shown] == ["planning", "answered"]


async def test_edits_are_spaced_by_the_minimum_interval() -> None:
    writer, surface, clock = _writer()
    writer.show("planning")
    await _idle()
    clock.now = 0.3
    writer.show("agreeing")
    await _idle()
    assert surface.shown == [(0.0, "planning"), (1.0, "agreeing")]
    assert clock.sleeps == [0.7]


async def test_a_state_shown_alike_costs_no_edit() -> None:
    writer, surface, clock = _writer()
    writer.show("Planning")
    await _idle()
    assert await writer.finish("planning")  # the surface shows both alike
    assert surface.attempts == ["Planning"]


async def test_a_rate_limit_is_waited_out_then_the_latest_state_is_written() -> None:
    writer, surface, clock = _writer()
    surface.failures.append(PlatformRateLimitedError("edit", "HTTP 429", retry_after=5.0))
    clock.during_sleep = lambda: writer.show("agreeing")
    writer.show("planning")
    await _idle()
    assert clock.sleeps == [5.0], "retry_after is waited out, not the shorter interval"
    assert surface.shown == [(5.0, "agreeing")]


async def test_a_rate_limited_edit_is_retried_when_nothing_newer_came() -> None:
    writer, surface, clock = _writer()
    surface.failures.append(PlatformRateLimitedError("edit", "HTTP 429", retry_after=5.0))
    assert await writer.finish("answered")
    assert surface.shown == [(5.0, "answered")]


async def test_a_refused_edit_does_not_lose_the_final_state() -> None:
    writer, surface, clock = _writer()
    surface.failures.append(ChatPlatformError("edit", "HTTP 500"))
    writer.show("planning")
    await asyncio.sleep(0)  # the edit of "planning" is on its way…
    assert await writer.finish("answered")  # …when the final state arrives; that edit then fails
    assert surface.attempts == ["planning", "answered"]
    assert surface.shown == [(1.0, "answered")]
    assert writer.edits == 1


async def test_stop_drops_what_waits_and_nothing_is_written_after() -> None:
    writer, surface, clock = _writer()
    writer.show("planning")
    await _idle()
    writer.show("agreeing")  # waits for its interval…
    await writer.stop()  # …and is dropped: the caller takes the message over
    writer.show("late")
    await _idle()
    assert surface.attempts == ["planning"]
    assert writer.closed


async def test_a_message_that_is_gone_is_left_alone() -> None:
    writer, surface, clock = _writer()
    surface.failures.append(PlatformObjectGoneError("edit", "Unknown Message"))
    writer.show("planning")
    await _idle()
    writer.show("agreeing")
    assert not await writer.finish("answered"), "the final state was not shown: the caller posts it anew"
    assert writer.gone and surface.attempts == ["planning"]
