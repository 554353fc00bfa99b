"""Where the evidence a question needs gets to, and what an ask costs (scripted stand-in: NOT answer quality).

    python benchmarks/evidence_reach.py --json reach.json      # needs ASKWITH_BENCH_DATA_DIR (NP, FriendsTV)
    python benchmarks/evidence_reach.py --datasets friendstv --items 5 --misses
    python benchmarks/evidence_reach.py --embedder hash         # lexical stand-in embeddings, marked in the output

Every InformativeBench dataset is generated with seed 0 by the project's own generators (plus the bundled `acme`
sample) and its first items are asked through the product's path (world -> ingestion with the session indexer ->
`AskService`), with the scripted stand-in behind the real LLM client and real MiniLM embeddings. Per dataset, of
the gold evidence lines (an utterance stored once per listener counts once; any copy will do):

- shown: in any prompt sent to a model (any agent, any purpose; its id followed by its words),
- shared: left a colleague's or a third party's agent (released by a shared turn or a crossed closing statement),
- final: in the requester's consensus prompt (the call that writes the answer), id and words,
- cited: cited by a claim of the final answer (as recorded),
- ceiling_without_recursion: visible to the asking members (requester and colleagues) at all,
- sharing_no_word: holding none of the words the question's parts ask about (by stem, names aside): the stand-in
  matches words, so it can never take such a line for an answer, only carry it along with a line it did take (or,
  in whole-history mode, read it with everything else: Schedule's busy hours share no word with "when can we meet"),
- needs_third_party_share: items with a gold line only people outside the asking members can see, and
  subconversation_share: of those, the items where at least one sub-conversation was opened ("n/a" when no item
  needs a third party).
Beside every recall figure, per dataset (the second table): cited lines per answer and cited precision (gold lines
among the lines the answer cites, over all the items' citations; a line answering a part counts as gold), the
answer's length (tokens, lines) and its score by the paper's metric scored by rules (`bot.bench.scoring`: Schedule's
count / F1 / IoU, NP's concise match, FriendsTV's token F1) with EM and F1 where the dataset has them. A "cite
everything" answer shows as low precision; a wrong answer as a low score, whatever its recall.
Cost: calls_critical_path_mean (sequential model calls from question to answer: turns one after another, a
sub-conversation inside its turn, parallel talks and parallel sub-conversations counted once), llm_calls_mean,
prompt_tokens_mean/max. `--wall` also times FriendsTV asks with one colleague and with two (a fixed latency per
call), and prints the ratio.

What these figures do NOT show: whether the answer is right (the stand-in matches words; it does not reason), how a
real model would plan, search or cite, or what a member would approve ("ask me" members are not simulated: every
policy is auto). `shown` counts a line in any prompt, even one the agent's own member sees.
`shared` never counts the requester's own lines (they need not leave anyone), so it can be below `final`. `final`
and `cited` count ids, not whether the words quoted were enough. Token counts are estimates (four characters a
token); wall times are with a simulated per-call latency on a shared machine, so only their ratio means anything.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.local.registry import SAMPLES_DIR  # noqa: E402
from benchmarks.reach_figures import ItemFigures, gold_lines, measure, summary  # noqa: E402
from bot.asks.read_models.transcripts import load_transcript  # noqa: E402
from bot.asks.service import AskRequest  # noqa: E402
from bot.bench.answer_metrics import tokens  # noqa: E402
from bot.bench.citations import cited_figures, claimed_sources, line_keys  # noqa: E402
from bot.bench.generate import BUILDERS  # noqa: E402
from bot.bench.items import BenchItem, Dataset, Metric, load_items, write_dataset  # noqa: E402
from bot.bench.replay import Replays  # noqa: E402
from bot.bench.scoring import rule_score  # noqa: E402
from bot.llm.client import LLMClient  # noqa: E402
from bot.llm.scripted import ScriptedBackend  # noqa: E402
from bot.llm.standin.model import scripted_model  # noqa: E402
from bot.llm.types import LLMRequest  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.db import Database  # noqa: E402
from bot.store.world import World  # noqa: E402


DATASETS = ("schedule-easy", "schedule-medium", "schedule-hard", "np", "friendstv", "sample")
DEFAULT_ITEMS = {"schedule-easy": 5, "schedule-medium": 5, "schedule-hard": 5, "np": 10, "friendstv": 20}
SEED = 0
ANSWER_CHARS = 160  # of each answer, in the --misses listing
WALL_LATENCY_S = 0.05  # simulated seconds per model call for --wall


def sample_dataset() -> Dataset:
    """The acme sample with the README's own multi-party question (alice asks bob and carol)."""
    world = World.load(SAMPLES_DIR / "acme.json")
    item = BenchItem(
        id="sample-001", dataset="sample", world="worlds/acme.json", asking=("alice", "bob"),
        question="When is bob at the dentist and when is room 4B booked?", metric=Metric.JUDGE,
        gold={"answer": "Thursday 10:00-11:30; Thursday 15:00-17:00"}, evidence=("m0000008", "m0000012"),
        provenance={"colleagues": ["bob", "carol"]},
    )  # fmt: skip
    return Dataset("sample", SEED, [item], {"worlds/acme.json": world}, "The acme sample.")


