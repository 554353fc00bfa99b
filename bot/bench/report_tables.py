"""A bench report's three tables as text cells: Table 1 (scores), Table 3 (InfoNav behaviour), cost per item.

`askwith bench report` prints them with rich; the web admin page renders the same cells as HTML.

    for table in report_tables(report):
        print(table.title, table.headers, table.rows, table.caption)
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.bench.report import BEHAVIOUR_METRICS, PAPER_GPT4, PAPER_LABEL, SPLITS, Cell, Report
from bot.bench.scoring import ScoreMethod


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
SCORER_MARKS = {ScoreMethod.NORMALIZED_MATCH.value: "m", ScoreMethod.LLM_JUDGE.value: "j"}
COST_HEADERS = ("configuration", "dataset", "items", "LLM calls", "prompt tok", "completion tok", "wall s", "LLM s",
                "overhead s")  # fmt: skip


@dataclass(frozen=True)
class TableText:
    title: str
    headers: list[str]
    rows: list[list[str]]
    caption: str
    text_columns: int = 1  # the first columns hold names (left-aligned); the rest are figures
    dim_rows: int = 0  # the first rows are reference figures (the paper's), shown dimmed


def report_tables(report: Report) -> list[TableText]:
    return [scores_text(report), behaviour_text(report), cost_text(report)]


def scores_text(report: Report) -> TableText:
    rows = [[PAPER_LABEL, *(f"{PAPER_GPT4[d]:.2%}" for d in report.datasets)]]
    rows += [[label, *(_score(report.table1[label].get(d)) for d in report.datasets)] for label in report.labels]
    caption = (
        "n = items scored; NP and FriendsTV: j = LLM judge (the paper's prompt), m = normalized match (no judge). "
        "Medium is F1, Hard is IoU, Easy is exact count."
    )
    title = "Table 1: score per dataset (mean over items)"
    return TableText(title, ["configuration", *report.datasets], rows, caption, dim_rows=1)


def _score(cell: Cell | None) -> str:
    if cell is None:
        return "-"
    marks = "".join(SCORER_MARKS[s] for s in cell.scorers if s in SCORER_MARKS)
    return f"{cell.score:.2%} (n={cell.items}{', ' + marks if marks else ''})"


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
        ]  # fmt: skip
        for row in report.cost
    ]
    caption = "LLM s = summed latency of the ask's model calls; overhead = wall - LLM s (askwith's own time)."
    return TableText("Cost per item", list(COST_HEADERS), rows, caption, text_columns=2)
