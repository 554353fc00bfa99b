"""Hybrid retrieval latency on the generated 1,000,000-message workspace (the one `benchmarks/clear_memory.py` builds).

    python benchmarks/hybrid_scale.py                 # builds the workspace and its window vectors once, then reuses
    python benchmarks/hybrid_scale.py --messages 100000 --json figures.json

The window index is built the way ingestion builds it (`ASKWITH_WINDOW_MESSAGES` consecutive messages of a channel
per vector, Chroma with the project's HNSW parameters, keyed `<session key>:<index>` with each session's window count
in the database), except that each window is a session of its own (no summaries are made) and the vectors come from
the hash embedder: MiniLM over a million messages takes over an hour on two cores, and a nearest-neighbour query
costs the same whatever the vectors mean. A viewer's first search also reads their channels' vectors into
memory (`ASKWITH_VECTOR_CACHE`, 0 = Chroma's filtered index every time); `hybrid_first_of_viewer_*` times those
searches and `hybrid_later_*` the others. The query side is measured twice: as built (hash-embedded query) and
with the MiniLM query embedding the product uses timed on the same questions and added (`*_with_minilm_*`).

Probes are clear memory's realistic queries (`benchmarks/clear_memory.py`: words and phrases from messages the
viewer can see), the question text being those words.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from itertools import groupby
from pathlib import Path
from random import Random


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import delete, func, insert, select  # noqa: E402

from benchmarks.clear_memory import probes_for, viewers_of  # noqa: E402
from benchmarks.synthetic_workspace import WorkspaceSpec, load_synthetic  # noqa: E402
from benchmarks.timing import Timings, percentile  # noqa: E402
from bot.memory.clear import ClearMemory  # noqa: E402
from bot.memory.embeddings import HashEmbedder, MiniLMEmbedder  # noqa: E402
from bot.memory.hybrid import HybridMemory  # noqa: E402
from bot.memory.vector_index import VectorDoc, VectorIndex  # noqa: E402
from bot.memory.vector_keys import window_key  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store import models  # noqa: E402
from bot.store.db import Database  # noqa: E402


BATCH = 5_000  # window vectors upserted at once


async def build_windows(db: Database, index: VectorIndex, workspace_id: int, width: int) -> tuple[int, float]:
    """Window vectors of every channel (kept in the index between runs); (windows, seconds spent building). Each
    window is stored as an embedded session of one window, keyed as ingestion keys them, so a viewer's first search
    reads their channels' vectors by key, as it does on an ingested workspace."""
    windows = index.windows()
    started = time.perf_counter()
    stmt = (
        select(models.Message.id, models.Message.channel_id, models.Message.ts, models.Message.text)
        .where(models.Message.workspace_id == workspace_id)
        .order_by(models.Message.channel_id, models.Message.ts, models.Message.id)
    )
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    docs: list[VectorDoc] = []
    sessions: list[dict[str, object]] = []
    for channel_id, in_channel in groupby(rows, key=lambda r: r.channel_id):
        listed = list(in_channel)
        for start in range(0, len(listed), width):
            chunk = listed[start : start + width]
            key = f"syn-{channel_id}-{chunk[0].id}"
            text = "\n".join(r.text for r in chunk)
            ids = ",".join(str(r.id) for r in chunk)
            docs.append(VectorDoc(window_key(key, 0), text, channel_id, session_key=key, message_ids=ids))
            sessions.append(_session_row(workspace_id, channel_id, key, chunk))
    async with db.session() as session:
        of_workspace = models.MemorySession.workspace_id == workspace_id
        stored = await session.scalar(select(func.count()).select_from(models.MemorySession).where(of_workspace))
    if stored == len(sessions) and await windows.count(workspace_id) == len(docs):
        return len(docs), 0.0
    async with db.session() as session, session.begin():
        await session.execute(delete(models.MemorySession).where(models.MemorySession.workspace_id == workspace_id))
        for start in range(0, len(sessions), BATCH):
            await session.execute(insert(models.MemorySession), sessions[start : start + BATCH])
    await windows.drop_workspace(workspace_id)
    for start in range(0, len(docs), BATCH):
        await windows.upsert(workspace_id, docs[start : start + BATCH])
        print(f"windows: {min(start + BATCH, len(docs)):,}/{len(docs):,}", file=sys.stderr, flush=True)
    return len(docs), time.perf_counter() - started


