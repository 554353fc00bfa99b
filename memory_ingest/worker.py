"""The ingestion worker: mirror a workspace through the chat port and pull its history into members' memory.

    worker = IngestWorker(port, db, indexer=indexer, page_size=settings.ingest_page_size)
    report = await worker.run(progress=lambda stage, done, total: ...)
    await worker.ingest_message(message)  # a live message event from an adapter

Ingestion is opt-in per member: only channels that an opted-in human member reads (and has not excluded) are
pulled. Bots' posts (askwith's own included) are never memory, and a channel only bots belong to (the hidden
agents channel) is never read. Runs are incremental (a cursor per channel and per thread), idempotent (a rerun
adds nothing) and resumable (each page and its cursor commit together). After the messages, the optional session
indexer brings fuzzy memory (sessions, summaries, embeddings) up to date.
"""

from __future__ import annotations

import asyncio
import logging
import time

from bot.memory.indexer import IndexStats, SessionIndexer
from bot.port import ChatMessage, ChatPort
from bot.store.chat_store import ChatStore
from bot.store.db import Database
from memory_ingest.history import HistoryPuller, PullCounts
from memory_ingest.mirror import Mirror, mirror_workspace, refresh_members
from memory_ingest.report import IngestProgress, IngestReport, Stage


logger = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 200


class IngestWorker:
    def __init__(
        self,
        port: ChatPort,
        db: Database,
        *,
        indexer: SessionIndexer | None = None,  # None = clear memory only (no sessions, summaries, embeddings)
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        self.port = port
        self.db = db
        self.store = ChatStore(db)
        self.indexer = indexer
        self._mirror: Mirror | None = None
        self.page_size = page_size
        self._run_lock = asyncio.Lock()  # one run at a time per worker, whoever starts it

    @property
    def workspace_id(self) -> int | None:
        """The store's id of the workspace, once mirrored."""
        return None if self._mirror is None else self._mirror.workspace_id

    @property
    def busy(self) -> bool:
        """True while a run is in progress."""
        return self._run_lock.locked()

    async def mirror(self) -> Mirror:
        """Mirror the workspace's structure (workspace, members, channels, memberships) into the store."""
        self._mirror = await mirror_workspace(self.port, self.db, self.store)
        return self._mirror

    async def run(self, *, progress: IngestProgress | None = None) -> IngestReport:
        """One full pass: mirror, pull new history, update fuzzy memory; returns what changed."""
        async with self._run_lock:
            started = time.perf_counter()
            mirror = await self.mirror()
            report = IngestReport(workspace_id=mirror.workspace_id, workspace_name=mirror.workspace_name)
            counts = await self._pull_history(mirror, report, progress)
            report.messages_added, report.messages_skipped = counts.added, counts.skipped
            if self.indexer is not None:
                report.index = await self._index(self.indexer, mirror.workspace_id, progress)
            await self._count(mirror, report)
            report.seconds = time.perf_counter() - started
            logger.info(
                "Ingested %s: %d messages added (%d total) in %.1fs",
                mirror.workspace_name,
                report.messages_added,
                report.messages_total,
                report.seconds,
            )
            return report

    async def _pull_history(self, mirror: Mirror, report: IngestReport, progress: IngestProgress | None) -> PullCounts:
        async with self.db.session() as session:
            ingestable = await self.store.ingestable_channel_ids(session, mirror.workspace_id)
        todo = [c.id for c in mirror.channels if mirror.channel_ids[c.id] in ingestable]
        report.channels_ingested = len(todo)
        puller = HistoryPuller(
            self.port, self.db, self.store, mirror, page_size=self.page_size, refresh_members=self._refresh
        )
        await puller.start()
        _tick(progress, Stage.HISTORY, 0, len(todo))
        for done, channel_id in enumerate(todo, start=1):
            await puller.pull_channel(channel_id)
            _tick(progress, Stage.HISTORY, done, len(todo))
        return await puller.finish()

    @staticmethod
    async def _index(indexer: SessionIndexer, workspace_id: int, progress: IngestProgress | None) -> IndexStats:
        def on_index(done: int, total: int) -> None:
            _tick(progress, Stage.INDEX, done, total)

        return await indexer.update(workspace_id, progress=on_index)

    async def _count(self, mirror: Mirror, report: IngestReport) -> None:
        async with self.db.session() as session:
            report.members, report.members_opted_in = await self.store.member_counts(session, mirror.workspace_id)
            report.messages_total = await self.store.message_count(session, mirror.workspace_id)
        report.channels = sum(1 for c in mirror.channels if set(c.member_ids) - mirror.bot_ids)

    # ------------------------------------------------------------------ live events
    async def ingest_message(self, message: ChatMessage) -> bool:
        """Store one live message (a Slack/Discord message event); True if it was new and memory-worthy.

        The channel's and thread's history cursors are left alone: the next scheduled run reads past this message
        and, messages being unique by platform id, does not store it twice. Fuzzy memory catches up on that run.
        """
        mirror = self._mirror or await self.mirror()
        if message.channel_id not in mirror.channel_ids or message.sender_id not in mirror.member_ids:
            mirror = await self.mirror()  # a channel or member created since the last mirroring
        if message.sender_id in mirror.bot_ids or message.channel_id not in mirror.channel_ids:
            return False
        if message.sender_id not in mirror.member_ids:
            return False
        db_channel = mirror.channel_ids[message.channel_id]
        async with self.db.session() as session, session.begin():
            if not await self.store.ingestable_channel_ids(session, mirror.workspace_id, channel_id=db_channel):
                return False
            added = await self.store.add_messages(
                session, mirror.workspace_id, [message], mirror.channel_ids, mirror.member_ids
            )
            if message.thread_id:
                await self.store.ensure_thread_cursors(session, [(db_channel, message.thread_id)])
        return added == 1

    async def _refresh(self, mirror: Mirror) -> None:
        await refresh_members(self.port, self.db, self.store, mirror)


def _tick(progress: IngestProgress | None, stage: Stage, done: int, total: int) -> None:
    if progress is not None:
        progress(stage, done, total)
