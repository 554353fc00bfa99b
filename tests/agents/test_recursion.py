"""Recursive communication: a fact only Carol knows; Bob's agent brings in Carol's agent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bot.asks.service import AskRequest
from bot.consent.outbox import AGENTS_THREAD
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMReply, LLMRequest
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import MemberPolicy, World
from bot.store.world_mirror import WORLD_PLATFORM
from tests.fakes.asks import LAUNCH, QUESTION, build, two_fact_world
from tests.fakes.records import conversations, hit_ids, llm_calls, session_channels, turns


def _launch_id(world) -> str:  # noqa: ANN001
    return next(m.id for msgs in world.messages.values() for m in msgs if m.text == LAUNCH)


def forcing_recruit(who: str, member: str):  # noqa: ANN201
    """The scripted model, except that `who`'s agent always tries to bring in `member`."""

    def script(request: LLMRequest) -> str:
        text = scripted_model(request)
        if request.purpose == "think" and f"YOU ARE: {who}'s agent" in request.messages[1]["content"]:
            data = json.loads(text)
            data["recruit"] = [{"member": member, "question": "anything?"}]
            text = json.dumps(data)
        return text

    return script


async def test_bob_brings_in_carol_and_her_fact_reaches_the_answer(db: Database, settings: Settings) -> None:
    world = two_fact_world(launch_with="carol")
    h = await build(db, world, settings=settings, fuzzy=True)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done" and "14 March" in outcome.answer and "Bluebird" in outcome.answer
    top, child = await conversations(db, outcome.ask_id)
    assert (child.parent_id, child.depth, child.participants) == (top.id, 1, ["bob", "carol"])
    assert "14 March" in (child.conclusion or "")
    parent_turn = next(t for t in await turns(db, top.id) if t.idx == child.parent_turn)
    assert parent_turn.agent == "bob" and parent_turn.data["recruits"][0]["status"] == "done"
    sub_turns = await turns(db, child.id)
    launch_id = _launch_id(world)
    assert any(launch_id in hit_ids(t) for t in sub_turns if t.agent == "carol")
    assert not any(launch_id in hit_ids(t) for t in sub_turns if t.agent == "bob")  # not in Bob's memory
    assert child.stop_reason == "plans_complete"
    # Bob's agent brought Carol in once its own searches (clear and fuzzy memory) left the launch date unknown.
    bob_queries = [q for t in await turns(db, top.id) if t.agent == "bob" for q in t.data["queries"]]
    assert [q["params"].get("limit") for q in bob_queries if q["kind"] == "clear"] == [5]
    fuzzy = [q for q in bob_queries if q["kind"] == "fuzzy"]
    assert fuzzy and fuzzy[0]["skipped"] is None and fuzzy[0]["params"]["top_k"] == 3
    keys = {h.removeprefix("session:") for q in fuzzy for h in q["hit_ids"]}
    assert keys and await session_channels(db, keys) <= {c.id for c in world.visible_channels("bob")}


async def test_a_cycle_back_to_an_agent_in_the_chain_is_refused(db: Database, settings: Settings) -> None:
    settings = settings.replace(recursion_depth=2)
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings, script=forcing_recruit("carol", "bob"))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done"
    convs = await conversations(db, outcome.ask_id)
    assert [c.depth for c in convs] == [0, 1]  # no third level opened
    carol_turns = [t for t in await turns(db, convs[1].id) if t.agent == "carol"]
    assert carol_turns and all(t.data["recruits"][0]["reason"] == "cycle" for t in carol_turns)
    assert all(t.data["recruits"][0]["status"] == "refused" for t in carol_turns)


async def test_depth_limit_holds(db: Database, settings: Settings) -> None:
    settings = settings.replace(recursion_depth=1)
    script = forcing_recruit("carol", "erin")
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings, script=script, fuzzy=True)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    convs = await conversations(db, outcome.ask_id)
    assert max(c.depth for c in convs) == 1
    carol_turns = [t for t in await turns(db, convs[1].id) if t.agent == "carol"]
    assert {t.data["recruits"][0]["reason"] for t in carol_turns} == {"depth"}


