"""Negotiation scenarios: JSON files, and a generator that is deterministic per seed.

File format (values and costs are private: each agent only ever sees its own):

    {"id": "launch", "setting": "cooperative", "agents": ["alice", "bob"],
     "parents": [{"name": "Product launch", "owner": "alice",
                  "tasks": [{"id": "IT", "name": "IT setup"}, {"id": "MKT-A", "name": "Marketing A"}]}],
     "preferences": {"alice": {"IT": {"value": 2, "cost": 6}, ...}, "bob": {...}}}

Every atomic task starts with the owner of its parent task. Cooperative scenarios draw the two agents' net weights
negatively correlated (what one dislikes the other likes: trades help both); competitive ones positively correlated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from bot.errors import ScenarioError
from bot.negotiation.model import Allocation, AtomicTask, Preference, Scenario
from bot.negotiation.pareto import outcome_space


SETTINGS = ("cooperative", "competitive")
CORRELATION = {"cooperative": -0.8, "competitive": 0.8}
# A cooperative scenario whose initial allocation already sits on the frontier has nothing to negotiate about; the
# generator redraws (from the same seeded stream) until the initial point is at least this far from the frontier.
MIN_INITIAL_GAP = {"cooperative": 0.2, "competitive": 0.0}
MAX_DRAWS = 100
# Parent tasks and the atomic tasks they decompose into; the generator deals them out to the two agents.
TASK_POOL: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Product launch", (("IT", "IT setup"), ("MKT-A", "Marketing A"), ("DES", "Design"))),
    ("Hiring round", (("HR", "HR screening"), ("MKT-B", "Marketing B"), ("FIN", "Budget approval"))),
    ("Customer study", (("RES", "User research"), ("SUP", "Support triage"), ("DATA", "Data analysis"))),
    ("Office move", (("LEG", "Lease review"), ("OPS", "Logistics"), ("QA", "Equipment check"))),
)


def load_scenario(path: Path | str) -> Scenario:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ScenarioError(f"Scenario file {str(path)!r} does not exist.") from exc
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"Scenario file {str(path)!r} is not valid JSON: {exc}") from exc
    return scenario_from_dict(raw)


def save_scenario(scenario: Scenario, path: Path | str) -> None:
    Path(path).write_text(json.dumps(scenario_to_dict(scenario), indent=1, sort_keys=True) + "\n", encoding="utf-8")


def scenario_from_dict(raw: dict[str, Any]) -> Scenario:
    try:
        agents = (str(raw["agents"][0]), str(raw["agents"][1]))
        tasks, holder = [], {}
        for parent in raw["parents"]:
            for task in parent["tasks"]:
                tasks.append(AtomicTask(str(task["id"]), str(task.get("name", task["id"])), str(parent["name"])))
                holder[str(task["id"])] = str(parent["owner"])
        preferences = {
            str(agent): {str(t): Preference(float(p["value"]), float(p["cost"])) for t, p in prefs.items()}
            for agent, prefs in raw["preferences"].items()
        }
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ScenarioError(f"Scenario is malformed: {exc!r}") from exc
    return Scenario(
        id=str(raw.get("id", "scenario")),
        setting=str(raw.get("setting", "custom")),
        agents=agents,
        tasks=tuple(tasks),
        preferences=preferences,
        initial=Allocation(holder),
        description=str(raw.get("description", "")),
    )


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    parents: dict[str, dict[str, Any]] = {}
    for task in scenario.tasks:
        owner = scenario.initial.holder[task.id]
        entry = parents.setdefault(f"{task.parent}\0{owner}", {"name": task.parent, "owner": owner, "tasks": []})
        entry["tasks"].append({"id": task.id, "name": task.name})
    return {
        "id": scenario.id,
        "setting": scenario.setting,
        "description": scenario.description,
        "agents": list(scenario.agents),
        "parents": list(parents.values()),
        "preferences": {
            agent: {t: {"value": p.value, "cost": p.cost} for t, p in prefs.items()}
            for agent, prefs in scenario.preferences.items()
        },
    }


def generate_scenario(
    setting: str, seed: int, *, parents_per_agent: int = 2, agents: tuple[str, str] = ("alice", "bob")
) -> Scenario:
    """A random scenario, the same for the same (setting, seed): 3 atomic tasks per parent task."""
    if setting not in CORRELATION:
        raise ScenarioError(f"Unknown setting {setting!r}; expected one of {', '.join(SETTINGS)}.")
    if not 1 <= parents_per_agent <= len(TASK_POOL) // 2:
        raise ScenarioError(f"parents_per_agent must be between 1 and {len(TASK_POOL) // 2}.")
    rng = np.random.default_rng([seed, SETTINGS.index(setting)])
    for _ in range(MAX_DRAWS):
        scenario = _draw(rng, setting, seed, parents_per_agent, agents)
        initial = scenario.utilities(scenario.initial)
        if outcome_space(scenario).distance_to_frontier(initial) >= MIN_INITIAL_GAP[setting]:
            break
    return scenario


def _draw(
    rng: np.random.Generator, setting: str, seed: int, parents_per_agent: int, agents: tuple[str, str]
) -> Scenario:
    chosen = [TASK_POOL[i] for i in rng.permutation(len(TASK_POOL))[: 2 * parents_per_agent]]
    tasks = tuple(AtomicTask(tid, name, parent) for parent, subtasks in chosen for tid, name in subtasks)
    owners = {t.id: agents[0] if i < len(tasks) // 2 else agents[1] for i, t in enumerate(tasks)}
    nets = _correlated_nets(rng, len(tasks), CORRELATION[setting])
    preferences = {agent: _preferences(rng, tasks, nets[k]) for k, agent in enumerate(agents)}
    return Scenario(
        id=f"{setting}-{seed}",
        setting=setting,
        agents=agents,
        tasks=tasks,
        preferences=preferences,
        initial=Allocation(owners),
        description=f"generated {setting} scenario, seed {seed}, net-weight correlation {CORRELATION[setting]:+.1f}",
    )


def _correlated_nets(rng: np.random.Generator, n: int, rho: float) -> np.ndarray:
    """Two rows of integer net weights in about [-6, 6] whose correlation is rho."""
    first = rng.standard_normal(n)
    second = rho * first + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    return np.clip(np.rint(np.vstack((first, second)) * 3), -6, 6)


def _preferences(rng: np.random.Generator, tasks: tuple[AtomicTask, ...], nets: np.ndarray) -> dict[str, Preference]:
    """Split each net weight into a value and a cost, both non-negative integers (cost at least 1)."""
    prefs = {}
    for task, net in zip(tasks, nets, strict=True):
        cost = max(int(rng.integers(1, 6)), int(-net))
        prefs[task.id] = Preference(float(cost + net), float(cost))
    return prefs
