"""Progress of an ask: its stage, stored on the ask row (any process can read it) and published in-process.

    async for p in service.progress.subscribe(ask_id):   # in the process running the ask; ends at a final stage
        await status_message.edit(p.text)                 # adapters rate-limit their own edits
    unsubscribe = service.progress.listen(ask_id, callback)   # or a plain callback, called with each `Progress`
    p = await read_progress(db, ask_id)                   # from any process (None: unknown ask)
    async for p in poll_progress(db, ask_id, interval_s=1.0): ...   # another process's ask, by polling the row
    async for p in watch_progress(db, service.progress, ask_id): ...  # both: instant here, polled otherwise

Stages (`Stage`): queued -> planning -> searching <member> -> talking <colleague> -> bringing_in <member> ->
waiting <approval> -> agreeing -> done | unsupported | failed | cancelled. A slow subscriber is never queued up:
it gets the latest state (intermediate ones may be skipped); the final stage is always delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from sqlalchemy import Update, bindparam, select, update

from bot.agents.progress import FINAL_STAGES, Stage
from bot.agents.roster import Roster
from bot.asks import models
from bot.asks.claims import held_by_worker
from bot.errors import AskwithError
from bot.store.batched_write import BatchedWrite
from bot.store.db import Database
from bot.texts import progress_texts


log = logging.getLogger(__name__)
__all__ = [
    "FINAL_STAGES",
    "Progress",
    "ProgressHub",
    "ProgressTracker",
    "Stage",
    "poll_progress",
    "read_progress",
    "watch_progress",
]


@dataclass(frozen=True)
class Progress:
    ask_id: int
    stage: Stage
    detail: str  # a handle ("" when the stage concerns nobody in particular)
    detail_name: str  # that member's display name
    at: datetime

    @property
    def final(self) -> bool:
        return self.stage in FINAL_STAGES

    @property
    def text(self) -> str:
        """One plain line for a status message (bot.texts.progress_texts; adapters add their markup)."""
        return progress_texts.progress_stage(self.stage.value, self.detail_name)


class ProgressHub:
    """In-process fan-out of `Progress` to subscribers of one ask."""

    def __init__(self) -> None:
        self._listeners: dict[int, list[Callable[[Progress], None]]] = {}
        self._latest: dict[int, Progress] = {}

    def publish(self, progress: Progress) -> None:
        self._latest[progress.ask_id] = progress
        for listener in list(self._listeners.get(progress.ask_id, [])):
            try:
                listener(progress)
            except Exception:  # one broken listener must not stop the ask or the other listeners
                log.exception("ask #%s: a progress listener failed", progress.ask_id)
        if progress.final:
            self._latest.pop(progress.ask_id, None)

    def latest(self, ask_id: int) -> Progress | None:
        """The last stage published here for a running ask (None once it finished, or if it runs elsewhere)."""
        return self._latest.get(ask_id)

    def listen(self, ask_id: int, callback: Callable[[Progress], None]) -> Callable[[], None]:
        """Call `callback` with every stage of the ask published in this process; returns the unsubscribe."""
        self._listeners.setdefault(ask_id, []).append(callback)

        def unsubscribe() -> None:
            listeners = self._listeners.get(ask_id, [])
            if callback in listeners:
                listeners.remove(callback)
            if not listeners:
                self._listeners.pop(ask_id, None)

        return unsubscribe

    async def subscribe(self, ask_id: int) -> AsyncIterator[Progress]:
        """The ask's stages as they come (the latest one first, if it is running), until a final stage."""
        latest: list[Progress] = []
        changed = asyncio.Event()

        def on(progress: Progress) -> None:
            latest[:] = [progress]
            changed.set()

        unsubscribe = self.listen(ask_id, on)
        try:
            if (now := self.latest(ask_id)) is not None and not latest:
                on(now)
            while True:
                await changed.wait()
                changed.clear()
                progress = latest[0]
                yield progress
                if progress.final:
                    return
        finally:
            unsubscribe()


def stage_writes(db: Database) -> BatchedWrite:
    """The stage writes of every ask this process runs: stored together when they come together."""
    return BatchedWrite(db, _stage_statement())