def _session_row(workspace_id: int, channel_id: int, key: str, chunk: list) -> dict[str, object]:  # type: ignore[type-arg]
    return {
        "key": key,
        "workspace_id": workspace_id,
        "channel_id": channel_id,
        "content_hash": key,
        "first_ts": chunk[0].ts,
        "last_ts": chunk[-1].ts,
        "message_count": len(chunk),
        "summarized": True,
        "embedded": True,
        "window_count": 1,
    }


async def measure(settings: Settings, messages: int, probes_wanted: int) -> dict[str, float]:
    bench_dir = Path(settings.data_dir) / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{bench_dir / 'clear-synthetic.db'}")
    try:
        workspace_id = await load_synthetic(db, WorkspaceSpec(messages=messages))
        index = VectorIndex.from_settings(
            settings.replace(data_dir=bench_dir / f"hybrid-{messages}"), embedder=HashEmbedder()
        )
        windows, build_s = await build_windows(db, index, workspace_id, settings.window_messages or 3)
        rng = Random(11)
        viewers = await viewers_of(db, workspace_id, rng, 20, min_messages=min(1_000, messages // 200))
        probes = (await probes_for(db, viewers, rng, max(1, probes_wanted // len(viewers))))[:probes_wanted]
        hybrid = HybridMemory(ClearMemory(db), index.windows())
        for probe in probes[:5]:  # warm up: statement caches, the index loaded into memory
            await hybrid.search(probe.viewer, probe.query)
        # A viewer's first search reads their channels' vectors into memory (ASKWITH_VECTOR_CACHE); the later
        # ones search them there. Both are timed, and told apart.
        warmed = {probe.viewer.member_id for probe in probes[:5]}
        first, later = Timings(), Timings()
        for probe in probes:
            query = replace(probe.query, question=" ".join(probe.query.keywords))
            timings = later if probe.viewer.member_id in warmed else first
            warmed.add(probe.viewer.member_id)
            async with timings.one():
                await hybrid.search(probe.viewer, query)
        timings = Timings(first.wall + later.wall, first.cpu + later.cpu)
        minilm = MiniLMEmbedder()
        minilm(["warm up"])
        embed_ms = []
        for probe in probes:
            started = time.perf_counter()
            minilm([" ".join(probe.query.keywords)])
            embed_ms.append(1000 * (time.perf_counter() - started))
        with_model = [w + e for w, e in zip(timings.wall, embed_ms, strict=True)]
        return {
            "messages": float(messages),
            "windows": float(windows),
            "windows_build_s": build_s,
            "probes": float(len(probes)),
            "hybrid_p50_ms": percentile(timings.wall, 50),
            "hybrid_p95_ms": percentile(timings.wall, 95),
            "hybrid_first_of_viewer_searches": float(len(first.wall)),
            "hybrid_first_of_viewer_p95_ms": percentile(first.wall, 95) if first.wall else 0.0,
            "hybrid_later_p95_ms": percentile(later.wall, 95),
            "minilm_query_embedding_p95_ms": percentile(embed_ms, 95),
            "hybrid_with_minilm_p50_ms": percentile(with_model, 50),
            "hybrid_with_minilm_p95_ms": percentile(with_model, 95),
        }
    finally:
        await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--json", metavar="FILE", help="also write the figures to this JSON file")
    args = parser.parse_args()
    figures = asyncio.run(measure(Settings.load().replace(chroma_host=""), args.messages, args.probes))
    for name, value in figures.items():
        print(f"{name:<36} {value:>12.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
