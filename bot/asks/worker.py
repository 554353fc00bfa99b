"""The ask worker: claims queued asks (and asks whose worker died) and runs them, one process among several.

    worker = AskWorker(service)
    await worker.run(stop=asyncio.Event())   # until stop is set
    await worker.run_once()                  # claim and run at most one ask (tests, cron-style use)

An ask waiting on a member's approval is parked: it gives its slot back until the decision (or the time-out)
comes, so waiting asks never keep queued ones from running. An unexpected error in one ask is logged and turned into
a failure the requester is told about; the worker goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot import messages
from bot.asks.service import AskOutcome, AskService, worker_slot
from bot.errors import ClaimLostError


log = logging.getLogger(__name__)


class AskWorker:
    def __init__(self, service: AskService, *, poll_seconds: float = 1.0, concurrency: int = 4) -> None:
        self.service = service
        self.poll_seconds = poll_seconds
        self._slots = asyncio.Semaphore(concurrency)
        self._running: set[asyncio.Task[AskOutcome | None]] = set()

    async def run(self, *, stop: asyncio.Event) -> None:
        try:
            await self._claim_until(stop)
            await asyncio.gather(*self._running, return_exceptions=True)
        except asyncio.CancelledError:  # shutting down: each ask gives its claim back (see `_run_claimed`)
            for task in list(self._running):
                task.cancel()
            await asyncio.gather(*self._running, return_exceptions=True)
            raise

    async def _claim_until(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self._slots.acquire()
            ask_id = await self.service.claim_next()
            if ask_id is None:
                self._slots.release()
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation that arrives as
                # `stop` is set, and the worker then waits forever on asks parked on an approval.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.poll_seconds):
                        await stop.wait()
                continue
            task = asyncio.create_task(self._run_claimed(ask_id, holds_slot=True))
            self._running.add(task)
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[AskOutcome | None]) -> None:
        self._running.discard(task)
        self._slots.release()

    async def run_once(self) -> AskOutcome | None:
        ask_id = await self.service.claim_next()
        return None if ask_id is None else await self._run_claimed(ask_id)

    async def _run_claimed(self, ask_id: int, *, holds_slot: bool = False) -> AskOutcome | None:
        if holds_slot:  # this task's own context: an ask parked on an approval gives the slot back meanwhile
            worker_slot.set(self._slots)
        try:
            return await self.service.process(ask_id)
        except ClaimLostError as exc:
            log.warning("%s", exc)
        except asyncio.CancelledError:
            # Stopped mid-ask (shutdown): give the claim back, so the next worker resumes it at once rather than after
            # ASKWITH_WORKER_STALE_SECONDS of silence. Shielded: the release must survive this very cancellation.
            await asyncio.shield(self.service.release(ask_id))
            raise
        except Exception:  # a bug: keep the worker alive, tell the requester, keep the trace for the team
            log.exception("ask #%s failed unexpectedly", ask_id)
            try:
                await self.service.fail(ask_id, messages.failure_internal())
            except Exception:
                log.exception("ask #%s: could not record its failure", ask_id)
        return None
