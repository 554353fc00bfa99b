from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC

import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from adapters.local import LocalWorkspace
from bot.errors import WorkspaceError
from bot.settings import Settings
from bot.store.db import Database
from bot.store.leases import PROCESS_ID, LeaseStore
from bot.store.world import World
from memory_ingest.jobs import ingest_history
from memory_ingest.report import IngestReport
from memory_ingest.scheduler import build_scheduler
from memory_ingest.worker import IngestWorker


async def eventually(check: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


class SlowWorker:
    """Quacks like IngestWorker; each run takes a while, and it records how many runs overlap."""

    def __init__(self, seconds: float, fail_with: Exception | None = None) -> None:
        self.seconds = seconds
        self.fail_with = fail_with
        self.running = 0
        self.most_at_once = 0
        self.runs = 0
        self.db: Database | None = None

    async def run(self) -> IngestReport:
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await asyncio.sleep(self.seconds)
            if self.fail_with is not None:
                raise self.fail_with
            return IngestReport(workspace_id=1, workspace_name="slow")
        finally:
            self.running -= 1
            self.runs += 1


async def stop(scheduler: AsyncIOScheduler, *workers: SlowWorker) -> None:
    scheduler.shutdown(wait=False)
    await eventually(lambda: all(w.running == 0 for w in workers))


async def test_the_scheduled_job_ingests_new_messages_as_they_arrive(sqlite_db: Database, sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    worker = IngestWorker(port, sqlite_db)
    totals: list[int] = []
    original = worker.run

    async def recording_run() -> IngestReport:
        report = await original()
        totals.append(report.messages_total)
        return report

    worker.run = recording_run  # type: ignore[method-assign]
    scheduler = AsyncIOScheduler(timezone=UTC)
    ingest_history.register(scheduler, worker=worker, key="acme", interval_seconds=0.2)
    scheduler.start()
    try:
        await eventually(lambda: totals[-1:] == [15])
        await port.post_as("bob", "C-general", "Thursday works for me")
        await eventually(lambda: totals[-1:] == [16])
    finally:
        scheduler.shutdown(wait=False)
        await eventually(lambda: not worker.busy)  # let a run in flight finish before the loop closes


async def test_runs_never_overlap_and_failures_do_not_stop_the_schedule(sqlite_db: Database) -> None:
    slow = SlowWorker(0.35)
    failing = SlowWorker(0.01, fail_with=WorkspaceError("platform unreachable"))
    slow.db = failing.db = sqlite_db  # where the sync leases are taken
    scheduler = AsyncIOScheduler(timezone=UTC)
    ingest_history.register(scheduler, worker=slow, key="slow", interval_seconds=0.05)  # type: ignore[arg-type]
    ingest_history.register(scheduler, worker=failing, key="failing", interval_seconds=0.05)  # type: ignore[arg-type]
    scheduler.start()
    try:
        await eventually(lambda: slow.runs >= 3 and failing.runs >= 3)
    finally:
        await stop(scheduler, slow, failing)
    assert slow.most_at_once == 1


async def test_a_run_going_at_shutdown_ends_quietly(caplog: pytest.LogCaptureFixture, sqlite_db: Database) -> None:
    slow = SlowWorker(3600)
    slow.db = sqlite_db  # the scheduled run takes the workspace's sync lease first
    scheduler = AsyncIOScheduler(timezone=UTC)
    ingest_history.register(scheduler, worker=slow, key="slow", interval_seconds=60)  # type: ignore[arg-type]
    scheduler.start()
    await eventually(lambda: slow.running == 1)
    with caplog.at_level(logging.INFO):
        await stop(scheduler, slow)  # the scheduler cancels the running job
        await asyncio.sleep(0)  # its executor's callback has run
    assert [r.levelname for r in caplog.records if "apscheduler" in r.name and r.levelno >= logging.ERROR] == []
    assert any("slow stopped: shutting down" in r.getMessage() for r in caplog.records)


def test_the_interval_setting_drives_the_schedule(sample_world: World) -> None:
    worker = IngestWorker(LocalWorkspace(sample_world), None)  # type: ignore[arg-type]  # never run here
    scheduler = build_scheduler(Settings(ingest_interval_seconds=42), workers={"acme": worker})
    (job,) = scheduler.get_jobs()
    assert job.id == "ingest-history:acme"
    assert job.trigger.interval.total_seconds() == 42
    assert (job.max_instances, job.coalesce) == (1, True)
    assert build_scheduler(Settings(ingest_interval_seconds=0), workers={"acme": worker}).get_jobs() == []


async def test_only_the_lease_holder_runs_the_scheduled_sync(sqlite_db: Database, sample_world: World) -> None:
    """Two processes serve one workspace: the one holding its sync lease runs; the other takes over only once the
    leader stops renewing it (its process died)."""
    worker = IngestWorker(LocalWorkspace(sample_world), sqlite_db)
    leases = LeaseStore(sqlite_db)
    assert await leases.acquire("sync:acme", holder="other-process", ttl_s=0.3)
    assert await ingest_history.ingest_history(worker, "acme", lease_ttl_s=60) is None  # not the leader: no run
    assert worker.workspace_id is None
    deadline = asyncio.get_running_loop().time() + 5
    while (report := await ingest_history.ingest_history(worker, "acme", lease_ttl_s=60)) is None:
        assert asyncio.get_running_loop().time() < deadline, "the lease never expired"
        await asyncio.sleep(0.05)
    assert report.messages_total == 15
    assert await leases.holder("sync:acme") == PROCESS_ID
    assert not await leases.acquire("sync:acme", holder="other-process", ttl_s=60)  # renewed: still ours
