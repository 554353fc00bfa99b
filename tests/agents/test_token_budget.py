"""The ask's prompt-token budget (ASKWITH_ASK_TOKEN_BUDGET): a talk ends, recorded as stopped by the budget, before
another turn would leave too little for the closing statements and consensus; consensus still runs."""

from __future__ import annotations

import pytest

from bot.agents.context import TokenBudget
from bot.asks.models import Ask
from bot.asks.service import AskRequest
from bot.errors import InvalidSettingError
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.records import llm_calls


async def test_a_talk_stops_before_the_budget_runs_out_and_consensus_still_runs(
    db: Database, settings: Settings
) -> None:
    # Per call the engine counts 3,000 tokens (1,000 of evidence + the prompt's overhead) until a larger prompt is
    # seen; a turn (2 calls) + bob's statement + consensus = 12,000: a turn starts only while at most 1,000 are spent.
    settings = settings.replace(evidence_budget_tokens=1000, ask_token_budget=13_000, whole_history=False)
    h = await build(db, two_fact_world(launch_with="dave"), settings=settings)  # nobody asked holds the date

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    [talk] = outcome.result.conversations
    assert talk.stop_reason == "token_budget"
    calls = await llm_calls(db, outcome.ask_id)
    assert "consensus" in {c.purpose for c in calls}, "the answer is still agreed on what was found"
    async with db.session() as session:
        ask = await session.get(Ask, outcome.ask_id)
    assert ask is not None and ask.failure is None
    assert 0 < ask.prompt_tokens <= 13_000 and ask.prompt_tokens == sum(c.prompt_tokens for c in calls)


async def test_the_default_budget_leaves_an_ordinary_ask_alone(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert outcome.result.conversations[0].stop_reason != "token_budget"


def test_a_turn_is_taken_only_with_room_for_it_and_what_must_follow() -> None:
    tokens = TokenBudget(limit=10_000, spent=2_000)  # a resumed ask starts from what it had spent
    assert tokens.allows_turn(calls=2, reserved_calls=2, call_estimate=2_000)  # 2,000 + 4 x 2,000
    assert not tokens.allows_turn(calls=2, reserved_calls=3, call_estimate=2_000)
    tokens.spend([1_500, 2_500])
    assert tokens.spent == 6_000 and tokens.largest_call == 2_500
    assert not tokens.allows_turn(calls=2, reserved_calls=0, call_estimate=1_000), "the largest prompt seen counts"


def test_the_budget_follows_the_context_profile_unless_set() -> None:
    assert Settings().ask_token_limit == 120_000
    assert Settings(context_profile="small").ask_token_limit == 30_000
    assert Settings(context_profile="small", ask_token_budget=50_000).ask_token_limit == 50_000
    with pytest.raises(InvalidSettingError, match="ASKWITH_ASK_TOKEN_BUDGET"):
        Settings.load(env={"ASKWITH_ASK_TOKEN_BUDGET": "-1"})
