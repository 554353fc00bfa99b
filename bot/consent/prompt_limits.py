"""How often one member's asks may prompt one colleague for approval: a few at once, then one now and then.

    limits = ApprovalLimits()
    if not limits.admit("alice", "UBOB", approval_id):   # False: bob is not prompted; the share counts as not approved
        ...

A token bucket per (requester, member): `BURST` prompts at once (several asks' worth of turns and closing
statements), then one more every `REFILL_S` seconds. An approval already admitted (a resumed ask re-asking the same
question) is admitted again without spending. Without it, one member could send a colleague 60 prompts in a second by
starting asks in a loop. The ask service holds one (`AskService.approval_limits`, used by every ask's sharing gate);
it keeps at most `MAX_PAIRS` buckets (the least recently used go first).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field


BURST = 20
REFILL_S = 30.0
MAX_PAIRS = 10_000
MAX_ADMITTED = 100_000


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class ApprovalLimits:
    burst: int = BURST
    refill_s: float = REFILL_S
    clock: Callable[[], float] = time.monotonic
    _buckets: OrderedDict[tuple[str, str], _Bucket] = field(default_factory=OrderedDict)
    _admitted: OrderedDict[str, None] = field(default_factory=OrderedDict)

    def admit(self, requester: str, member_id: str, approval_id: str) -> bool:
        """Whether `member_id` may be prompted for `approval_id`, asked on behalf of `requester`, now."""
        if approval_id in self._admitted:
            return True
        now = self.clock()
        bucket = self._buckets.pop((requester, member_id), None) or _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) / self.refill_s)
        bucket.at = now
        self._buckets[(requester, member_id)] = bucket  # most recently used last
        _trim(self._buckets, MAX_PAIRS)
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        self._admitted[approval_id] = None
        _trim(self._admitted, MAX_ADMITTED)
        return True


def _trim(entries: OrderedDict, most: int) -> None:  # type: ignore[type-arg]
    while len(entries) > most:
        entries.popitem(last=False)
