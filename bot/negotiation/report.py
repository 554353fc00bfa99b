"""Bench output files: per-run CSV, a JSON with summaries and transcripts, and a plot against the frontier."""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path
from typing import Any

from bot.negotiation.bench import VariantRuns, initial_point
from bot.negotiation.model import Scenario
from bot.negotiation.pareto import OutcomeSpace
from bot.negotiation.scenario import scenario_to_dict


CSV_FIELDS = ("setting", "variant", "run", "outcome", "turns", "u_a", "u_b", "sw", "l2", "llm_calls",
              "prompt_tokens", "completion_tokens", "error")  # fmt: skip
MARKERS = {"proposed": "o", "no-utility-prompt": "s", "no-validation": "^"}


def write_csv(path: Path, batches: list[VariantRuns]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for batch in batches:
            for run, result in enumerate(batch.results):
                writer.writerow({"setting": batch.setting, "variant": batch.variant, "run": run, **result.metrics()})


def write_json(
    path: Path, scenario: Scenario, space: OutcomeSpace, batches: list[VariantRuns], meta: dict[str, Any]
) -> None:
    document = {
        **meta,
        "scenario": scenario_to_dict(scenario),
        "initial": initial_point(scenario, space),
        "frontier": space.frontier.tolist(),
        "summaries": [batch.summary() for batch in batches],
        "runs": [{"variant": b.variant, "run": i, **r.dict()} for b in batches for i, r in enumerate(b.results)],
    }
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_plot(path: Path, scenario: Scenario, space: OutcomeSpace, batches: list[VariantRuns], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # its font cache notice is not our news
    from matplotlib import pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 6))
    axes.scatter(space.u_a, space.u_b, s=4, color="0.8", label="all allocations")
    frontier = space.frontier
    axes.plot(frontier[:, 0], frontier[:, 1], "-o", color="tab:red", markersize=3, label="Pareto frontier")
    start = initial_point(scenario, space)
    axes.scatter([start["u_a"]], [start["u_b"]], marker="*", s=200, color="black", label="initial", zorder=5)
    for batch in batches:
        points = [r.utilities for r in batch.results]
        axes.scatter(
            [p[0] for p in points],
            [p[1] for p in points],
            marker=MARKERS.get(batch.variant, "x"),
            s=60,
            alpha=0.6,
            label=batch.variant,
            zorder=4,
        )
    axes.set(
        xlabel=f"u_{scenario.agents[0]}", ylabel=f"u_{scenario.agents[1]}", xlim=(-0.02, 1.02), ylim=(-0.02, 1.02)
    )
    axes.set_title(title, fontsize=9)
    axes.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