async def test_no_recursion_at_depth_zero_or_when_switched_off(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings.replace(recursion_depth=0))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert len(await conversations(db, outcome.ask_id)) == 1
    assert "14 March" not in (outcome.final_text or "")

    off = await h.service.ask(AskRequest("alice", ["bob"], QUESTION, ablations=["no-recursion"]))
    assert len(await conversations(db, off.ask_id)) == 1
    assert (await h.service.load(off.ask_id)).ablations == ["no-recursion"]


async def test_budget_caps_the_sub_conversations_of_an_ask(db: Database, settings: Settings) -> None:
    # Bob's agent keeps asking Carol's; the budget (2 calls) pays for one answer, then recruiting is refused.
    settings = settings.replace(recursion_llm_budget=2)
    h = await build(db, two_fact_world(launch_with="dave"), settings=settings, script=forcing_recruit("bob", "carol"))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    top, child = await conversations(db, outcome.ask_id)
    assert child.participants == ["bob", "carol"]
    calls = [c for c in await llm_calls(db, outcome.ask_id) if c.conversation_id == child.id]
    assert len(calls) == 2  # a sub-conversation is one answer: Carol's agent's turn
    reasons = [t.data["recruits"][0]["reason"] for t in await turns(db, top.id) if t.data["recruits"]]
    assert reasons[0] == "" and set(reasons[1:]) == {"budget"} and len(reasons) > 1


async def test_budget_too_small_refuses_recruiting(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings.replace(recursion_llm_budget=1))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    (top,) = await conversations(db, outcome.ask_id)
    reasons = [t.data["recruits"][0]["reason"] for t in await turns(db, top.id) if t.data["recruits"]]
    assert reasons and set(reasons) == {"budget"}


async def test_one_think_brings_in_several_members_and_each_request_gets_its_outcome(
    db: Database, settings: Settings
) -> None:
    def script(request: LLMRequest) -> str:
        text = scripted_model(request)
        if request.purpose == "think" and "YOU ARE: bob's agent" in request.messages[1]["content"]:
            data = json.loads(text)
            if data["recruit"]:  # its own choice (carol), then nobody, then the requester (in the chain)
                (carol,) = data["recruit"]
                data["recruit"] += [{**carol, "member": m} for m in ("zed", "alice")]
            text = json.dumps(data)
        return text

    h = await build(db, two_fact_world(launch_with="carol"), settings=settings, script=script, fuzzy=True)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done" and "14 March" in outcome.answer
    top, child = await conversations(db, outcome.ask_id)
    bob = next(t for t in await turns(db, top.id) if t.agent == "bob" and t.data["recruits"])
    outcomes = [(r["request"]["member"], r["status"], r["reason"]) for r in bob.data["recruits"]]
    assert outcomes == [("carol", "done", ""), ("zed", "refused", "unknown"), ("alice", "refused", "cycle")]
    assert (child.parent_turn, child.participants) == (bob.idx, ["bob", "carol"])
    sent = (bob.data["sharing"] or {}).get("recruit_sent")
    # One question left, to whom it was put (and the readers of the agents' thread).
    assert [s["audience"] for s in sent] == [["carol", "alice", AGENTS_THREAD]]


class _Meeting(ScriptedBackend):
    """The scripted model, except that the agents brought in wait for one another before their first call: the
    ask goes on only if their sub-conversations run side by side (one after another, the first would wait alone)."""

    def __init__(self, script: Callable[[LLMRequest], str], parties: set[str]) -> None:
        super().__init__(script)
        self.parties, self.arrived, self.met = parties, set[str](), asyncio.Event()

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        who = next((p for p in self.parties if f"YOU ARE: {p}'s agent" in request.messages[1]["content"]), None)
        if who is not None and request.purpose == "think":
            self.arrived.add(who)
            if self.arrived == self.parties:
                self.met.set()
            await asyncio.wait_for(self.met.wait(), timeout=30)
        return await super().complete(request, response_format=response_format)


