"""The cost of an ask, with a fake LLM of fixed latency (the scripted model: NOT evidence of answer quality).

    python benchmarks/ask.py                       # needs ASKWITH_BENCH_DATA_DIR (FriendsTV)
    python benchmarks/ask.py --latency 0.5 --questions 20 --concurrent 100 --json figures.json
    python benchmarks/ask.py --processes 2        # this process submits, 2 `askwith worker` processes run the asks:
                                                  # PostgreSQL only (benchmarks/ask_processes.py; target <= 1.5)

Prints, in one run, on the FriendsTV workspace (140 members, 11,593 messages; SQLite, or the empty database
ASKWITH_DATABASE_URL names; clear memory searched as ASKWITH_AGENT_SEARCH says, hybrid by default, and fuzzy memory):
- LLM calls on the critical path of one agent turn (target <= 2; the iAgents code makes 4-7),
- whole-ask wall time / critical-path LLM time, for one ask alone (target <= 1.05),
- N concurrent asks' wall time / one ask's wall time, the same question each time (target <= 1.2), and where the
  ask that finished last lost its time: before its first model call, in its longest gap between calls, after its last;
  CPU per ask is this process's (a PostgreSQL server's own CPU is NOT counted),
- prompt tokens per ask over FriendsTV benchmark questions (target: within the per-ask budget,
  ASKWITH_ASK_TOKEN_BUDGET; the paper reports ~30,000).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.local.workspace import LocalWorkspace  # noqa: E402
from benchmarks.ask_processes import report as report_processes  # noqa: E402
from benchmarks.ask_processes import run_processes  # noqa: E402
from benchmarks.reach_figures import critical_path  # noqa: E402
from bot.asks.read_models.transcripts import Transcript, load_transcript  # noqa: E402
from bot.asks.service import AskOutcome, AskRequest, AskService  # noqa: E402
from bot.bench.friendstv.dataset import build_friendstv_dataset  # noqa: E402
from bot.llm.client import LLMClient  # noqa: E402
from bot.llm.scripted import ScriptedBackend  # noqa: E402
from bot.llm.standin.model import scripted_model  # noqa: E402
from bot.memory.indexer import SessionIndexer  # noqa: E402
from bot.memory.summarizer import SessionSummarizer  # noqa: E402
from bot.memory.vector_index import VectorIndex  # noqa: E402
from bot.memory.wiring import open_memory  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.db import Database  # noqa: E402
from memory_ingest.worker import IngestWorker  # noqa: E402


TARGETS = {"calls_per_turn": 2.0, "wall_over_llm": 1.05, "concurrent_over_one": 1.2}  # and tokens: the ask budget
# When each model call of the ask running in this context answered (its own list per timed ask).
ANSWERED_AT: ContextVar[list[float] | None] = ContextVar("answered_at", default=None)


def timed_scripted_model(request: Any) -> str:  # noqa: ANN401 - an LLMRequest
    """The scripted model, noting when it answers (a call began its fixed latency earlier)."""
    if (answered := ANSWERED_AT.get()) is not None:
        answered.append(time.perf_counter())
    return scripted_model(request)


@dataclass
class Bench:
    service: AskService
    questions: list[AskRequest]
    latency_s: float


@dataclass
class Timeline:
    """One timed ask: when it started and ended, and when each of its model calls answered."""

    started: float
    ended: float
    answered: list[float]

    def waits(self, latency_s: float) -> dict[str, float]:
        """Seconds spent outside model calls: before the first, in the longest gap between two, after the last
        (calls taken one after another, as with one colleague)."""
        if not self.answered:
            return {"before_first_call": self.ended - self.started, "longest_gap": 0.0, "after_last_call": 0.0}
        began = [at - latency_s for at in self.answered]
        gaps = [max(0.0, start - end) for end, start in zip(self.answered, began[1:], strict=False)]
        return {
            "before_first_call": began[0] - self.started,
            "longest_gap": max(gaps, default=0.0),
            "after_last_call": self.ended - self.answered[-1],
        }


async def setup(settings: Settings, *, latency_s: float, questions: int) -> Bench:
    dataset = build_friendstv_dataset(settings.require("bench_data_dir"), seed=0)
    world = next(iter(dataset.worlds.values()))
    port = LocalWorkspace(world)
    db = await Database.open(settings)
    index = VectorIndex.from_settings(settings)
    # Memory indexed within the ingestion run, as `askwith serve` does (the run ends refreshing statistics).
    indexer = SessionIndexer(db, settings, SessionSummarizer(db, None), index)
    report = await IngestWorker(port, db, indexer=indexer).run()
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(timed_scripted_model, latency_s=latency_s))
    # Agents search as in production: ASKWITH_AGENT_SEARCH (hybrid by default, or lexical).
    memory = open_memory(settings, db, index=index)
    service = AskService(settings=settings, db=db, port=port, llm=llm, memory=memory, workspace_id=report.workspace_id)
    requests = [AskRequest(i.asking[0], [i.asking[1]], i.question) for i in dataset.items[:questions]]
    return Bench(service, requests, latency_s)


def critical_llm_seconds(transcript: Transcript) -> float:
    """The model's seconds on the ask's critical path (parallel sub-conversations and parallel talks counted once:
    the longest)."""
    return critical_path(transcript, seconds=True)


def calls_per_turn(transcripts: list[Transcript]) -> tuple[float, int]:
    """Mean and most LLM calls made by one agent turn itself (a sub-conversation's calls belong to its own turns)."""
    counts = [len(t.data["llm_calls"]) for tr in transcripts for v in tr.all_conversations() for t in v.turns]
    return statistics.mean(counts), max(counts)


async def one_ask(bench: Bench, request: AskRequest) -> tuple[AskOutcome, Timeline]:
    answered: list[float] = []
    # The asks timed side by side run in tasks of their own, so each keeps its own list; an ask awaited directly
    # gives the caller's context back as it was.
    token = ANSWERED_AT.set(answered)
    try:
        started = time.perf_counter()
        outcome = await bench.service.ask(request)
        return outcome, Timeline(started, time.perf_counter(), answered)
    finally:
        ANSWERED_AT.reset(token)


async def measure(bench: Bench, concurrent: int) -> dict[str, float]:
    figures = await costs(bench)
    gc.collect()  # the timed runs below start from the same heap, not from the transcripts read above
    figures.update(await overlap(bench, bench.questions[0], concurrent, prefix=""))
    engine_only = replace(bench.questions[0], ablations=["no-clear-memory", "no-fuzzy-memory"])
    figures.update(await overlap(bench, engine_only, concurrent, prefix="engine_"))
    return figures


async def costs(bench: Bench) -> dict[str, float]:
    """Calls and tokens per ask (they do not depend on timing: the questions run side by side, to be quick)."""
    outcomes = await asyncio.gather(*(bench.service.ask(request) for request in bench.questions))
    transcripts = [await load_transcript(bench.service.db, o.ask_id) for o in outcomes]
    mean_calls, most_calls = calls_per_turn(transcripts)
    tokens = [t.cost().prompt_tokens for t in transcripts]
    figures = {
        "calls_per_turn": mean_calls,
        "calls_per_turn_max": most_calls,
        "prompt_tokens": statistics.mean(tokens),
        "prompt_tokens_max": max(tokens),
        "llm_calls_per_ask": statistics.mean(t.cost().llm_calls for t in transcripts),
        "answered": sum(t.ask.status == "done" for t in transcripts) / len(transcripts),
    }
    return figures


async def overlap(bench: Bench, probe: AskRequest, concurrent: int, *, prefix: str) -> dict[str, float]:
    """One ask alone (wall / its critical-path LLM time), then `concurrent` copies of it at once."""
    outcome, timeline = await one_ask(bench, probe)
    alone = timeline.ended - timeline.started
    llm_s = critical_llm_seconds(await load_transcript(bench.service.db, outcome.ask_id))
    cpu, started = time.process_time(), time.perf_counter()
    timed = await asyncio.gather(*(one_ask(bench, probe) for _ in range(concurrent)))
    together = time.perf_counter() - started
    # Where the ask that finished last lost its time, against the same ask alone.
    slowest = max((t for _, t in timed), key=lambda t: t.ended)
    return {
        **{f"{prefix}slowest_{k}_s": v for k, v in slowest.waits(bench.latency_s).items()},
        **{f"{prefix}alone_{k}_s": v for k, v in timeline.waits(bench.latency_s).items()},
        f"{prefix}wall_over_llm": alone / llm_s,
        f"{prefix}one_ask_s": alone,
        f"{prefix}concurrent_over_one": together / alone,
        f"{prefix}concurrent_s": together,
        f"{prefix}cpu_ms_per_ask": 1000 * (time.process_time() - cpu) / concurrent,
    }


def report(figures: dict[str, float], args: argparse.Namespace) -> str:
    ok = {
        "calls_per_turn": figures["calls_per_turn_max"] <= TARGETS["calls_per_turn"],
        "wall_over_llm": figures["wall_over_llm"] <= TARGETS["wall_over_llm"],
        "concurrent_over_one": figures["concurrent_over_one"] <= TARGETS["concurrent_over_one"],
        "prompt_tokens": figures["prompt_tokens_max"] <= figures["ask_token_budget"],
    }
    mark = {k: "ok" if v else "MISSED" for k, v in ok.items()}
    return "\n".join(
        [
            f"askwith ask benchmark: FriendsTV, {len(args.questions_run)} questions, scripted model "
            f"(fixed latency {args.latency:g} s/call; not answer quality); agents' search: {args.agent_search}",
            f"LLM calls per agent turn (critical path): mean {figures['calls_per_turn']:.2f}, "
            f"max {figures['calls_per_turn_max']:.0f}  (target <= 2)  {mark['calls_per_turn']}",
            f"one ask: wall {figures['one_ask_s']:.2f} s / critical-path LLM time = {figures['wall_over_llm']:.3f}"
            f"  (target <= 1.05)  {mark['wall_over_llm']}",
            f"{args.concurrent} concurrent asks: {figures['concurrent_s']:.2f} s / one ask = "
            f"{figures['concurrent_over_one']:.3f}  (target <= 1.2)  {mark['concurrent_over_one']}"
            f"  [CPU {figures['cpu_ms_per_ask']:.0f} ms per ask]",
            f"  where the last of them lost its time, in s (alone in brackets): "
            f"{figures['slowest_before_first_call_s']:.2f} ({figures['alone_before_first_call_s']:.2f}) before its "
            f"first model call, {figures['slowest_longest_gap_s']:.2f} ({figures['alone_longest_gap_s']:.2f}) in its "
            f"longest gap between calls, {figures['slowest_after_last_call_s']:.2f} "
            f"({figures['alone_after_last_call_s']:.2f}) after its last",
            f"  the same with memory search switched off (the engine alone): one ask "
            f"{figures['engine_wall_over_llm']:.3f} x its LLM time; {args.concurrent} at once "
            f"{figures['engine_concurrent_over_one']:.3f} x one"
            f"  [CPU {figures['engine_cpu_ms_per_ask']:.0f} ms per ask]",
            f"prompt tokens per ask: mean {figures['prompt_tokens']:,.0f}, max {figures['prompt_tokens_max']:,.0f}"
            f"  (target: each ask within its budget, {figures['ask_token_budget']:,.0f})  {mark['prompt_tokens']}",
            f"LLM calls per ask: mean {figures['llm_calls_per_ask']:.1f}; asks answered (scripted): "
            f"{figures['answered']:.0%}",
        ]
    )


async def run(settings: Settings, args: argparse.Namespace) -> dict[str, float]:
    bench = await setup(settings, latency_s=args.latency, questions=args.questions)
    gc.freeze()  # as `askwith serve` does once started: the start-up heap (here the workspace too) stays put
    args.questions_run = bench.questions
    args.agent_search = settings.agent_search
    try:
        return await measure(bench, args.concurrent) | {"ask_token_budget": settings.ask_token_limit}
    finally:
        await bench.service.db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0, help="Seconds per fake LLM call.")
    parser.add_argument("--questions", type=int, default=20, help="FriendsTV questions for calls and tokens.")
    parser.add_argument("--concurrent", type=int, default=100, help="Asks run at once.")
    parser.add_argument("--processes", type=int, default=0, help="Run the asks in this many `askwith worker`s.")
    parser.add_argument("--json", metavar="FILE", help="Also write the figures to this JSON file.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load().replace(data_dir=Path(tmp), embedder="hash", llm_concurrency=4 * args.concurrent)
        settings = settings.replace(database_url="") if not settings.database_url else settings
        if args.processes:
            spread = run_processes(
                settings, setup, processes=args.processes, concurrent=args.concurrent, latency_s=args.latency
            )
            figures = asyncio.run(spread)
        else:
            figures = asyncio.run(run(settings, args))
    if args.processes:
        print(report_processes(figures, concurrent=args.concurrent, latency_s=args.latency))
    else:
        print(report(figures, args))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
