"""Clear-memory latency, and its speed-up over an iAgents-style `LIKE '%kw%'` scan.

    python benchmarks/clear_memory.py                         # SQLite (the default engine)
    python benchmarks/clear_memory.py --json figures.json     # also write the figures as JSON
    python benchmarks/clear_memory.py --postgres postgresql+asyncpg://postgres@127.0.0.1:5432/askwith_bench

Measures, in one run, for realistic keyword queries (words and two-word phrases taken from messages the viewer can
see, several viewers, half of them with a context window):
- p50/p95 of `ClearMemory.search` on the FriendsTV workspace (target p95 <= 5 ms),
- the same on a generated 1,000,000-message workspace (target p95 <= 50 ms; built once, then reused),
- the speed-up over the iAgents retrieval shape: a CTE of every message whose text is `LIKE '%kw%'`, then joined
  with the viewer's channels (target >= 10x, on the generated workspace: FriendsTV is small enough to scan), and,
  for honesty, over the strongest LIKE plan too (the planner free to walk the viewer's channels through the channel
  index first, then LIKE on those rows only).

Latencies are wall-clock; `*_cpu_*` figures are this process's CPU time per query (the SQLite thread included, a
PostgreSQL server not), which shows the cost of a query on a machine busy with other work.
`synthetic_setup_s` is the build time on the first run and the time to find the stored workspace afterwards.

`run(settings)` returns the figures as a dict for a combined benchmark script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from random import Random


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import Select, func, or_, select  # noqa: E402

from benchmarks.synthetic_workspace import WorkspaceSpec, load_synthetic  # noqa: E402
from benchmarks.timing import Timings, percentile  # noqa: E402
from bot.memory.clear import ClearMemory  # noqa: E402
from bot.memory.keywords import STOP_WORDS, phrase_of  # noqa: E402
from bot.memory.types import ClearQuery, Viewer  # noqa: E402
from bot.memory.visibility import visible_channels  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store import models  # noqa: E402
from bot.store.db import Database  # noqa: E402
from bot.store.world_mirror import mirror_world  # noqa: E402
from memory_ingest.sources.friendstv import load_friendstv  # noqa: E402


M = models.Message


def scope(viewer: Viewer) -> list:
    return [M.channel_id.in_(visible_channels(viewer))]


TARGETS = {"friendstv_p95_ms": 5.0, "synthetic_p95_ms": 50.0, "like_scan_speedup": 10.0}


@dataclass(frozen=True)
class Probe:
    viewer: Viewer
    query: ClearQuery


# ---------------------------------------------------------------------- realistic queries
def keywords_from(text: str, rng: Random) -> tuple[str, ...]:
    """One to three content words of a message, sometimes a two-word phrase, as an agent would pick them."""
    words = phrase_of(text)
    content = [w for w in dict.fromkeys(words) if w not in STOP_WORDS and len(w) > 2]
    if not content:
        return ()
    picked = rng.sample(content, k=min(len(content), rng.randint(1, 3)))
    pairs = [f"{a} {b}" for a, b in zip(words, words[1:], strict=False) if a in content and b in content]
    if pairs and rng.random() < 0.3:
        picked[0] = rng.choice(pairs)
    return tuple(picked)


async def viewers_of(db: Database, workspace_id: int, rng: Random, count: int, *, min_messages: int) -> list[Viewer]:
    """`count` members who can see at least `min_messages` messages, drawn deterministically."""
    async with db.session() as session:
        members = (
            await session.execute(
                select(models.Member.id, models.Member.name)
                .where(models.Member.workspace_id == workspace_id)
                .order_by(models.Member.id)
            )
        ).all()
        rng.shuffle(members)
        chosen: list[Viewer] = []
        for member_id, name in members:
            viewer = Viewer(workspace_id, member_id, name)
            visible = select(func.count()).select_from(M).where(*scope(viewer))
            if (await session.execute(visible)).scalar_one() >= min_messages:
                chosen.append(viewer)
            if len(chosen) == count:
                break
    return chosen


async def probes_for(db: Database, viewers: list[Viewer], rng: Random, per_viewer: int) -> list[Probe]:
    probes: list[Probe] = []
    async with db.session() as session:
        for viewer in viewers:
            visible = (await session.execute(select(M.text).where(*scope(viewer)).order_by(M.id))).scalars().all()
            for text in rng.sample(visible, k=min(len(visible), per_viewer * 3)):
                if keywords := keywords_from(text, rng):
                    query = ClearQuery(keywords=keywords, context_window=rng.choice((0, 2)), limit=10)
                    probes.append(Probe(viewer, query))
                if sum(p.viewer == viewer for p in probes) == per_viewer:
                    break
    rng.shuffle(probes)
    return probes


# ---------------------------------------------------------------------- the LIKE baselines
def like_terms(query: ClearQuery) -> list:
    return [M.text.like(f"%{k.replace('%', '').replace('_', '')}%") for k in query.keywords]


def iagents_like(viewer: Viewer, query: ClearQuery) -> Select:
    """iAgents' shape: every message LIKE a keyword (a scan of the table), then the viewer's conversations."""
    relevant = (
        select(M.id, M.channel_id, M.ts).where(or_(*like_terms(query))).cte("relevant").prefix_with("MATERIALIZED")
    )
    return (
        select(relevant.c.id)
        .where(relevant.c.channel_id.in_(visible_channels(viewer)))
        .order_by(relevant.c.ts.desc())
        .limit(query.limit)
    )


def scoped_like(viewer: Viewer, query: ClearQuery) -> Select:
    """The strongest LIKE plan: scope and filters first (channel index), LIKE on the viewer's rows only."""
    where = [*scope(viewer), or_(*like_terms(query))]
    return select(M.id).where(*where).order_by(M.ts.desc()).limit(query.limit)


