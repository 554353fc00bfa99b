"""A channel's vectors are read by the keys the database records for it: the keys match what the indexer wrote,
reading by key finds what reading by channel finds, a window's message ids are read when it matches, and sessions
embedded before window counts were kept are read by channel."""

from __future__ import annotations

from sqlalchemy import select, update

from bot.memory.embeddings import HashEmbedder
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorDoc, VectorIndex
from bot.memory.vector_keys import vector_keys
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


async def _indexed(db: Database, world: World, settings: Settings) -> tuple[int, VectorIndex]:
    workspace_id = await mirror_world(db, world)
    index = VectorIndex.from_settings(settings, embedder=HashEmbedder())
    await SessionIndexer(db, settings, SessionSummarizer(db, None), index).update(workspace_id)
    return workspace_id, index


async def _channels(db: Database) -> list[int]:
    async with db.session() as session:
        return sorted(set((await session.scalars(select(models.MemorySession.channel_id))).all()))


async def test_the_recorded_keys_are_the_keys_the_indexer_wrote(
    sqlite_db: Database, sample_world: World, settings: Settings
) -> None:
    workspace_id, index = await _indexed(sqlite_db, sample_world, settings)
    channels = await _channels(sqlite_db)
    windows = await vector_keys(sqlite_db, channels, windows=True)
    summaries = await vector_keys(sqlite_db, channels, windows=False)
    assert all(keys for keys in windows.values()) and all(keys for keys in summaries.values())
    assert {k for keys in windows.values() for k in keys or ()} == await index.windows().keys(workspace_id)
    assert {k for keys in summaries.values() for k in keys or ()} == await index.keys(workspace_id)
    assert await vector_keys(sqlite_db, [max(channels) + 1], windows=True) == {max(channels) + 1: []}


async def test_reading_by_key_finds_what_reading_by_channel_finds(
    sqlite_db: Database, sample_world: World, settings: Settings
) -> None:
    workspace_id, index = await _indexed(sqlite_db, sample_world, settings)
    by_filter = VectorIndex.from_settings(settings, embedder=HashEmbedder()).windows()
    versions = dict.fromkeys(await _channels(sqlite_db), 1)

    async def keys(ids: list[int]) -> dict[int, list[str] | None]:
        asked.append(ids)
        return await vector_keys(sqlite_db, ids, windows=True)

    for question in ("when is the launch", "budget for the party", "who moves to Paris"):
        asked: list[list[int]] = []
        got = await index.windows().query(workspace_id, question, channel_ids=versions, top_k=6, keys=keys)
        want = await by_filter.query(workspace_id, question, channel_ids=versions, top_k=6)
        assert [(m.key, round(m.score, 5), m.message_ids) for m in got] == [
            (m.key, round(m.score, 5), m.message_ids) for m in want
        ]
        assert asked == ([sorted(versions)] if question == "when is the launch" else [])  # read once, then kept


async def test_read_by_key_a_windows_message_ids_are_read_when_it_matches(chroma_settings: Settings) -> None:
    index = VectorIndex.from_settings(chroma_settings, embedder=HashEmbedder()).windows()
    docs = [
        VectorDoc(f"s{i}:0", f"launch party number {i}", 1 + i % 2, session_key=f"s{i}", message_ids=f"{i},{i + 100}")
        for i in range(8)
    ]
    await index.upsert(1, docs)

    async def keys(ids: list[int]) -> dict[int, list[str] | None]:
        return {c: [d.key for d in docs if d.channel_id == c] for c in ids}

    found = await index.query(1, "launch party number 3", channel_ids={2: 0}, top_k=2, keys=keys)
    assert found[0].key == "s3:0" and found[0].message_ids == (3, 103)
    assert all(int(m.key[1]) % 2 == 1 for m in found)  # channel 2's windows only
    assert set(index._message_ids) == {m.key for m in found}  # only the matches' ids were read
    # Gone from the index after their vectors were read (the channel's version not moved yet): left out.
    await index.delete(1, ["s5:0", "s7:0"])
    index._message_ids.clear()
    again = await index.query(1, "launch party number 5", channel_ids={2: 0}, top_k=4, keys=keys)
    assert sorted(m.key for m in again) == ["s1:0", "s3:0"]


async def test_sessions_embedded_before_window_counts_were_kept_are_read_by_channel(
    sqlite_db: Database, sample_world: World, settings: Settings
) -> None:
    workspace_id, index = await _indexed(sqlite_db, sample_world, settings)
    channels = await _channels(sqlite_db)
    async with sqlite_db.session() as session, session.begin():
        older = select(models.MemorySession.id).where(models.MemorySession.channel_id == channels[0]).limit(1)
        await session.execute(
            update(models.MemorySession).where(models.MemorySession.id.in_(older)).values(window_count=None)
        )
    keys = await vector_keys(sqlite_db, channels, windows=True)
    assert keys[channels[0]] is None and all(keys[c] for c in channels[1:])
    fresh = VectorIndex.from_settings(settings, embedder=HashEmbedder()).windows()
    everything = await fresh.query(
        workspace_id,
        "the",
        channel_ids=dict.fromkeys(channels, 1),
        top_k=10_000,
        keys=lambda ids: vector_keys(sqlite_db, ids, windows=True),
    )
    assert {m.key for m in everything} == await index.windows().keys(workspace_id)
