"""InformativeBench replay throughput with the scripted model: items per minute and askwith's own overhead per item.

    python benchmarks/bench_throughput.py                              # 10 items per dataset, latency 0 and 50 ms
    python benchmarks/bench_throughput.py --items 30 --latency 0 --latency 0.2 --concurrency 8 --embedder minilm

For every dataset (generated with seed 0 into a temporary directory; NP and FriendsTV need ASKWITH_BENCH_DATA_DIR)
and every model latency, the first N items are run end to end exactly as `askwith bench run --scripted` runs them:
world -> LocalWorkspace -> IngestWorker (+ session indexer) -> AskService -> score. Reported per run:
- items/min, end to end: generation excluded, ingestion included (FriendsTV's one big workspace is ingested once per
  run directory; every Schedule/NP item ingests a small workspace of its own);
- per item: ingestion time, wall time of the ask, time inside the (scripted) LLM, and the overhead = wall - LLM time,
  i.e. what askwith itself costs per ask (database writes, memory queries, prompt rendering, hidden-thread posts).
The scripted model's answers are meaningless: these are speed figures, not quality figures.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.bench.generate import DATASETS, generate  # noqa: E402
from bot.bench.run_config import RunConfig  # noqa: E402
from bot.bench.runner import run_bench  # noqa: E402
from bot.llm.client import LLMClient  # noqa: E402
from bot.llm.scripted import ScriptedBackend  # noqa: E402
from bot.llm.standin.model import scripted_model  # noqa: E402
from bot.settings import Settings  # noqa: E402


@dataclass
class Figures:
    dataset: str
    latency_s: float
    items: int
    run_s: float
    ingest_s: float  # per item, from here on
    wall_s: float
    llm_s: float
    overhead_s: float
    llm_calls: float

    @property
    def items_per_minute(self) -> float:
        return 60 * self.items / self.run_s


async def measure(dataset_dir: Path, run_dir: Path, *, settings: Settings, latency_s: float, items: int,
                  concurrency: int) -> Figures:  # fmt: skip
    backend = ScriptedBackend(scripted_model, model="scripted-demo", latency_s=latency_s)
    llm = LLMClient.from_settings(settings, backend=backend)
    config = RunConfig.for_run(dataset_dir, model=backend.model, scripted=True, ablations=[], judge=None)
    started = time.perf_counter()
    state = await run_bench(
        config, run_dir, settings=settings, llm=llm, judge=None, limit=items, concurrency=concurrency
    )
    run_s = time.perf_counter() - started
    results = state.results
    return Figures(
        dataset=config.dataset, latency_s=latency_s, items=len(results), run_s=run_s,
        ingest_s=fmean(r.ingest_s for r in results), wall_s=fmean(r.wall_s for r in results),
        llm_s=fmean(r.llm_s for r in results), overhead_s=fmean(r.overhead_s for r in results),
        llm_calls=fmean(r.llm_calls for r in results),
    )  # fmt: skip


def print_table(rows: list[Figures], concurrency: int, embedder: str) -> None:
    print(f"\nInformativeBench replay, scripted model, concurrency {concurrency}, embedder {embedder}")
    header = (f"{'dataset':<16}{'latency':>8}{'items':>6}{'run s':>8}{'items/min':>10}{'ingest s':>9}"
              f"{'calls':>7}{'wall s':>8}{'LLM s':>7}{'overhead s':>11}")  # fmt: skip
    print(header)
    print("-" * len(header))
    for f in rows:
        head = f"{f.dataset:<16}{f.latency_s * 1000:>6.0f}ms{f.items:>6}{f.run_s:>8.1f}{f.items_per_minute:>10.1f}"
        print(f"{head}{f.ingest_s:>9.2f}{f.llm_calls:>7.1f}{f.wall_s:>8.2f}{f.llm_s:>7.2f}{f.overhead_s:>11.2f}")
    print("items/min: end to end (ingestion included). Per item: ingest = its workspace's ingestion (FriendsTV: once,")
    print("spread over the items), calls = LLM calls, wall = the ask end to end, LLM = summed model latency,")
    print("overhead = wall - LLM: askwith's own time per ask.")


async def main(args: argparse.Namespace) -> None:
    settings = Settings.load().replace(embedder=args.embedder)
    root = Path(tempfile.mkdtemp(prefix="askwith-bench-throughput-"))
    rows = []
    for name in args.dataset or DATASETS:
        dataset_dir = root / "datasets" / name
        generate(name, 0, dataset_dir, settings)
        for latency in args.latency or [0.0, 0.05]:
            run_dir = root / "runs" / f"{name}-{int(latency * 1000)}ms"
            figures = await measure(dataset_dir, run_dir, settings=settings, latency_s=latency, items=args.items,
                                    concurrency=args.concurrency)  # fmt: skip
            rows.append(figures)
            print(f"{name} @ {latency * 1000:.0f} ms: {figures.items} items in {figures.run_s:.1f} s", flush=True)
    print_table(rows, args.concurrency, args.embedder)
    print(f"(run directories under {root})")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10, help="Items per dataset (the first N).")
    parser.add_argument("--latency", type=float, action="append", help="Scripted model latency in s (repeatable).")
    parser.add_argument("--concurrency", type=int, default=4, help="Items asked at once.")
    parser.add_argument("--dataset", action="append", choices=DATASETS, help="Only these datasets (repeatable).")
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "hash"), help="Fuzzy-memory embedder.")
    return parser.parse_args()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(parse_args()))
