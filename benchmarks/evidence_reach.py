"""How much of the evidence a question needs reaches the model (the scripted model: NOT evidence of answer quality).

    python benchmarks/evidence_reach.py                      # needs ASKWITH_BENCH_DATA_DIR (NP, FriendsTV)
    python benchmarks/evidence_reach.py --items 5 --json reach.json
    python benchmarks/evidence_reach.py --datasets schedule-easy,sample --items 3

Every InformativeBench dataset is generated with seed 0 by the project's own generators (plus the bundled `acme`
sample with one multi-party question) and its first items are asked through the product's path (world -> ingestion
with the session indexer -> `AskService`), with the scripted model behind the real LLM client. Every request the
model receives is kept, and per dataset the share of gold evidence messages is measured that

- found: appeared in any agent's memory results (the message ids its searches or whole-history reads returned),
- act: appeared in an act prompt of an agent whose member can see the message,
- consensus: appeared in a consensus prompt of the agent that holds it: the final consensus prompt (the requester's
  side), or the closing-statement prompt of a colleague's agent whose member can see the message (consensus runs
  per side: each colleague's agent states its side over its own notebook, and only the screened statement and the
  lines it cites cross, so a colleague's line reaches consensus in its holder's statement prompt),

counted over the prompts actually sent (a message id written in the prompt text), not re-derived from the record.
Also reported: `consensus_final`, the share that reached the final consensus prompt itself (what crossed).
A line said in several channels at once (FriendsTV stores one utterance once per listener) counts once: any copy of
it will do. Also printed: mean and max prompt tokens per ask, and LLM calls per ask.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.local.registry import SAMPLES_DIR  # noqa: E402
from bot.agents.scripted_model import scripted_model  # noqa: E402
from bot.asks.service import AskRequest  # noqa: E402
from bot.asks.transcripts import load_transcript  # noqa: E402
from bot.bench.generate import BUILDERS  # noqa: E402
from bot.bench.items import BenchItem, Dataset, Metric, load_items, write_dataset  # noqa: E402
from bot.bench.replay import Replays  # noqa: E402
from bot.llm.client import LLMClient  # noqa: E402
from bot.llm.scripted import ScriptedBackend  # noqa: E402
from bot.llm.types import LLMRequest  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.db import Database  # noqa: E402
from bot.world import World  # noqa: E402


DATASETS = ("schedule-easy", "schedule-medium", "schedule-hard", "np", "friendstv", "sample")
DEFAULT_ITEMS = {"schedule-easy": 5, "schedule-medium": 5, "schedule-hard": 5, "np": 10, "friendstv": 20}
SEED = 0
_ME = re.compile(r"You are (\S+)'s askwith agent")


# ---------------------------------------------------------------------- the bundled sample
def sample_dataset() -> Dataset:
    """The acme sample with the README's own multi-party question (alice asks bob and carol)."""
    world = World.load(SAMPLES_DIR / "acme.json")
    item = BenchItem(
        id="sample-001",
        dataset="sample",
        world="worlds/acme.json",
        asking=("alice", "bob"),
        question="When is bob at the dentist and when is room 4B booked?",
        metric=Metric.JUDGE,
        gold={"answer": "Thursday 10:00-11:30; Thursday 15:00-17:00"},
        evidence=("m0000008", "m0000012"),
        provenance={"colleagues": ["bob", "carol"]},
    )
    return Dataset("sample", SEED, [item], {"worlds/acme.json": world}, "The acme sample.")


# ---------------------------------------------------------------------- recording what the model is sent
class RecordingBackend(ScriptedBackend):
    """The scripted model, keeping every request it answers (the prompts actually sent)."""

    def __init__(self) -> None:
        super().__init__(scripted_model, recorded=None)

    def take(self) -> list[LLMRequest]:
        taken = list(self.requests)
        self.requests.clear()
        return taken


@dataclass
class Evidence:
    """One gold line: the ids of all its copies, and who may see each copy."""

    ids: tuple[str, ...]
    holders: dict[str, frozenset[str]]  # copy id -> handles of the members who can see it


