from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.errors import ScenarioError
from bot.negotiation.model import Allocation, AtomicTask, Preference, Proposal, Scenario
from bot.negotiation.pareto import OutcomeSpace, all_utilities, allocation_from_mask, outcome_space, skyline
from bot.negotiation.scenario import generate_scenario, load_scenario, save_scenario
from tests.negotiation_helpers import small_scenario


def test_utilities_are_normalised_by_each_agents_own_best_and_worst_bundle() -> None:
    scenario = small_scenario()
    # alice's nets: X +3, Y -2, Z -3, W +5 -> worst -5, best +8; she holds X, Y: raw 1 -> (1 + 5) / 13
    # bob's nets:   X +2, Y +1, Z +4, W -1 -> worst -1, best +7; he holds Z, W: raw 3 -> (3 + 1) / 8
    assert scenario.utilities(scenario.initial) == pytest.approx((6 / 13, 0.5))
    after = scenario.initial.apply(Proposal(("Y",), ("W",)), "alice", "bob")
    assert after.holdings("alice") == ("X", "W") and after.holdings("bob") == ("Y", "Z")
    assert scenario.utilities(after) == pytest.approx((1.0, 0.75))
    assert scenario.social_welfare(after) == pytest.approx(1.75)


def test_every_allocation_is_enumerated_with_the_same_utilities_as_the_model() -> None:
    scenario = small_scenario()
    u_a, u_b = all_utilities(scenario)
    assert len(u_a) == 16 and u_a.min() == 0.0 and u_a.max() == 1.0 and u_b.min() == 0.0 and u_b.max() == 1.0
    for mask in range(16):
        allocation = allocation_from_mask(scenario, mask)
        assert (u_a[mask], u_b[mask]) == pytest.approx(scenario.utilities(allocation))


def test_distance_to_the_frontier() -> None:
    scenario = small_scenario()
    space = outcome_space(scenario)
    agreed = scenario.initial.apply(Proposal(("Y",), ("W",)), "alice", "bob")
    assert space.distance_to_frontier(scenario.utilities(agreed)) == 0.0  # nobody can gain without alice losing
    square = OutcomeSpace(np.zeros(1), np.zeros(1), np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]]))
    assert square.distance_to_frontier((0.0, 0.0)) == pytest.approx(np.hypot(0.6, 0.6))
    assert square.distance_to_frontier((0.3, 1.0)) == pytest.approx(0.3)
    initial = scenario.utilities(scenario.initial)
    expected = min(np.hypot(a - initial[0], b - initial[1]) for a, b in space.frontier)
    assert space.distance_to_frontier(initial) == pytest.approx(expected) and expected > 0


def _pairwise_frontier(u_a: np.ndarray, u_b: np.ndarray) -> set[tuple[float, float]]:
    points = set(zip(u_a.tolist(), u_b.tolist(), strict=True))
    return {p for p in points if not any(q != p and q[0] >= p[0] and q[1] >= p[1] for q in points)}


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 7),
    data=st.data(),
)
def test_skyline_equals_the_pairwise_frontier_on_random_scenarios(n: int, data: st.DataObject) -> None:
    values = st.integers(-6, 6)
    nets = [[data.draw(values) for _ in range(n)] for _ in range(2)]
    holders = [data.draw(st.sampled_from(["a", "b"])) for _ in range(n)]
    tasks = tuple(AtomicTask(f"T{i}", f"task {i}", "p") for i in range(n))
    prefs = {agent: {f"T{i}": Preference(max(w, 0) + 2, max(-w, 0) + 2) for i, w in enumerate(nets[k])}
             for k, agent in enumerate(("a", "b"))}  # fmt: skip
    scenario = Scenario("h", "x", ("a", "b"), tasks, prefs, Allocation({f"T{i}": h for i, h in enumerate(holders)}))
    u_a, u_b = all_utilities(scenario)
    fast = {(float(a), float(b)) for a, b in skyline(u_a, u_b)}
    assert fast == _pairwise_frontier(u_a, u_b)
    assert len(fast) == len(skyline(u_a, u_b))  # no duplicates


def test_skyline_is_sorted_and_strictly_trades_off() -> None:
    rng = np.random.default_rng(3)
    u_a, u_b = rng.random(500), rng.random(500)
    frontier = skyline(u_a, u_b)
    assert np.all(np.diff(frontier[:, 0]) < 0) and np.all(np.diff(frontier[:, 1]) > 0)


def test_generator_is_deterministic_and_correlates_as_the_setting_says(tmp_path: Path) -> None:
    assert generate_scenario("cooperative", 7) == generate_scenario("cooperative", 7)
    assert generate_scenario("cooperative", 7) != generate_scenario("cooperative", 8)
    for setting, sign in (("cooperative", -1), ("competitive", 1)):
        pooled = [generate_scenario(setting, seed) for seed in range(20)]
        a = [w for s in pooled for w in s.weights("alice")]
        b = [w for s in pooled for w in s.weights("bob")]
        assert sign * np.corrcoef(a, b)[0, 1] > 0.5
    scenario = generate_scenario("competitive", 2)
    save_scenario(scenario, tmp_path / "s.json")
    assert load_scenario(tmp_path / "s.json") == scenario


def test_cooperative_scenarios_leave_room_to_negotiate() -> None:
    for seed in range(5):
        scenario = generate_scenario("cooperative", seed)
        assert outcome_space(scenario).distance_to_frontier(scenario.utilities(scenario.initial)) >= 0.2


def test_inconsistent_scenarios_are_refused(tmp_path: Path) -> None:
    scenario = small_scenario()
    with pytest.raises(ScenarioError, match="no value and cost"):
        Scenario("bad", "x", scenario.agents, scenario.tasks, {"alice": scenario.preferences["alice"], "bob": {}},
                 scenario.initial)  # fmt: skip
    with pytest.raises(ScenarioError, match="Unknown setting"):
        generate_scenario("friendly", 1)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ScenarioError, match="not valid JSON"):
        load_scenario(tmp_path / "broken.json")
