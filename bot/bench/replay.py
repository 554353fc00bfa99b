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
from bot.asks.composition import AskRoot
from bot.asks.service import AskService
from bot.store.world import World
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
        root: AskRoot,
        *,
        dataset_dir: Path,
        on_ingest: OnIngest | None = None,
        transform: Callable[[World], World] | None = None,  # applied to each world before ingestion (renaming)
    ) -> None:
        self.root = root  # the run's database, models and memory (no indexer when fuzzy memory is switched off)
        self.transform = transform
        self.dataset_dir = Path(dataset_dir)
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
        root = self.root
        worker = IngestWorker(port, root.db, indexer=root.memory.indexer, page_size=root.settings.ingest_page_size)
        report = await worker.run(progress=self._progress(world_file))
        service = root.ask_service(port, report.workspace_id)
        return Replay(port, report.workspace_id, service, time.perf_counter() - started)

    def _progress(self, world_file: str) -> Callable[[Stage, int, int], None] | None:
        on_ingest = self.on_ingest
        if on_ingest is None:
            return None
        return lambda stage, done, total: on_ingest(world_file, stage, done, total)