# ---------------------------------------------------------------------- timing
async def time_clear(memory: ClearMemory, probes: list[Probe]) -> Timings:
    for probe in probes[:20]:  # warm the page cache and the statement caches
        await memory.search(probe.viewer, probe.query)
    timings = Timings()
    for probe in probes:
        async with timings.one():
            await memory.search(probe.viewer, probe.query)
    return timings


async def time_statement(db: Database, probes: list[Probe], build: Callable[[Viewer, ClearQuery], Select]) -> Timings:
    """Only the execution is timed: building the SQLAlchemy statement is not charged to the baseline."""
    timings = Timings()
    async with db.engine.connect() as conn:
        for probe in probes:
            statement = build(probe.viewer, probe.query)
            async with timings.one():
                (await conn.execute(statement)).all()
    return timings


async def measure(
    db: Database, workspace_id: int, name: str, *, viewers: int, per_viewer: int, like_probes: int
) -> dict[str, float]:
    """Latency of ClearMemory on one workspace, and of both LIKE baselines on the first `like_probes` queries."""
    rng = Random(f"{name}-probes")
    chosen = await viewers_of(db, workspace_id, rng, viewers, min_messages=20)
    probes = await probes_for(db, chosen, rng, per_viewer)
    clear = await time_clear(ClearMemory(db), probes)
    # The baselines rank nothing and fetch no context: compare them with the bare ranked search.
    no_context = [replace(p, query=replace(p.query, context_window=0)) for p in probes][:like_probes]
    ranking = await time_clear(ClearMemory(db), no_context)
    like_scan = await time_statement(db, no_context, iagents_like)
    like_indexed = await time_statement(db, no_context, scoped_like)
    return {
        f"{name}_queries": float(len(probes)),
        f"{name}_viewers": float(len(chosen)),
        f"{name}_p50_ms": percentile(clear.wall, 50),
        f"{name}_p95_ms": percentile(clear.wall, 95),
        f"{name}_cpu_p50_ms": percentile(clear.cpu, 50),
        f"{name}_cpu_p95_ms": percentile(clear.cpu, 95),
        f"{name}_no_context_p50_ms": percentile(ranking.wall, 50),
        f"{name}_like_scan_p50_ms": percentile(like_scan.wall, 50),
        f"{name}_like_indexed_p50_ms": percentile(like_indexed.wall, 50),
        f"{name}_like_scan_speedup": sum(like_scan.wall) / sum(ranking.wall),
        f"{name}_like_scan_cpu_speedup": sum(like_scan.cpu) / sum(ranking.cpu),
        f"{name}_like_indexed_speedup": sum(like_indexed.wall) / sum(ranking.wall),
    }


# ---------------------------------------------------------------------- workspaces
async def friendstv_figures(settings: Settings, *, postgres_url: str | None = None) -> dict[str, float]:
    """Clear memory on FriendsTV, mirrored into a scratch SQLite file (or the given PostgreSQL database)."""
    world = load_friendstv(settings.require("bench_data_dir"))
    with tempfile.TemporaryDirectory() as scratch:
        db = await Database.open(settings, url=postgres_url or f"sqlite+aiosqlite:///{Path(scratch) / 'friendstv.db'}")
        try:
            workspace_id = await mirror_world(db, world)
            return await measure(db, workspace_id, "friendstv", viewers=10, per_viewer=20, like_probes=200)
        finally:
            await db.close()


async def synthetic_figures(
    settings: Settings, *, postgres_url: str | None = None, messages: int = 1_000_000
) -> dict[str, float]:
    """Clear memory on the generated workspace, built on first use under ASKWITH_DATA_DIR/bench and kept."""
    bench_dir = Path(settings.data_dir) / "bench"
    db = await Database.open(settings, url=postgres_url or f"sqlite+aiosqlite:///{bench_dir / 'clear-synthetic.db'}")
    try:
        start = time.perf_counter()
        workspace_id = await load_synthetic(db, WorkspaceSpec(messages=messages))
        figures = {"synthetic_messages": float(messages), "synthetic_setup_s": time.perf_counter() - start}
        figures |= await measure(db, workspace_id, "synthetic", viewers=20, per_viewer=10, like_probes=40)
    finally:
        await db.close()
    figures["like_scan_speedup"] = figures["synthetic_like_scan_speedup"]
    return figures


async def run_async(
    settings: Settings, *, postgres_url: str | None = None, messages: int = 1_000_000
) -> dict[str, float]:
    """Every figure of this benchmark."""
    figures = await friendstv_figures(settings, postgres_url=postgres_url)
    return figures | await synthetic_figures(settings, postgres_url=postgres_url, messages=messages)


def run(settings: Settings, *, postgres_url: str | None = None, messages: int = 1_000_000) -> dict[str, float]:
    return asyncio.run(run_async(settings, postgres_url=postgres_url, messages=messages))


def report(figures: dict[str, float]) -> str:
    lines = [f"{name:<36} {value:>12.3f}" for name, value in figures.items()]
    for name, target in TARGETS.items():
        value = figures[name]
        met = value <= target if name.endswith("_ms") else value >= target
        lines.append(f"target {name:<29} {'met' if met else 'MISSED':>6} ({value:.3f} vs {target})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="run on this PostgreSQL database instead of SQLite")
    parser.add_argument("--messages", type=int, default=1_000_000, help="size of the generated workspace")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to this JSON file")
    args = parser.parse_args()
    figures = run(Settings.load(), postgres_url=args.postgres, messages=args.messages)
    print(report(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
