"""The scheduled ingestion job: every `interval_seconds`, pull new history of one workspace into memory, in one
process only (the holder of the workspace's sync lease in the database).

Runs never overlap (`max_instances=1`): a run still going when the next is due makes that one wait, and runs missed
while the process was busy collapse into one (`coalesce=True`). The first run starts right away.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

from apscheduler.job import Job
from apscheduler.schedulers.base import BaseScheduler

from bot.errors import AskwithError
from bot.store.leases import LeaseStore
from memory_ingest.report import IngestReport
from memory_ingest.worker import IngestWorker


logger = logging.getLogger(__name__)

JOB_ID_PREFIX = "ingest-history:"
LEASE_PREFIX = "sync:"
# A leader that stops renewing (its process died) is replaced after this many intervals, at least MIN_LEASE_S.
LEASE_INTERVALS = 3
MIN_LEASE_S = 600.0


async def ingest_history(worker: IngestWorker, key: str, lease_ttl_s: float = 0.0) -> IngestReport | None:
    """One scheduled run, by the leader only: of the processes sharing the database, the one holding the
    workspace's sync lease (taken or renewed here; `lease_ttl_s` 0 runs without one). A failure askwith understands
    (platform down, bad settings) is logged and the next run tries again; anything else is a bug and propagates to
    the scheduler's error log. A run still going at shutdown is cancelled by the scheduler (its asyncio executor
    cancels running jobs): that ends it quietly."""
    if lease_ttl_s > 0 and not await LeaseStore(worker.db).acquire(f"{LEASE_PREFIX}{key}", ttl_s=lease_ttl_s):
        logger.debug("Scheduled ingestion of %s left to the process leading it", key)
        return None
    try:
        report = await worker.run()
    except asyncio.CancelledError:  # the scheduler would log it as a job's failure, with a traceback
        logger.info("Scheduled ingestion of %s stopped: shutting down", key)
        return None
    except AskwithError as exc:
        logger.error("Scheduled ingestion of %s failed: %s", key, exc)
        return None
    logger.info("Scheduled ingestion of %s: %d messages added", key, report.messages_added)
    return report


def register(scheduler: BaseScheduler, *, worker: IngestWorker, key: str, interval_seconds: float) -> Job | None:
    """Schedule `worker` every `interval_seconds`; 0 or less schedules nothing (ingestion on demand only)."""
    if interval_seconds <= 0:
        return None
    return scheduler.add_job(
        ingest_history,
        trigger="interval",
        seconds=interval_seconds,
        args=(worker, key, max(LEASE_INTERVALS * interval_seconds, MIN_LEASE_S)),
        id=f"{JOB_ID_PREFIX}{key}",
        name=f"ingest history of {key}",
        max_instances=1,
        coalesce=True,
        replace_existing=True,
        next_run_time=datetime.now(UTC),
    )
