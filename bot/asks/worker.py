"""The ask worker: claims queued asks (and asks whose worker died) and runs them, one process among several.

    worker = AskWorker(service)
    await worker.run(stop=asyncio.Event())   # until stop is set
    await worker.run_once()                  # claim and run at most one ask (tests, cron-style use)

An unexpected error in one ask is logged and turned into a failure the requester is told about; the worker goes on.
"""

from __future__ import annotations

import asyncio
import logging

from bot import messages
from bot.asks.service import AskOutcome, AskService
from bot.errors import ClaimLostError


log = logging.getLogger(__name__)


class AskWorker:
    def __init__(self, service: AskService, *, poll_seconds: float = 1.0, concurrency: int = 4) -> None:
        self.service = service
        self.poll_seconds = poll_seconds
        self._slots = asyncio.Semaphore(concurrency)
        self._running: set[asyncio.Task[AskOutcome | None]] = set()

    async def run(self, *, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self._slots.acquire()
            ask_id = await self.service.claim_next()
            if ask_id is None:
                self._slots.release()
                try:
                    await asyncio.wait_for(stop.wait(), self.poll_seconds)
                except TimeoutError:
                    pass
                continue
            task = asyncio.create_task(self._run_claimed(ask_id))
            self._running.add(task)
            task.add_done_callback(self._done)
        await asyncio.gather(*self._running, return_exceptions=True)

    def _done(self, task: asyncio.Task[AskOutcome | None]) -> None:
        self._running.discard(task)
        self._slots.release()

    async def run_once(self) -> AskOutcome | None:
        ask_id = await self.service.claim_next()
        return None if ask_id is None else await self._run_claimed(ask_id)

    async def _run_claimed(self, ask_id: int) -> AskOutcome | None:
        try:
            return await self.service.process(ask_id)
        except ClaimLostError as exc:
            log.warning("%s", exc)
        except Exception:  # a bug: keep the worker alive, tell the requester, keep the trace for the team
            log.exception("ask #%s failed unexpectedly", ask_id)
            try:
                await self.service.fail(ask_id, messages.failure_internal())
            except Exception:
                log.exception("ask #%s: could not record its failure", ask_id)
        return None
