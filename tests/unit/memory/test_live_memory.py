"""The platform-neutral live-memory core: edits, deletions with tombstones, readers, forgetting, storable text,
per-object status and failure isolation, on the local workspace (SQLite, hash embedder)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from rich.console import Console
from sqlalchemy import func, select

from adapters.local import LocalWorkspace
from bot.asks.read_models.ingestion import object_problems
from bot.cli.ingest import problems_table
from bot.errors import (
    ChatPlatformError,
    PlatformObjectGoneError,
    PlatformRateLimitedError,
    PlatformTokenRevokedError,
)
from bot.memory.clear import ClearMemory
from bot.memory.embeddings import HashEmbedder
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.types import ClearQuery, FuzzyQuery, Viewer
from bot.memory.vector_index import VectorIndex
from bot.memory.visibility import resolve_viewer
from bot.platform.port import ChatMessage, HistoryPage
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from bot.store.ingest_status import IngestStatusStore, ObjectKind, ObjectStatus, backoff_seconds
from bot.store.sanitize import db_text
from bot.store.world import World
from memory_ingest.worker import IngestWorker


@pytest.fixture
def indexer(db: Database, settings: Settings) -> SessionIndexer:
    index = VectorIndex.from_settings(settings, embedder=HashEmbedder())
    return SessionIndexer(db, settings, SessionSummarizer(db, None), index)


@pytest.fixture
async def worker(db: Database, sample_world: World, indexer: SessionIndexer) -> IngestWorker:
    worker = IngestWorker(LocalWorkspace(sample_world), db, indexer=indexer)
    await worker.run()
    return worker


async def viewer(db: Database, worker: IngestWorker, who: str) -> Viewer:
    async with db.session() as session:
        return await resolve_viewer(session, worker.workspace_id or 0, who)


async def clear_texts(db: Database, worker: IngestWorker, who: str, *words: str) -> list[str]:
    hits = await ClearMemory(db).search(await viewer(db, worker, who), ClearQuery(keywords=words, context_window=0))
    return [h.message.text for h in hits]


async def fuzzy_texts(db: Database, worker: IngestWorker, indexer: SessionIndexer, who: str, text: str) -> list[str]:
    fuzzy = FuzzyMemory(db, indexer.index)
    hits = await fuzzy.search(await viewer(db, worker, who), FuzzyQuery(text=text, top_k=20, expand=True))
    return [h.summary for h in hits] + [m.text for h in hits for m in h.messages]


def first_general(world: World) -> ChatMessage:
    return world.messages["C-general"][0]


# ---------------------------------------------------------------------- edits and deletions
async def test_an_edit_replaces_the_text_in_clear_and_fuzzy_memory(
    db: Database, worker: IngestWorker, indexer: SessionIndexer, sample_world: World
) -> None:
    message = first_general(sample_world)
    assert await worker.live.edit_message(worker.workspace_id or 0, message.id, "my password is hunter2")
    await worker.live.settle()
    assert await clear_texts(db, worker, "bob", "offsite") == [] or all(
        "Reminder: the offsite" not in t for t in await clear_texts(db, worker, "bob", "offsite")
    )
    assert await clear_texts(db, worker, "bob", "hunter2") == ["my password is hunter2"]
    assert any("hunter2" in t for t in await fuzzy_texts(db, worker, indexer, "bob", "password hunter2"))
    assert not any("Reminder: the offsite" in t for t in await fuzzy_texts(db, worker, indexer, "bob", "offsite demo"))
    # The old summary is gone from the database, not only unreachable.
    async with db.session() as session:
        summaries = (await session.execute(select(models.SessionSummary.text))).scalars().all()
    assert not any("Reminder: the offsite" in s for s in summaries)


async def test_a_deleted_message_leaves_memory_and_a_backfill_never_brings_it_back(
    db: Database, worker: IngestWorker, indexer: SessionIndexer, sample_world: World
) -> None:
    message = first_general(sample_world)
    ws = worker.workspace_id or 0
    assert await worker.live.edit_message(ws, message.id, "my password is hunter2")
    assert await worker.live.delete_messages(ws, [message.id]) == 1
    await worker.live.settle()
    assert await clear_texts(db, worker, "bob", "hunter2") == []
    assert not any("hunter2" in t for t in await fuzzy_texts(db, worker, indexer, "bob", "password hunter2"))
    # A backfill from the beginning (cursors lost) reads the message again: the tombstone keeps it out.
    async with db.session() as session, session.begin():
        await session.execute(models.IngestCursor.__table__.delete())
    await worker.run()
    assert await clear_texts(db, worker, "bob", "offsite") == [] or all(
        "Reminder: the offsite" not in t for t in await clear_texts(db, worker, "bob", "offsite")
    )
    async with db.session() as session:
        ids = set((await session.execute(select(models.Message.platform_id))).scalars())
    assert message.id not in ids and len(ids) == sample_world.message_count() - 1


async def test_an_edit_of_a_message_not_stored_yet_changes_nothing(worker: IngestWorker) -> None:
    assert not await worker.live.edit_message(worker.workspace_id or 0, "no-such-message", "text")


async def test_text_with_nul_and_lone_surrogates_is_stored_whole(
    db: Database, worker: IngestWorker, sample_world: World
) -> None:
    assert db_text("a\x00b\ud83dc") == "a\ufffdb\ufffdc"
    assert db_text("plain ✓") == "plain ✓"
    sample_world.add_message("C-general", "bob", "null\x00byte budget", ts=datetime(2026, 11, 20, tzinfo=UTC))
    report = await worker.run()
    assert report.messages_added == 1
    assert await clear_texts(db, worker, "alice", "budget") == ["null\ufffdbyte budget"]


# ---------------------------------------------------------------------- readers
async def test_readers_change_at_once(db: Database, worker: IngestWorker) -> None:
    ws, live = worker.workspace_id or 0, worker.live
    assert await clear_texts(db, worker, "carol", "launch") == []
    assert await live.add_reader(ws, "C-launch", "carol")
    assert await clear_texts(db, worker, "carol", "launch") != []
    await live.remove_reader(ws, "C-launch", "carol")
    assert await clear_texts(db, worker, "carol", "launch") == []
    await live.set_channel_readers(ws, "C-launch", ["carol"])
    assert await clear_texts(db, worker, "carol", "launch") != []
    assert await clear_texts(db, worker, "alice", "launch") == []
    await live.forget_channel_readers(ws, "C-launch")
    assert await clear_texts(db, worker, "carol", "launch") == []


async def test_a_deactivated_member_reads_nothing(db: Database, worker: IngestWorker) -> None:
    assert await clear_texts(db, worker, "bob", "offsite") != []
    await worker.live.set_member_deactivated(worker.workspace_id or 0, "bob", True)
    assert await clear_texts(db, worker, "bob", "offsite") == []


async def test_a_deleted_channel_takes_its_memory_with_it(
    db: Database, worker: IngestWorker, indexer: SessionIndexer
) -> None:
    ws = worker.workspace_id or 0
    before = await indexer.index.count(ws)
    await worker.live.delete_channel(ws, "C-general")
    assert await clear_texts(db, worker, "bob", "offsite") == []
    assert await indexer.index.count(ws) < before


async def test_forgetting_a_member_deletes_only_what_is_held_through_them(db: Database, worker: IngestWorker) -> None:
    ws = worker.workspace_id or 0
    async with db.session() as session:
        dms = select(func.count()).select_from(models.Channel).where(models.Channel.kind == "dm")
        before = (await session.execute(dms)).scalar_one()
    # dave's DMs: with erin and with alice. alice also reads with her own token, so only the DM with erin is held
    # through dave alone.
    deleted = await worker.live.forget_member(ws, "dave", other_readers={"askwith", "alice"})
    assert deleted["channel"] == 1 and deleted["message"] > 0
    async with db.session() as session:
        assert (await session.execute(dms)).scalar_one() == before - 1
        left = set((await session.execute(select(models.Channel.platform_id))).scalars())
    assert "D-dave-erin" not in left and "D-alice-dave" in left
    assert await clear_texts(db, worker, "erin", "offsite") != []  # #general is untouched


# ---------------------------------------------------------------------- status and isolation
async def test_backoff_grows_and_respects_retry_after(db: Database, worker: IngestWorker) -> None:
    status, ws = IngestStatusStore(db), worker.workspace_id or 0
    assert backoff_seconds(1) == 30 and backoff_seconds(3) == 120 and backoff_seconds(20) == 3600
    assert backoff_seconds(1, retry_after=900) == 900
    first = await status.failed(ws, ObjectKind.CHANNEL, "C-general", "boom")
    second = await status.failed(ws, ObjectKind.CHANNEL, "C-general", "boom again", retry_after=600)
    assert (first.failures, second.failures, second.last_error) == (1, 2, "boom again")
    assert second.retry_at is not None and second.retry_at - second.updated_at >= timedelta(seconds=600)
    assert not await status.is_due(ws, ObjectKind.CHANNEL, "C-general")
    later = datetime.now(UTC) + timedelta(seconds=601)
    assert await status.is_due(ws, ObjectKind.CHANNEL, "C-general", now=later)
    await status.ok(ws, ObjectKind.CHANNEL, "C-general")
    state = await status.get(ws, ObjectKind.CHANNEL, "C-general")
    assert state is not None and (state.status, state.failures) == (ObjectStatus.OK, 0)


class Faulty(LocalWorkspace):
    """Fails reading chosen channels / threads with chosen errors."""

    def __init__(self, world: World, failures: dict[str, Exception]) -> None:
        super().__init__(world)
        self.failures = failures
        self.reads: list[str] = []

    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        self.reads.append(channel_id)
        if channel_id in self.failures:
            raise self.failures[channel_id]
        return await super().read_history(channel_id, cursor=cursor, limit=limit)

    async def read_replies(
        self, channel_id: str, thread_id: str, *, cursor: str | None = None, limit: int = 200
    ) -> HistoryPage:
        if thread_id in self.failures:
            raise self.failures[thread_id]
        return await super().read_replies(channel_id, thread_id, cursor=cursor, limit=limit)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (PlatformObjectGoneError("conversations.history", "channel_not_found"), ObjectStatus.RETIRED),
        (ChatPlatformError("conversations.history", "missing_scope"), ObjectStatus.BACKOFF),
        (ConnectionError("reset by peer"), ObjectStatus.BACKOFF),
    ],
)
async def test_one_failing_channel_leaves_the_run_and_the_others_working(
    db: Database, sample_world: World, error: Exception, status: ObjectStatus
) -> None:
    port = Faulty(sample_world, {"C-launch": error})
    report = await IngestWorker(port, db).run()
    launch = len(sample_world.messages["C-launch"])
    assert report.messages_added == sample_world.message_count() - launch
    state = await IngestStatusStore(db).get(report.workspace_id, ObjectKind.CHANNEL, "C-launch")
    assert state is not None and state.status == status and state.last_error
    # `askwith ingest` and the admin page show it.
    assert [p.object_id for p in report.problems] == ["C-launch"]
    shown = Console(record=True, width=200)
    shown.print(problems_table(report))
    text = shown.export_text()
    assert "C-launch" in text and status.value in text
    assert [(p.object_id, p.status) for p in await object_problems(db)] == [("C-launch", status.value)]
    port.reads.clear()
    await IngestWorker(port, db).run()
    assert "C-launch" not in port.reads and "C-general" in port.reads  # not due: retired, or backing off


async def test_a_vanished_thread_is_retired_and_the_rest_goes_on(db: Database, sample_world: World) -> None:
    parent = first_general(sample_world)
    when = datetime(2026, 11, 20, tzinfo=UTC)
    for i in range(3):
        sample_world.add_message("C-general", "bob", f"reply {i}", ts=when + timedelta(seconds=i), thread_id=parent.id)
    parent = first_general(sample_world)
    port = Faulty(sample_world, {parent.id: PlatformObjectGoneError("conversations.replies", "thread_not_found")})
    report = await IngestWorker(port, db).run()
    state = await IngestStatusStore(db).get(report.workspace_id, ObjectKind.THREAD, parent.id)
    assert state is not None and state.status == ObjectStatus.RETIRED
    replies = sum(1 for ms in sample_world.messages.values() for m in ms if m.thread_id == parent.id)
    assert report.messages_added == sample_world.message_count() - replies
    assert (await IngestWorker(port, db).run()).messages_added == 0  # the next run is not stopped either


async def test_a_revoked_member_token_is_disabled_and_its_member_told(db: Database, sample_world: World) -> None:
    told: list[tuple[str, str]] = []

    async def tell(member: str, reason: str) -> None:
        told.append((member, reason))

    revoked = PlatformTokenRevokedError("conversations.history", "token_revoked", token_owner="dave")
    port = Faulty(sample_world, {"D-dave-erin": revoked})
    worker = IngestWorker(port, db, on_token_disabled=tell)
    report = await worker.run()
    await IngestWorker(port, db, on_token_disabled=tell).run()
    assert [m for m, _ in told] == ["dave"]  # told once
    state = await IngestStatusStore(db).get(report.workspace_id, ObjectKind.MEMBER_TOKEN, "dave")
    assert state is not None and state.status == ObjectStatus.DISABLED
    assert report.messages_added == sample_world.message_count() - len(sample_world.messages["D-dave-erin"])


async def test_a_long_retry_after_stops_the_run_early_and_waits(db: Database, sample_world: World) -> None:
    limited = PlatformRateLimitedError("conversations.history", "ratelimited", retry_after=1800)
    port = Faulty(sample_world, {"C-general": limited})
    report = await IngestWorker(port, db).run()
    state = await IngestStatusStore(db).get(report.workspace_id, ObjectKind.CHANNEL, "C-general")
    assert state is not None and state.retry_at is not None
    assert state.retry_at - state.updated_at >= timedelta(seconds=1800)


async def test_the_new_tables_match_their_models(db: Database) -> None:
    names = ("message_tombstone", "ingest_object", "ingest_cursor")

    def diff(connection: object) -> list[object]:
        context = MigrationContext.configure(connection)  # type: ignore[arg-type]
        return [d for d in compare_metadata(context, models.Base.metadata) if any(n in str(d) for n in names)]

    async with db.engine.connect() as conn:
        assert await conn.run_sync(diff) == []


async def test_a_channel_no_longer_listed_keeps_no_reader_but_unlisted_dms_keep_theirs(
    db: Database, worker: IngestWorker, sample_world: World
) -> None:
    class Unlisting(LocalWorkspace):
        async def list_channels(self) -> list:  # type: ignore[override]
            return [c for c in await super().list_channels() if c.id not in ("C-launch", "D-alice-bob")]

    assert await clear_texts(db, worker, "alice", "launch") != []
    await IngestWorker(Unlisting(sample_world), db).mirror()
    assert await clear_texts(db, worker, "alice", "launch") == []  # the bot left it: unverifiable
    async with db.session() as session:
        readers = select(func.count()).select_from(models.Membership).join(models.Channel)
        dm = (await session.execute(readers.where(models.Channel.platform_id == "D-alice-bob"))).scalar_one()
    assert dm == 2  # a DM read through a member's token is not the bot's to unlist
