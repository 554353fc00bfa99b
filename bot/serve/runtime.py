"""Everything `askwith serve` runs in one process, started and stopped as one async context manager.

    async with running(settings, secret=secret) as runtime:   # database, LLM, memory, workspaces, workers, schedule
        ...                                                   # the web app serves requests with `runtime`

With no platform token set, the local workspace named by ASKWITH_SERVE_WORKSPACE is hosted (the web workspace UI
plays its members). Platform adapters plug in through `bot.serve.platforms`; shutdown runs in reverse: schedule, ask
workers (a grace period for running asks), platforms, LLM client, database. `askwith worker` runs the same process
without its inbound side (`serving=False`); given a local workspace (`askwith worker --workspace SPEC`), it runs that
workspace's asks too, on the copy of the workspace it opens (the process that serves the workspace keeps its file and
its memory up to date; the worker only reads them). With ASKWITH_SERVE_RUNS_ASKS=false, `askwith serve` runs no ask
worker for its platforms: their asks wait in the database for `askwith worker` processes. Without a configured language
model the process still starts: asks are answered with one message saying how to configure one.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from adapters.local.registry import LocalWorkspaces
from adapters.local.workspace import LocalWorkspace
from bot.asks.composition import AskRoot, MemoryFactory, open_root
from bot.asks.worker import AskWorker
from bot.errors import NoPlatformError
from bot.llm.client import LLMClient
from bot.platform.runtime import PlatformRuntime
from bot.serve.platforms import start_platforms
from bot.settings import Settings
from bot.store.db import Database
from bot.web.links import TranscriptLinks
from bot.web.local_runtime import LocalRuntime
from memory_ingest import jobs
from memory_ingest.jobs.ingest_history import JOB_ID_PREFIX
from memory_ingest.scheduler import build_scheduler
from memory_ingest.worker import IngestWorker


if TYPE_CHECKING:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

log = logging.getLogger(__name__)
SHUTDOWN_GRACE_S = 10.0


@dataclass
class Runtime:
    settings: Settings
    db: Database
    llm: LLMClient | None
    local: LocalRuntime | None
    platforms: list[PlatformRuntime] = field(default_factory=list)
    ingest: dict[str, IngestWorker] = field(default_factory=dict)  # workspace key -> its worker
    scheduler: AsyncIOScheduler | None = None  # running while serving
    ask_workers: list[asyncio.Task[None]] = field(default_factory=list)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    worker_of: dict[str, asyncio.Task[None]] = field(default_factory=dict)  # workspace key -> its ask worker
    runs_asks: bool = True  # whether the platforms' asks run here (False: `serve` leaves them to `askwith worker`)

    def join(self, platform: PlatformRuntime) -> None:
        """A workspace that joined while the process runs: served like those present at start."""
        self.platforms.append(platform)
        if platform.ingest is not None:
            key = _ingest_key(platform)
            self.ingest[key] = platform.ingest
            if self.scheduler is not None:
                interval = self.settings.ingest_interval_seconds
                jobs.register_all(self.scheduler, workers={key: platform.ingest}, ingest_interval_seconds=interval)
        if platform.asks is not None and self.runs_asks and not self.stopping.is_set():
            worker = AskWorker(platform.asks, concurrency=self.settings.worker_concurrency)
            task = asyncio.create_task(worker.run(stop=self.stopping))
            self.ask_workers.append(task)
            self.worker_of[_ingest_key(platform)] = task

    def leave(self, name: str, key: str) -> None:
        """A workspace that left (uninstalled, revoked, removed): its ingestion job and its ask worker stop now."""
        gone = [p for p in self.platforms if (p.name, p.key) == (name, key) and p.asks is not None]
        self.platforms = [p for p in self.platforms if p not in gone]
        workspace = f"{name}:{key}" if key else name
        self.ingest.pop(workspace, None)
        if self.scheduler is not None and self.scheduler.get_job(f"{JOB_ID_PREFIX}{workspace}") is not None:
            self.scheduler.remove_job(f"{JOB_ID_PREFIX}{workspace}")
        if (task := self.worker_of.pop(workspace, None)) is not None:
            task.cancel()
        log.warning("%s left: its scheduled ingestion and ask worker are stopped", workspace)


@asynccontextmanager
async def running(
    settings: Settings,
    *,
    secret: str,
    llm: LLMClient | None = None,
    memory: MemoryFactory | None = None,
    local_workspace: str | None = None,
    serving: bool = True,
) -> AsyncIterator[Runtime]:
    """Start the whole process; `llm` / `memory` replace the configured ones (tests, offline demos).

    `serving=False` is `askwith worker`: the platforms' ask services and the ask workers only (no endpoint,
    socket, gateway or ingestion schedule), plus `local_workspace`'s asks when one is named; it needs one or the other
    (NoPlatformError otherwise)."""
    # Session summaries come from the configured model only (the private one with the privacy split, which alone
    # reads memory hits); a stand-in (scripted demo) gets extractive ones (`bot.asks.composition`).
    # Platforms stop on their own stack, before the root closes the LLM clients and the database.
    async with open_root(settings, llm=llm, memory=memory) as root, AsyncExitStack() as stack:
        runtime = Runtime(settings, root.db, root.llm, local=None, runs_asks=not serving or settings.serve_runs_asks)
        runtime.platforms = await start_platforms(
            settings, root.db, ask_service=root.ask_service if root.llm is not None else None,
            memory=root.memory.access, indexer=root.memory.indexer,
            links=TranscriptLinks(settings, secret), stack=stack, listen=serving, joined=runtime.join,
            left=runtime.leave,
        )  # fmt: skip
        if not runtime.platforms and not serving and local_workspace is None:
            raise NoPlatformError()
        if not serving and local_workspace is not None:
            runtime.local = await start_local(root, local_workspace, ingests=False)
        elif not runtime.platforms:
            spec = local_workspace or settings.serve_workspace
            runtime.local = await start_local(root, spec)
        elif not runtime.runs_asks:
            log.info("asks are left to `askwith worker` processes (ASKWITH_SERVE_RUNS_ASKS=false)")
        _collect_workers(runtime)
        # What start-up built lives as long as the process: moved out of the cyclic collector's reach, it is not
        # walked again by every full collection while asks run (gc.freeze).
        gc.freeze()
        async with _background(runtime, serving=serving):
            yield runtime


@asynccontextmanager
async def _background(runtime: Runtime, *, serving: bool) -> AsyncIterator[None]:
    """The ask workers, and when `serving` the local workspace's saving and the ingestion schedule."""
    stop = runtime.stopping
    runtime.ask_workers = _start_background(runtime, stop, saves=serving)
    scheduler = build_scheduler(runtime.settings, workers=runtime.ingest) if serving else None
    if scheduler is not None:
        scheduler.start()
        runtime.scheduler = scheduler
    try:
        yield
    finally:
        if scheduler is not None:
            scheduler.shutdown(wait=False)
        stop.set()
        await _drain(runtime.ask_workers)
        if runtime.local is not None and serving:
            await runtime.local.save()


