"""Rich tables of a bench report: Table 1 (scores), Table 3 (InfoNav behaviour) and cost per item."""

from __future__ import annotations

from rich.table import Table

from bot.bench.report import BEHAVIOUR_METRICS, PAPER_GPT4, PAPER_LABEL, SPLITS, Cell, Report
from bot.bench.scoring import ScoreMethod


BEHAVIOUR_HEADERS = {
    "rationales_per_plan": "#rationales in InfoNav",
    "solved_per_update": "#rationales solved per update",
    "solved_ratio": "rationales solved ratio",
    "fake_solved_ratio": "fake solved ratio",
    "consensus_ratio": "consensus ratio",
}
RATIOS = {"solved_ratio", "fake_solved_ratio", "consensus_ratio"}
SCORER_MARKS = {ScoreMethod.NORMALIZED_MATCH.value: "m", ScoreMethod.LLM_JUDGE.value: "j"}


def scores_table(report: Report) -> Table:
    table = Table(title="Table 1: score per dataset (mean over items)", title_justify="left")
    table.add_column("configuration", style="bold")
    for dataset in report.datasets:
        table.add_column(dataset, justify="right")
    table.add_row(PAPER_LABEL, *(f"{PAPER_GPT4[d]:.2%}" for d in report.datasets), style="dim")
    for label in report.labels:
        cells = report.table1[label]
        table.add_row(label, *(_score(cells.get(d)) for d in report.datasets))
    table.caption = (
        "n = items scored; NP and FriendsTV: j = LLM judge (the paper's prompt), m = normalized match (no judge). "
        "Medium is F1, Hard is IoU, Easy is exact count."
    )
    return table


def _score(cell: Cell | None) -> str:
    if cell is None:
        return "-"
    marks = "".join(SCORER_MARKS[s] for s in cell.scorers if s in SCORER_MARKS)
    return f"{cell.score:.2%} (n={cell.items}{', ' + marks if marks else ''})"


def behaviour_table(report: Report) -> Table:
    table = Table(title="Table 3: InfoNav behaviour (mean per item)", title_justify="left")
    table.add_column("configuration", style="bold")
    table.add_column("sample")
    table.add_column("items", justify="right")
    for metric in BEHAVIOUR_METRICS:
        table.add_column(BEHAVIOUR_HEADERS[metric], justify="right")
    for label in report.labels:
        for split in SPLITS:
            means = report.behaviour[label][split]
            count = report.behaviour_items[label][split]
            cells = [_metric(metric, means[metric]) for metric in BEHAVIOUR_METRICS]
            table.add_row(label if split == SPLITS[0] else "", split, str(count), *cells)
    table.caption = "predict right = score >= 0.5; '-' = no item had that statistic (e.g. no plan without InfoNav)."
    return table


def _metric(name: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2%}" if name in RATIOS else f"{value:.2f}"


def cost_table(report: Report) -> Table:
    table = Table(title="Cost per item", title_justify="left")
    for header in ("configuration", "dataset", "items", "LLM calls", "prompt tok", "completion tok", "wall s",
                   "LLM s", "overhead s"):  # fmt: skip
        table.add_column(header, justify="left" if header in ("configuration", "dataset") else "right")
    for row in report.cost:
        table.add_row(
            row.label, row.dataset, str(row.items), f"{row.llm_calls:.1f}", f"{row.prompt_tokens:,.0f}",
            f"{row.completion_tokens:,.0f}", f"{row.wall_s:.2f}", f"{row.llm_s:.2f}", f"{row.overhead_s:.2f}",
        )  # fmt: skip
    table.caption = "LLM s = summed latency of the ask's model calls; overhead = wall - LLM s (askwith's own time)."
    return table
