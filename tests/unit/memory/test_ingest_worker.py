from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy import text as sql

from adapters.local import LocalWorkspace
from adapters.local.workspace import HIDDEN_CHANNEL_ID
from bot.memory.indexer import IndexStats, Progress
from bot.platform.port import Channel, ChannelKind, HistoryPage, Member
from bot.store import models
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from memory_ingest import worker as ingest_worker
from memory_ingest.report import Stage
from memory_ingest.worker import IngestWorker


async def stored_ids(db: Database) -> list[str]:
    async with db.session() as session:
        return sorted((await session.execute(select(models.Message.platform_id))).scalars())


async def stored_channels(db: Database) -> set[str]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.Channel.platform_id).join(models.Message, models.Message.channel_id == models.Channel.id)
        )
        return set(rows.scalars())


def all_ids(world: World) -> list[str]:
    return sorted(m.id for msgs in world.messages.values() for m in msgs)


async def test_small_pages_ingest_everything_and_a_rerun_adds_nothing(db: Database, sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    worker = IngestWorker(port, db, page_size=2)
    first = await worker.run()
    assert first.messages_added == first.messages_total == sample_world.message_count() == 15
    assert (first.members, first.members_opted_in, first.channels, first.channels_ingested) == (5, 5, 7, 7)
    assert await stored_ids(db) == all_ids(sample_world)
    again = await IngestWorker(port, db, page_size=2).run()
    assert again.messages_added == 0 and again.messages_total == 15
    assert again.workspace_id == first.workspace_id


async def test_each_channel_keeps_its_cursor_and_only_new_messages_are_read(db: Database, sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    worker = IngestWorker(port, db, page_size=2)
    await worker.run()
    reads: list[tuple[str, str | None]] = []
    original = port.read_history

    async def spy(channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        reads.append((channel_id, cursor))
        return await original(channel_id, cursor=cursor, limit=limit)

    port.read_history = spy  # type: ignore[method-assign]
    new = await port.post_as("bob", "C-general", "Thursday rehearsal moved to 16:00")
    report = await worker.run()
    assert report.messages_added == 1
    assert ("C-general", "m0000003") in reads  # resumed after the last stored message, not from the start
    assert all(cursor is not None for _, cursor in reads)
    assert new.id in await stored_ids(db)


async def test_thread_replies_are_pulled_with_a_cursor_per_thread(db: Database, sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    parent = sample_world.messages["C-general"][0]
    for text in ("count me in", "me too", "and me"):
        await port.post_as("carol", "C-general", text, thread_id=parent.id)
    worker = IngestWorker(port, db, page_size=1)
    first = await worker.run()
    assert first.messages_added == 18
    late = await port.post_as("dave", "C-general", "late reply to an old thread", thread_id=parent.id)
    second = await worker.run()
    assert second.messages_added == 1  # found although the parent is long past the channel cursor
    async with db.session() as session:
        stored = (
            await session.execute(select(models.Message).where(models.Message.platform_id == late.id))
        ).scalar_one()
        cursors = (
            await session.execute(select(models.IngestCursor.thread_platform_id, models.IngestCursor.cursor))
        ).all()
    assert stored.thread_parent_platform_id == parent.id
    assert (parent.id, late.id) in cursors


def opted_out_world() -> World:
    world = World(id="w", name="W")
    for handle, opted_in in (("ann", True), ("ben", False), ("cat", False), ("dan", True)):
        world.add_member(Member(handle, handle, handle.title()), MemberPolicy(opted_in=opted_in))
    world.policies["dan"].excluded_channels.append("C-dan-secret")
    world.add_channel(Channel("C-all", "all", ChannelKind.PUBLIC, ("ann", "ben", "cat", "dan")))
    world.add_channel(Channel("C-out", "out", ChannelKind.PRIVATE, ("ben", "cat")))
    world.add_channel(Channel("C-dan-secret", "dan-secret", ChannelKind.PRIVATE, ("dan", "ben")))
    world.dm("ben", "cat")
    world.dm("ann", "ben")
    for channel in ("C-all", "C-out", "C-dan-secret", "D-ben-cat", "D-ann-ben"):
        world.add_message(channel, "ben", f"ben writes in {channel}")
    return world


async def test_only_channels_an_opted_in_member_reads_are_ingested(db: Database) -> None:
    world = opted_out_world()
    report = await IngestWorker(LocalWorkspace(world), db).run()
    # Opted-out ben's words reach memory only where an opted-in member (who has not excluded it) reads them.
    assert await stored_channels(db) == {"C-all", "D-ann-ben"}
    assert (report.members, report.members_opted_in, report.channels_ingested) == (4, 2, 2)
    async with db.session() as session:
        dan = (await session.execute(select(models.Member).where(models.Member.platform_id == "dan"))).scalar_one()
        excluded = (
            await session.execute(select(models.MemberExclusion).where(models.MemberExclusion.member_id == dan.id))
        ).all()
    assert len(excluded) == 1 and not dan.is_bot and dan.opted_in


async def test_the_bots_posts_and_the_hidden_agents_channel_are_never_ingested(
    sqlite_db: Database, sample_world: World
) -> None:
    port = LocalWorkspace(sample_world)
    thread = await port.create_hidden_thread("ask 1")
    await port.post(thread.channel_id, "alice's agent: what do you know about Thursday?", thread_id=thread.thread_id)
    dm = await port.open_dm("alice")
    await port.post(dm, "Your answer: Thursday 13:00")
    await port.post_as("alice", dm, "thanks!")
    report = await IngestWorker(port, sqlite_db).run()
    assert HIDDEN_CHANNEL_ID not in await stored_channels(sqlite_db)
    assert report.messages_added == 16  # the sample's 15 + alice's "thanks!"
    assert report.messages_skipped == 1  # the bot's post in alice's DM
    async with sqlite_db.session() as session:
        hidden_reads = (
            await session.execute(
                select(func.count())
                .select_from(models.IngestCursor)
                .join(models.Channel, models.Channel.id == models.IngestCursor.channel_id)
                .where(models.Channel.platform_id == HIDDEN_CHANNEL_ID)
            )
        ).scalar_one()
    assert hidden_reads == 0


async def test_live_messages_are_stored_once_and_the_next_run_adds_nothing(db: Database, sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    worker = IngestWorker(port, db)
    await worker.run()
    live = await port.post_as("erin", "C-general", "Cake in the kitchen")
    assert await worker.ingest_message(live) is True
    assert await worker.ingest_message(live) is False
    bot_post = sample_world.add_message("C-general", sample_world.bot_id, "I am a bot")
    assert await worker.ingest_message(bot_post) is False
    hidden = await port.create_hidden_thread("ask 2")
    assert await worker.ingest_message(sample_world.messages[hidden.channel_id][-1]) is False
    sample_world.add_channel(Channel("C-new", "new", ChannelKind.PUBLIC, ("alice", "bob")))
    fresh = await port.post_as("bob", "C-new", "first message in a brand-new channel")
    assert await worker.ingest_message(fresh) is True  # the new channel is mirrored on the fly
    report = await worker.run()
    assert report.messages_added == 0 and report.messages_total == 17


async def test_a_sender_the_platform_no_longer_lists_is_skipped(sqlite_db: Database, sample_world: World) -> None:
    class Forgetful(LocalWorkspace):
        async def list_members(self) -> list[Member]:
            return [m for m in self.world.members.values() if m.id != "erin"]

        async def lookup_member(self, member_id: str) -> Member | None:
            return None if member_id == "erin" else self.world.members.get(member_id)

    report = await IngestWorker(Forgetful(sample_world), sqlite_db).run()
    assert report.messages_skipped == 1  # erin's DM to dave
    assert report.messages_added == 14


async def test_a_sender_missing_from_the_listing_is_looked_up_once_by_id(
    sqlite_db: Database, sample_world: World
) -> None:
    """A guest from another organisation (Slack Connect) is not in the member listing but posts: they are looked up
    alone, once, and their messages kept; the listing is never read again for them, page after page."""

    class Connect(LocalWorkspace):
        listings = 0
        lookups: list[str] = []

        async def list_members(self) -> list[Member]:
            self.listings += 1
            return [m for m in self.world.members.values() if m.id != "erin"]

        async def lookup_member(self, member_id: str) -> Member | None:
            self.lookups.append(member_id)
            return self.world.members.get(member_id)

    for i in range(5):
        sample_world.add_message("D-dave-erin", "erin", f"guest note {i}")
    port = Connect(sample_world)
    report = await IngestWorker(port, sqlite_db, page_size=1).run()
    assert report.messages_skipped == 0
    assert report.messages_added == 20
    assert port.listings == 1 and port.lookups == ["erin"]


class ProcessKilled(BaseException):
    """A process dying mid-run (not an error of one channel, which a run isolates and carries on past)."""


class CrashAfter(LocalWorkspace):
    """Dies on the n-th history read, as a process killed mid-run would stop reading."""

    def __init__(self, world: World, reads_before_crash: int) -> None:
        super().__init__(world)
        self.reads_left = reads_before_crash

    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        self.reads_left -= 1
        if self.reads_left < 0:
            raise ProcessKilled()
        return await super().read_history(channel_id, cursor=cursor, limit=limit)


@pytest.mark.parametrize("reads_before_crash", [0, 1, 3, 6, 9])
async def test_an_interrupted_run_resumes_without_losing_or_duplicating(
    sqlite_db: Database, sample_world: World, reads_before_crash: int
) -> None:
    with pytest.raises(ProcessKilled):
        await IngestWorker(CrashAfter(sample_world, reads_before_crash), sqlite_db, page_size=1).run()
    report = await IngestWorker(LocalWorkspace(sample_world), sqlite_db, page_size=1).run()
    assert report.messages_total == 15
    assert await stored_ids(sqlite_db) == all_ids(sample_world)


class RecordingIndexer:
    """Stands in for the session indexer: records what the worker asks of it."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    async def update(self, workspace_id: int, *, progress: Progress | None = None) -> IndexStats:
        self.calls.append(workspace_id)
        if progress is not None:
            progress(1, 1)
        return IndexStats(sessions_new=3, summaries_new=2, embeddings_new=2)


async def test_the_indexer_runs_after_the_messages_and_progress_is_reported(
    sqlite_db: Database, sample_world: World
) -> None:
    indexer = RecordingIndexer()
    ticks: list[tuple[Stage, int, int]] = []
    worker = IngestWorker(LocalWorkspace(sample_world), sqlite_db, indexer=indexer)  # type: ignore[arg-type]
    report = await worker.run(progress=lambda stage, done, total: ticks.append((stage, done, total)))
    assert indexer.calls == [report.workspace_id]
    assert (report.sessions_added, report.summaries_added, report.embeddings_added) == (3, 2, 2)
    assert ticks[0] == (Stage.HISTORY, 0, 7) and (Stage.HISTORY, 7, 7) in ticks
    assert ticks[-1] == (Stage.INDEX, 1, 1)


async def test_members_keep_their_stored_policy_on_later_runs(sqlite_db: Database, sample_world: World) -> None:
    port = LocalWorkspace(sample_world)
    await IngestWorker(port, sqlite_db).run()
    async with sqlite_db.session() as session, session.begin():
        bob = (await session.execute(select(models.Member).where(models.Member.platform_id == "bob"))).scalar_one()
        bob.opted_in = False  # bob opts out through the bot
    sample_world.add_member(Member("zoe", "zoe", "Zoe"), MemberPolicy(opted_in=True))
    report = await IngestWorker(port, sqlite_db).run()
    assert (report.members, report.members_opted_in) == (6, 5)


def test_page_size_must_be_positive(sample_world: World) -> None:
    with pytest.raises(ValueError, match="page_size"):
        IngestWorker(LocalWorkspace(sample_world), None, page_size=0)  # type: ignore[arg-type]


async def _planner_rows(db: Database, table: str) -> float | None:
    """PostgreSQL's planner estimate of a table's rows (-1: never analyzed); None on SQLite."""
    if db.dialect != "postgresql":
        return None
    async with db.session() as session:
        return (await session.execute(sql("SELECT reltuples FROM pg_class WHERE relname = :t"), {"t": table})).scalar()


@pytest.mark.parametrize(("threshold", "analyzed"), [(15, True), (16, False)])
async def test_an_ingest_of_many_messages_refreshes_the_planners_statistics(
    db: Database, sample_world: World, monkeypatch: pytest.MonkeyPatch, threshold: int, analyzed: bool
) -> None:
    monkeypatch.setattr(ingest_worker, "ANALYZE_AFTER_MESSAGES", threshold)
    report = await IngestWorker(LocalWorkspace(sample_world), db).run()
    assert report.messages_added == 15
    rows = await _planner_rows(db, "message")
    if db.dialect == "postgresql":  # SQLite has no such statistics to refresh
        assert rows == (15.0 if analyzed else -1.0)
