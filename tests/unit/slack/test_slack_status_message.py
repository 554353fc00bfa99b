"""The status message's writer: bursts coalesce to the latest stage, at most one edit per interval, a long 429 is
waited out, and nothing is written after `close` (the answer owns the message then)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from adapters.slack.status import StatusMessage
from bot.errors import PlatformRateLimitedError


class RecordingPort:
    def __init__(self, *, rate_limited: int = 0) -> None:
        self.updates: list[tuple[float, str, bool]] = []
        self.rate_limited = rate_limited

    async def update_blocks(self, channel_id: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        if self.rate_limited:
            self.rate_limited -= 1
            raise PlatformRateLimitedError("chat.update", "ratelimited", retry_after=0.3)
        self.updates.append((time.monotonic(), text, any(b["type"] == "actions" for b in blocks)))


async def _until(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_a_burst_of_stages_is_coalesced_to_at_most_one_edit_per_interval() -> None:
    port = RecordingPort()
    status = StatusMessage(port, "C1", "1.0", 7, min_interval_s=0.2)  # type: ignore[arg-type]
    for n in range(50):
        status.show(f"stage {n}", final=False)
        await asyncio.sleep(0)
    status.show("Done", final=True)
    await _until(lambda: port.updates and port.updates[-1][1].endswith("Done"))
    assert len(port.updates) <= 3  # 51 stages, a handful of edits
    gaps = [b[0] - a[0] for a, b in zip(port.updates, port.updates[1:], strict=False)]
    assert all(gap >= 0.19 for gap in gaps)
    assert port.updates[-1][2] is False  # the final stage has no Cancel button
    await status.close()


async def test_a_rate_limited_edit_is_retried_with_the_latest_stage() -> None:
    port = RecordingPort(rate_limited=1)
    status = StatusMessage(port, "C1", "1.0", 7, min_interval_s=0.01)  # type: ignore[arg-type]
    status.show("Planning", final=False)
    await asyncio.sleep(0)
    status.show("Talking with Bob's agent", final=False)
    await _until(lambda: port.updates)
    assert [u[1] for u in port.updates] == [":hourglass_flowing_sand: Talking with Bob's agent"]
    await status.close()


async def test_nothing_is_written_after_close() -> None:
    port = RecordingPort()
    status = StatusMessage(port, "C1", "1.0", 7, min_interval_s=0.5)  # type: ignore[arg-type]
    status.show("Planning", final=False)
    await _until(lambda: port.updates)
    status.show("Agreeing", final=False)  # waits for its interval…
    assert await status.close() == "1.0"  # …and is dropped: the answer takes the message
    status.show("late", final=False)
    await asyncio.sleep(0)
    assert len(port.updates) == 1
