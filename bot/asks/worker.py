"""The ask worker: claims queued asks (and asks whose worker died) and runs them, one process among several.

    worker = AskWorker(service)
    await worker.run(stop=asyncio.Event())   # until stop is set
    await worker.run_once()                  # claim and run at most one ask (tests, cron-style use)

An ask waiting on a member's approval is parked: it gives its slot back until the decision (or the time-out)
comes, so waiting asks never keep queued ones from running. An unexpected error in one ask is logged and turned into
a failure the requester is told about; the worker goes on. A lost database (PostgreSQL restarting, the network
blinking) is not such an error: the worker waits for it to answer again, then resumes the ask from what was saved, so
the requester still gets one answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot.asks.service import AskOutcome, AskService, worker_slot
from bot.errors import ClaimLostError
from bot.store.db import lost_connection, lost_reason
from bot.texts import failure_texts


log = logging.getLogger(__name__)
RECONNECT_WITHIN_S = 120.0  # how long an ask waits for its lost database to answer again before it is failed
MAX_RESUMES = 3  # how many lost connections one claimed ask is resumed after


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
            ask_id = await self._claim_next()
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
        ask_id = await self._claim_next()
        return None if ask_id is None else await self._run_claimed(ask_id)

    async def _claim_next(self) -> int | None:
        """`claim_next`, or None while the database is unreachable (the next poll tries again)."""
        try:
            return await self.service.claim_next()
        except Exception as exc:
            if not await self._database_lost(exc):
                raise
            log.warning("could not look for asks: the database is unreachable (%s)", lost_reason(exc))
            return None

    async def _run_claimed(self, ask_id: int, *, holds_slot: bool = False) -> AskOutcome | None:
        if holds_slot:  # this task's own context: an ask parked on an approval gives the slot back meanwhile
            worker_slot.set(self._slots)
        for resumes in range(MAX_RESUMES + 1):
            try:
                return await self.service.process(ask_id)
            except ClaimLostError as exc:
                log.warning("%s", exc)
                return None
            except asyncio.CancelledError:
                # Stopped mid-ask (shutdown): give the claim back, so the next worker resumes it at once rather than
                # after ASKWITH_WORKER_STALE_SECONDS of silence. Shielded: the release must survive this cancellation.
                await asyncio.shield(self.service.release(ask_id))
                raise
            except Exception as exc:
                lost = resumes < MAX_RESUMES and await self._database_lost(exc)
                if lost and await self.service.db.reachable_within(RECONNECT_WITHIN_S):
                    reason = lost_reason(exc)
                    log.warning("ask #%s: the database connection was lost (%s); resuming the ask", ask_id, reason)
                    continue  # the claim is still this worker's: it goes on from the saved turns
                await self._fail(ask_id)
                return None
        return None

    async def _database_lost(self, exc: Exception) -> bool:
        """Whether `exc` came from losing the database rather than from a bug: it says so, or the database does not
        answer now (a server starting up refuses with errors of its own)."""
        return lost_connection(exc) or not await self.service.db.ping()

    async def _fail(self, ask_id: int) -> None:
        """A bug: keep the worker alive, tell the requester, keep the trace for the team."""
        log.exception("ask #%s failed unexpectedly", ask_id)
        try:
            await self.service.fail(ask_id, failure_texts.failure_internal())
        except Exception:
            log.exception("ask #%s: could not record its failure", ask_id)
