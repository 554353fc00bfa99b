"""The negotiation bench: repeated runs per setting and variant, summarised as the poster's table.

Per variant over N runs: Agreement % (among runs without Error) and Error % (among all runs), each ± the standard
error of a proportion, as the poster reports them; Turns, u_A, u_B, SW and L2 to Pareto as mean ± sample standard
deviation over the runs without Error (a run without agreement counts with the initial allocation). The scenario's
initial point is reported beside them.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.llm.client import LLMClient
from bot.negotiation.engine import NegotiationEngine
from bot.negotiation.model import Scenario
from bot.negotiation.pareto import OutcomeSpace, outcome_space
from bot.negotiation.transcript import NegotiationOptions, NegotiationResult, Outcome, Phase


VARIANTS: dict[str, NegotiationOptions] = {
    "proposed": NegotiationOptions(),
    "no-utility-prompt": NegotiationOptions(utility_aware=False),
    "no-validation": NegotiationOptions(validate=False),
}
METRICS = ("turns", "u_a", "u_b", "sw", "l2")

ClientsForRun = Callable[[Scenario, int], dict[str, LLMClient]]  # (scenario, run index) -> client per agent


@dataclass
class VariantRuns:
    setting: str
    variant: str
    results: list[NegotiationResult] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"setting": self.setting, "variant": self.variant, **summarise(self.results)}


async def run_variant(
    scenario: Scenario, variant: str, runs: int, clients_for_run: ClientsForRun, *, space: OutcomeSpace | None = None
) -> VariantRuns:
    space = space or outcome_space(scenario)
    options = VARIANTS[variant]
    engines = [
        NegotiationEngine(scenario, clients_for_run(scenario, run), options=options, space=space)
        for run in range(runs)
    ]
    results = await asyncio.gather(*(engine.run() for engine in engines))
    return VariantRuns(scenario.setting, variant, list(results))


def summarise(results: list[NegotiationResult]) -> dict[str, Any]:
    errors = [r for r in results if r.outcome is Outcome.ERROR]
    kept = [r for r in results if r.outcome is not Outcome.ERROR]
    agreements = sum(1 for r in kept if r.outcome is Outcome.AGREEMENT)
    summary: dict[str, Any] = {
        "runs": len(results),
        "agreement_pct": _proportion(agreements, len(kept)),
        "error_pct": _proportion(len(errors), len(results)),
        "estimate_mae": _estimate_error(results),
    }
    for metric in METRICS:
        summary[metric] = _mean_std([float(r.metrics()[metric]) for r in kept])
    return summary


def initial_point(scenario: Scenario, space: OutcomeSpace) -> dict[str, float]:
    u_a, u_b = scenario.utilities(scenario.initial)
    return {"u_a": u_a, "u_b": u_b, "sw": u_a + u_b, "l2": space.distance_to_frontier((u_a, u_b))}


def _proportion(hits: int, total: int) -> tuple[float, float] | None:
    """Percentage and its standard error, or None when there is nothing to count."""
    if total == 0:
        return None
    p = hits / total
    return 100 * p, 100 * math.sqrt(p * (1 - p) / total)


def _mean_std(values: list[float]) -> tuple[float, float] | None:
    if not values:
        return None
    mean = sum(values) / len(values)
    if len(values) == 1:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _estimate_error(results: list[NegotiationResult]) -> float | None:
    """Mean absolute error of the agents' estimates of their counterpart's utility, over delivered moves."""
    errors = [
        abs(turn.final.estimate - turn.final.estimate_target)
        for r in results
        for turn in r.turns
        if turn.phase is Phase.MOVE and turn.delivered and turn.final is not None
        if turn.final.estimate is not None and turn.final.estimate_target is not None
    ]
    return sum(errors) / len(errors) if errors else None


def format_cell(value: tuple[float, float] | None, *, percent: bool = False, digits: int = 2) -> str:
    if value is None:
        return "—"
    mean, spread = value
    if percent:
        return f"{mean:.1f} ± {spread:.1f}%"
    return f"{mean:.{digits}f} ± {spread:.{digits}f}"
