"""Fuzzy-memory throughput and latency on FriendsTV (11,593 messages in 594 DM channels).

    python benchmarks/fuzzy_memory.py            # needs ASKWITH_BENCH_DATA_DIR

Measures, in one run, with the real embedding model (all-MiniLM-L6-v2 int8) and embedded Chroma:
- the bare model: texts/s embedding FriendsTV messages, and texts/s embedding exactly the documents the pipeline
  embeds (the session summaries), in the pipeline's batch size;
- the indexing pipeline (`SessionIndexer.update`: sessionize, extractive summaries, embed, Chroma upsert, progress
  in the database) on the same material: sessions/s and messages/s, and its ratio to the bare model on the same
  documents (target >= 0.8: the pipeline should add little beyond the model);
- a rerun with no new messages (must add 0 sessions, 0 summaries, 0 embeddings) and its time;
- `FuzzyMemory.search` p50/p95 for members' own lines as queries, and how often the session holding that line is
  among the top 3 (a sanity check of retrieval, not a quality benchmark).

`run(settings)` returns the figures as a dict for a combined benchmark script.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from random import Random


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import func, select  # noqa: E402

from bot.memory.embeddings import MiniLMEmbedder  # noqa: E402
from bot.memory.fuzzy import FuzzyMemory  # noqa: E402
from bot.memory.indexer import EMBED_BATCH, IndexStats, SessionIndexer  # noqa: E402
from bot.memory.summarizer import SessionSummarizer  # noqa: E402
from bot.memory.types import FuzzyQuery, Viewer  # noqa: E402
from bot.memory.vector_index import VectorIndex  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store import models  # noqa: E402
from bot.store.db import Database  # noqa: E402
from bot.store.world_mirror import mirror_world  # noqa: E402
from bot.world import World  # noqa: E402
from memory_ingest.sources.friendstv import load_friendstv  # noqa: E402


TARGETS = {"pipeline_to_model_ratio": 0.8}
SEARCHES = 200
BARE_SAMPLE = 1_000  # texts the bare model embeds per timing
TOP_K = 3


def texts_per_second(embedder: MiniLMEmbedder, texts: list[str]) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), EMBED_BATCH):  # the pipeline's batches, so both sides do the same work
        embedder(texts[start : start + EMBED_BATCH])
    return len(texts) / (time.perf_counter() - started)


async def index_workspace(db: Database, settings: Settings, embedder: MiniLMEmbedder, workspace_id: int) -> dict:
    index = VectorIndex.from_settings(settings, embedder=embedder)
    indexer = SessionIndexer(db, settings, SessionSummarizer(db, None), index)
    started = time.perf_counter()
    first = await indexer.update(workspace_id)
    elapsed = time.perf_counter() - started
    started = time.perf_counter()
    rerun = await indexer.update(workspace_id)
    return {"first": first, "seconds": elapsed, "rerun": rerun, "rerun_seconds": time.perf_counter() - started}


async def summary_texts(db: Database, workspace_id: int) -> list[str]:
    """The documents the pipeline embedded: one summary per session, in session order."""
    async with db.session() as session:
        rows = await session.execute(
            select(models.SessionSummary.text)
            .join(models.MemorySession, models.MemorySession.content_hash == models.SessionSummary.content_hash)
            .where(models.MemorySession.workspace_id == workspace_id)
            .order_by(models.MemorySession.id)
        )
        return list(rows.scalars())


async def search_probes(db: Database, workspace_id: int, rng: Random) -> list[tuple[Viewer, str, set[str]]]:
    """(viewer, one of the viewer's own lines, the keys of the sessions holding it), drawn deterministically.

    FriendsTV fans a spoken line out to every listener's DM, so one line sits in several sessions; finding any of
    them counts.
    """
    async with db.session() as session:
        rows = (
            await session.execute(
                select(models.Member.id, models.Member.name, models.Message.text, models.MemorySession.key)
                .join(models.Message, models.Message.sender_id == models.Member.id)
                .join(models.SessionMessage, models.SessionMessage.message_id == models.Message.id)
                .join(models.MemorySession, models.MemorySession.id == models.SessionMessage.session_id)
                .where(models.Member.workspace_id == workspace_id, func.length(models.Message.text) > 40)
                .order_by(models.Message.id)
            )
        ).all()
    holders: dict[tuple[int, str, str], set[str]] = {}
    for member_id, name, text, key in rows:
        holders.setdefault((member_id, name, text), set()).add(key)
    picked = rng.sample(sorted(holders), k=min(SEARCHES, len(holders)))
    return [
        (Viewer(workspace_id, member_id, name), text, holders[member_id, name, text])
        for member_id, name, text in picked
    ]


async def time_searches(memory: FuzzyMemory, probes: list[tuple[Viewer, str, set[str]]]) -> dict:
    latencies: list[float] = []
    found = 0
    for viewer, text, keys in probes:
        started = time.perf_counter()
        hits = await memory.search(viewer, FuzzyQuery(text, top_k=TOP_K))
        latencies.append((time.perf_counter() - started) * 1000)
        found += bool(keys & {hit.session_key for hit in hits})
    cuts = statistics.quantiles(latencies, n=100)
    return {"p50_ms": cuts[49], "p95_ms": cuts[94], "searches": len(probes), "hit_at_3": found / len(probes)}


async def _run(settings: Settings) -> dict:
    world = load_friendstv(settings.require("bench_data_dir"))
    with tempfile.TemporaryDirectory(prefix="askwith-fuzzy-bench-") as scratch:
        base = settings.replace(embedder="minilm", chroma_host="")
        model_free = await _in_fresh_store(Path(scratch) / "hash", base.replace(embedder="hash"), world, _index_only)
        return await _in_fresh_store(
            Path(scratch) / "minilm", base, world, lambda db, s, w, ws: _measure(db, s, w, ws, model_free)
        )


async def _in_fresh_store(scratch: Path, settings: Settings, world: World, work) -> dict:  # noqa: ANN001
    settings = settings.replace(data_dir=scratch)
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{scratch / 'bench.db'}")
    try:
        return await work(db, settings, world, await mirror_world(db, world))
    finally:
        await db.close()


async def _index_only(db: Database, settings: Settings, world: World, workspace_id: int) -> dict:
    """The pipeline with the hash embedder: its cost without the model, and the summaries it embeds."""
    index = VectorIndex.from_settings(settings)
    indexer = SessionIndexer(db, settings, SessionSummarizer(db, None), index)
    started = time.perf_counter()
    await indexer.update(workspace_id)
    return {"seconds": time.perf_counter() - started, "summaries": await summary_texts(db, workspace_id)}


async def _measure(db: Database, settings: Settings, world: World, workspace_id: int, model_free: dict) -> dict:
    embedder = MiniLMEmbedder()
    embedder(["warm up: load the model before anything is timed"])
    rng = Random(7)
    messages = [m.text for channel in world.messages.values() for m in channel]
    bare_messages = texts_per_second(embedder, rng.sample(messages, k=min(BARE_SAMPLE, len(messages))))
    summaries = rng.sample(model_free["summaries"], k=min(BARE_SAMPLE, len(model_free["summaries"])))
    # The bare model is timed just before and just after the pipeline, so drift in machine load hits both sides.
    bare_before = texts_per_second(embedder, summaries)
    indexed = await index_workspace(db, settings, embedder, workspace_id)
    bare_summaries = (bare_before + texts_per_second(embedder, summaries)) / 2
    first: IndexStats = indexed["first"]
    pipeline = first.embeddings_new / indexed["seconds"]
    memory = FuzzyMemory(db, VectorIndex.from_settings(settings, embedder=embedder))
    search = await time_searches(memory, await search_probes(db, workspace_id, Random(11)))
    return {
        "messages": len(messages),
        "sessions": first.sessions_new,
        "model_messages_per_s": bare_messages,
        "model_summaries_per_s": bare_summaries,
        "pipeline_sessions_per_s": pipeline,
        "pipeline_messages_per_s": len(messages) / indexed["seconds"],
        "pipeline_seconds": indexed["seconds"],
        "pipeline_without_model_seconds": model_free["seconds"],
        "pipeline_to_model_ratio": pipeline / bare_summaries,
        "first_run": first.__dict__,
        "rerun": indexed["rerun"].__dict__,
        "rerun_seconds": indexed["rerun_seconds"],
        "search": search,
    }


def run(settings: Settings) -> dict:
    """All figures of this benchmark, as a dict (see the module docstring)."""
    return asyncio.run(_run(settings))


def report(figures: dict) -> str:
    search, ratio = figures["search"], figures["pipeline_to_model_ratio"]
    verdict = "ok" if ratio >= TARGETS["pipeline_to_model_ratio"] else "BELOW TARGET"
    return "\n".join(
        [
            f"FriendsTV: {figures['messages']:,} messages -> {figures['sessions']:,} sessions",
            f"bare model, messages:          {figures['model_messages_per_s']:8.1f} texts/s",
            f"bare model, session summaries: {figures['model_summaries_per_s']:8.1f} texts/s",
            f"indexing pipeline:             {figures['pipeline_sessions_per_s']:8.1f} sessions/s "
            f"({figures['pipeline_messages_per_s']:.0f} messages/s, {figures['pipeline_seconds']:.1f} s)",
            f"pipeline with a hash embedder: {figures['pipeline_without_model_seconds']:8.1f} s (all but the model)",
            f"pipeline / model:              {ratio:8.2f} (target >= {TARGETS['pipeline_to_model_ratio']}: {verdict})",
            f"first run: {figures['first_run']}",
            f"rerun:     {figures['rerun']} in {figures['rerun_seconds'] * 1000:.0f} ms",
            f"fuzzy search ({search['searches']} queries, top {TOP_K}): p50 {search['p50_ms']:.1f} ms, "
            f"p95 {search['p95_ms']:.1f} ms; own session in top {TOP_K}: {search['hit_at_3']:.0%}",
        ]
    )


if __name__ == "__main__":
    print(report(run(Settings.load())))
