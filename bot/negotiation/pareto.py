"""Every allocation of a scenario, its Pareto frontier and the distance of an outcome to it.

With n atomic tasks there are 2^n allocations; they are enumerated as bit masks (bit i set = task i held by the
second agent) and scored with numpy, which stays fast up to n of about 20. The frontier is a skyline: sort by u_A
descending (ties by u_B descending) and keep each point whose u_B beats every point before it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from bot.errors import ScenarioError
from bot.negotiation.model import Allocation, Scenario


MAX_TASKS = 22  # 4M allocations: still a few seconds; beyond that brute force is the wrong tool

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class OutcomeSpace:
    """u_A and u_B of every allocation, and the frontier points sorted by u_A descending."""

    u_a: FloatArray
    u_b: FloatArray
    frontier: FloatArray  # shape (k, 2)

    def distance_to_frontier(self, point: tuple[float, float]) -> float:
        """Euclidean distance from (u_A, u_B) to the nearest frontier point (0 on the frontier)."""
        deltas = self.frontier - np.asarray(point, dtype=np.float64)
        return float(np.sqrt((deltas**2).sum(axis=1)).min())


def outcome_space(scenario: Scenario) -> OutcomeSpace:
    u_a, u_b = all_utilities(scenario)
    return OutcomeSpace(u_a, u_b, skyline(u_a, u_b))


def all_utilities(scenario: Scenario) -> tuple[FloatArray, FloatArray]:
    """Normalised (u_A, u_B) for every allocation, indexed by bit mask."""
    n = len(scenario.tasks)
    if n > MAX_TASKS:
        raise ScenarioError(f"{n} atomic tasks are too many to enumerate (at most {MAX_TASKS}).")
    first, second = scenario.agents
    masks = np.arange(2**n, dtype=np.int64)
    raw_a = np.zeros(masks.shape, dtype=np.float64)
    raw_b = np.zeros(masks.shape, dtype=np.float64)
    for bit, (w_a, w_b) in enumerate(zip(scenario.weights(first), scenario.weights(second), strict=True)):
        held_by_b = (masks >> bit) & 1
        raw_a += w_a * (1 - held_by_b)
        raw_b += w_b * held_by_b
    return _normalise(raw_a, scenario.weights(first)), _normalise(raw_b, scenario.weights(second))


def _normalise(raw: FloatArray, weights: list[float]) -> FloatArray:
    low = sum(w for w in weights if w < 0)
    high = sum(w for w in weights if w > 0)
    if high == low:
        return np.zeros_like(raw)
    return (raw - low) / (high - low)


def skyline(u_a: FloatArray, u_b: FloatArray) -> FloatArray:
    """The non-dominated distinct points of (u_a, u_b), sorted by u_a descending: O(N log N), not O(N^2)."""
    order = np.lexsort((-u_b, -u_a))
    a_sorted, b_sorted = u_a[order], u_b[order]
    best_before = np.concatenate(([-np.inf], np.maximum.accumulate(b_sorted)[:-1]))
    keep = b_sorted > best_before
    return np.column_stack((a_sorted[keep], b_sorted[keep]))


def allocation_from_mask(scenario: Scenario, mask: int) -> Allocation:
    first, second = scenario.agents
    return Allocation({t: second if mask >> bit & 1 else first for bit, t in enumerate(scenario.task_ids)})