class RecordingBackend(ScriptedBackend):
    """The scripted stand-in, keeping every request it answers (the prompts actually sent)."""

    def __init__(self, latency_s: float = 0.0) -> None:
        super().__init__(scripted_model, recorded=None, latency_s=latency_s)

    def take(self) -> list[LLMRequest]:
        taken = list(self.requests)
        self.requests.clear()
        return taken


def colleagues_of(item: BenchItem, world: World, extra: int) -> list[str]:
    """The item's colleagues, plus `extra` more people the requester talks with (by name), for the wall-time pass."""
    asked = list(item.provenance.get("colleagues") or [item.asking[1]])
    me = item.asking[0]
    contacts = sorted({m for c in world.channels.values() if me in c.member_ids for m in c.member_ids})
    return asked + [c for c in contacts if c not in asked and c != me][:extra]


async def run_dataset(
    name: str, settings: Settings, items: int, workdir: Path, *, extra: int = 0, latency_s: float = 0.0
) -> list[ItemFigures]:
    dataset = sample_dataset() if name == "sample" else BUILDERS[name](settings, SEED)
    directory = workdir / f"{name}-{extra}"
    write_dataset(dataset, directory)
    backend = RecordingBackend(latency_s)
    llm = LLMClient.from_settings(settings, backend=backend)
    db_file = (workdir / f"{name}-{extra}.db").resolve()
    run_settings = settings.replace(database_url=f"sqlite+aiosqlite:///{db_file}")
    db = await Database.open(run_settings)
    out = []
    try:
        replays = Replays(run_settings, db, llm, dataset_dir=directory, fuzzy=True, summarizer_llm=None)
        keys_of = {file: line_keys(world) for file, world in dataset.worlds.items()}
        for item in load_items(directory)[:items]:
            replay, _ = await replays.get(item.world)
            world, keys = dataset.worlds[item.world], keys_of[item.world]
            colleagues = colleagues_of(item, world, extra)
            backend.take()  # drop anything sent before this ask
            started = time.perf_counter()
            outcome = await replay.service.ask(AskRequest(item.asking[0], colleagues, item.question))
            wall = time.perf_counter() - started
            transcript = await load_transcript(db, outcome.ask_id)
            lines = gold_lines(world, item.evidence)
            names = {m.id: m.name for m in world.members.values()}
            figures = measure(lines, transcript, backend.take(), requester=names[item.asking[0]],
                              asking=[names[m] for m in (item.asking[0], *colleagues)],
                              question=item.question)  # fmt: skip
            figures.wall_s = wall
            beside(figures, item, outcome.answer or "", cited_figures(world, item, claimed_sources(transcript), keys))
            out.append(figures)
    finally:
        await db.close()
    return out


def beside(figures: ItemFigures, item: BenchItem, answer: str, cited: dict[str, int]) -> None:
    """The answer's citations, length and score, kept beside the item's recall figures."""
    score = rule_score(item, answer)
    figures.cited_lines, figures.cited_gold = cited["cited"], cited["cited_gold"]
    figures.score, figures.em, figures.f1 = score.value, score.detail.get("em"), score.detail.get("f1")
    figures.containment, figures.answer = score.detail.get("containment"), answer
    figures.answer_tokens, figures.answer_lines = len(tokens(answer)), len(answer.strip().splitlines())


def _figure(value: float | None, width: int = 7) -> str:
    return f"{'n/a':>{width}}" if value is None else f"{value:>{width}.2f}"


def precision_report(figures: dict[str, dict[str, Any]]) -> str:
    """Per dataset: recall (cited) beside cited precision, the answer's length and its score, EM and F1."""
    head = (f"{'dataset':16} {'items':>5} {'cited':>7} {'cit.lines':>9} {'cit.prec':>8} {'tokens':>7} {'lines':>6}"
            f" {'score':>7} {'EM':>7} {'F1':>7} {'contain':>7}")  # fmt: skip
    rows = [
        f"{name:16} {f['items']:>5} {f['cited']:>7.2f} {f['cited_lines_mean']:>9.1f}"
        f" {_figure(f['cited_precision'], 8)} {f['answer_tokens_mean']:>7.1f} {f['answer_lines_mean']:>6.1f}"
        f" {f['score_mean']:>7.2f}"
        f" {_figure(f['em_mean'])} {_figure(f['f1_mean'])} {_figure(f['containment_mean'])}"
        for name, f in figures.items()
        if "items" in f
    ]
    note = (
        "cited = recall (gold lines cited / gold lines); cit.prec = gold lines among the cited; score = the paper's"
        " metric by rules (FriendsTV: token F1; NP: concise match); contain = the gold anywhere in the answer (a"
        " labelled extra: it rewards pasting); n/a = the figure does not apply"
    )
    return "\n".join(["precision and correctness beside recall", head, *rows, note])


