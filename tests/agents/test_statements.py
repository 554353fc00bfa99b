"""Consensus per side: a colleague's agent states its side over its own notebook, and only the screened (and, for
"ask me" members, approved) statement crosses to the final consensus.

The colleague's model here is quiet during the talk (its turns pass nothing on), so the launch date bob's memory
holds can only reach the requester's side through his agent's closing statement.
"""

from __future__ import annotations

import json

from bot.asks.service import AskRequest
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMRequest
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from tests.fakes.asks import LAUNCH, QUESTION, build, never, two_fact_world
from tests.fakes.records import consensus_data, llm_calls


SECRET = "14 March"


def quiet_bob(request: LLMRequest) -> str:
    """The scripted model, except that bob's agent passes nothing on while the two agents talk."""
    reply = json.loads(scripted_model(request))
    if request.purpose == "act" and request.messages[0]["content"].startswith("You are bob's"):
        reply.update(utterance="I am still looking.", learned=[], answer=None)
    return json.dumps(reply)


def text_of(request: LLMRequest) -> str:
    return "\n".join(m["content"] for m in request.messages)


async def test_the_colleague_states_its_side_over_its_own_notebook(db: Database, settings: Settings) -> None:
    settings = settings.replace(whole_history=True)
    h = await build(db, two_fact_world(), settings=settings, script=quiet_bob)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    [statement] = [r for r in h.backend.requests if r.purpose == "statement"]
    assert statement.messages[0]["content"].startswith("You are bob's askwith agent")
    assert LAUNCH in text_of(statement)  # bob's agent read its own notebook whole
    turns_passed_on = [text_of(r) for r in h.backend.requests if r.purpose in ("think", "act")]
    alice_saw = [t for t in turns_passed_on if t.startswith("You are alice's")]
    assert alice_saw and not any(SECRET in t for t in alice_saw)  # the quiet talk passed nothing on
    [final] = [r for r in h.backend.requests if r.purpose == "consensus"]
    assert SECRET in text_of(final)  # ... the statement did, with the line it cites
    consensus = outcome.result.consensus
    launch_id = next(i for i, held in consensus.evidence.items() if held.line.text == LAUNCH)
    assert consensus.evidence[launch_id].agent == "bob" and launch_id in text_of(final)
    [side] = consensus.sides
    assert side.agent == "bob" and not side.declined and launch_id in side.released
    assert dict(consensus.statements)["bob"] == side.utterance and SECRET in side.utterance
    assert "statement" in [c.purpose for c in await llm_calls(db, outcome.ask_id)]  # counted into the ask's cost
    # alice's consensus record keeps the statement as it crossed, never its prompt (bob's notebook)
    [kept] = (await consensus_data(db, outcome.ask_id))["sides"]
    assert kept["utterance"] == side.utterance and kept["llm_calls"] and not kept["llm_calls"][0]["prompt"]


async def test_an_ask_me_member_approves_the_statement_and_a_denial_keeps_all_of_it(
    db: Database, settings: Settings
) -> None:
    asked: list[ApprovalRequest] = []

    async def deny_the_date(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.DENIED if SECRET in request.body else ApprovalDecision.APPROVED

    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    settings = settings.replace(whole_history=True)
    h = await build(db, world, settings=settings, script=quiet_bob, approvals=deny_the_date)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    [closing] = [r for r in asked if "closing statement" in r.body]
    assert SECRET in closing.body and LAUNCH in closing.body  # the statement, its claims and the line it quotes
    for request in h.backend.requests:
        if request.purpose == "consensus" or request.messages[0]["content"].startswith("You are alice's"):
            assert SECRET not in text_of(request)
    assert SECRET not in outcome.final_text
    [side] = (await consensus_data(db, outcome.ask_id))["sides"]
    assert side["approval"] == "denied" and side["declined"]
    kept = {k: side[k] for k in ("utterance", "act", "released", "shown", "llm_calls")}
    assert SECRET not in json.dumps(kept)  # the record keeps none of the withheld statement either


async def test_no_statement_when_the_colleague_has_nothing_new(db: Database, settings: Settings) -> None:
    # Searched, not read whole: every line bob's agent found crossed with its turns, so no statement call.
    h = await build(db, two_fact_world(), settings=settings)
    await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert "statement" not in [r.purpose for r in h.backend.requests]
    # A member whose policy is never: their agent states nothing.
    h = await build(
        db, two_fact_world(policies=never("bob"), world_id="T2"), settings=settings.replace(whole_history=True)
    )
    await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert "statement" not in [r.purpose for r in h.backend.requests]
