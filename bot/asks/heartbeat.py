"""Running a claimed ask's work while its claim is renewed, and stopping it when the claim is lost or the ask is
cancelled (at once when `stop` is set in this process; at the next heartbeat when another process recorded it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import TypeVar

from bot.asks.record import AskRecorder
from bot.errors import AskCancelledError, ClaimLostError
from bot.store.db import lost_connection, lost_reason


log = logging.getLogger(__name__)
T = TypeVar("T")


async def with_heartbeat(recorder: AskRecorder, work: Awaitable[T], *, interval_s: float, stop: asyncio.Event) -> T:
    """Run `work` while renewing the claim every `interval_s`; ClaimLostError if another worker took over,
    AskCancelledError if the ask was cancelled (`work` is cancelled in both cases)."""
    task = asyncio.ensure_future(work)
    lost: list[ClaimLostError] = []
    cancelled: list[bool] = []

    async def beat() -> None:
        while not task.done():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval_s):
                    await stop.wait()
            try:
                # Shielded: stopping the beat (the ask ended) must not cut a write half-way.
                requested = await asyncio.shield(recorder.heartbeat())
            except ClaimLostError as exc:
                lost.append(exc)
                task.cancel()
                return
            except Exception as exc:
                if not lost_connection(exc):
                    raise
                # The database is away for a moment (a restart): beat again next time; the claim stays ours unless
                # the silence outlasts ASKWITH_WORKER_STALE_SECONDS, and then the next write finds it lost.
                log.warning("ask #%s: could not renew its claim: %s", recorder.ask_id, lost_reason(exc))
                continue
            if requested or stop.is_set():
                stop.set()  # tells the ask's parked branches it was cancelled (bot.asks.service._park)
                cancelled.append(True)
                task.cancel()
                return

    beater = asyncio.create_task(beat())
    try:
        return await task
    except asyncio.CancelledError:
        if lost:
            raise lost[0] from None
        if cancelled:
            raise AskCancelledError(f"ask #{recorder.ask_id} was cancelled") from None
        raise
    finally:
        beater.cancel()
