"""Robustness smoke run on a real local model: a few InformativeBench items per dataset and a few negotiations.

    python benchmarks/real_model_smoke.py                   # ASKWITH_LOCAL_LLM, else the packaged smollm2 GGUF
    python benchmarks/real_model_smoke.py --items 3 --negotiations 2 --max-turns 3 --out smoke-out

The datasets are generated into a temporary directory (NP and FriendsTV need ASKWITH_BENCH_DATA_DIR; without it
they are skipped). Each item is asked through the product's own path (world -> ingestion -> AskService), with
extractive session summaries (a 135M model summarising thousands of sessions would take hours). Prints: items run,
items terminated (an answer or a recorded user-readable failure; target 100 %), crashes (target 0), malformed outputs
and how each was handled (from the LLM call records and the turn errors), tokens/s and wall time per item. Every
malformed reply is written verbatim to OUT/malformed.jsonl, so each case can be replayed in a regression test.

Scores are printed too, but they are smoke-test figures of a 135M model, NOT quality claims.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.asks.read_models.transcripts import load_transcript  # noqa: E402
from bot.bench.generate import DATASETS, generate  # noqa: E402
from bot.bench.items import BenchItem, load_items  # noqa: E402
from bot.bench.replay import Replays  # noqa: E402
from bot.bench.run_config import RunConfig  # noqa: E402
from bot.bench.runner import run_item, run_settings  # noqa: E402
from bot.llm.client import LLMClient  # noqa: E402
from bot.llm.provider import open_llm_client  # noqa: E402
from bot.llm.structured import ReplyProblem, check_reply  # noqa: E402
from bot.llm.types import LLMBackend, LLMReply, LLMRequest, LLMTotals  # noqa: E402
from bot.negotiation.engine import NegotiationEngine  # noqa: E402
from bot.negotiation.scenario import SETTINGS, generate_scenario  # noqa: E402
from bot.negotiation.transcript import NegotiationOptions  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.db import Database  # noqa: E402


NEEDS_SOURCE_DATA = ("np", "friendstv")
CLIENT_OUTPUT_ERROR = "The language model's answer to"  # the client's own LLMOutputError: already recorded
QUALITY_NOTE = "smoke-test figures of a 135M model, not quality claims"


class RecordingBackend:
    """Passes requests through and keeps every reply that is unusable as it stands (exact text), for replay."""

    def __init__(self, inner: LLMBackend) -> None:
        self.inner = inner
        self.model = inner.model
        self.endpoint = getattr(inner, "endpoint", inner.model)
        self.malformed: list[dict[str, Any]] = []
        self.context = ""  # what is running (item or negotiation), written with each case

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        reply = await self.inner.complete(request, response_format=response_format)
        kind = _problem(reply.text, request.json_schema)
        if kind is not None:
            case = {"context": self.context, "purpose": request.purpose, "kind": kind, "text": reply.text}
            self.malformed.append(case)
        return reply

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


def _problem(text: str, schema: dict[str, Any] | None) -> str | None:
    if schema is None:
        return ReplyProblem.EMPTY if not text.strip() else None
    try:
        check_reply(text, schema)
    except ReplyProblem as exc:
        return exc.kind
    return None


@dataclass
class Row:
    what: str  # dataset or negotiation setting
    name: str
    terminated: bool
    crashed: bool
    wall_s: float
    score: float | None = None
    outcome: str = ""
    turn_errors: list[str] = field(default_factory=list)


@dataclass
class Smoke:
    rows: list[Row] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------- items
async def run_dataset(
    name: str, settings: Settings, llm: LLMClient, recorder: RecordingBackend, work: Path, items: int, smoke: Smoke
) -> None:
    dataset_dir = work / "datasets" / name
    await asyncio.to_thread(generate, name, 0, dataset_dir, settings)
    chosen = load_items(dataset_dir)[:items]
    config = RunConfig.for_run(dataset_dir, model=llm.model, scripted=False, ablations=[], judge=None)
    run_dir = work / "runs" / name
    run_dir.mkdir(parents=True, exist_ok=True)
    local = run_settings(settings, run_dir)
    db = await Database.open(local)
    try:
        replays = Replays(local, db, llm, dataset_dir=dataset_dir, fuzzy=True, summarizer_llm=None)
        for item in chosen:
            recorder.context = f"{name}/{item.id}"
            smoke.rows.append(await run_one(name, item, replays, db, config, smoke, recorder))
            print(_row_line(smoke.rows[-1]), flush=True)
            for error in smoke.rows[-1].turn_errors:
                print(f"      turn error {error}", flush=True)
    finally:
        await db.close()


async def run_one(
    name: str,
    item: BenchItem,
    replays: Replays,
    db: Database,
    config: RunConfig,
    smoke: Smoke,
    recorder: RecordingBackend,
) -> Row:
    started = time.perf_counter()
    try:
        result = await run_item(item, replays, db, config=config, judge=None)
    except Exception:  # a crash is what this run looks for: count it, keep the traceback, go on
        smoke.crashes.append(f"{name}/{item.id}:\n{traceback.format_exc()}")
        return Row(name, item.id, terminated=False, crashed=True, wall_s=time.perf_counter() - started)
    wall_s = time.perf_counter() - started
    if result is None:  # the model did not respond at all: not terminated by the ask
        return Row(name, item.id, terminated=False, crashed=False, wall_s=wall_s, outcome="model unavailable")
    terminated = result.status in ("done", "failed") and bool(result.answer or result.failure)
    errors = await _turn_errors(db, result.ask_id, recorder) if result.ask_id else []
    outcome = result.status if not result.failure else f"{result.status}: {result.failure}"
    return Row(name, item.id, terminated, False, wall_s, result.score, outcome, errors)


async def _turn_errors(db: Database, ask_id: int, recorder: RecordingBackend) -> list[str]:
    """The ask's turn errors; a JSON answer of the right shape that the agent still could not use (the client saw
    nothing wrong with it) is added to the malformed cases, with its text."""
    transcript = await load_transcript(db, ask_id)
    errors = []
    for conversation in transcript.all_conversations():
        for turn in conversation.turns:
            error = (turn.data or {}).get("error")
            if not error:
                continue
            errors.append(f"{error.get('type')}: {str(error.get('message', ''))[:160]}")
            if error.get("reply") and not str(error.get("message", "")).startswith(CLIENT_OUTPUT_ERROR):
                purpose = (turn.data.get("llm_calls") or [{}])[-1].get("purpose", "?")
                case = {"purpose": purpose, "kind": "unusable", "error": error["message"], "text": error["reply"]}
                recorder.malformed.append({"context": recorder.context, **case})
    return errors


# ---------------------------------------------------------------------- negotiations
async def run_negotiations(
    llm: LLMClient, recorder: RecordingBackend, runs: int, max_turns: int, smoke: Smoke
) -> None:
    for index in range(runs):
        setting = SETTINGS[index % len(SETTINGS)]
        scenario = generate_scenario(setting, seed=index)
        recorder.context = f"negotiation/{setting}/{index}"
        engine = NegotiationEngine(
            scenario, {agent: llm for agent in scenario.agents}, options=NegotiationOptions(max_turns=max_turns)
        )
        started = time.perf_counter()
        try:
            result = await engine.run()
        except Exception:
            smoke.crashes.append(f"negotiation {setting} #{index}:\n{traceback.format_exc()}")
            smoke.rows.append(Row("negotiation", f"{setting}#{index}", False, True, time.perf_counter() - started))
            continue
        wall_s = time.perf_counter() - started
        outcome = result.outcome.value + (f" ({result.error})" if result.error else "")
        row = Row("negotiation", f"{setting}#{index}", True, False, wall_s, result.social_welfare, outcome)
        smoke.rows.append(row)
        print(_row_line(row), flush=True)


# ---------------------------------------------------------------------- report
def _row_line(row: Row) -> str:
    score = "" if row.score is None else f" score={row.score:.2f}"
    state = "CRASH" if row.crashed else "terminated" if row.terminated else "NOT terminated"
    return f"  {row.what:16} {row.name:28} {state:14} {row.wall_s:7.1f} s{score}  {row.outcome[:100]}"


def report(smoke: Smoke, totals: LLMTotals, recorder: RecordingBackend, model: str, wall_s: float) -> str:
    rows = smoke.rows
    items = [r for r in rows if r.what != "negotiation"]
    lines = [f"\n=== Real-model smoke run: {model} ===", f"wall time: {wall_s:.0f} s"]
    for label, group in (("bench items", items), ("negotiations", [r for r in rows if r.what == "negotiation"])):
        done, crashed = sum(r.terminated for r in group), sum(r.crashed for r in group)
        share = f"{done / len(group):.0%}" if group else "-"
        lines.append(f"{label}: run {len(group)}, terminated {done} ({share}), crashes {crashed}")
    if smoke.skipped:
        lines.append(f"skipped: {', '.join(smoke.skipped)}")
    lines.append("wall time per item (s): " + ", ".join(f"{r.name}={r.wall_s:.0f}" for r in rows))
    lines += _llm_lines(totals, recorder, items)
    lines.append(f"scores ({QUALITY_NOTE}):")
    for what in dict.fromkeys(r.what for r in rows):
        scored = [r.score for r in rows if r.what == what and r.score is not None]
        label = "mean social welfare" if what == "negotiation" else "mean score"
        mean = f"{sum(scored) / len(scored):.2f}" if scored else "-"
        outcomes = _counts(r.outcome.split(":")[0].split(" (")[0] for r in rows if r.what == what)
        lines.append(f"  {what:16} {label} {mean} over {len(scored)}; outcomes: {outcomes}")
    return "\n".join(lines)


def _llm_lines(totals: LLMTotals, recorder: RecordingBackend, items: list[Row]) -> list[str]:
    seconds = max(totals.latency_s, 1e-9)
    all_tokens = totals.prompt_tokens + totals.completion_tokens
    turn_errors = Counter(e.split(":", 1)[0] for r in items for e in r.turn_errors)
    return [
        f"LLM: {totals.calls} calls, {totals.attempts} attempts, {totals.prompt_tokens:,} prompt + "
        f"{totals.completion_tokens:,} completion tokens in {totals.latency_s:.0f} s of LLM time",
        f"tokens/s: {totals.completion_tokens / seconds:.1f} completion, {all_tokens / seconds:.0f} prompt+completion",
        f"calls failed: {totals.failures}; by purpose: {dict(sorted(totals.by_purpose.items()))}",
        "malformed replies seen (exact texts in malformed.jsonl): " + _counts(c["kind"] for c in recorder.malformed),
        "calls that met one, by first problem -> handling: " + _counts_dict(totals.malformed),
        "turn errors recorded (the ask went on, or ended with a readable failure): " + _counts_dict(turn_errors),
    ]


def _counts(values: Any) -> str:
    return _counts_dict(Counter(values))


def _counts_dict(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"


# ---------------------------------------------------------------------- main
def smoke_settings(args: argparse.Namespace, data_dir: Path) -> Settings:
    settings = Settings.load()
    local = settings.local_llm if settings.local_llm.strip().lower() not in ("", "off") else "smollm2"
    return settings.replace(
        data_dir=data_dir, local_llm=local, max_turns=args.max_turns, llm_max_tokens=args.max_tokens,
        llm_max_retries=1, llm_timeout_seconds=args.timeout, recursion_llm_budget=4, embedder="minilm",
    )  # fmt: skip


async def main(args: argparse.Namespace) -> Smoke:
    with tempfile.TemporaryDirectory(prefix="askwith-smoke-") as tmp:
        work = Path(tmp)
        settings = smoke_settings(args, work)
        smoke = Smoke()
        started = time.perf_counter()
        async with open_llm_client(settings) as llm:
            recorder = RecordingBackend(llm.backend)
            llm.backend = recorder
            for name in args.datasets:
                if name in NEEDS_SOURCE_DATA and settings.bench_data_dir is None:
                    smoke.skipped.append(f"{name} (ASKWITH_BENCH_DATA_DIR unset)")
                    continue
                print(f"{name}:", flush=True)
                await run_dataset(name, settings, llm, recorder, work, args.items, smoke)
            print("negotiation:", flush=True)
            await run_negotiations(llm, recorder, args.negotiations, args.negotiation_turns, smoke)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        with (out / "malformed.jsonl").open("w") as file:
            for case in recorder.malformed:
                file.write(json.dumps(case, ensure_ascii=False) + "\n")
        (out / "crashes.txt").write_text("\n\n".join(smoke.crashes))
        print(report(smoke, llm.totals, recorder, llm.model, time.perf_counter() - started))
        for crash in smoke.crashes:
            print(f"\nCRASH {crash}")
    return smoke


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=2, help="items per dataset")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--negotiations", type=int, default=2, help="negotiation runs (settings alternate)")
    parser.add_argument("--negotiation-turns", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=3, help="utterances per agent conversation")
    parser.add_argument("--max-tokens", type=int, default=320, help="reply-length cap per call")
    parser.add_argument("--timeout", type=float, default=180.0, help="per-attempt time-out, seconds")
    parser.add_argument("--out", default="smoke-out", help="where malformed.jsonl and crashes.txt go")
    return parser.parse_args()


if __name__ == "__main__":
    smoke = asyncio.run(main(parse_args()))
    sys.exit(1 if smoke.crashes else 0)
