"""Slack's rate limits as Slack states them: one budget per Web API method and workspace, shared by every caller in
every process on the database (Slack counts per app and workspace), and the page sizes the install type allows.

Since 2025-05-29 an app distributed to other workspaces and not approved for the Slack Marketplace may call
`conversations.history` and `conversations.replies` once a minute, 15 messages a page (internal apps and Marketplace
apps keep the usual tiers). askwith paces those calls to the posted rate instead of meeting 429s, and when Slack
still answers 429 every caller of that method in that workspace waits out its `Retry-After` (one shared budget).

    limits = InstallLimits.for_settings(settings)          # what this install may do
    budgets = budgets_for(db)                              # shared by the processes on `db` (BUDGETS: this one only)
    await budgets.acquire("T123", "conversations.history", limits.interval("conversations.history"))
    budgets.retry_after("T123", "conversations.history", 60.0)   # a 429 seen by any caller
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy.exc import SQLAlchemyError

from bot.errors import PlatformRateLimitedError
from bot.memory.live import POSTED_LIMITS_FROM as POSTED_FROM
from bot.memory.live import slack_app_kind
from bot.settings import Settings
from bot.store.db import Database
from bot.store.rate_slots import RateSlots


logger = logging.getLogger(__name__)

HISTORY_METHODS = ("conversations.history", "conversations.replies")
LIMITED_PAGE = 15  # messages a page for a non-Marketplace distributed app
LIMITED_INTERVAL_S = 60.0  # one call a minute, per method and workspace
WAIT_LOGGED_S = 5.0  # a wait this long is said in the log (progress of a paced backfill)
SHARED_REFRESH_S = 1.0  # how stale a process's view of other processes' Retry-After holds may be
INTERACTIVE_WAIT_S = 20.0  # the most a member's own read (a thread they ask about) waits behind paced calls


@dataclass(frozen=True)
class InstallLimits:
    page_cap: int | None = None  # most items a page of the limited methods; None = the caller's own
    intervals: dict[str, float] = field(default_factory=dict)  # method -> seconds between calls

    @classmethod
    def for_settings(cls, settings: Settings, *, installed_at: datetime | None = None) -> InstallLimits:
        """A distributed app not approved for the Marketplace gets the 2025 limits; internal and Marketplace apps, and
        an install made before 2025-05-29 ("Existing installations ... are not subject to the new posted limits"),
        the usual."""
        kind, _ = slack_app_kind(settings)
        exempt = installed_at is not None and installed_at.replace(tzinfo=installed_at.tzinfo or UTC) < POSTED_FROM
        if kind == "distributed" and not exempt:
            return cls(LIMITED_PAGE, dict.fromkeys(HISTORY_METHODS, LIMITED_INTERVAL_S))
        return cls()

    def interval(self, method: str) -> float:
        return self.intervals.get(method, 0.0)

    def params(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """`params` with its page size capped to what the install may ask for."""
        if self.page_cap is None or method not in HISTORY_METHODS:
            return params
        return {**params, "limit": min(int(params.get("limit") or self.page_cap), self.page_cap)}


class MethodBudgets:
    """When each (workspace, method) may be called next; callers wait their turn (`acquire`). A workspace is named
    by the API's address and its team id (the address is Slack's own in production; each fake Slack has its own).

    With `slots` the turns are kept in the database and shared by every process on it (`bot.store.rate_slots`): a
    paced method reserves its slot there; any other method is held only by a Retry-After, which this process honours
    at once and others see within `refresh_s` (their view of the database's holds is re-read at most that often, so an
    unpaced call costs no query). Without `slots` they live in this process's memory."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        slots: RateSlots | None = None,
        refresh_s: float = SHARED_REFRESH_S,
    ) -> None:
        # Slots in the database are compared across processes: wall-clock time; in memory, a clock that never jumps.
        self.clock = clock or (time.time if slots is not None else time.monotonic)
        self.sleep = sleep
        self.slots = slots
        self.refresh_s = refresh_s
        self._next: dict[tuple[str, str], float] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._held: dict[tuple[str, str], float] = {}  # the database's holds as last read (slots only)
        self._held_read_at = -math.inf
        self._writes: set[asyncio.Task[None]] = set()  # Retry-Afters on their way to the database
        self.waited_s = 0.0  # in all (benchmarks report it)

    async def acquire(
        self, team: str, method: str, interval_s: float = 0.0, *, max_wait_s: float | None = None
    ) -> float:
        """Wait for the method's next slot in this workspace and take it; returns the seconds waited. A wait longer
        than `max_wait_s` is not waited: `PlatformRateLimitedError` (the caller backs off, as after a 429)."""
        key = (team, method)
        if self.slots is not None:
            return await self._acquire_shared(self.slots, key, interval_s, max_wait_s)
        if interval_s <= 0 and key not in self._next:
            return 0.0
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            wait = max(0.0, self._next.get(key, 0.0) - self.clock())
            if max_wait_s is not None and wait > max_wait_s:
                raise PlatformRateLimitedError(method, "ratelimited", retry_after=wait)
            await self._wait(key, wait)
            self._next[key] = self.clock() + interval_s
            return wait

    async def _acquire_shared(
        self, slots: RateSlots, key: tuple[str, str], interval_s: float, max_wait_s: float | None
    ) -> float:
        await self.flush()
        now = self.clock()
        if interval_s > 0:
            slot_at, taken = await slots.take(*key, now=now, interval_s=interval_s, max_wait_s=max_wait_s)
        else:  # nothing to space out: only a Retry-After holds it
            slot_at, taken = max(self._next.get(key, 0.0), (await self._holds(slots, now)).get(key, 0.0)), True
        wait = max(0.0, slot_at - now)
        if not taken or (max_wait_s is not None and wait > max_wait_s):
            raise PlatformRateLimitedError(key[1], "ratelimited", retry_after=wait)
        await self._wait(key, wait)
        return wait

    async def _holds(self, slots: RateSlots, now: float) -> dict[tuple[str, str], float]:
        if now - self._held_read_at >= self.refresh_s:
            self._held, self._held_read_at = await slots.pending(now), now
        return self._held

    async def _wait(self, key: tuple[str, str], wait: float) -> None:
        if wait >= WAIT_LOGGED_S:
            logger.info("Slack allows %s at its own pace in %s: next call in %.0f s", key[1], key[0], wait)
        if wait > 0:
            await self.sleep(wait)
            self.waited_s += wait

    def retry_after(self, team: str, method: str, seconds: float) -> None:
        """Slack answered 429: nobody calls that method in that workspace for `seconds` (with `slots`, in any
        process: the hold is written to the database in the background; `flush` awaits it)."""
        key = (team, method)
        until = self.clock() + seconds
        self._next[key] = max(self._next.get(key, 0.0), until)
        if self.slots is not None:
            task = asyncio.get_running_loop().create_task(self._defer(self.slots, key, until))
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    async def _defer(self, slots: RateSlots, key: tuple[str, str], until: float) -> None:
        try:
            await slots.defer(*key, until=until)
        except SQLAlchemyError:  # this process still honours it; others meet the 429 themselves
            logger.warning("A Slack Retry-After for %s in %s was not shared", key[1], key[0], exc_info=True)

    async def flush(self) -> None:
        """Wait until every Retry-After seen so far is in the database (slots only)."""
        if self._writes:
            await asyncio.gather(*list(self._writes))


BUDGETS = MethodBudgets()  # the process's when no database is wired: every SlackPort of every workspace shares it
_SHARED: WeakKeyDictionary[Database, MethodBudgets] = WeakKeyDictionary()


def budgets_for(db: Database) -> MethodBudgets:
    """The budgets kept in `db`, shared with every process on it (one per database in this process)."""
    if db not in _SHARED:
        _SHARED[db] = MethodBudgets(slots=RateSlots(db))
    return _SHARED[db]
