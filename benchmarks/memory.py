"""Every memory figure of the foundation's acceptance, in one run and one table, each next to its target.

    python benchmarks/memory.py                 # needs ASKWITH_BENCH_DATA_DIR; builds the 1M workspace once
    python benchmarks/memory.py --skip-1m       # a quick run: FriendsTV only
    python benchmarks/memory.py --postgres postgresql+asyncpg://postgres@127.0.0.1:5432/askwith_bench

Runs `benchmarks/fuzzy_memory.py` (ingestion through the ingestion worker and session indexer with MiniLM, against
the bare model on the same documents in the same run; fuzzy search latency), then `benchmarks/clear_memory.py`
(clear-memory latency on FriendsTV and on a generated 1,000,000-message workspace, and the speed-up over an
iAgents-style `LIKE '%kw%'` scan of the same rows for the same keywords). The generated workspace is kept under
ASKWITH_DATA_DIR/bench (or in the PostgreSQL database) and reused by later runs.

Wall-clock decides every target. CPU-time figures stand beside them: on a machine busy with other work, a wall
figure far above its CPU figure (and a load average above the core count) means the run waited for a core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import clear_memory, fuzzy_memory  # noqa: E402
from benchmarks.timing import load_average, spent  # noqa: E402
from bot.settings import Settings  # noqa: E402


SYNTHETIC_MESSAGES = 1_000_000


@dataclass(frozen=True)
class Target:
    bound: float
    at_least: bool  # True: the figure must be >= bound; False: <= bound
    unit: str = ""

    def met(self, value: float) -> bool:
        return value >= self.bound if self.at_least else value <= self.bound

    def __str__(self) -> str:
        return f"{'>=' if self.at_least else '<='} {self.bound:g}{self.unit}"


@dataclass(frozen=True)
class Row:
    figure: str
    value: str
    target: Target | None = None
    checked: float | None = None  # the value the target is checked against

    @property
    def mark(self) -> str:
        if self.target is None or self.checked is None:
            return ""
        return "pass" if self.target.met(self.checked) else "MISS"


def ingest_rows(f: dict[str, float]) -> list[Row]:
    return [
        Row(
            "ingest throughput (worker + indexer, MiniLM)",
            f"{f['ingest_messages_per_s']:.0f} msg/s, {f['ingest_summaries_per_s']:.1f} summaries/s",
        ),
        Row(f"  {f['ingest_messages']:,.0f} messages in", f"{f['ingest_s']:.1f} s, CPU {f['ingest_cpu_s']:.1f} s"),
        Row("bare model on the same documents", f"{f['model_summaries_per_s']:.1f} documents/s"),
        Row("  all documents embedded in (mean of 2 runs)", f"{f['model_s']:.1f} s, CPU {f['model_cpu_s']:.1f} s"),
        Row(
            "ingest / bare model throughput",
            f"{f['ingest_to_model_ratio']:.2f}",
            Target(0.8, True),
            f["ingest_to_model_ratio"],
        ),  # fmt: skip
        Row("  same ratio by CPU time", f"{f['ingest_to_model_cpu_ratio']:.2f}"),
        Row("  ingest without the model (hash embedder)", f"{f['ingest_without_model_s']:.1f} s"),
        Row(
            "  rerun adds (messages+sessions+summaries+vectors)",
            f"{f['rerun_added']:.0f} in {f['rerun_ms']:.0f} ms",
            Target(0, False),
            f["rerun_added"],
        ),  # fmt: skip
    ]


def latency_rows(f: dict[str, float], name: str, label: str, bound: float | None) -> list[Row]:
    target = None if bound is None else Target(bound, False, " ms")
    return [
        Row(
            f"{label} p50 / p95",
            f"{f[f'{name}_p50_ms']:.2f} / {f[f'{name}_p95_ms']:.2f} ms",
            target,
            f[f"{name}_p95_ms"],
        ),  # fmt: skip
        Row("  CPU p50 / p95", f"{f[f'{name}_cpu_p50_ms']:.2f} / {f[f'{name}_cpu_p95_ms']:.2f} ms"),
    ]


def clear_rows(f: dict[str, float]) -> list[Row]:
    rows = latency_rows(f, "friendstv", f"clear, FriendsTV ({f['friendstv_queries']:.0f} queries)", 5.0)
    rows.append(Row("  LIKE '%kw%' scan speed-up, FriendsTV", f"{f['friendstv_like_scan_speedup']:.1f}x"))
    if "synthetic_p95_ms" not in f:
        rows.append(Row(f"clear, {SYNTHETIC_MESSAGES:,} messages", "skipped (--skip-1m)"))
        return rows
    label = f"clear, {f['synthetic_messages']:,.0f} msg ({f['synthetic_queries']:.0f} queries)"
    rows += latency_rows(f, "synthetic", label, 50.0)
    rows += [
        Row(f"LIKE '%kw%' scan speed-up, {f['synthetic_messages']:,.0f} msg", f"{f['like_scan_speedup']:.1f}x",
            Target(10, True, "x"), f["like_scan_speedup"]),
        Row("  same speed-up by CPU time", f"{f['synthetic_like_scan_cpu_speedup']:.1f}x"),
        Row("  vs the best LIKE plan (viewer's channels first)", f"{f['synthetic_like_indexed_speedup']:.1f}x"),
        Row("  generated workspace build / lookup", f"{f['synthetic_setup_s']:.1f} s"),
    ]  # fmt: skip
    return rows


def fuzzy_rows(f: dict[str, float]) -> list[Row]:
    rows = latency_rows(f, "fuzzy", f"fuzzy, FriendsTV ({f['fuzzy_searches']:.0f} queries, top 3)", None)
    rows.append(Row("  own session in top 3", f"{f['fuzzy_hit_at_3']:.0%}"))
    return rows


def table(figures: dict[str, float], *, header: str) -> str:
    rows = ingest_rows(figures) + clear_rows(figures) + fuzzy_rows(figures)
    width = max(len(r.figure) for r in rows)
    value_width = max(len(r.value) for r in rows)
    lines = [header, f"{'figure':<{width}}  {'value':<{value_width}}  {'target':<9}  mark"]
    lines.append("-" * len(lines[-1]))
    lines += [f"{r.figure:<{width}}  {r.value:<{value_width}}  {str(r.target or ''):<9}  {r.mark}" for r in rows]
    misses = sum(r.mark == "MISS" for r in rows)
    lines.append(f"{sum(bool(r.mark) for r in rows) - misses} targets met, {misses} missed")
    return "\n".join(lines)


async def run_all(settings: Settings, *, postgres_url: str | None, synthetic: bool) -> dict[str, float]:
    # Ingestion first: it is the figure most sensitive to a warm or cold machine, and the 1M build is the longest.
    figures = await fuzzy_memory.run_async(settings, postgres_url=postgres_url)
    figures |= await clear_memory.friendstv_figures(settings, postgres_url=postgres_url)
    if synthetic:
        figures |= await clear_memory.synthetic_figures(
            settings, postgres_url=postgres_url, messages=SYNTHETIC_MESSAGES
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-1m", action="store_true", help="skip the generated 1,000,000-message workspace")
    parser.add_argument("--postgres", metavar="URL", help="run on this PostgreSQL database instead of SQLite")
    args = parser.parse_args()
    load_before = load_average()
    with spent() as run:
        figures = asyncio.run(run_all(Settings.load(), postgres_url=args.postgres, synthetic=not args.skip_1m))
    engine = "PostgreSQL" if args.postgres else "SQLite"
    header = (
        f"askwith memory benchmark ({engine}; {os.cpu_count()} cores; load average {load_before:.1f} at start, "
        f"{load_average():.1f} at end; run {run.wall_s:.0f} s wall, {run.cpu_s:.0f} s CPU)"
    )
    print(table(figures, header=header))


if __name__ == "__main__":
    main()
