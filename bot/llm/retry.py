"""How long to wait before retrying a transient LLM failure: exponential backoff with jitter, or the server's word."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` retries after the first attempt; waits `backoff_s`, 2×, 4×… capped at `max_backoff_s`.

    Jitter takes up to `jitter` of each wait away at random, so many callers rate-limited together do not retry in
    step. A server's Retry-After is honoured as given, up to `max_retry_after_s`. Tests use `backoff_s=0`.
    """

    max_retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    jitter: float = 0.5
    max_retry_after_s: float = 120.0

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (0 = the first retry)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after_s)
        wait = min(self.backoff_s * 2**retry, self.max_backoff_s)
        return wait * (1.0 - self.jitter * random.random())
