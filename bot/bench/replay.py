"""Items replayed as simulated workspaces, along the path a Slack `/ask-with` takes.

    world file -> LocalWorkspace (the chat port) -> IngestWorker (+ session indexer) -> store -> AskService

Each world file of a dataset becomes one workspace in the run's database, ingested once however many items use it
(every Schedule and NP item has a small world of its own; all FriendsTV items share one large world). Ingestion is
incremental, so a resumed run re-ingests nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from adapters.local.workspace import LocalWorkspace
from bot.asks.service import AskService
from bot.llm.client import LLMClient
from bot.memory.services import MemoryServices
from bot.settings import Settings
from bot.store.db import Database
from bot.world import World
from memory_ingest.report import Stage
from memory_ingest.worker import IngestWorker


OnIngest = Callable[[str, Stage, int, int], None]  # (world file, stage, done, total), as ingestion advances


@dataclass
class Replay:
    """One ingested workspace, ready to take asks."""

    port: LocalWorkspace
    workspace_id: int
    service: AskService
    ingest_s: float  # how long ingesting it took


class Replays:
    """The ingested workspaces of one run, by world file (each built on first use, exactly once)."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        llm: LLMClient,
        *,
        dataset_dir: Path,
        fuzzy: bool,  # False when fuzzy memory is switched off: then no sessions are indexed at all
        summarizer_llm: LLMClient | None,  # None = extractive session summaries (no model calls)
        on_ingest: OnIngest | None = None,
        reader: LLMClient | None = None,  # the privacy split's private model: the only one that reads hits
        transform: Callable[[World], World] | None = None,  # applied to each world before ingestion (renaming)
    ) -> None:
        self.transform = transform
        self.settings = settings
        self.db = db
        self.llm = llm
        self.dataset_dir = Path(dataset_dir)
        services = MemoryServices.over(settings, db, summarizer_llm)
        self.memory = services.access(reader=reader, fuzzy=fuzzy)
        self.indexer = services.indexer() if fuzzy else None
        self.on_ingest = on_ingest
        self._replays: dict[str, Replay] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, world_file: str) -> tuple[Replay, float]:
        """The replay of `world_file` and how long this call waited for its ingestion (0 if already done)."""
        lock = self._locks.setdefault(world_file, asyncio.Lock())
        started = time.perf_counter()
        async with lock:
            if world_file in self._replays:
                return self._replays[world_file], 0.0
            replay = await self._ingest(world_file)
            self._replays[world_file] = replay
        return replay, time.perf_counter() - started

    async def _ingest(self, world_file: str) -> Replay:
        started = time.perf_counter()
        world = await asyncio.to_thread(World.load, self.dataset_dir / world_file)
        if self.transform is not None:
            world = await asyncio.to_thread(self.transform, world)
        port = LocalWorkspace(world)  # never saved: the dataset's world files stay as generated
        worker = IngestWorker(port, self.db, indexer=self.indexer, page_size=self.settings.ingest_page_size)
        report = await worker.run(progress=self._progress(world_file))
        service = AskService(
            settings=self.settings, db=self.db, port=port, llm=self.llm, memory=self.memory,
            workspace_id=report.workspace_id,
        )  # fmt: skip
        return Replay(port, report.workspace_id, service, time.perf_counter() - started)

    def _progress(self, world_file: str) -> Callable[[Stage, int, int], None] | None:
        on_ingest = self.on_ingest
        if on_ingest is None:
            return None
        return lambda stage, done, total: on_ingest(world_file, stage, done, total)
