from __future__ import annotations

import pytest

from bot.memory.embeddings import HashEmbedder
from bot.memory.vector_index import HNSW, VectorDoc, VectorIndex
from bot.settings import Settings


DOCS = [
    VectorDoc("k-dentist", "bob has a dentist appointment on thursday morning", 1),
    VectorDoc("k-room", "room 4b is booked for the rehearsal on thursday afternoon", 2),
    VectorDoc("k-budget", "the launch party budget is four thousand euros", 3),
]


async def test_query_finds_the_nearest_summary_within_the_given_channels(vector_index: VectorIndex) -> None:
    await vector_index.upsert(1, DOCS)
    best = await vector_index.query(1, "dentist appointment thursday", channel_ids=[1, 2, 3], top_k=2)
    assert [m.key for m in best][:1] == ["k-dentist"]
    assert len(best) == 2 and best[0].score > best[1].score
    only_2_3 = await vector_index.query(1, "dentist appointment thursday", channel_ids=[2, 3], top_k=5)
    assert {m.key for m in only_2_3} == {"k-room", "k-budget"}
    single = await vector_index.query(1, "budget", channel_ids=[3], top_k=5)
    assert [m.key for m in single] == ["k-budget"]
    assert await vector_index.query(1, "budget", channel_ids=[], top_k=5) == []


async def test_an_exact_text_scores_one(vector_index: VectorIndex) -> None:
    await vector_index.upsert(1, DOCS)
    (match,) = await vector_index.query(1, DOCS[2].text, channel_ids=[3], top_k=1)
    assert match.score == pytest.approx(1.0, abs=1e-4)


async def test_upsert_replaces_and_delete_removes_by_session_key(vector_index: VectorIndex) -> None:
    await vector_index.upsert(1, DOCS)
    await vector_index.upsert(1, [VectorDoc("k-room", "the rehearsal moved to friday", 2)])
    assert await vector_index.count(1) == 3
    (match,) = await vector_index.query(1, "the rehearsal moved to friday", channel_ids=[2], top_k=1)
    assert match.key == "k-room" and match.score == pytest.approx(1.0, abs=1e-4)
    await vector_index.delete(1, ["k-room", "never-stored"])
    assert await vector_index.keys(1) == {"k-dentist", "k-budget"}


async def test_workspaces_have_separate_collections(vector_index: VectorIndex) -> None:
    await vector_index.upsert(1, DOCS)
    await vector_index.upsert(2, [VectorDoc("other", "the launch party budget", 3)])
    assert [m.key for m in await vector_index.query(2, "budget", channel_ids=[1, 2, 3], top_k=5)] == ["other"]
    await vector_index.drop_workspace(2)
    assert await vector_index.count(2) == 0
    assert await vector_index.count(1) == 3


async def test_the_obvious_top_hit_among_1000_near_identical_texts_is_found(vector_index: VectorIndex) -> None:
    # Near-identical texts that differ in two words: with Chroma's default HNSW parameters (ef 100, 16 neighbours)
    # about 130 of these 1,000 exact-text queries miss their own text.
    texts = [f"the deployment log entry says everything is fine e{i:04d} p{i % 10}" for i in range(1000)]
    docs = [VectorDoc(f"k{i}", text, i % 50) for i, text in enumerate(texts)]
    for start in range(0, len(docs), 128):
        await vector_index.upsert(7, docs[start : start + 128])
    vectors = HashEmbedder()(texts)
    misses = 0
    for i in range(0, 1000, 3):
        (top,) = await vector_index.query(7, texts[i], channel_ids=list(range(50)), top_k=1)
        misses += top.score < 1.0 - 1e-4 and not (vectors[int(top.key[1:])] == vectors[i]).all()
    assert misses == 0


async def test_a_reopened_embedded_index_keeps_vectors_and_its_embedding_function(settings: Settings) -> None:
    first = VectorIndex.from_settings(settings, embedder=HashEmbedder())
    await first.upsert(1, DOCS)
    reopened = VectorIndex.from_settings(settings, embedder=HashEmbedder())
    (match,) = await reopened.query(1, "dentist on thursday", channel_ids=[1, 2, 3], top_k=1)
    assert match.key == "k-dentist"


def test_hnsw_parameters_are_explicit() -> None:
    assert HNSW["space"] == "cosine"
    assert {"ef_construction", "ef_search", "max_neighbors"} <= set(HNSW)
