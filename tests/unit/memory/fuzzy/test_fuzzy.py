from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from bot.memory import fuzzy as fuzzy_module
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.query import interleaved
from bot.memory.summarizer import SessionSummarizer
from bot.memory.types import FuzzyHit, FuzzyQuery, Viewer
from bot.memory.vector_index import VectorDoc, VectorIndex, VectorMatch
from bot.memory.visibility import resolve_viewer
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import ChatStore
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


async def indexed(db: Database, settings: Settings, index: VectorIndex, world: World) -> int:
    workspace_id = await mirror_world(db, world)
    await SessionIndexer(db, settings, SessionSummarizer(db, None), index).update(workspace_id)
    return workspace_id


async def viewer(db: Database, workspace_id: int, who: str) -> Viewer:
    async with db.session() as session:
        return await resolve_viewer(session, workspace_id, who)


async def test_the_nearest_visible_session_comes_first_with_its_summary(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await indexed(db, chroma_settings, vector_index, sample_world)
    hits = await FuzzyMemory(db, vector_index).search(
        await viewer(db, workspace_id, "bob"), FuzzyQuery("dentist thursday", top_k=2)
    )
    assert [h.channel_id for h in hits][:1] == ["D-alice-bob"]
    top = hits[0]
    assert top.summary_method == "extractive" and "dentist" in top.summary
    assert top.first_ts == datetime(2026, 11, 16, 11, 0, tzinfo=UTC)
    assert top.last_ts == datetime(2026, 11, 16, 11, 5, tzinfo=UTC)
    assert top.messages == ()  # not expanded
    assert len(hits) == 2 and hits[0].score >= hits[1].score


async def test_a_hit_expands_to_its_sessions_messages_in_order(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await indexed(db, chroma_settings, vector_index, sample_world)
    (hit,) = await FuzzyMemory(db, vector_index).search(
        await viewer(db, workspace_id, "alice"), FuzzyQuery("offsite demo rehearsal staging", top_k=1, expand=True)
    )
    assert hit.channel_name == "general"
    assert [(m.sender, m.text[:20]) for m in hit.messages] == [
        ("alice", "Morning all! Reminde"),
        ("bob", "I can help with the "),
        ("carol", "Heads up: the stagin"),
    ]
    assert all(m.channel_id == "C-general" for m in hit.messages)


async def test_sessions_of_channels_the_viewer_is_not_in_never_come_back(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await indexed(db, chroma_settings, vector_index, sample_world)
    memory = FuzzyMemory(db, vector_index)
    budget = FuzzyQuery("budget launch party euros quiet", top_k=10, expand=True)
    as_bob = await memory.search(await viewer(db, workspace_id, "bob"), budget)
    assert "D-dave-erin" not in {h.channel_id for h in as_bob}
    assert {h.channel_id for h in as_bob} <= {"C-general", "C-launch", "D-alice-bob", "D-bob-carol"}
    as_erin = await memory.search(await viewer(db, workspace_id, "erin"), budget)
    assert as_erin[0].channel_id == "D-dave-erin" and "4,000 euros" in as_erin[0].summary


async def test_excluded_channels_are_never_searched(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await indexed(db, chroma_settings, vector_index, sample_world)
    alice = await viewer(db, workspace_id, "alice")
    memory = FuzzyMemory(db, vector_index)
    query = FuzzyQuery("dentist thursday", top_k=10)
    assert "D-alice-bob" in {h.channel_id for h in await memory.search(alice, query)}
    async with db.session() as session, session.begin():
        channel = (
            await session.execute(select(models.Channel.id).where(models.Channel.platform_id == "D-alice-bob"))
        ).scalar_one()
        await ChatStore(db).set_exclusions(session, alice.member_id, [channel])
    hits = await memory.search(alice, query)
    assert hits and "D-alice-bob" not in {h.channel_id for h in hits}


async def test_vectors_without_a_live_session_are_ignored(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await indexed(db, chroma_settings, vector_index, sample_world)
    async with db.session() as session:
        channel = (
            await session.execute(select(models.Channel.id).where(models.Channel.platform_id == "D-alice-bob"))
        ).scalar_one()
    # A vector an interrupted re-index left behind, in a channel bob can see, matching the query exactly.
    await vector_index.upsert(workspace_id, [VectorDoc("stale-key", "dentist thursday", channel)])
    hits = await FuzzyMemory(db, vector_index).search(
        await viewer(db, workspace_id, "bob"), FuzzyQuery("dentist thursday", top_k=3)
    )
    assert len(hits) == 3 and "stale-key" not in {h.session_key for h in hits}


async def test_top_k_and_empty_queries(
    db: Database, chroma_settings: Settings, vector_index: VectorIndex, sample_world: World
) -> None:
    workspace_id = await indexed(db, chroma_settings, vector_index, sample_world)
    memory = FuzzyMemory(db, vector_index)
    alice = await viewer(db, workspace_id, "alice")
    assert len(await memory.search(alice, FuzzyQuery("thursday", top_k=1))) == 1
    assert len(await memory.search(alice, FuzzyQuery("thursday", top_k=50))) == 5  # alice sees 5 channels
    assert await memory.search(alice, FuzzyQuery("   ", top_k=3)) == []


async def test_each_question_of_a_text_brings_its_own_best_messages(
    db: Database,
    chroma_settings: Settings,
    vector_index: VectorIndex,
    sample_world: World,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    workspace_id = await indexed(db, chroma_settings, vector_index, sample_world)
    monkeypatch.setattr(fuzzy_module, "MESSAGE_POOL", 2)  # room for two best messages only: one per question
    text = "Who can help with the offsite demo rehearsal staging? Who is at the dentist on Thursday?"
    hits = await FuzzyMemory(db, vector_index).search(await viewer(db, workspace_id, "bob"), FuzzyQuery(text, top_k=5))
    assert {hit.channel_id for hit in hits if hit.matches} == {"C-general", "D-alice-bob"}


def test_the_best_messages_of_several_questions_take_turns() -> None:
    first, second = [(1, 0.9), (2, 0.8), (3, 0.7)], [(4, 0.5), (1, 0.4), (5, 0.3)]
    by_id = {"key": lambda found: found[0]}  # fuzzy memory's best messages are (message id, score)
    assert interleaved([first, second], **by_id) == [(1, 0.9), (4, 0.5), (2, 0.8), (3, 0.7), (5, 0.3)]
    assert interleaved([first], **by_id) == first


def _hit(key: str, method: str) -> FuzzyHit:
    at = datetime(2026, 11, 16, tzinfo=UTC)
    return FuzzyHit(key, "C1", "general", f"summary of {key}", method, 0.0, at, at)


@pytest.mark.parametrize("method", ["extractive", "llm"])
def test_an_extractive_summary_only_orders_the_sessions_no_message_found(method: str) -> None:
    by_summary = [VectorMatch("s-summary", 0.9), VectorMatch("s-late", 0.8), VectorMatch("s-only", 0.7)]
    by_message = ["s-message", "s-late", "s-summary"]  # sessions in the order the hybrid ranked their best message
    hits = [_hit(key, method) for key in ("s-summary", "s-late", "s-only", "s-message")]
    order = [h.session_key for h in fuzzy_module._fused(hits, by_summary, by_message)]
    if method == "extractive":  # messages decide; the summary only places the session no message found, last
        assert order == ["s-message", "s-late", "s-summary", "s-only"]
    else:  # a model's summary is a ranking of its own: both ranks count
        assert order == ["s-summary", "s-late", "s-message", "s-only"]
