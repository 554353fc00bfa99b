"""Slack's rate limits as Slack states them: one budget per Web API method and workspace, shared by every caller in
the process, and the page sizes the install type allows.

Since 2025-05-29 an app distributed to other workspaces and not approved for the Slack Marketplace may call
`conversations.history` and `conversations.replies` once a minute, 15 messages a page (internal apps and Marketplace
apps keep the usual tiers). askwith paces those calls to the posted rate instead of meeting 429s, and when Slack
still answers 429 every caller of that method in that workspace waits out its `Retry-After` (one shared budget).

    limits = InstallLimits.for_settings(settings)          # what this install may do
    await BUDGETS.acquire("T123", "conversations.history", limits.interval("conversations.history"))
    BUDGETS.retry_after("T123", "conversations.history", 60.0)   # a 429 seen by any caller
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.errors import PlatformRateLimitedError
from bot.memory.live import POSTED_LIMITS_FROM as POSTED_FROM
from bot.memory.live import slack_app_kind
from bot.settings import Settings


logger = logging.getLogger(__name__)

HISTORY_METHODS = ("conversations.history", "conversations.replies")
LIMITED_PAGE = 15  # messages a page for a non-Marketplace distributed app
LIMITED_INTERVAL_S = 60.0  # one call a minute, per method and workspace
WAIT_LOGGED_S = 5.0  # a wait this long is said in the log (progress of a paced backfill)


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
    by the API's address and its team id (the address is Slack's own in production; each fake Slack has its own)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.clock = clock
        self.sleep = sleep
        self._next: dict[tuple[str, str], float] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self.waited_s = 0.0  # in all (benchmarks report it)

    async def acquire(
        self, team: str, method: str, interval_s: float = 0.0, *, max_wait_s: float | None = None
    ) -> float:
        """Wait for the method's next slot in this workspace and take it; returns the seconds waited. A wait longer
        than `max_wait_s` is not waited: `PlatformRateLimitedError` (the caller backs off, as after a 429)."""
        key = (team, method)
        if interval_s <= 0 and key not in self._next:
            return 0.0
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            wait = max(0.0, self._next.get(key, 0.0) - self.clock())
            if max_wait_s is not None and wait > max_wait_s:
                raise PlatformRateLimitedError(method, "ratelimited", retry_after=wait)
            if wait >= WAIT_LOGGED_S:
                logger.info("Slack allows %s at its own pace in %s: next call in %.0f s", method, team, wait)
            if wait > 0:
                await self.sleep(wait)
                self.waited_s += wait
            self._next[key] = self.clock() + interval_s
            return wait

    def retry_after(self, team: str, method: str, seconds: float) -> None:
        """Slack answered 429: nobody in the process calls that method in that workspace for `seconds`."""
        key = (team, method)
        self._next[key] = max(self._next.get(key, 0.0), self.clock() + seconds)


BUDGETS = MethodBudgets()  # the process's: every SlackPort of every workspace shares it
