from __future__ import annotations

import pytest

from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.negotiation.engine import NegotiationEngine
from bot.negotiation.model import Proposal
from bot.negotiation.pareto import outcome_space
from bot.negotiation.scenario import generate_scenario
from bot.negotiation.scripted import FaultPlan, ScriptedNegotiator
from bot.negotiation.transcript import NegotiationOptions, Outcome, Phase
from tests.negotiation_helpers import replay_clients, small_scenario


CONSIDER = "<CONSIDER>I would rather not do Y; a secret thought.</CONSIDER>"


def _seen_by(player: object) -> str:
    return "\n".join(m["content"] for r in player.requests for m in r.messages)  # type: ignore[attr-defined]


async def test_accept_applies_exactly_the_last_valid_proposal() -> None:
    scenario = small_scenario()
    clients, players = replay_clients(
        {
            "alice": [
                CONSIDER,
                '<PROPOSAL>{"give": ["Y"], "take": ["Z"]}</PROPOSAL>',
                '<PROPOSAL>{"give": ["Z"], "take": ["W"]}</PROPOSAL>',  # invalid: not delivered, retried
                "<ACCEPT>That sounds fair.</ACCEPT>",
            ],
            "bob": [
                "<CONSIDER>Z is mine.</CONSIDER>",
                '<REJECT>Too costly.</REJECT><PROPOSAL>{"give": ["W"], "take": ["Y"]}</PROPOSAL>',
            ],
        }
    )
    result = await NegotiationEngine(scenario, clients).run()
    assert result.outcome is Outcome.AGREEMENT and result.turns_played == 4
    assert result.agreed == Proposal(("W",), ("Y",)) and result.proposer == "bob"
    assert result.allocation.holdings("alice") == ("X", "W")
    assert result.utilities == pytest.approx((1.0, 0.75)) and result.l2_to_pareto == 0.0
    turn_4 = result.turns[-1]
    assert [a.valid for a in turn_4.attempts] == [False, True] and "You don't hold Z." in turn_4.attempts[0].feedback
    assert "You don't hold Z." in _seen_by(players["alice"])
    # Neither the private reflection nor the rejected attempt ever reaches the counterpart.
    bob_saw = _seen_by(players["bob"])
    assert "secret thought" not in bob_saw and '"give": ["Z"]' not in bob_saw
    assert '"give": ["Y"], "take": ["Z"]' in bob_saw


async def test_the_fifth_invalid_proposal_in_one_turn_is_an_error() -> None:
    scenario = small_scenario()
    bad = '<PROPOSAL>{"give": ["HR"], "take": []}</PROPOSAL>'
    clients, players = replay_clients({"alice": [CONSIDER] + [bad] * 5, "bob": [CONSIDER]})
    result = await NegotiationEngine(scenario, clients).run()
    assert result.outcome is Outcome.ERROR and result.turns_played == 2
    assert result.allocation == scenario.initial and result.agreed is None
    assert result.turns[-1].invalid_attempts == 5 and not result.turns[-1].delivered
    assert "invalid attempt 4 of 5" in _seen_by(players["alice"])
    assert len(players["bob"].requests) == 1  # bob only ever considered


@pytest.mark.parametrize(("burst", "outcome"), [(4, Outcome.AGREEMENT), (5, Outcome.ERROR)])
async def test_scripted_faults_recover_below_five_and_fail_at_five(burst: int, outcome: Outcome) -> None:
    scenario = generate_scenario("cooperative", 1)
    clients = {
        "alice": LLMClient(ScriptedBackend(ScriptedNegotiator(scenario, "alice", faults=FaultPlan(burst=burst)))),
        "bob": LLMClient(ScriptedBackend(ScriptedNegotiator(scenario, "bob"))),
    }
    result = await NegotiationEngine(scenario, clients).run()
    assert result.outcome is outcome
    assert result.turns[2].invalid_attempts == burst  # turns 0 and 1 are the two reflections


async def test_without_validation_an_accepted_impossible_trade_is_an_error() -> None:
    scenario = small_scenario()
    clients, players = replay_clients(
        {
            "alice": [CONSIDER, '<PROPOSAL>{"give": ["Z"], "take": ["W"]}</PROPOSAL>'],
            "bob": [CONSIDER, "<ACCEPT>Sure.</ACCEPT>"],
        }
    )
    result = await NegotiationEngine(scenario, clients, options=NegotiationOptions(validate=False)).run()
    assert '"give": ["Z"]' in _seen_by(players["bob"])  # delivered as written
    assert result.outcome is Outcome.ERROR and "cannot be carried out" in result.error
    assert result.allocation == scenario.initial


async def test_no_agreement_after_ten_turns_keeps_the_initial_allocation() -> None:
    scenario = small_scenario()
    offer = '<PROPOSAL>{"give": ["Y"], "take": ["Z"]}</PROPOSAL>'
    clients, _ = replay_clients({"alice": [CONSIDER] + [offer] * 5, "bob": [CONSIDER] + ["<REJECT>No.</REJECT>"] * 4})
    result = await NegotiationEngine(scenario, clients).run()
    assert result.outcome is Outcome.NO_AGREEMENT and result.turns_played == 10
    assert result.allocation == scenario.initial
    assert result.utilities == pytest.approx(scenario.utilities(scenario.initial))


async def test_estimates_are_recorded_each_turn_beside_the_true_value() -> None:
    scenario = small_scenario()
    clients, _ = replay_clients(
        {"alice": [CONSIDER, '<PROPOSAL>{"give": ["Y"], "take": ["W"]}</PROPOSAL>'], "bob": [CONSIDER, "<ACCEPT>ok"]}
    )
    result = await NegotiationEngine(scenario, clients).run()
    proposal_turn = result.turns[2]
    assert proposal_turn.phase is Phase.MOVE and proposal_turn.final.estimate == 0.5
    assert proposal_turn.final.estimate_target == pytest.approx(0.75)  # bob's utility if alice's trade happens
    assert all(t.final.estimate is not None for t in result.turns)


async def test_the_prompt_holds_only_my_values_and_the_utility_guidance_is_optional() -> None:
    scenario = small_scenario()
    for aware in (True, False):
        clients, players = replay_clients(
            {"alice": [CONSIDER, "<REJECT>x"] * 5, "bob": [CONSIDER] + ["<REJECT>x"] * 5}
        )
        await NegotiationEngine(scenario, clients, options=NegotiationOptions(utility_aware=aware, max_turns=2)).run()
        system = players["alice"].requests[0].messages[0]["content"]
        assert 'Z (Zoning permit, part of "Office move"), held by bob: value 1, cost 4, net -3' in system
        assert "value 6, cost 2" not in system  # bob's private value of Z
        assert ("Be utility-aware" in system) is aware


async def test_scripted_negotiators_agree_in_a_cooperative_scenario() -> None:
    scenario = generate_scenario("cooperative", 0)
    clients = {a: LLMClient(ScriptedBackend(ScriptedNegotiator(scenario, a))) for a in scenario.agents}
    result = await NegotiationEngine(scenario, clients).run()
    assert result.outcome is Outcome.AGREEMENT
    assert result.utilities == pytest.approx(scenario.utilities(result.allocation))
    assert sum(result.utilities) > scenario.social_welfare(scenario.initial)
    space = outcome_space(scenario)
    assert result.l2_to_pareto == pytest.approx(space.distance_to_frontier(result.utilities))
    assert result.tokens()[0] > 0 and len(result.calls) == result.turns_played + 1