@dataclass
class ItemReach:
    evidence: int
    found: int
    act: int
    consensus: int
    final: int  # of `consensus`: in the final consensus prompt itself
    prompt_tokens: int
    llm_calls: int
    call_tokens: list[int] = field(default_factory=list)  # prompt tokens of each call


@dataclass
class DatasetReach:
    items: list[ItemReach] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        total = sum(i.evidence for i in self.items)
        found, act, consensus, final = (
            sum(getattr(i, k) for i in self.items) for k in ("found", "act", "consensus", "final")
        )
        tokens = [i.prompt_tokens for i in self.items] or [0]
        per_call = [t for i in self.items for t in i.call_tokens] or [0]
        return {
            "items": len(self.items),
            "evidence": total,
            "found": _share(found, total),
            "act": _share(act, total),
            "consensus": _share(consensus, total),
            "consensus_of_found": _share(consensus, found),
            "consensus_final": _share(final, total),
            "prompt_tokens_mean": statistics.mean(tokens),
            "prompt_tokens_max": max(tokens),
            "llm_calls_per_ask": statistics.mean([i.llm_calls for i in self.items] or [0]),
            "prompt_tokens_per_call_mean": statistics.mean(per_call),
            "prompt_tokens_per_call_max": max(per_call),
        }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def gold_lines(world: World, ids: Iterable[str]) -> list[Evidence]:
    """The item's evidence grouped into lines: copies of one utterance (same sender, text and time) are one line."""
    names = {m.id: m.name for m in world.members.values()}
    where: dict[str, tuple[Any, frozenset[str]]] = {}
    copies: dict[tuple[str, str, str], list[Any]] = {}
    for channel_id, messages in world.messages.items():
        seers = frozenset(names[m] for m in world.channels[channel_id].member_ids)
        for message in messages:
            where[message.id] = (message, seers)
            copies.setdefault((message.sender_id, message.text, message.ts.isoformat()), []).append(message.id)
    lines: dict[tuple[str, str, str], Evidence] = {}
    for mid in ids:
        message, _ = where[mid]
        key = (message.sender_id, message.text, message.ts.isoformat())
        group = copies[key]
        lines[key] = Evidence(tuple(group), {c: where[c][1] for c in group})
    return list(lines.values())


def _mentions(text: str, message_id: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(message_id)}(?![\w-])", text) is not None


def _speaker(request: LLMRequest) -> str:
    found = _ME.search(request.messages[0]["content"]) if request.messages else None
    return found[1] if found else ""


def reach_of(lines: list[Evidence], found_ids: set[str], requests: list[LLMRequest]) -> tuple[int, int, int, int]:
    """(found, act, consensus, final consensus) line counts; act and statement prompts count for their holder."""

    def prompts(purpose: str) -> list[tuple[str, str]]:
        return [(_speaker(r), "\n".join(m["content"] for m in r.messages)) for r in requests if r.purpose == purpose]

    def held(line: Evidence, sent: list[tuple[str, str]]) -> bool:
        return any(me in line.holders[i] and _mentions(text, i) for me, text in sent for i in line.ids)

    acts, statements = prompts("act"), prompts("statement")
    final = "\n".join(text for _, text in prompts("consensus"))
    found = sum(any(i in found_ids for i in line.ids) for line in lines)
    act = sum(held(line, acts) for line in lines)
    in_final = [any(_mentions(final, i) for i in line.ids) for line in lines]
    reached = sum(f or held(line, statements) for f, line in zip(in_final, lines, strict=True))
    return found, act, reached, sum(in_final)


