"""The 2025 limits of `conversations.history` / `conversations.replies` for a distributed app not approved for the
Slack Marketplace, on the fake Slack: 15 messages a page at most and one call a minute per method, else 429 with
`Retry-After` (seconds to the end of that minute), on a fake clock the test shares with the client's pacing.

    clock = FakeClock()
    limits = HistoryLimits.install(fake_slack, clock)
    ... limits.refused   # calls answered 429
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.slack_api import Actor, FakeSlackApi, SlackRateLimited
from tests.fakes.slack_search import FakeClock


LIMITED = ("conversations.history", "conversations.replies")
PAGE = 15
PER_S = 60.0


@dataclass
class HistoryLimits:
    clock: FakeClock
    refused: int = 0
    served: int = 0
    largest_page: int = 0
    _last: dict[str, float] = field(default_factory=dict)

    @classmethod
    def install(cls, api: FakeSlackApi, clock: FakeClock) -> HistoryLimits:
        limits = cls(clock)
        for method in LIMITED:
            api.handlers[method] = limits._limited(method, api.handlers[method])
        return limits

    def _limited(
        self, method: str, handler: Callable[[Actor, dict[str, Any]], dict[str, Any]]
    ) -> Callable[[Actor, dict[str, Any]], dict[str, Any]]:
        def call(actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
            last = self._last.get(method)
            if last is not None and self.clock.now - last < PER_S:
                self.refused += 1
                raise SlackRateLimited(retry_after=int(PER_S - (self.clock.now - last)) + 1)
            self._last[method] = self.clock.now
            self.served += 1
            body = handler(actor, {**params, "limit": min(int(params.get("limit") or PAGE), PAGE)})
            self.largest_page = max(self.largest_page, len(body.get("messages", [])))
            return body

        return call
