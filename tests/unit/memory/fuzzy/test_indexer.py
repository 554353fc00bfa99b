from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import pytest
from chromadb.api.types import Embeddings
from sqlalchemy import delete, func, select

from bot.memory.indexer import IndexStats, SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorDoc, VectorIndex
from bot.platform import port
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import ChatStore
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


def indexer(db: Database, settings: Settings, index: VectorIndex, **batches: int) -> SessionIndexer:
    return SessionIndexer(db, settings, SessionSummarizer(db, None), index, **batches)


async def add_message(db: Database, workspace_id: int, channel: str, sender: str, ts: str, text: str) -> None:
    store = ChatStore(db)
    async with db.session() as session, session.begin():
        channels = await store.channel_ids(session, workspace_id)
        members = await store.member_ids(session, workspace_id)
        message = port.ChatMessage(f"new-{ts}-{channel}", channel, sender, datetime.fromisoformat(ts), text)
        await store.add_messages(session, workspace_id, [message], channels, members)


async def session_keys(db: Database) -> set[str]:
    async with db.session() as session:
        return set((await session.execute(select(models.MemorySession.key))).scalars())


async def count(db: Database, table: type[models.Base]) -> int:
    async with db.session() as session:
        return (await session.execute(select(func.count()).select_from(table))).scalar_one()


async def test_first_run_indexes_every_session_and_a_rerun_adds_nothing(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await mirror_world(db, sample_world)
    reports: list[tuple[int, int]] = []
    first = await indexer(db, chroma_settings, vector_index).update(
        workspace_id, progress=lambda *p: reports.append(p)
    )
    # The sample's 7 channels each hold one burst of messages: 7 sessions, each summarized and embedded once.
    assert first == IndexStats(sessions_new=7, sessions_removed=0, summaries_new=7, embeddings_new=7)
    assert reports[0] == (0, 14) and reports[-1] == (14, 14)
    assert await count(db, models.SessionMessage) == sample_world.message_count()
    assert await vector_index.keys(workspace_id) == await session_keys(db)
    again = await indexer(db, chroma_settings, vector_index).update(workspace_id)
    assert again == IndexStats()


async def test_a_session_extended_by_new_messages_replaces_the_old_one(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await mirror_world(db, sample_world)
    await indexer(db, chroma_settings, vector_index).update(workspace_id)
    before = await session_keys(db)
    await add_message(db, workspace_id, "D-alice-bob", "alice", "2026-11-16T11:10:00+00:00", "See you at 14:00 then.")
    stats = await indexer(db, chroma_settings, vector_index).update(workspace_id)
    assert stats == IndexStats(sessions_new=1, sessions_removed=1, summaries_new=1, embeddings_new=1)
    after = await session_keys(db)
    assert len(before - after) == 1 and len(after - before) == 1
    assert await vector_index.keys(workspace_id) == after


async def test_a_message_after_a_long_silence_starts_a_session_of_its_own(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await mirror_world(db, sample_world)
    await indexer(db, chroma_settings, vector_index).update(workspace_id)
    await add_message(db, workspace_id, "D-alice-bob", "bob", "2026-11-17T09:00:00+00:00", "Dentist moved to Friday.")
    stats = await indexer(db, chroma_settings, vector_index).update(workspace_id)
    assert stats == IndexStats(sessions_new=1, sessions_removed=0, summaries_new=1, embeddings_new=1)


async def test_identical_content_in_two_channels_is_summarized_once(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await mirror_world(db, sample_world)
    await add_message(db, workspace_id, "D-bob-carol", "bob", "2026-11-18T09:00:00+00:00", "Standup moved to 10:30.")
    await add_message(db, workspace_id, "D-alice-bob", "bob", "2026-11-18T09:00:00+00:00", "Standup moved to 10:30.")
    stats = await indexer(db, chroma_settings, vector_index).update(workspace_id)
    assert stats.sessions_new == 9 and stats.embeddings_new == 9
    assert stats.summaries_new == 8
    assert await count(db, models.SessionSummary) == 8


async def test_deleted_messages_take_their_sessions_and_vectors_with_them(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await mirror_world(db, sample_world)
    await indexer(db, chroma_settings, vector_index).update(workspace_id)
    async with db.session() as session, session.begin():
        channel = (
            await session.execute(select(models.Channel.id).where(models.Channel.platform_id == "D-dave-erin"))
        ).scalar_one()
        await session.execute(delete(models.Message).where(models.Message.channel_id == channel))
    stats = await indexer(db, chroma_settings, vector_index).update(workspace_id)
    assert stats == IndexStats(sessions_removed=1)
    assert await vector_index.keys(workspace_id) == await session_keys(db)
    assert len(await session_keys(db)) == 6


class Interrupted(Exception):
    """Stands in for the process being killed."""


class FailingIndex(VectorIndex):
    """A vector index whose upserts die after `allowed` successful batches."""

    def __init__(self, inner: VectorIndex, allowed: int) -> None:
        super().__init__(inner._connect, inner.embedder, prefix=inner.prefix)
        self.allowed = allowed

    async def upsert(self, workspace_id: int, docs: Sequence[VectorDoc], *, vectors: Embeddings | None = None) -> None:
        if self.allowed == 0:
            raise Interrupted()
        self.allowed -= 1
        await super().upsert(workspace_id, docs, vectors=vectors)


class FailingSummarizer(SessionSummarizer):
    def __init__(self, db: Database, allowed: int) -> None:
        super().__init__(db, None)
        self.allowed = allowed

    async def ensure(self, pending):  # noqa: ANN001, ANN201 - same signature as the parent
        if self.allowed == 0:
            raise Interrupted()
        self.allowed -= 1
        return await super().ensure(pending)


async def test_an_interrupted_run_resumes_without_losing_or_duplicating(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await mirror_world(db, sample_world)
    dying_summarizer = SessionIndexer(
        db, chroma_settings, FailingSummarizer(db, allowed=1), vector_index, summary_batch=3, embed_batch=2
    )
    with pytest.raises(Interrupted):
        await dying_summarizer.update(workspace_id)
    dying_embedder = indexer(db, chroma_settings, FailingIndex(vector_index, allowed=1), embed_batch=2)
    with pytest.raises(Interrupted):
        await dying_embedder.update(workspace_id)
    assert 0 < await vector_index.count(workspace_id) < 7
    resumed = await indexer(db, chroma_settings, vector_index, embed_batch=2).update(workspace_id)
    assert resumed.sessions_new == 0 and resumed.summaries_new == 0 and resumed.embeddings_new == 5
    assert await count(db, models.MemorySession) == 7
    assert await count(db, models.SessionSummary) == 7
    assert await count(db, models.SessionMessage) == sample_world.message_count()
    assert await vector_index.keys(workspace_id) == await session_keys(db)
    assert await indexer(db, chroma_settings, vector_index).update(workspace_id) == IndexStats()