# ---------------------------------------------------------------------- running a dataset
async def run_dataset(name: str, settings: Settings, items: int, workdir: Path) -> DatasetReach:
    dataset = sample_dataset() if name == "sample" else BUILDERS[name](settings, SEED)
    directory = workdir / name
    write_dataset(dataset, directory)
    chosen = load_items(directory)[:items]
    backend = RecordingBackend()
    llm = LLMClient.from_settings(settings, backend=backend)
    run_settings = settings.replace(database_url=f"sqlite+aiosqlite:///{(workdir / f'{name}.db').resolve()}")
    db = await Database.open(run_settings)
    reach = DatasetReach()
    try:
        replays = Replays(run_settings, db, llm, dataset_dir=directory, fuzzy=True, summarizer_llm=None)
        for item in chosen:
            reach.items.append(await run_item(item, dataset, replays, db, backend))
    finally:
        await db.close()
    return reach


async def run_item(item: BenchItem, dataset: Dataset, replays: Replays, db: Database, backend: RecordingBackend):  # noqa: ANN201
    replay, _ = await replays.get(item.world)
    backend.take()  # drop anything sent before this ask
    colleagues = list(item.provenance.get("colleagues") or [item.asking[1]])
    outcome = await replay.service.ask(AskRequest(item.asking[0], colleagues, item.question))
    requests = backend.take()
    transcript = await load_transcript(db, outcome.ask_id)
    found_ids = {
        hit for view in transcript.all_conversations() for queries in view.queries.values() for q in queries
        for hit in q.hit_ids
    }  # fmt: skip
    lines = gold_lines(dataset.worlds[item.world], item.evidence)
    found, act, consensus, final = reach_of(lines, found_ids, requests)
    cost = transcript.cost()
    calls = [c.prompt_tokens for c in transcript.calls]
    return ItemReach(len(lines), found, act, consensus, final, cost.prompt_tokens, cost.llm_calls, calls)


def report(figures: dict[str, dict[str, Any]], budget: int, ask_budget: int) -> str:
    head = (
        f"{'dataset':16} {'items':>5} {'lines':>5} {'found':>6} {'act':>6} {'cons.':>6} {'c/found':>7} {'final':>6} "
    )
    head += f"{'tokens/ask':>10} {'max':>7} {'calls/ask':>9} {'tokens/call':>11} {'max':>6}"
    rows = [
        f"{name:16} {f['items']:>5} {f['evidence']:>5} {f['found']:>6.2f} {f['act']:>6.2f} {f['consensus']:>6.2f} "
        f"{f['consensus_of_found']:>7.2f} {f['consensus_final']:>6.2f} "
        f"{f['prompt_tokens_mean']:>10,.0f} {f['prompt_tokens_max']:>7,} "
        f"{f['llm_calls_per_ask']:>9.1f} {f['prompt_tokens_per_call_mean']:>11,.0f} "
        f"{f['prompt_tokens_per_call_max']:>6,}"
        for name, f in figures.items()
    ]
    title = "evidence reach (scripted model, seed 0; mechanics, not answer quality)"
    budget_line = (
        f"evidence budget: {budget:,} tokens per prompt (ASKWITH_EVIDENCE_BUDGET_TOKENS / ASKWITH_CONTEXT_PROFILE); "
        f"ask budget: {ask_budget:,} prompt tokens per ask (ASKWITH_ASK_TOKEN_BUDGET)"
    )
    return "\n".join([title, budget_line, head, *rows])


async def run(settings: Settings, args: argparse.Namespace, workdir: Path) -> dict[str, dict[str, Any]]:
    figures = {}
    for name in args.datasets:
        items = args.items or DEFAULT_ITEMS.get(name, 1)
        figures[name] = (await run_dataset(name, settings, items, workdir)).figures()
        print(f"{name}: done", file=sys.stderr, flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=0, help="Items per dataset (default: 5 Schedule, 10 NP, 20 FTV).")
    parser.add_argument("--datasets", default=",".join(DATASETS), help="Comma list of datasets to run.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures to this JSON file.")
    parser.add_argument(
        "--embedder", default="hash", help="hash (fast, default) or minilm (the real model: what hybrid search needs)."
    )
    args = parser.parse_args()
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load().replace(data_dir=Path(tmp), embedder=args.embedder, chroma_host="", ablations="")
        figures = asyncio.run(run(settings, args, Path(tmp)))
    print(report(figures, settings.evidence_budget, settings.ask_token_limit))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