async def start_local(root: AskRoot, spec: str, *, ingests: bool = True) -> LocalRuntime:
    """Open the local workspace and bring its memory up to date once before serving (incremental after that).

    `ingests=False` (`askwith worker`): the memory the serving process keeps is only read; a workspace never
    ingested is mirrored (members and channels) so its asks can be taken."""
    settings = root.settings
    port = LocalWorkspaces(settings).open(spec)
    if not ingests:  # an in-memory copy: the serving process alone writes the world file and its journal
        port = LocalWorkspace(port.world, web_base_url=port.web_base_url)
    ingest = IngestWorker(port, root.db, indexer=root.memory.indexer, page_size=settings.ingest_page_size)
    if ingests:
        report = await ingest.run()
        workspace_id = report.workspace_id
        log.info("local workspace %s: %d messages added to memory", spec, report.messages_added)
    else:
        workspace_id = await ingest.known_workspace_id()
    # The workspace's own admins (its file's "admins") are admins of its asks too.
    asks = root.ask_service(port, workspace_id, admins=port.world.admins) if root.llm is not None else None
    return LocalRuntime(spec, port, ingest, workspace_id, asks)


def _collect_workers(runtime: Runtime) -> None:
    for platform in runtime.platforms:
        if platform.ingest is not None:
            runtime.ingest[_ingest_key(platform)] = platform.ingest
    if runtime.local is not None:
        runtime.ingest[f"local:{runtime.local.key}"] = runtime.local.ingest


def _ingest_key(platform: PlatformRuntime) -> str:
    return f"{platform.name}:{platform.key}" if platform.key else platform.name


async def _drain(tasks: list[asyncio.Task[None]]) -> None:
    """Let running asks finish briefly; an ask waiting on a member's approval must not hold shutdown up."""
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


def _start_background(runtime: Runtime, stop: asyncio.Event, *, saves: bool) -> list[asyncio.Task[None]]:
    tasks, concurrency = [], runtime.settings.worker_concurrency
    for platform in runtime.platforms:
        if platform.asks is not None and runtime.runs_asks:
            task = asyncio.create_task(AskWorker(platform.asks, concurrency=concurrency).run(stop=stop))
            runtime.worker_of[_ingest_key(platform)] = task
            tasks.append(task)
    if runtime.local is not None and runtime.local.asks is not None:
        tasks.append(asyncio.create_task(AskWorker(runtime.local.asks, concurrency=concurrency).run(stop=stop)))
    if runtime.local is not None and saves:  # a worker's copy of the workspace is never written back
        tasks.append(asyncio.create_task(runtime.local.keep_saved(stop)))
    return tasks
