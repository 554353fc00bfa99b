"""The report's files: CSV per table, one JSON with everything, and two PNG plots (matplotlib, Agg backend).

paths = write_report_files(report, runs, out_dir)   # table1.csv behaviour.csv cost.csv items.csv report.json
                                                    # scores.png cost.png
"""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path
from typing import Any

from bot.bench.report import BEHAVIOUR_METRICS, PAPER_GPT4, PAPER_LABEL, SPLITS, Report, Run
from bot.bench.report_tables import FLOOR_ROWS, quality_text


ZERO_SLIVER = 0.6  # percent: the height drawn for a score of exactly 0
ITEM_FIELDS = ("configuration", "dataset", "item_id", "score", "scorer", "status", "llm_calls", "prompt_tokens",
               "completion_tokens", "wall_s", "llm_s", "overhead_s", "ingest_s", "ask_id", "answer",
               "gold")  # fmt: skip


def write_report_files(report: Report, runs: list[Run], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / name for name in ("table1.csv", "behaviour.csv", "cost.csv", "items.csv", "report.json")]
    _write_rows(paths[0], ["configuration", *report.datasets], _table1_rows(report))
    _write_rows(paths[1], ["configuration", "split", "items", *BEHAVIOUR_METRICS], _behaviour_rows(report))
    cost_fields = list(report.cost[0].__dict__) if report.cost else ["label"]
    _write_rows(paths[2], cost_fields, [list(row.__dict__.values()) for row in report.cost])
    _write_rows(paths[3], list(ITEM_FIELDS), _item_rows(runs))
    document = {**report.dict(), "runs": [_run_summary(run) for run in runs]}
    paths[4].write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    quality = quality_text(report)
    paths.append(out_dir / "quality.csv")
    _write_rows(paths[-1], quality.headers, quality.rows)
    paths.append(write_score_plot(report, out_dir / "scores.png"))
    paths.append(write_cost_plot(report, out_dir / "cost.png"))
    return paths


def _write_rows(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def _table1_rows(report: Report) -> list[list[Any]]:
    rows = [[PAPER_LABEL, *(PAPER_GPT4[d] for d in report.datasets)]]
    for label in report.labels:
        cells = report.table1[label]
        rows.append([label, *(round(cells[d].score, 4) if d in cells else "" for d in report.datasets)])
    for name, source, pick in FLOOR_ROWS:
        floors = [getattr(report, source).get(d) for d in report.datasets]
        rows.append([name, *(round(pick(f), 4) if f else "" for f in floors)])
    return rows


def _behaviour_rows(report: Report) -> list[list[Any]]:
    rows = []
    for label in report.labels:
        for split in SPLITS:
            means = report.behaviour[label][split]
            values = ["" if means[m] is None else round(means[m], 4) for m in BEHAVIOUR_METRICS]
            rows.append([label, split, report.behaviour_items[label][split], *values])
    return rows


def _item_rows(runs: list[Run]) -> list[list[Any]]:
    rows = []
    for run in runs:
        for r in run.results:
            record = {**r.dict(), "overhead_s": r.overhead_s, "configuration": run.config.label}
            rows.append([record[f] for f in ITEM_FIELDS])
    return rows


def _run_summary(run: Run) -> dict[str, Any]:
    return {"run_dir": str(run.run_dir), "config": run.config.__dict__, "items": len(run.results)}


# ---------------------------------------------------------------------- plots
def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # its font cache notice is not our news
    from matplotlib import pyplot as plt

    return plt


def write_score_plot(report: Report, path: Path) -> Path:
    """Grouped bars: one group per dataset, one bar per configuration, the paper's GPT-4 bar hatched beside them."""
    plt = _pyplot()
    series = [(PAPER_LABEL, [PAPER_GPT4[d] * 100 for d in report.datasets])]
    for label in report.labels:
        cells = report.table1[label]
        series.append((label, [cells[d].score * 100 if d in cells else 0.0 for d in report.datasets]))
    width = 0.8 / len(series)
    figure, axes = plt.subplots(figsize=(max(7, 1.6 * len(report.datasets) * len(series) / 2), 4.5))
    for index, (label, values) in enumerate(series):
        offsets = [i + (index - (len(series) - 1) / 2) * width for i in range(len(report.datasets))]
        hatch = "//" if label == PAPER_LABEL else None
        # A zero score still gets a sliver and a label, so "0" is not mistaken for "not run".
        shown = [max(v, ZERO_SLIVER) for v in values]
        bars = axes.bar(offsets, shown, width, label=label, hatch=hatch, edgecolor="black", linewidth=0.4)
        axes.bar_label(bars, labels=[f"{v:.0f}" for v in values], fontsize=6, padding=1)
    _floor_marks(axes, report, width, len(series))
    axes.set_xticks(range(len(report.datasets)), report.datasets)
    title = "InformativeBench: score per dataset and configuration"
    if report.scripted:
        title += "\n(scripted stand-in rows check the pipeline: NOT a quality figure)"
    axes.set(ylabel="score (%)", ylim=(0, 105), title=title)
    axes.legend(fontsize=7, loc="upper right")
    return _save(plt, figure, path)


def _floor_marks(axes: Any, report: Report, width: float, series: int) -> None:
    """A dashed mark on each of askwith's bars at the best floor over the same items (the paper's bar has none)."""
    labelled = False
    for index, label in enumerate(report.labels, start=1):
        for i, dataset in enumerate(report.datasets):
            cell = report.table1[label].get(dataset)
            if cell is None or not cell.floors:
                continue
            centre = i + (index - (series - 1) / 2) * width
            axes.hlines(cell.floors["best"] * 100, centre - width / 2, centre + width / 2, colors="red",
                        linestyles="dashed", linewidth=1.2,
                        label=None if labelled else "best no-communication floor (same items)")  # fmt: skip
            labelled = True


def write_cost_plot(report: Report, path: Path) -> Path:
    """Per dataset (Table 1's order), one bar per configuration: LLM calls per item, and wall time per item split
    into time inside the LLM (solid) and askwith's overhead (hatched)."""
    plt = _pyplot()
    datasets = [d for d in report.datasets if any(row.dataset == d for row in report.cost)]
    rows = {(row.label, row.dataset): row for row in report.cost}
    width = 0.8 / max(len(report.labels), 1)
    figure, (calls, seconds) = plt.subplots(1, 2, figsize=(max(9, 1.4 * len(datasets) * 2 + 3), 4.8))
    for index, label in enumerate(report.labels):
        offsets = [i + (index - (len(report.labels) - 1) / 2) * width for i in range(len(datasets))]
        shown = [rows.get((label, d)) for d in datasets]
        color = f"C{index % 10}"
        calls.bar(offsets, [r.llm_calls if r else 0.0 for r in shown], width, color=color, label=label)
        llm = [r.llm_s if r else 0.0 for r in shown]
        seconds.bar(offsets, llm, width, color=color)
        seconds.bar(offsets, [max(0.0, r.overhead_s) if r else 0.0 for r in shown], width, bottom=llm, color=color,
                    hatch="//", edgecolor="white", alpha=0.6)  # fmt: skip
    calls.set(title="LLM calls per item", ylabel="calls")
    seconds.set(title="wall time per item (hatched: askwith overhead)", ylabel="seconds")
    for axes in (calls, seconds):
        axes.set_xticks(range(len(datasets)), datasets, rotation=20, ha="right", fontsize=9)
    calls.legend(fontsize=8, loc="upper left")
    return _save(plt, figure, path)


def _save(plt: Any, figure: Any, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
