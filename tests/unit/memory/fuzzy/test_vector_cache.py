"""Vectors kept in memory: exact search within the given channels, read again when a channel's memory version moves,
Chroma's index when the channels hold more than the cache may; and the database moves the versions."""

from __future__ import annotations

from random import Random

import pytest
from sqlalchemy import select

from bot.memory.embeddings import HashEmbedder
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_cache import ChannelVectors, VectorCache
from bot.memory.vector_index import VectorDoc, VectorIndex
from bot.memory.visibility import resolve_viewer, visible_channel_versions
from bot.settings import Settings
from bot.store import memory_sessions, models, truth
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


WORDS = "rehearsal budget launch dentist thursday friday room party ticket venue poster guest list menu".split()


def _docs(count: int, channels: int, seed: int = 0) -> list[VectorDoc]:
    rng = Random(seed)
    return [
        VectorDoc(f"k{i}", " ".join(rng.sample(WORDS, 4)), 1 + i % channels, session_key=f"s{i}", message_ids=str(i))
        for i in range(count)
    ]


async def test_in_memory_search_matches_the_filtered_index_and_stays_in_its_channels(
    chroma_settings: Settings,
) -> None:
    cached = VectorIndex.from_settings(chroma_settings, embedder=HashEmbedder())
    assert cached.cache is not None
    plain = VectorIndex.from_settings(chroma_settings.replace(vector_cache=0), embedder=HashEmbedder())
    docs = _docs(120, channels=6)
    await cached.upsert(1, docs)
    channel_of = {d.key: d.channel_id for d in docs}
    for question in ("launch party budget", "dentist on thursday", "guest list for the venue"):
        versions = {2: 0, 5: 0}
        exact = await cached.query(1, question, channel_ids=versions, top_k=8)
        filtered = await plain.query(1, question, channel_ids=[2, 5], top_k=8)
        assert {channel_of[m.key] for m in exact} <= {2, 5}
        assert [round(m.score, 4) for m in exact] == [round(m.score, 4) for m in filtered]
        # Texts repeat (ties): every key scoring clearly above the last one kept is among the index's keys.
        assert {m.key for m in exact if m.score > filtered[-1].score + 1e-4} <= {m.key for m in filtered}
        assert all(m.message_ids == (int(m.key[1:]),) for m in exact)


async def test_a_channel_is_read_again_when_its_version_moves(chroma_settings: Settings) -> None:
    index = VectorIndex.from_settings(chroma_settings, embedder=HashEmbedder())
    await index.upsert(1, _docs(10, channels=2))
    await index.query(1, "budget", channel_ids={1: 0, 2: 0}, top_k=3)  # both channels read and kept
    await index.upsert(
        1, [VectorDoc("new", "the caterer sends the invoice", 1, session_key="s-new", message_ids="99")]
    )
    same_version = await index.query(1, "the caterer sends the invoice", channel_ids={1: 0, 2: 0}, top_k=1)
    assert same_version[0].key != "new"  # nothing said channel 1 changed: what was read is what is searched
    moved = await index.query(1, "the caterer sends the invoice", channel_ids={1: 1, 2: 0}, top_k=1)
    assert moved[0].key == "new" and moved[0].message_ids == (99,)


async def test_channels_holding_more_than_the_cache_may_go_to_the_index(chroma_settings: Settings) -> None:
    index = VectorIndex.from_settings(chroma_settings.replace(vector_cache=25), embedder=HashEmbedder())
    assert index.cache is not None
    await index.upsert(1, _docs(60, channels=3))  # 20 per channel
    for _ in range(2):  # the second time the sizes are known and the cache is not even tried
        big = await index.query(1, "launch party", channel_ids={1: 0, 2: 0}, top_k=5)
        assert len(big) == 5 and {int(m.key[1:]) % 3 for m in big} <= {0, 1}
    small = await index.query(1, "launch party", channel_ids={3: 0}, top_k=30)
    assert len(small) == 20 and all(int(m.key[1:]) % 3 == 2 for m in small)
    assert index.cache._count <= 25


def test_least_recently_used_channels_go_first() -> None:
    cache = VectorCache(capacity=4)
    reads: list[list[int]] = []

    def read(ids: list[int]) -> dict[int, ChannelVectors]:
        reads.append(ids)
        return {c: ChannelVectors.of([f"{c}a", f"{c}b"], [(), ()], [[1.0, 0.0], [0.0, 1.0]]) for c in ids}

    scope = ("t", 1)
    assert cache.nearest(scope, [1.0, 0.0], {1: 0, 2: 0}, 1, read=read) == [("1a", pytest.approx(1.0), ())]
    cache.nearest(scope, [1.0, 0.0], {3: 0}, 1, read=read)  # 6 vectors: channel 1, the least recent, goes
    cache.nearest(scope, [1.0, 0.0], {2: 0}, 1, read=read)
    cache.nearest(scope, [1.0, 0.0], {1: 0}, 1, read=read)
    assert reads == [[1, 2], [3], [1]]
    assert cache.nearest(scope, [0.0, 1.0], {}, 3, read=read) == []


async def test_the_database_moves_a_channels_memory_version_when_its_vectors_change(
    sqlite_db: Database, sample_world: World, settings: Settings
) -> None:
    workspace_id = await mirror_world(sqlite_db, sample_world)
    index = VectorIndex.from_settings(settings, embedder=HashEmbedder())
    async with sqlite_db.session() as session:
        alice = await resolve_viewer(session, workspace_id, "alice")
        before = await visible_channel_versions(session, alice)
    assert before and set(before.values()) == {0}
    await SessionIndexer(sqlite_db, settings, SessionSummarizer(sqlite_db, None), index).update(workspace_id)
    async with sqlite_db.session() as session:
        embedded = await visible_channel_versions(session, alice)
        sessions = (await session.execute(select(models.MemorySession.id, models.MemorySession.channel_id))).all()
    with_sessions = {channel for _, channel in sessions}
    assert all(embedded[c] > 0 for c in with_sessions & set(embedded))
    channel = next(iter(with_sessions & set(embedded)))
    async with sqlite_db.session() as session, session.begin():
        await truth.delete_sessions(session, [id_ for id_, c in sessions if c == channel])
    async with sqlite_db.session() as session:
        dropped = await visible_channel_versions(session, alice)
    assert dropped[channel] == embedded[channel] + 1
    assert {c: v for c, v in dropped.items() if c != channel} == {c: v for c, v in embedded.items() if c != channel}
    async with sqlite_db.session() as session, session.begin():
        await memory_sessions.mark_summarized(session, [id_ for id_, c in sessions if c != channel][:1])
    async with sqlite_db.session() as session:
        assert await visible_channel_versions(session, alice) == dropped  # only embedding moves it
