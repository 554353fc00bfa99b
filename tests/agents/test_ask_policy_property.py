"""Property: with share policy `ask`, what a member did not see and approve never leaves their agent.

Over random asks (question, colleagues, who holds the launch date, each member's policy), random decisions (approve,
deny, time out) and three models (the scripted one; one whose utterance says "Nothing sensitive here." while its
facts and answer carry the date: the reported bug; one whose colleagues say nothing while they talk, so the date can
only leave in a closing statement), the launch date held only in an "ask me" member's DM may appear
in another agent's prompt, the consensus prompt or the final answer only when that member approved a prompt that
showed it. The same holds for each colleague's closing statement (its side of the consensus), which is screened and
approved like a turn. A holder's denied and timed-out turns and statements keep none of the withheld text in what
their record passes on either (the utterance, act, plan, blackboard postings, released lines, prompts).

Hypothesis drives a synchronous function; each example's coroutine runs on the test's own event loop (which owns
the database connections) while the test awaits the hypothesis run in a worker thread.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.asks.service import AskRequest
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMRequest
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from tests.fakes.asks import build, two_fact_world
from tests.fakes.records import consensus_data, conversations, turns


SECRET = "14 March"
QUESTIONS = (
    "What is the project code name and when is the launch date?",
    "When is the launch date?",
    "What is the launch date and who moved it?",
)
world_ids = itertools.count()


@dataclass(frozen=True)
class Case:
    question: str
    colleagues: list[str]
    launch_with: str
    policies: dict[str, SharePolicy]
    decisions: list[ApprovalDecision]
    model: str  # scripted | leaky | quiet


@st.composite
def cases(draw: st.DrawFn) -> Case:
    colleagues = draw(st.lists(st.sampled_from(["bob", "carol"]), min_size=1, max_size=2, unique=True))
    policy = st.sampled_from([SharePolicy.AUTO, SharePolicy.ASK])
    return Case(
        question=draw(st.sampled_from(QUESTIONS)),
        colleagues=colleagues,
        launch_with=draw(st.sampled_from(["bob", "carol"])),
        policies={h: draw(policy) for h in ("bob", "carol", "erin")},
        decisions=draw(st.lists(st.sampled_from(list(ApprovalDecision)), min_size=1, max_size=6)),
        model=draw(st.sampled_from(["scripted", "leaky", "quiet"])),
    )


def nothing_sensitive(request: LLMRequest) -> str:
    """The model of the reported bug: its words give nothing away, its facts and answer do (in turns and in the
    closing statement, whose claims carry the date)."""
    reply = json.loads(scripted_model(request))
    if request.purpose == "act":
        reply["utterance"] = "Nothing sensitive here."
    if request.purpose == "statement":
        reply["statement"] = "Nothing sensitive here."
    return json.dumps(reply)


def quiet(request: LLMRequest) -> str:
    """A model whose colleagues' agents pass nothing on while they talk: what they hold can leave only through
    their closing statements."""
    reply = json.loads(scripted_model(request))
    if request.purpose == "act" and speaker(request) != "alice":
        reply.update(utterance="I am still looking.", learned=[], answer=None)
    return json.dumps(reply)


def speaker(request: LLMRequest) -> str | None:
    found = re.match(r"You are (\S+)'s askwith agent", request.messages[0]["content"])
    return found[1] if found else None


async def run_case(db: Database, settings: Settings, case: Case) -> None:
    asked: list[tuple[ApprovalRequest, ApprovalDecision]] = []
    decisions = itertools.cycle(case.decisions)

    async def respond(request: ApprovalRequest) -> ApprovalDecision:
        decision = next(decisions)
        asked.append((request, decision))
        return decision

    policies = {h: MemberPolicy(share=p) for h, p in case.policies.items()}
    world = two_fact_world(launch_with=case.launch_with, policies=policies, world_id=f"P{next(world_ids)}")
    script = {"scripted": scripted_model, "leaky": nothing_sensitive, "quiet": quiet}[case.model]
    h = await build(db, world, settings=settings, script=script, approvals=respond)

    outcome = await h.service.ask(AskRequest("alice", case.colleagues, case.question))

    holders = {case.launch_with, "erin"}
    shown_and_approved = any(
        (SECRET in request.body and decision is ApprovalDecision.APPROVED)
        or decision is ApprovalDecision.APPROVED_ALL  # "everything my agent says in this ask", shown as such
        for request, decision in asked
        if request.member_id in holders
    )
    shared_freely = any(case.policies[holder] is SharePolicy.AUTO for holder in holders)
    if shown_and_approved or shared_freely:
        return
    for request in h.backend.requests:
        if request.purpose == "consensus" or speaker(request) not in holders:
            text = "\n".join(m["content"] for m in request.messages)
            assert SECRET not in text, f"{case}: a withheld fact reached {speaker(request) or 'consensus'}"
    assert SECRET not in outcome.final_text, f"{case}: a withheld fact reached the answer"
    for conversation in await conversations(db, outcome.ask_id):
        for turn in await turns(db, conversation.id):
            if turn.agent in holders and turn.data.get("approval") in ("denied", "timeout"):
                passed_on = {
                    k: turn.data.get(k) for k in ("utterance", "act", "plan", "think", "published", "released")
                }
                assert SECRET not in json.dumps(passed_on), f"{case}: a withheld turn's record passes the fact on"
    record = await consensus_data(db, outcome.ask_id)
    for side in record.get("sides", []):
        if side["agent"] in holders and side["approval"] not in (None, "approved", "approved_all"):
            passed_on = {k: side[k] for k in ("utterance", "act", "released", "shown", "llm_calls")}
            assert SECRET not in json.dumps(passed_on), f"{case}: a withheld statement's record passes the fact on"


async def test_nothing_a_member_did_not_approve_leaves_their_agent(sqlite_db: Database, settings: Settings) -> None:
    loop = asyncio.get_running_loop()

    def on_loop(coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    @settings_for_asks
    @given(cases())
    def check(case: Case) -> None:
        on_loop(run_case(sqlite_db, settings, case))

    await asyncio.to_thread(check)


settings_for_asks = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
