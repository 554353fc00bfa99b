"""The status message editor: bursts coalesce into few edits, never faster than the interval; a long 429 is waited
out and the latest state still shown; a deleted message (404) stops the edits; the final state is the last shown."""

from __future__ import annotations

import asyncio
import time

import discord
import pytest

from adapters.discord.status import StatusMessage, StatusState


class FakeResponse:
    def __init__(self, status: int, reason: str = "") -> None:
        self.status = status
        self.reason = reason


class Recorder:
    def __init__(self) -> None:
        self.shown: list[tuple[float, str]] = []
        self.fail_with: list[BaseException] = []

    async def edit(self, state: StatusState) -> None:
        if self.fail_with:
            raise self.fail_with.pop(0)
        self.shown.append((time.monotonic(), state.content))


async def test_a_burst_of_states_costs_few_edits_spaced_by_the_interval() -> None:
    recorder = Recorder()
    status = StatusMessage(recorder.edit, min_interval_s=0.2)
    for stage in range(20):
        status.show(StatusState(f"stage {stage}"))
        await asyncio.sleep(0.01)
    assert await status.close(StatusState("answer"))
    contents = [c for _, c in recorder.shown]
    assert contents[0] == "stage 0" and contents[-1] == "answer" and len(contents) <= 4
    gaps = [b - a for (a, _), (b, _) in zip(recorder.shown, recorder.shown[1:], strict=False)]
    assert all(gap >= 0.19 for gap in gaps)
    assert status.edits == len(contents)


async def test_a_long_rate_limit_is_waited_out_then_the_latest_state_is_shown() -> None:
    recorder = Recorder()
    recorder.fail_with.append(discord.RateLimited(0.3))
    status = StatusMessage(recorder.edit, min_interval_s=0.05)
    started = time.monotonic()
    status.show(StatusState("planning"))
    await asyncio.sleep(0.05)
    status.show(StatusState("talking"))
    assert await status.close(StatusState("answer"))
    assert [c for _, c in recorder.shown][-1] == "answer"
    assert recorder.shown[0][0] - started >= 0.29, "nothing was sent before retry_after passed"


@pytest.mark.parametrize("code", [10008])
async def test_a_deleted_status_message_is_left_alone(code: int) -> None:
    recorder = Recorder()
    recorder.fail_with.append(discord.NotFound(FakeResponse(404), {"code": code, "message": "Unknown Message"}))  # type: ignore[arg-type]
    status = StatusMessage(recorder.edit, min_interval_s=0.01)
    status.show(StatusState("planning"))
    assert not await status.close(StatusState("answer")), "the caller posts the answer as a new message"
    assert status.gone and recorder.shown == []
