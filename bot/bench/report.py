"""`askwith bench report`: the paper's tables from run directories.

- Table 1: mean score per dataset (columns) per run configuration (rows: model + switched-off mechanisms), with the
  paper's GPT-4 figures beside ours;
- Table 3: InfoNav behaviour (rationales per plan, solved per update, solved ratio, fake-solved ratio, consensus
  ratio), split into items predicted right, wrong, and all;
- cost per item: LLM calls, tokens, wall time, time inside the LLM and the system's own overhead.

    report = build_report(select_split(load_runs([run_dir, ...]), "test"), split="test")
    report.table1["gpt-4o"]["np"].score
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from statistics import fmean
from typing import Any

from bot.bench.answer_metrics import tokens
from bot.bench.citations import precision
from bot.bench.floors import dataset_floors
from bot.bench.generate import DATASETS
from bot.bench.items import ITEMS, load_items
from bot.bench.results import ItemResult, ResultStore
from bot.bench.run_config import RUN_FILE, RunConfig
from bot.bench.splits import ALL, check_choice, in_split, item_splits, seed_split


PAPER_GPT4 = {"schedule-easy": 0.5667, "schedule-medium": 0.5100, "schedule-hard": 0.2280, "np": 0.6400,
              "friendstv": 0.5794}  # fmt: skip
PAPER_LABEL = "paper: iAgents, GPT-4"
BEHAVIOUR_METRICS = (
    "rationales_per_plan",
    "solved_per_update",
    "solved_ratio",
    "fake_solved_ratio",
    "consensus_ratio",
)
SPLITS = ("predict right", "predict wrong", "all")
RIGHT_AT = 0.5  # an item counts as predicted right at this score (precision and exact count are 0 or 1)
REBUILT_NOTE = (
    "The datasets are rebuilt from the paper's pipelines (upstream published no question files), so the paper's "
    "GPT-4 row is a reference, not a like-for-like comparison. Floors are scores reached without communication."
)


@dataclass
class Run:
    run_dir: Path
    config: RunConfig
    results: list[ItemResult]


@dataclass
class Cell:
    score: float
    items: int
    scorers: list[str]
    floors: dict[str, Any] | None = None  # `Floors.dict()` over the same items; None when the dataset is gone
    by_hops: dict[str, list[float]] = field(default_factory=dict)  # FriendsTV: hops -> [mean score, items]
    options: list[str] = field(default_factory=list)  # variant, anonymized names, privacy prompt
    judge: str | None = None  # the judge/extraction model; None = rules
    quality: dict[str, float | None] = field(default_factory=dict)  # `answer_quality`: EM/F1, length, precision


@dataclass
class CostRow:
    label: str
    dataset: str
    items: int
    llm_calls: float  # per item, and so on below
    prompt_tokens: float
    completion_tokens: float
    wall_s: float
    llm_s: float
    overhead_s: float
    ingest_s: float = 0.0  # loading the dataset's chats into memory (ingest, sessions, embeddings), in all


@dataclass
class Report:
    labels: list[str]  # configurations, in the order first seen
    datasets: list[str]  # columns: the five datasets in the paper's order
    table1: dict[str, dict[str, Cell]]  # label -> dataset -> cell
    behaviour: dict[str, dict[str, dict[str, float | None]]]  # label -> split -> metric -> mean
    behaviour_items: dict[str, dict[str, int]]  # label -> split -> items
    cost: list[CostRow]
    scripted: set[str] = field(default_factory=set)  # labels played by the scripted stand-in
    floors: dict[str, dict[str, Any]] = field(default_factory=dict)  # dataset -> floors over all its items (paper)
    hop_distribution: dict[str, int] = field(default_factory=dict)  # FriendsTV items scored, by hops needed
    run_floors: dict[str, dict[str, Any]] = field(default_factory=dict)  # dataset -> floors over the items run
    split: str = ALL  # which items the figures are over: test, dev (`bot.bench.splits`) or all

    def dict(self) -> dict[str, Any]:
        return {
            "note": REBUILT_NOTE,
            "split": self.split,
            "floors": self.floors,
            "run_floors": self.run_floors,
            "hop_distribution": self.hop_distribution,
            "paper_gpt4": PAPER_GPT4,
            "configurations": self.labels,
            "scripted_configurations": sorted(self.scripted),
            "table1": {lb: {d: c.__dict__ for d, c in row.items()} for lb, row in self.table1.items()},
            "behaviour": self.behaviour,
            "behaviour_items": self.behaviour_items,
            "cost": [row.__dict__ for row in self.cost],
        }


def report_from_dict(document: dict[str, Any]) -> Report:
    """The report a `report.json` holds (what `Report.dict()` wrote), to show it again without its runs.

    Raises KeyError, TypeError or ValueError when the document is not such a report."""
    table1 = {label: {d: Cell(**cell) for d, cell in row.items()} for label, row in document["table1"].items()}
    return Report(
        labels=list(document["configurations"]),
        datasets=list(DATASETS),
        table1=table1,
        behaviour=document["behaviour"],
        behaviour_items=document["behaviour_items"],
        cost=[CostRow(**row) for row in document["cost"]],
        scripted=set(document.get("scripted_configurations", [])),
        floors=dict(document.get("floors", {})),
        run_floors=dict(document.get("run_floors", {})),
        hop_distribution=dict(document.get("hop_distribution", {})),
        split=str(document.get("split", ALL)),
    )


def find_runs(roots: list[Path]) -> list[Path]:
    """Run directories among `roots`: each root is a run directory or a directory holding some."""
    found: list[Path] = []
    for root in roots:
        if (root / RUN_FILE).is_file():
            found.append(root)
        elif root.is_dir():
            found.extend(sorted(p.parent for p in root.glob(f"*/{RUN_FILE}")))
    return found


def load_runs(run_dirs: list[Path]) -> list[Run]:
    return [Run(d, RunConfig.load(d), ResultStore(d).load_all()) for d in run_dirs]


def select_split(runs: list[Run], split: str) -> list[Run]:
    """The runs with only the results of items in `split` (test, dev or all; see `bot.bench.splits`)."""
    check_choice(split)
    kept = [[r for r in run.results if in_split(split, _split_of(run, r))] for run in runs]
    return [Run(run.run_dir, run.config, results) for run, results in zip(runs, kept, strict=True)]


def _split_of(run: Run, result: ItemResult) -> str | None:
    """The item's split from its dataset; NP and Schedule fall back to the run's seed when the dataset is gone."""
    known = item_splits(Path(run.config.dataset_dir)).get(result.item_id)
    if known is not None or run.config.dataset == "friendstv":
        return known
    return seed_split(run.config.seed)


def _split_ids(directory: Path, split: str) -> frozenset[str] | None:
    """The dataset's items in `split` (None = every item)."""
    return None if split == ALL else frozenset(i for i, s in item_splits(directory).items() if s == split)