class ProgressTracker:
    """The `ProgressSink` of one running ask: stores the latest stage (one write in flight at a time; a burst of
    stages becomes one write of the last) through `stages` (`stage_writes`), and publishes each stored stage to
    the hub."""

    def __init__(self, stages: BatchedWrite, hub: ProgressHub, roster: Roster, *, ask_id: int, worker_id: str) -> None:
        self.stages, self.hub, self.roster = stages, hub, roster
        self.ask_id, self.worker_id = ask_id, worker_id
        self._pending: tuple[Stage, str] | None = None
        self._last: tuple[Stage, str] | None = None
        self._writer: asyncio.Task[None] | None = None

    def __call__(self, stage: Stage, detail: str = "") -> None:
        if (stage, detail) == (self._pending or self._last):
            return
        self._pending = (stage, detail)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write_pending())

    async def _write_pending(self) -> None:
        while self._pending is not None:
            stage, detail = self._pending
            self._pending = None
            await self._try_store(stage, detail)
            self._last = (stage, detail)

    async def _try_store(self, stage: Stage, detail: str) -> None:
        """Progress is for people watching: failing to store it never fails the ask (logged instead)."""
        try:
            await self._store(stage, detail)
        except Exception as exc:  # a database hiccup, an unknown member: the ask goes on regardless
            log.warning("ask #%s: could not store its progress (%s): %s", self.ask_id, stage, exc)

    async def _store(self, stage: Stage, detail: str) -> None:
        name = ""
        if detail:  # a handle or platform id: stored as the handle
            profile = await self.roster.identity(detail)
            detail, name = profile.handle, profile.display_name
        at = datetime.now(UTC)
        params = {"ask_id": self.ask_id, "worker": self.worker_id, "new_stage": stage.value, "detail": detail or None}
        await self.stages.execute(params | {"at": at})
        self.hub.publish(Progress(self.ask_id, stage, detail, name, at))

    async def flush(self) -> None:
        if self._writer is not None:
            await asyncio.shield(self._writer)

    async def finish(self, stage: Stage) -> None:
        """The final stage: written after every earlier one."""
        await self.flush()
        self._pending = None
        await self._try_store(stage, "")
        self._last = (stage, "")

    def stop(self) -> None:
        """Drop stages not yet written (a cancelled ask reports nothing more but its final stage)."""
        self._pending = None


@cache
def _stage_statement() -> Update:
    """Store the stage of ask `ask_id` while `worker` holds it (built once; bind parameters carry the values)."""
    ask = models.Ask.__table__
    return (
        update(ask)
        .where(held_by_worker())
        .values(
            stage=bindparam("new_stage", type_=ask.c.stage.type),
            stage_detail=bindparam("detail", type_=ask.c.stage_detail.type),
            stage_at=bindparam("at", type_=ask.c.stage_at.type),
        )
    )


async def read_progress(db: Database, ask_id: int, *, roster: Roster | None = None) -> Progress | None:
    async with db.session() as session:
        row = (
            await session.execute(
                select(
                    models.Ask.stage, models.Ask.stage_detail, models.Ask.stage_at, models.Ask.status,
                    models.Ask.created_at, models.Ask.workspace_id,
                ).where(models.Ask.id == ask_id)
            )
        ).one_or_none()  # fmt: skip
    if row is None:
        return None
    stage = Stage(row.stage) if row.stage else _stage_of_status(row.status)
    detail = row.stage_detail or ""
    name = detail
    if detail:
        try:
            name = (await (roster or Roster(db, row.workspace_id)).profile(detail)).display_name
        except AskwithError:
            name = detail
    return Progress(ask_id, stage, detail, name, row.stage_at or row.created_at)


async def poll_progress(db: Database, ask_id: int, *, interval_s: float = 1.0) -> AsyncIterator[Progress]:
    """The stages of an ask run by any process, by reading its row every `interval_s`, until a final stage."""
    last: tuple[Stage, str] | None = None
    while True:
        progress = await read_progress(db, ask_id)
        if progress is None:
            return
        if (progress.stage, progress.detail) != last:
            last = (progress.stage, progress.detail)
            yield progress
        if progress.final:
            return
        await asyncio.sleep(interval_s)


def _stage_of_status(status: str) -> Stage:
    """Asks from before migration 0010 (or not yet started) have no stage: their status says enough."""
    finished = {"done": Stage.DONE, "unsupported": Stage.UNSUPPORTED, "failed": Stage.FAILED}
    return finished.get(status, Stage.CANCELLED if status == "cancelled" else Stage.QUEUED)


async def watch_progress(
    db: Database, hub: ProgressHub, ask_id: int, *, interval_s: float = 1.0
) -> AsyncIterator[Progress]:
    """An ask's stages wherever it runs: at once when this process runs it (the hub), else from its row every
    `interval_s`; each change once, until a final stage."""
    last: tuple[Stage, str] | None = None
    heard: list[Progress] = []
    changed = asyncio.Event()

    def on(progress: Progress) -> None:
        heard[:] = [progress]
        changed.set()

    unsubscribe = hub.listen(ask_id, on)
    try:
        progress = await read_progress(db, ask_id)
        while progress is not None:
            if (progress.stage, progress.detail) != last:
                last = (progress.stage, progress.detail)
                yield progress
            if progress.final:
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval_s):
                    await changed.wait()
            if changed.is_set():
                changed.clear()
                progress = heard[0]
            else:
                progress = await read_progress(db, ask_id)
    finally:
        unsubscribe()
