"""Scheduled jobs of the long-running process. Each module holds one job and exposes `register(scheduler, ...)`;
`register_all` wires every job, so `askwith serve` only builds a scheduler, registers and starts it."""

from __future__ import annotations

from collections.abc import Mapping

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from memory_ingest.jobs import ingest_history
from memory_ingest.worker import IngestWorker


def register_all(
    scheduler: AsyncIOScheduler, *, workers: Mapping[str, IngestWorker], ingest_interval_seconds: float
) -> None:
    """`workers` maps a workspace key (for job ids and logs) to the worker that ingests that workspace."""
    for key, worker in workers.items():
        ingest_history.register(scheduler, worker=worker, key=key, interval_seconds=ingest_interval_seconds)