def build_report(runs: list[Run], *, split: str = ALL) -> Report:
    """`split` records which items `runs` were narrowed to (`select_split`)."""
    by_cell: dict[str, dict[str, dict[str, ItemResult]]] = defaultdict(lambda: defaultdict(dict))
    configs: dict[tuple[str, str], RunConfig] = {}
    scripted: set[str] = set()
    for run in runs:
        label = run.config.label
        if run.config.scripted:
            scripted.add(label)
        configs[(label, run.config.dataset)] = run.config
        for result in run.results:
            by_cell[label][run.config.dataset][result.item_id] = result  # a later run of an item replaces it
    labels = list(by_cell)
    table1 = {
        lb: {d: _cell(list(items.values()), configs[(lb, d)]) for d, items in row.items() if items}
        for lb, row in by_cell.items()
    }
    behaviour, counts = {}, {}
    for label, row in by_cell.items():
        results = [r for items in row.values() for r in items.values()]
        behaviour[label], counts[label] = _behaviour(results)
    cost = [_cost(lb, d, list(items.values())) for lb, row in by_cell.items() for d, items in row.items() if items]
    floors, run_floors = {}, {}
    for label, row in table1.items():
        for dataset, cell in row.items():
            directory = Path(configs[(label, dataset)].dataset_dir)
            if cell.floors is not None and configs[(label, dataset)].variant == "paper":
                floors.setdefault(dataset, dataset_floors(directory, _split_ids(directory, split)).dict())
                run_floors.setdefault(dataset, cell.floors)
    hops = _hop_distribution(by_cell, configs)
    return Report(labels, list(DATASETS), table1, behaviour, counts, cost, scripted, floors, hops, run_floors, split)


