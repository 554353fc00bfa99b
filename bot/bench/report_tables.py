"""A bench report's three tables as text cells: Table 1 (scores), Table 3 (InfoNav behaviour), cost per item.

`askwith bench report` prints them with rich; the web admin page renders the same cells as HTML.

    for table in report_tables(report):
        print(table.title, table.headers, table.rows, table.caption)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.bench.report import BEHAVIOUR_METRICS, PAPER_GPT4, PAPER_LABEL, REBUILT_NOTE, SPLITS, Cell, Report
from bot.bench.scoring import ScoreMethod
from bot.bench.splits import describe


SCRIPTED_NOTE = (
    "Scripted stand-in model: these runs check that the pipeline works end to end. "
    "Their scores are NOT a quality figure."
)
BEHAVIOUR_HEADERS = {
    "rationales_per_plan": "#rationales in InfoNav",
    "solved_per_update": "#rationales solved per update",
    "solved_ratio": "rationales solved ratio",
    "fake_solved_ratio": "fake solved ratio",
    "consensus_ratio": "consensus ratio",
}
RATIOS = {"solved_ratio", "fake_solved_ratio", "consensus_ratio"}
SCORER_MARKS = {
    ScoreMethod.LLM_JUDGE.value: "j", ScoreMethod.EXACT_COUNT_LLM.value: "j", ScoreMethod.NAME_F1_LLM.value: "j",
    ScoreMethod.SLOT_IOU_LLM.value: "j", ScoreMethod.NORMALIZED_MATCH.value: "m", ScoreMethod.EXACT_COUNT.value: "r",
    ScoreMethod.NAME_F1.value: "r", ScoreMethod.SLOT_IOU.value: "r", ScoreMethod.TOKEN_F1.value: "f",
    ScoreMethod.CONCISE_MATCH.value: "c",
}  # fmt: skip
# (row name, which floors: over the full dataset or over the items run, the figure): every cell shows its n.
FLOOR_ROWS: tuple[tuple[str, str, Callable[[dict], float]], ...] = (
    ("floor: constant most-frequent answer", "floors", lambda f: f["constant"]),
    ("floor: asker's side alone", "floors", lambda f: f["side"]["asker"]),
    ("floor: asked member's side alone", "floors", lambda f: f["side"]["asked"]),
    ("floor: random answer", "floors", lambda f: f["random"]),
    ("floor over the items run: best of the above", "run_floors", lambda f: f["best"]),
)
COST_HEADERS = ("configuration", "dataset", "items", "LLM calls", "prompt tok", "completion tok", "wall s", "LLM s",
                "overhead s", "load chats s (all)")  # fmt: skip


@dataclass(frozen=True)
class TableText:
    title: str
    headers: list[str]
    rows: list[list[str]]
    caption: str
    text_columns: int = 1  # the first columns hold names (left-aligned); the rest are figures
    dim_rows: int = 0  # the first rows are reference figures (the paper's), shown dimmed


def report_tables(report: Report) -> list[TableText]:
    tables = [scores_text(report), quality_text(report), behaviour_text(report), cost_text(report)]
    if any(cell.by_hops for row in report.table1.values() for cell in row.values()):
        tables.append(hops_text(report))
    return tables


def scores_text(report: Report) -> TableText:
    rows = [[PAPER_LABEL, "", "", *(f"{PAPER_GPT4[d]:.2%}" for d in report.datasets)]]
    for label in report.labels:
        cells = [c for c in report.table1[label].values()]
        options = ", ".join(dict.fromkeys(o for c in cells for o in c.options)) or "-"
        judges = ", ".join(sorted({c.judge for c in cells if c.judge})) or "rules"
        rows.append([label, options, judges, *(_score(report.table1[label].get(d)) for d in report.datasets)])
    for name, source, pick in FLOOR_ROWS:
        floors = getattr(report, source)
        rows.append([name, "", "", *(_floor(floors.get(d), pick) for d in report.datasets)])
    caption = (
        "n = items scored; scorer: j = judge model (the paper's judge prompt, or its extraction step for Schedule), "
        "r = rule-based extraction, f = FriendsQA token F1, c = concise match, m = normalized match; 'floor' in a "
        "score = the best no-communication floor over the same items. Floor rows: over every item of the dataset, "
        "then the best over the items run; each with its n. Easy: exact count; Medium: F1; Hard: IoU; NP, FriendsTV: "
        "precision (judge), else FriendsTV token F1 and NP concise match. "
        + f"{REBUILT_NOTE} {describe(report.split)}"
    )
    title = f"Table 1: score per dataset (mean over items), with no-communication floors; split: {report.split}"
    headers = ["configuration", "options", "judge", *report.datasets]
    return TableText(title, headers, rows, caption, text_columns=3, dim_rows=1)


QUALITY_HEADERS = ("configuration", "dataset", "items", "score", "EM", "F1", "containment", "answer tokens",
                   "answer lines", "cited lines", "cited precision")  # fmt: skip


def quality_text(report: Report) -> TableText:
    """Per configuration and dataset: the score beside EM/F1, the answer's length and the precision of its citations
    (a figure a dataset or run does not have shows as n/a)."""
    rows = []
    for label in report.labels:
        for dataset, cell in report.table1[label].items():
            q = cell.quality
            rows.append([label, dataset, str(cell.items), f"{cell.score:.2%}", _pct(q.get("em")), _pct(q.get("f1")),
                         _pct(q.get("containment")), _num(q.get("answer_tokens")), _num(q.get("answer_lines")),
                         _num(q.get("cited")), _pct(q.get("cited_precision"))])  # fmt: skip
    caption = (
        "Means over the items. EM/F1: FriendsQA's exact match and token F1 (per part, best annotated span) for "
        "FriendsTV, against the gold answer for NP; containment: the gold found anywhere in the answer (rewards "
        "pasting; shown only beside the others). Cited precision: gold lines among the lines the answer cites, over "
        "every item's citations; an answer citing everything shows low here however high its recall."
    )
    title = f"Answer quality: score, EM/F1, length, cited precision; split: {report.split}"
    return TableText(title, list(QUALITY_HEADERS), rows, caption, 2)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def _score(cell: Cell | None) -> str:
    if cell is None:
        return "-"
    marks = "".join(sorted({SCORER_MARKS.get(s, "?") for s in cell.scorers}))
    floor = f"; floor {cell.floors['best']:.1%}" if cell.floors else ""
    return f"{cell.score:.2%} (n={cell.items}, {marks}{floor})"


def _floor(floors: dict | None, pick: Callable[[dict], float]) -> str:
    return "-" if floors is None else f"{pick(floors):.2%} (n={floors.get('items', '?')})"


def hops_text(report: Report) -> TableText:
    """FriendsTV by the hops an item needs (0 = the pair sees both rationales, 1 = a third party holds one)."""
    hops = sorted({h for row in report.table1.values() for c in row.values() for h in c.by_hops}, key=int)
    rows = [["items (scored)", *(str(report.hop_distribution.get(h, 0)) for h in hops)]]
    for label in report.labels:
        cell = report.table1[label].get("friendstv")
        if cell is not None and cell.by_hops:
            rows.append([label, *(_hop(cell.by_hops.get(h)) for h in hops)])
    caption = "Hops from the asking pair to a rationale's holders over DM channels; the item needs the larger."
    return TableText("FriendsTV by hops needed", ["configuration", *(f"{h} hop(s)" for h in hops)], rows, caption)


def _hop(value: list[float] | None) -> str:
    return "-" if value is None else f"{value[0]:.2%} (n={int(value[1])})"


def behaviour_text(report: Report) -> TableText:
    rows = []
    for label in report.labels:
        for split in SPLITS:
            means = report.behaviour[label][split]
            cells = [_metric(metric, means[metric]) for metric in BEHAVIOUR_METRICS]
            count = str(report.behaviour_items[label][split])
            rows.append([label if split == SPLITS[0] else "", split, count, *cells])
    headers = ["configuration", "sample", "items", *(BEHAVIOUR_HEADERS[m] for m in BEHAVIOUR_METRICS)]
    caption = "predict right = score >= 0.5; '-' = no item had that statistic (e.g. no plan without InfoNav)."
    return TableText("Table 3: InfoNav behaviour (mean per item)", headers, rows, caption, text_columns=2)


def _metric(name: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2%}" if name in RATIOS else f"{value:.2f}"


def cost_text(report: Report) -> TableText:
    rows = [
        [
            row.label,
            row.dataset,
            str(row.items),
            f"{row.llm_calls:.1f}",
            f"{row.prompt_tokens:,.0f}",
            f"{row.completion_tokens:,.0f}",
            f"{row.wall_s:.2f}",
            f"{row.llm_s:.2f}",
            f"{row.overhead_s:.2f}",
            f"{row.ingest_s:.1f}",
        ]  # fmt: skip
        for row in report.cost
    ]
    caption = (
        "LLM s = summed latency of the ask's model calls; overhead = wall - LLM s (askwith's own time); load chats = "
        "ingesting the dataset's workspaces into memory (messages, sessions, embeddings), once per workspace."
    )
    return TableText("Cost per item", list(COST_HEADERS), rows, caption, text_columns=2)