def report(figures: dict[str, dict[str, Any]], settings: Settings) -> str:
    cols = ("shown", "shared", "final", "cited", "cited_of_final", "ceiling_without_recursion", "sharing_no_word",
            "needs_third_party_share", "subconversation_share")  # fmt: skip
    heads = ("shown", "shared", "final", "cited", "cit/fin", "ceiling", "noword", "need3rd", "sub/need")
    head = f"{'dataset':16} {'items':>5} {'lines':>5} " + " ".join(f"{h:>7}" for h in heads)
    head += f" {'sub/item':>8} {'crit.calls':>10} {'calls':>6} {'tokens/ask':>10} {'max':>7}"
    rows = [
        f"{name:16} {f['items']:>5} {f['lines']:>5} "
        + " ".join(_figure(f[c]) for c in cols)
        + f" {f['subconversations_per_item']:>8.2f} {f['calls_critical_path_mean']:>10.1f} {f['llm_calls_mean']:>6.1f}"
        f" {f['prompt_tokens_mean']:>10,} {f['prompt_tokens_max']:>7,}"
        for name, f in figures.items()
        if "items" in f
    ]
    marked = "" if settings.embedder == "minilm" else f"  [EMBEDDER {settings.embedder.upper()}: lexical stand-in]"
    return "\n".join([
        f"evidence reach (scripted stand-in, seed 0, embedder {settings.embedder}; mechanics, not answer quality)"
        + marked,
        f"evidence budget {settings.evidence_budget:,} tokens per prompt; ask budget {settings.ask_token_limit:,}",
        head, *rows, "", precision_report(figures),
    ])  # fmt: skip


def misses(name: str, items: list[ItemFigures]) -> list[str]:
    """Item by item: the answer with its score and citations, then each gold line that did not reach the final
    prompt, and who alone could see it."""
    out = []
    for index, item in enumerate(items):
        said = " / ".join(item.answer.split("\n"))[:ANSWER_CHARS]
        out.append(f"{name} #{index}: score {item.score:.2f}, cited {item.cited_gold}/{item.cited_lines} gold: {said}")
        for where in item.where:
            if not where["final"]:
                held = ", ".join(where["held_only_by"]) or "the asking members"
                words = ", ".join(where["words_shared"]) or "none"
                out.append(f"{name} #{index}: {where['ids'][0]} missed (seen by {held}; shown={where['shown']}, "
                           f"shared={where['shared']}; {item.subconversations} sub-conversations; "
                           f"words of the question it holds: {words})")  # fmt: skip
    return out


async def run(settings: Settings, args: argparse.Namespace, workdir: Path) -> dict[str, dict[str, Any]]:
    figures: dict[str, dict[str, Any]] = {}
    for name in args.datasets:
        items = await run_dataset(name, settings, args.items or DEFAULT_ITEMS.get(name, 1), workdir)
        figures[name] = summary(items)
        if args.misses:
            print("\n".join(misses(name, items)), file=sys.stderr)
        print(f"{name}: done", file=sys.stderr, flush=True)
    if args.wall:
        n = args.items or DEFAULT_ITEMS["friendstv"]
        one = await run_dataset("friendstv", settings, n, workdir, extra=0, latency_s=args.wall_latency)
        two = await run_dataset("friendstv", settings, n, workdir, extra=1, latency_s=args.wall_latency)
        wall_one, wall_two = (sum(i.wall_s for i in run) for run in (one, two))
        figures["wall"] = {"latency_s": args.wall_latency, "one_colleague_s": round(wall_one, 2),
                           "two_colleagues_s": round(wall_two, 2), "ratio": round(wall_two / wall_one, 3),
                           "critical_one": summary(one)["calls_critical_path_mean"],
                           "critical_two": summary(two)["calls_critical_path_mean"]}  # fmt: skip
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=0, help="Items per dataset (default: 5 Schedule, 10 NP, 20 FTV).")
    parser.add_argument("--datasets", default=",".join(DATASETS), help="Comma list of datasets to run.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures to this JSON file.")
    parser.add_argument("--embedder", default="minilm", help="minilm (default, the real model) or hash (lexical).")
    parser.add_argument("--misses", action="store_true", help="List answers and gold lines missing at the end.")
    parser.add_argument("--wall", action="store_true", help="Time FriendsTV with one and two colleagues.")
    parser.add_argument("--wall-latency", type=float, default=WALL_LATENCY_S, help="Seconds per call for --wall.")
    args = parser.parse_args()
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load().replace(data_dir=Path(tmp), embedder=args.embedder, chroma_host="", ablations="")
        figures = asyncio.run(run(settings, args, Path(tmp)))
    print(report(figures, settings))
    if "wall" in figures:
        print(f"wall time, FriendsTV: {json.dumps(figures['wall'])}")
    figures["embedder"] = args.embedder  # type: ignore[assignment]
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