def _cell(results: list[ItemResult], config: RunConfig) -> Cell:
    ids = frozenset(r.item_id for r in results)
    floors, hops = None, {}
    directory = Path(config.dataset_dir)
    if (directory / ITEMS).is_file():
        floors = dataset_floors(directory, ids).dict()
        hops = _item_hops(directory)
    by_hops: dict[str, list[float]] = {}
    for hop in sorted({hops[r.item_id] for r in results if r.item_id in hops}):
        scores = [r.score for r in results if hops.get(r.item_id) == hop]
        by_hops[str(hop)] = [fmean(scores), float(len(scores))]
    scorers = sorted({r.scorer for r in results})
    score = fmean(r.score for r in results)
    return Cell(score, len(results), scorers, floors, by_hops, config.options, config.judge, answer_quality(results))


def answer_quality(results: list[ItemResult]) -> dict[str, float | None]:
    """Means of EM, F1 and containment (where the scorer computed them), of the answer's tokens and lines, of the
    lines cited; and cited precision over all the items' citations (None where a figure does not apply)."""
    out: dict[str, float | None] = {}
    for key in ("em", "f1", "containment", "answer_tokens", "answer_lines"):
        values = [float(r.score_detail[key]) for r in results if key in r.score_detail]
        out[key] = fmean(values) if values else None
    if out["answer_tokens"] is None:  # Schedule scorers keep no length: count it from the answers
        out["answer_tokens"] = fmean(len(tokens(r.answer)) for r in results)
        out["answer_lines"] = fmean(len(r.answer.strip().splitlines()) for r in results)
    cited = [r.citations for r in results if r.citations]
    out["cited"] = fmean(c["cited"] for c in cited) if cited else None
    out["cited_precision"] = precision(sum(c["cited_gold"] for c in cited), sum(c["cited"] for c in cited))
    return out


@cache
def _item_hops(directory: Path) -> dict[str, int]:
    return {i.id: int(i.provenance["hops"]) for i in load_items(directory) if "hops" in i.provenance}


def _hop_distribution(
    by_cell: dict[str, dict[str, dict[str, ItemResult]]], configs: dict[tuple[str, str], RunConfig]
) -> dict[str, int]:
    """FriendsTV: the items any configuration scored, counted by the hops they need."""
    seen: dict[str, int] = {}
    for (label, dataset), config in configs.items():
        directory = Path(config.dataset_dir)
        if dataset != "friendstv" or not (directory / ITEMS).is_file():
            continue
        hops = _item_hops(directory)
        seen |= {i: hops[i] for i in by_cell[label][dataset] if i in hops}
    return {str(h): n for h, n in sorted(Counter(seen.values()).items())}


def _behaviour(results: list[ItemResult]) -> tuple[dict[str, dict[str, float | None]], dict[str, int]]:
    splits = {
        "predict right": [r for r in results if r.score >= RIGHT_AT],
        "predict wrong": [r for r in results if r.score < RIGHT_AT],
        "all": results,
    }
    means = {name: {m: _mean_of(items, m) for m in BEHAVIOUR_METRICS} for name, items in splits.items()}
    return means, {name: len(items) for name, items in splits.items()}


def _mean_of(results: list[ItemResult], metric: str) -> float | None:
    values = [r.behaviour.get(metric) for r in results]
    present = [float(v) for v in values if v is not None]
    return fmean(present) if present else None


def _cost(label: str, dataset: str, results: list[ItemResult]) -> CostRow:
    return CostRow(
        label=label, dataset=dataset, items=len(results), llm_calls=fmean(r.llm_calls for r in results),
        prompt_tokens=fmean(r.prompt_tokens for r in results),
        completion_tokens=fmean(r.completion_tokens for r in results), wall_s=fmean(r.wall_s for r in results),
        llm_s=fmean(r.llm_s for r in results), overhead_s=fmean(r.overhead_s for r in results),
        ingest_s=sum(r.ingest_s for r in results),
    )  # fmt: skip
