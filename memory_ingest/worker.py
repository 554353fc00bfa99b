"""The ingestion worker: mirror a workspace through the chat port and pull its history into members' memory.

    worker = IngestWorker(port, db, indexer=indexer, page_size=settings.ingest_page_size)
    report = await worker.run(progress=lambda stage, done, total: ...)
    await worker.ingest_message(message)  # a live message event from an adapter

Ingestion is opt-in per member: only channels that an opted-in human member reads (and has not excluded) are
pulled, and with `opted_in_authors_only` (Discord's default) only messages whose author opted in are stored. Bots'
posts (askwith's own included) are never memory, and a channel only bots belong to (the hidden agents channel) is
never read. Runs are incremental (a cursor per channel and per thread), idempotent (a rerun
adds nothing) and resumable (each page and its cursor commit together). After the messages, the optional session
indexer brings fuzzy memory (sessions, summaries, embeddings) up to date.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta

from bot.memory.indexer import IndexStats, SessionIndexer
from bot.platform.port import ChannelKind, ChatMessage, ChatPort, Member
from bot.store import models
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database
from bot.store.ingest_status import IngestStatusStore, ObjectKind
from memory_ingest.history import HistoryPuller, PullCounts
from memory_ingest.isolation import FailureGuard, Outcome, TokenDisabled
from memory_ingest.live import LiveMemory
from memory_ingest.mirror import CarriesPolicies, Mirror, mirror_workspace
from memory_ingest.report import IngestProgress, IngestReport, Stage


logger = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 200
LISTED_KINDS = (ChannelKind.PUBLIC, ChannelKind.PRIVATE)  # listed through the bot: unlisted means it left
# A run that added this many messages refreshes PostgreSQL's statistics of what memory searches read (`Database.
# analyze`): on a first ingest of FriendsTV's 11,593 messages, one statement of an ask took 2 s on the planner's
# default estimates and a few ms after ANALYZE.
ANALYZE_AFTER_MESSAGES = 1000
ANALYZED_TABLES = tuple(
    table.__tablename__
    for table in (
        models.Message, models.Channel, models.Membership, models.Member, models.MemorySession, models.SessionMessage
    )
)  # fmt: skip


class IngestWorker:
    def __init__(
        self,
        port: ChatPort,
        db: Database,
        *,
        indexer: SessionIndexer | None = None,  # None = clear memory only (no sessions, summaries, embeddings)
        page_size: int = DEFAULT_PAGE_SIZE,
        on_token_disabled: TokenDisabled | None = None,  # tells a member their token stopped working
        reconcile_s: float = 0.0,  # full listing at most this often when events keep the mirror current; 0: every run
        backfill_days: int = 0,  # a channel's first read goes back this far; 0: its whole history
        opted_in_authors_only: bool = False,  # True: a message is stored only if its author has opted in
    ) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        self.port = port
        self.db = db
        self.store = ChatStore(db)
        self.indexer = indexer
        self.live = LiveMemory(db, indexer)  # edits, deletions and visibility changes as the platform reports them
        self.status = IngestStatusStore(db)  # per-object status: a failing channel, thread or token stays apart
        self.on_token_disabled = on_token_disabled
        self._mirror: Mirror | None = None
        self.reconcile_s = reconcile_s
        self.backfill_days = backfill_days
        self.opted_in_authors_only = opted_in_authors_only
        self._ran = False  # a run of this process has read history (the next ones are not after downtime)
        self._mirrored_at = 0.0  # time.monotonic() of the last full listing
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
        self._mirrored_at = time.monotonic()
        return self._mirror

    async def known_workspace_id(self) -> int:
        """The workspace's store id without listing it, when it was mirrored before: for a process that runs asks
        but no sync (`askwith worker`); a workspace never mirrored is mirrored now."""
        info = await self.port.workspace_info()
        async with self.db.session() as session:
            found = await self.store.find_workspace(session, WorkspaceKey(self.port.platform, info.id))
        return found if found is not None else (await self.mirror()).workspace_id

    async def sync(self) -> Mirror:
        """The workspace's structure for a scheduled run, as cheaply as it is known current: between full listings
        (every `reconcile_s`), events keep members and memberships current, so only the list of channels is read,
        a new one looked up alone and one no longer listed left with no readers."""
        mirror = self._mirror
        if mirror is None or time.monotonic() - self._mirrored_at >= self.reconcile_s:
            return await self.mirror()
        listed = set(await self.port.list_channel_ids())
        for channel_id in sorted(listed - {c.id for c in mirror.channels}):
            await self.learn_channel(channel_id)
        # DMs are listed through members' own tokens, so an unlisted one says nothing (as in a full mirror).
        unlisted = [c for c in mirror.channels if c.id not in listed and c.kind in LISTED_KINDS]
        for channel in unlisted:
            await self.live.forget_channel_readers(mirror.workspace_id, channel.id)
        mirror.channels = [c for c in mirror.channels if c not in unlisted]
        return mirror

    async def run(self, *, progress: IngestProgress | None = None) -> IngestReport:
        """One pass: bring the structure up to date (`sync`), pull new history, update fuzzy memory; returns what
        changed."""
        async with self._run_lock:
            started = time.perf_counter()
            mirror = await self.sync()
            report = IngestReport(workspace_id=mirror.workspace_id, workspace_name=mirror.workspace_name)
            counts = await self._pull_history(mirror, report, progress)
            report.messages_added, report.messages_skipped = counts.added, counts.skipped
            if self.indexer is not None:
                report.index = await self._index(self.indexer, mirror.workspace_id, progress)
            if report.messages_added >= ANALYZE_AFTER_MESSAGES:  # a bulk load: asks must not plan on stale figures
                await self.db.analyze(ANALYZED_TABLES)
            await self._count(mirror, report)
            report.problems = await self.status.listing(mirror.workspace_id, problems_only=True)
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
        skip = await self.status.not_due(mirror.workspace_id, ObjectKind.CHANNEL)
        todo = [c.id for c in mirror.channels if mirror.channel_ids[c.id] in ingestable and c.id not in skip]
        report.channels_ingested = len(todo)
        since = datetime.now(UTC) - timedelta(days=self.backfill_days) if self.backfill_days else None
        puller = HistoryPuller(
            self.port,
            self.db,
            self.store,
            mirror,
            page_size=self.page_size,
            learn_member=self.learn_member,
            since=since,
            opted_in_authors_only=self.opted_in_authors_only,
            after_downtime=not self._ran,  # the first run of a process: events were missed while it was down
        )
        await puller.start()
        guard = self.guard(mirror.workspace_id)
        skip_threads = await self.status.not_due(mirror.workspace_id, ObjectKind.THREAD)
        _tick(progress, Stage.HISTORY, 0, len(todo))
        try:
            for done, channel_id in enumerate(todo, start=1):
                if not await self._pull_one_channel(puller, guard, channel_id, skip_threads):
                    break  # rate limited: the next run resumes from the cursors saved with each page
                _tick(progress, Stage.HISTORY, done, len(todo))
        finally:
            counts = await puller.finish()
        self._ran = True
        return counts

    async def _pull_one_channel(
        self, puller: HistoryPuller, guard: FailureGuard, channel_id: str, skip_threads: set[str]
    ) -> bool:
        """A channel, then its known threads, each on its own; False when the platform asked to slow down."""
        outcome = await guard.run(ObjectKind.CHANNEL, channel_id, puller.pull_channel(channel_id))
        if outcome is Outcome.GONE:
            await self.live.forget_channel_readers(guard.workspace_id, channel_id)
        if outcome is not Outcome.OK:
            return outcome is not Outcome.RATE_LIMITED
        changed: dict[str, str] = {}
        outcome = await guard.run(ObjectKind.CHANNEL, channel_id, _into(changed, puller.changed_threads(channel_id)))
        if outcome is not Outcome.OK:
            return outcome is not Outcome.RATE_LIMITED
        for thread_id, marker in changed.items():
            if thread_id in skip_threads:
                continue
            read = puller.pull_thread(channel_id, thread_id, marker)
            outcome = await guard.run(ObjectKind.THREAD, thread_id, read)
            if outcome is Outcome.RATE_LIMITED:
                return False
        return True

    def guard(self, workspace_id: int) -> FailureGuard:
        return FailureGuard(self.status, workspace_id, on_token_disabled=self.on_token_disabled)

    async def _index(self, indexer: SessionIndexer, workspace_id: int, progress: IngestProgress | None) -> IndexStats:
        def on_index(done: int, total: int) -> None:
            _tick(progress, Stage.INDEX, done, total)

        async with self.live.index_lock:
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
        # A channel or member created since the last mirroring is looked up alone, never with a full mirror.
        if message.sender_id not in mirror.member_ids:
            await self.learn_member(message.sender_id)
        if message.channel_id not in mirror.channel_ids:
            await self.learn_channel(message.channel_id)
        if message.sender_id in mirror.bot_ids or message.channel_id not in mirror.channel_ids:
            return False
        if message.sender_id not in mirror.member_ids:
            return False
        db_channel = mirror.channel_ids[message.channel_id]
        async with self.db.session() as session, session.begin():
            if not await self.store.ingestable_channel_ids(session, mirror.workspace_id, channel_id=db_channel):
                return False
            added = await self.store.add_messages(
                session,
                mirror.workspace_id,
                [message],
                mirror.channel_ids,
                mirror.member_ids,
                opted_in_authors_only=self.opted_in_authors_only,
            )
            if message.thread_id:
                await self.store.ensure_thread_cursors(session, [(db_channel, message.thread_id)])
        if added:
            self.live.changed(mirror.workspace_id)
        elif message.edited_at is not None:  # stored meanwhile (an edit racing its post): the newer version stays
            await self.live.edit_message(mirror.workspace_id, message.id, message.text, written_at=message.edited_at)
        return added == 1

    async def member_opted_out(self, member_id: str) -> int:
        """A member turned memory off (or forgot it): where only opted-in authors' messages are kept, everything
        they wrote goes now. Returns how many messages were deleted."""
        if not self.opted_in_authors_only:
            return 0
        return await self.live.delete_messages_of(self.workspace_id or await self.known_workspace_id(), member_id)

    async def learn_member(self, member_id: str) -> bool:
        """Store one member the platform just named (looked up alone); False when the platform does not know them."""
        member = await self.port.lookup_member(member_id)
        if member is None:
            return False
        await self.store_member(member)
        return True

    async def store_member(self, member: Member) -> None:
        """Store a member as an event describes them (joined, profile changed), without asking the platform."""
        mirror = self._mirror or await self.mirror()
        policies = self.port.initial_policies() if isinstance(self.port, CarriesPolicies) else {}
        async with self.db.session() as session, session.begin():
            db_id = await self.store.upsert_member(session, mirror.workspace_id, member, policies.get(member.id))
        mirror.member_ids[member.id] = db_id
        if member.is_bot:
            mirror.bot_ids.add(member.id)

    async def learn_channel(self, channel_id: str) -> bool:
        """Store one channel and its current readers, looked up alone (a channel created or joined since the last
        mirroring); False when askwith cannot read it."""
        mirror = self._mirror or await self.mirror()
        channel = await self.port.lookup_channel(channel_id)
        if channel is None:
            return False
        for member_id in set(channel.member_ids) - mirror.member_ids.keys():
            await self.learn_member(member_id)
        async with self.db.session() as session, session.begin():
            deactivated = await self.store.deactivated_member_ids(session, mirror.workspace_id)
            active = {p: i for p, i in mirror.member_ids.items() if p not in deactivated}
            mirror.channel_ids = await self.store.upsert_channels(session, mirror.workspace_id, [channel], active)
        mirror.channels = [c for c in mirror.channels if c.id != channel.id] + [channel]
        await self.status.reset(mirror.workspace_id, ObjectKind.CHANNEL, channel.id)
        return True

    async def apply_edit(self, message: ChatMessage) -> bool:
        """A message edited on the platform: its stored text replaced, or, not stored yet, its new version
        ingested (so a backfill racing the edit cannot keep the old text). True if memory changed."""
        mirror = self._mirror or await self.mirror()
        written = message.edited_at or message.ts
        if await self.live.edit_message(mirror.workspace_id, message.id, message.text, written_at=written):
            return True
        return await self.ingest_message(message)


async def _into(target: dict[str, str], work: Awaitable[dict[str, str]]) -> None:
    target.update(await work)


def _tick(progress: IngestProgress | None, stage: Stage, done: int, total: int) -> None:
    if progress is not None:
        progress(stage, done, total)