def _bob_asks_carol_and_dave(bob: MemberPolicy | None = None) -> tuple[World, Callable[[LLMRequest], str]]:
    """Bob brings in carol (his own choice) and dave beside her in one think, putting the same words to each."""
    world = two_fact_world(launch_with="carol", policies={"bob": bob or MemberPolicy()})
    world.add_message(world.dm("bob", "dave").id, "dave", "Bob, coffee?", ts=datetime(2026, 3, 2, 9, 0, tzinfo=UTC))

    def script(request: LLMRequest) -> str:
        text = scripted_model(request)
        if request.purpose == "think" and "YOU ARE: bob's agent" in request.messages[1]["content"]:
            data = json.loads(text)
            if data["recruit"]:
                data["recruit"] = [{"member": m, "question": "When is the launch, please?"} for m in ("carol", "dave")]
            text = json.dumps(data)
        return text

    return world, script


async def test_the_members_one_think_brings_in_talk_side_by_side(db: Database, settings: Settings) -> None:
    world, script = _bob_asks_carol_and_dave()
    backend = _Meeting(script, {"carol", "dave"})
    h = await build(db, world, settings=settings, backend=backend, fuzzy=True)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert backend.met.is_set() and outcome.status == "done" and "14 March" in outcome.answer
    top, *children = await conversations(db, outcome.ask_id)
    assert sorted(c.participants[1] for c in children) == ["carol", "dave"]
    assert len({c.parent_turn for c in children}) == 1 and all(c.stop_reason for c in children)


async def test_a_policy_changed_while_the_first_question_awaits_approval_holds_the_next(
    db: Database, settings: Settings
) -> None:
    """Asked to approve the first question, bob switches his policy to never share: the second question does not
    leave (the policy is read as it is now, question by question), and only the approved one opens a talk."""
    world, script = _bob_asks_carol_and_dave(MemberPolicy(share=SharePolicy.ASK))
    asked: list[ApprovalRequest] = []

    async def bob_changes_his_mind(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        if "launch, please" in request.body:  # the question to carol
            await MemberSettingsStore(db).set_share_policy(
                WorkspaceKey(WORLD_PLATFORM, world.id), "bob", SharePolicy.NEVER
            )
        return ApprovalDecision.APPROVED

    h = await build(db, world, settings=settings, script=script, approvals=bob_changes_his_mind, fuzzy=True)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    top, *children = await conversations(db, outcome.ask_id)
    turn = next(t for t in await turns(db, top.id) if t.agent == "bob" and t.data["recruits"])
    outcomes = [(r["request"]["member"], r["status"], r["reason"]) for r in turn.data["recruits"]]
    assert outcomes == [("carol", "done", ""), ("dave", "refused", "withheld")]
    sent = turn.data["sharing"]["recruit_sent"]
    assert [(s["verdict"], s["policy"]) for s in sent] == [("sent", "ask"), ("held", "never")]
    assert sent[1]["text"] == "" and [c.participants for c in children] == [["bob", "carol"]]
    assert sum("launch, please" in r.body for r in asked) == 1  # dave's was never put to bob: it could not leave


async def test_an_approval_covers_the_audience_it_named_not_another(db: Database, settings: Settings) -> None:
    """Bob approves his question to carol ("Who will see it: Carol and Alice"); the same words to dave are put to
    him again: he never agreed to dave reading them."""
    world, script = _bob_asks_carol_and_dave(MemberPolicy(share=SharePolicy.ASK))
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.APPROVED

    h = await build(db, world, settings=settings, script=script, approvals=approve, fuzzy=True)

    await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    named = [r.card.who_sees for r in asked if "launch, please" in r.body and r.card is not None]
    assert [("Carol" in who, "Dave" in who) for who in named] == [(True, False), (False, True)]
