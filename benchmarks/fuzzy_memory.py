"""Ingestion throughput and fuzzy-memory latency on FriendsTV (11,593 messages in 594 DM channels).

    python benchmarks/fuzzy_memory.py                         # needs ASKWITH_BENCH_DATA_DIR
    python benchmarks/fuzzy_memory.py --postgres postgresql+asyncpg://postgres@127.0.0.1:5432/postgres

Measures, in one run, with the real embedding model (all-MiniLM-L6-v2 int8) and embedded Chroma:
- ingestion through the real path, into an empty store: `IngestWorker` over the local workspace with the session
  indexer (mirror, pull history, sessionize, extractive summaries, MiniLM embeddings, Chroma upsert): messages/s
  and summaries embedded per second;
- the bare model on exactly the documents ingestion embeds (every session summary and message window, in the
  indexer's batches), timed
  just before and just after ingestion and averaged, so drift in machine load hits both sides; the ratio of
  ingestion's throughput to the model's (target >= 0.8: ingestion adds little beyond the model), by wall-clock and
  by CPU time (the CPU ratio holds on a machine busy with other work, where wall-clock is at the mercy of the load);
- the same ingestion with the hash embedder first: what everything but the model costs, and the documents;
- a rerun (must add 0 messages, 0 sessions, 0 summaries, 0 embeddings) and its time;
- `FuzzyMemory.search` p50/p95 for members' own lines as queries, and how often the session holding that line is
  among the top 3 (a sanity check of retrieval, not a quality benchmark).

With `--postgres URL`, each ingestion runs in a scratch database created on that server and dropped afterwards.
`run_async(settings)` returns the figures as a flat dict for the combined `benchmarks/memory.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from random import Random


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chromadb.api.types import Documents, EmbeddingFunction  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from adapters.local.workspace import LocalWorkspace  # noqa: E402
from benchmarks.scratch_postgres import scratch_postgres  # noqa: E402
from benchmarks.timing import Spent, Timings, percentile, spent  # noqa: E402
from bot.memory.embeddings import HashEmbedder, MiniLMEmbedder  # noqa: E402
from bot.memory.fuzzy import FuzzyMemory  # noqa: E402
from bot.memory.indexer import EMBED_BATCH, SessionIndexer, window_doc  # noqa: E402
from bot.memory.sessions import windows  # noqa: E402
from bot.memory.summarizer import SessionSummarizer  # noqa: E402
from bot.memory.types import FuzzyQuery, Viewer  # noqa: E402
from bot.memory.vector_index import VectorIndex  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store import memory_sessions, models  # noqa: E402
from bot.store.db import Database  # noqa: E402
from memory_ingest.report import IngestReport  # noqa: E402
from memory_ingest.sources.friendstv import load_friendstv  # noqa: E402
from memory_ingest.worker import IngestWorker  # noqa: E402


TARGETS = {"ingest_to_model_ratio": 0.8}
SEARCHES = 200
BARE_SAMPLE = 1_000  # FriendsTV messages the bare model embeds, for a texts/s figure on short texts
TOP_K = 3


@dataclass
class Ingestion:
    first: IngestReport
    first_cost: Spent
    rerun: IngestReport
    rerun_cost: Spent
    index: VectorIndex


# ---------------------------------------------------------------------- stores
@asynccontextmanager
async def fresh_store(settings: Settings, scratch: Path, postgres_url: str | None) -> AsyncIterator[Database]:
    """An empty, migrated database: a SQLite file under `scratch`, or a scratch database on the PostgreSQL server."""
    async with scratch_postgres(postgres_url) if postgres_url else _nothing_to_drop() as url:
        db = await Database.open(settings, url=url or f"sqlite+aiosqlite:///{scratch / 'bench.db'}")
        try:
            yield db
        finally:
            await db.close()


@asynccontextmanager
async def _nothing_to_drop() -> AsyncIterator[str | None]:
    yield None


# ---------------------------------------------------------------------- ingestion and the bare model
async def ingest(
    db: Database, settings: Settings, data_dir: Path, embedder: EmbeddingFunction[Documents]
) -> Ingestion:
    """FriendsTV through the ingestion worker and session indexer, timed; then a rerun, which must add nothing."""
    index = VectorIndex.from_settings(settings, embedder=embedder)
    indexer = SessionIndexer(db, settings, SessionSummarizer(db, None), index)
    port = LocalWorkspace(load_friendstv(data_dir))
    worker = IngestWorker(port, db, indexer=indexer, page_size=settings.ingest_page_size)
    with spent() as first_cost:
        first = await worker.run()
    with spent() as rerun_cost:
        rerun = await worker.run()
    return Ingestion(first, first_cost, rerun, rerun_cost, index)


async def embedded_documents(db: Database, workspace_id: int, window_messages: int) -> list[str]:
    """The documents ingestion embedded, in the indexer's order: per batch of sessions (by id), their summaries,
    then their message windows (hybrid retrieval's dense side)."""
    async with db.session() as session:
        rows = (
            await session.execute(
                select(models.MemorySession.id, models.MemorySession.key, models.SessionSummary.text)
                .join(models.SessionSummary, models.SessionSummary.content_hash == models.MemorySession.content_hash)
                .where(models.MemorySession.workspace_id == workspace_id)
                .order_by(models.MemorySession.id)
            )
        ).all()
        lines = await memory_sessions.session_lines(session, [row[0] for row in rows]) if window_messages else {}
    documents: list[str] = []
    for start in range(0, len(rows), EMBED_BATCH):
        batch = rows[start : start + EMBED_BATCH]
        documents += [text for _, _, text in batch]
        documents += [
            window_doc(key, 0, index, window).text
            for id_, key, _ in batch
            for index, window in enumerate(windows(lines.get(id_, []), window_messages))
        ]
    return documents


async def time_model(embedder: MiniLMEmbedder, texts: list[str]) -> Spent:
    """The bare model on `texts`, in the indexer's batches, in a worker thread as the indexer runs it."""

    def embed_all() -> Spent:
        with spent() as cost:
            for start in range(0, len(texts), EMBED_BATCH):
                embedder(texts[start : start + EMBED_BATCH])
        return cost

    return await asyncio.to_thread(embed_all)


# ---------------------------------------------------------------------- fuzzy search
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


async def time_searches(memory: FuzzyMemory, probes: list[tuple[Viewer, str, set[str]]]) -> dict[str, float]:
    timings = Timings()
    found = 0
    for viewer, text, keys in probes:
        async with timings.one():
            hits = await memory.search(viewer, FuzzyQuery(text, top_k=TOP_K))
        found += bool(keys & {hit.session_key for hit in hits})
    return {
        "fuzzy_searches": float(len(probes)),
        "fuzzy_p50_ms": percentile(timings.wall, 50),
        "fuzzy_p95_ms": percentile(timings.wall, 95),
        "fuzzy_cpu_p50_ms": percentile(timings.cpu, 50),
        "fuzzy_cpu_p95_ms": percentile(timings.cpu, 95),
        "fuzzy_hit_at_3": found / len(probes),
    }


# ---------------------------------------------------------------------- the run
async def run_async(settings: Settings, *, postgres_url: str | None = None) -> dict[str, float]:
    """All figures of this benchmark, as a flat dict (see the module docstring)."""
    data_dir = settings.require("bench_data_dir")
    base = settings.replace(chroma_host="")  # embedded Chroma in the scratch directory
    with tempfile.TemporaryDirectory(prefix="askwith-fuzzy-bench-") as scratch:
        hashed = base.replace(data_dir=Path(scratch) / "hash")
        async with fresh_store(hashed, hashed.data_dir, postgres_url) as db:
            model_free = await ingest(db, hashed, data_dir, HashEmbedder())
            documents = await embedded_documents(db, model_free.first.workspace_id, hashed.window_messages)
        real = base.replace(data_dir=Path(scratch) / "minilm")
        async with fresh_store(real, real.data_dir, postgres_url) as db:
            return await measure(db, real, data_dir, documents, model_free)


async def measure(
    db: Database, settings: Settings, data_dir: Path, documents: list[str], model_free: Ingestion
) -> dict[str, float]:
    embedder = MiniLMEmbedder()
    embedder(["warm up: load the model before anything is timed"])
    messages = [m.text for channel in load_friendstv(data_dir).messages.values() for m in channel]
    bare_messages = await time_model(embedder, Random(7).sample(messages, k=min(BARE_SAMPLE, len(messages))))
    # The bare model runs just before and just after ingestion, so drift in machine load hits both sides.
    before = await time_model(embedder, documents)
    ingested = await ingest(db, settings, data_dir, embedder)
    model = (before + await time_model(embedder, documents)) / 2
    if await embedded_documents(db, ingested.first.workspace_id, settings.window_messages) != documents:
        raise RuntimeError("ingestion embedded other documents than the model was timed on")
    memory = FuzzyMemory(db, ingested.index)
    searches = await time_searches(memory, await search_probes(db, ingested.first.workspace_id, Random(11)))
    figures = ingest_figures(ingested, model, len(documents), model_free) | searches
    figures["model_messages_per_s"] = min(BARE_SAMPLE, len(messages)) / bare_messages.wall_s
    return figures


def ingest_figures(ingested: Ingestion, model: Spent, documents: int, model_free: Ingestion) -> dict[str, float]:
    first, cost, rerun = ingested.first, ingested.first_cost, ingested.rerun
    embedded = first.embeddings_added or 0
    return {
        "ingest_messages": float(first.messages_added),
        "ingest_sessions": float(first.sessions_added or 0),
        "ingest_embeddings": float(embedded),
        "ingest_s": cost.wall_s,
        "ingest_cpu_s": cost.cpu_s,
        "ingest_messages_per_s": first.messages_added / cost.wall_s,
        "ingest_summaries_per_s": embedded / cost.wall_s,
        "ingest_without_model_s": model_free.first_cost.wall_s,
        "model_s": model.wall_s,
        "model_cpu_s": model.cpu_s,
        "ingest_documents": float(documents),  # summaries and windows
        "model_summaries_per_s": documents / model.wall_s,  # documents: summaries and windows
        # Throughput ratio on the same documents: (documents / ingest time) / (documents / model time).
        "ingest_to_model_ratio": model.wall_s / cost.wall_s,
        "ingest_to_model_cpu_ratio": model.cpu_s / cost.cpu_s,
        "rerun_added": float(added_by(rerun)),
        "rerun_ms": ingested.rerun_cost.wall_s * 1000,
    }


def added_by(report: IngestReport) -> int:
    """Everything a run added: messages, sessions, summaries and embeddings (a rerun must add 0)."""
    counts = (report.sessions_added, report.summaries_added, report.embeddings_added)
    return report.messages_added + sum(count or 0 for count in counts)


def report(figures: dict[str, float]) -> str:
    lines = [f"{name:<28} {value:>12.3f}" for name, value in figures.items()]
    for name, target in TARGETS.items():
        verdict = "met" if figures[name] >= target else "MISSED"
        lines.append(f"target {name:<21} {verdict:>6} ({figures[name]:.3f} vs >= {target})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="ingest into scratch databases on this PostgreSQL server")
    args = parser.parse_args()
    print(report(asyncio.run(run_async(Settings.load(), postgres_url=args.postgres))))


if __name__ == "__main__":
    main()
