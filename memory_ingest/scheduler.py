"""The scheduler of the long-running process: APScheduler 3's `AsyncIOScheduler` on the process's event loop.

scheduler = build_scheduler(settings, workers={"acme": worker})
scheduler.start()  # inside the running loop (`askwith serve`)
...
scheduler.shutdown(wait=False)
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.settings import Settings
from memory_ingest import jobs
from memory_ingest.worker import IngestWorker


def build_scheduler(settings: Settings, *, workers: Mapping[str, IngestWorker]) -> AsyncIOScheduler:
    """A scheduler (not started) with every job registered; ingestion runs every ASKWITH_INGEST_INTERVAL_SECONDS."""
    scheduler = AsyncIOScheduler(timezone=UTC)
    jobs.register_all(scheduler, workers=workers, ingest_interval_seconds=settings.ingest_interval_seconds)
    return scheduler
