"""Message windows (hybrid retrieval's dense side) are indexed with their sessions and follow them: new, edited and
deleted messages replace a session's windows, and a rerun adds nothing."""

from __future__ import annotations

from sqlalchemy import delete, select

from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


def indexer(db: Database, settings: Settings, index: VectorIndex) -> SessionIndexer:
    return SessionIndexer(db, settings.replace(window_messages=2), SessionSummarizer(db, None), index)


async def windows_by_session(index: VectorIndex, workspace_id: int) -> dict[str, list[tuple[int, ...]]]:
    stored = index.windows()._collection(workspace_id).get(include=["metadatas"])
    found: dict[str, list[tuple[int, ...]]] = {}
    for meta in stored["metadatas"] or []:
        ids = tuple(int(i) for i in str(meta["message_ids"]).split(","))
        found.setdefault(str(meta["session_key"]), []).append(ids)
    return found


async def session_messages(db: Database) -> dict[str, list[int]]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.MemorySession.key, models.SessionMessage.message_id)
            .join(models.SessionMessage, models.SessionMessage.session_id == models.MemorySession.id)
            .order_by(models.SessionMessage.message_id)
        )
        found: dict[str, list[int]] = {}
        for key, message_id in rows.all():
            found.setdefault(key, []).append(message_id)
        return found


async def test_windows_cover_each_session_and_follow_deletions(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await mirror_world(db, sample_world)
    await indexer(db, chroma_settings, vector_index).update(workspace_id)
    sessions = await session_messages(db)
    windows = await windows_by_session(vector_index, workspace_id)
    assert windows.keys() == sessions.keys()
    for key, ids in sessions.items():  # consecutive pairs, the last one maybe single
        assert sorted(windows[key]) == [tuple(ids[i : i + 2]) for i in range(0, len(ids), 2)]

    async with db.session() as session, session.begin():
        gone = await session.execute(select(models.Message.id).where(models.Message.platform_id == "m0000005"))
        gone_id = gone.scalar_one()
        await session.execute(delete(models.Message).where(models.Message.id == gone_id))
    await indexer(db, chroma_settings, vector_index).update(workspace_id)
    windows = await windows_by_session(vector_index, workspace_id)
    assert windows.keys() == (await session_messages(db)).keys()
    assert not any(gone_id in ids for found in windows.values() for ids in found)
    before = await vector_index.windows().keys(workspace_id)
    await indexer(db, chroma_settings, vector_index).update(workspace_id)
    assert await vector_index.windows().keys(workspace_id) == before


async def test_dropping_a_sessions_vectors_drops_its_windows(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await mirror_world(db, sample_world)
    built = indexer(db, chroma_settings, vector_index)
    await built.update(workspace_id)
    key = sorted(await session_messages(db))[0]
    await built.drop_vectors(workspace_id, [key])
    assert key not in await windows_by_session(vector_index, workspace_id)
    assert key not in await vector_index.keys(workspace_id)
