"""The negotiation model: atomic tasks, private preferences, allocations and normalised utilities.

Each of two agents holds some atomic tasks (grouped under parent tasks) and knows only its own value v and cost c for
every atomic task; its net weight is w(t) = v(t) - c(t). The utility of a bundle is the sum of its net weights,
normalised to [0, 1] by the smallest and largest utility any bundle could have (the sum of the negative weights and
the sum of the positive weights).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot.errors import ScenarioError


@dataclass(frozen=True)
class AtomicTask:
    id: str  # short, unique within a scenario ("IT", "MKT-B")
    name: str  # human label ("IT setup")
    parent: str  # the parent task it was decomposed from ("Product launch")


@dataclass(frozen=True)
class Preference:
    value: float
    cost: float

    @property
    def net(self) -> float:
        return self.value - self.cost


@dataclass(frozen=True)
class Proposal:
    """A trade offered by `proposer`: it hands over `give` and receives `take` from the counterpart."""

    give: tuple[str, ...]
    take: tuple[str, ...]

    def dict(self) -> dict[str, list[str]]:
        return {"give": list(self.give), "take": list(self.take)}


@dataclass(frozen=True)
class Allocation:
    """Who holds each atomic task."""

    holder: Mapping[str, str]  # task id -> agent name

    def holdings(self, agent: str) -> tuple[str, ...]:
        return tuple(task for task, who in self.holder.items() if who == agent)

    def apply(self, proposal: Proposal, proposer: str, counterpart: str) -> Allocation:
        """The allocation after the trade; the caller has checked the proposal is valid."""
        moved = {task: counterpart for task in proposal.give} | {task: proposer for task in proposal.take}
        return Allocation({task: moved.get(task, who) for task, who in self.holder.items()})

    def dict(self) -> dict[str, str]:
        return dict(self.holder)


@dataclass(frozen=True)
class Scenario:
    id: str
    setting: str  # cooperative | competitive | members
    agents: tuple[str, str]
    tasks: tuple[AtomicTask, ...]
    preferences: Mapping[str, Mapping[str, Preference]]  # agent -> task id -> preference (private to that agent)
    initial: Allocation
    description: str = ""
    _by_id: dict[str, AtomicTask] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {task.id: task for task in self.tasks})
        _check_scenario(self)

    @property
    def task_ids(self) -> tuple[str, ...]:
        return tuple(task.id for task in self.tasks)

    def task(self, task_id: str) -> AtomicTask:
        return self._by_id[task_id]

    def counterpart(self, agent: str) -> str:
        first, second = self.agents
        return second if agent == first else first

    def net(self, agent: str, task_id: str) -> float:
        return self.preferences[agent][task_id].net

    def weights(self, agent: str) -> list[float]:
        """Net weights of `agent` in task order."""
        return [self.net(agent, task_id) for task_id in self.task_ids]

    def utility(self, agent: str, allocation: Allocation) -> float:
        """Normalised utility of `agent`'s bundle under `allocation`."""
        return normalised_utility(self.weights(agent), self._mask(agent, allocation))

    def utilities(self, allocation: Allocation) -> tuple[float, float]:
        first, second = self.agents
        return self.utility(first, allocation), self.utility(second, allocation)

    def social_welfare(self, allocation: Allocation) -> float:
        return sum(self.utilities(allocation))

    def _mask(self, agent: str, allocation: Allocation) -> list[bool]:
        return [allocation.holder[task_id] == agent for task_id in self.task_ids]


def normalised_utility(weights: Iterable[float], held: Iterable[bool]) -> float:
    """(U - U_min) / (U_max - U_min) where U sums the weights of held tasks; 0 when every bundle is worth the same."""
    weights = list(weights)
    raw = sum(w for w, is_held in zip(weights, held, strict=True) if is_held)
    low = sum(w for w in weights if w < 0)
    high = sum(w for w in weights if w > 0)
    return 0.0 if high == low else (raw - low) / (high - low)


def _check_scenario(scenario: Scenario) -> None:
    ids = scenario.task_ids
    if len(set(ids)) != len(ids):
        raise ScenarioError(f"Scenario {scenario.id!r} lists a task id twice.")
    if len(set(scenario.agents)) != 2:
        raise ScenarioError(f"Scenario {scenario.id!r} needs two different agents.")
    for agent in scenario.agents:
        missing = [t for t in ids if t not in scenario.preferences.get(agent, {})]
        if missing:
            raise ScenarioError(f"{agent} has no value and cost for task(s) {', '.join(missing)}.")
    unheld = [t for t in ids if scenario.initial.holder.get(t) not in scenario.agents]
    if unheld or set(scenario.initial.holder) != set(ids):
        raise ScenarioError(f"Scenario {scenario.id!r}: every task must be held by one of the two agents.")
