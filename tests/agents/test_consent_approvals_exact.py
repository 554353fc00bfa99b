"""Approvals are exact: an approval covers the same sentences to the same people or fewer; words keep their owner
when another agent passes them on; every recruit question under `ask` is approved; the requester's DM partners'
lines leave only as their authors' policies allow."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters.local.workspace import HIDDEN_CHANNEL_ID
from bot.agents.roster import MemberProfile
from bot.agents.steps import TurnStep
from bot.asks.service import AskRequest
from bot.consent.card import LEADS, names_list
from bot.consent.outbox import Audience, Outbox, Sent, Verdict
from bot.consent.outgoing import Outgoing
from bot.consent.screen import ShareScreen
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.llm.standin.reading import PromptView
from bot.llm.types import LLMReply, LLMRequest
from bot.memory.types import Viewer
from bot.platform.port import ApprovalDecision, ApprovalRequest, Channel, ChannelKind, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from bot.texts import conversation_texts
from tests.fakes.asks import QUESTION, build, two_fact_world


class _Gate:
    """An approval channel that approves everything and counts the prompts."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def ask(self, member: MemberProfile, step: TurnStep, outgoing: Outgoing, **_: object) -> ApprovalDecision:
        self.asked.append(outgoing.text())
        return ApprovalDecision.APPROVED


def _bob() -> MemberProfile:
    return MemberProfile("bob", "bob", "Bob", Viewer(1, 2, "bob"), SharePolicy.ASK, True, False, False)


async def test_an_approval_is_reused_only_for_the_same_sentences_to_no_wider_audience() -> None:
    gate = _Gate()
    outbox = Outbox(None, gate, screen=ShareScreen(cap=100), audience=Audience("alice", ("bob",)))  # type: ignore[arg-type]
    step, bob = TurnStep(1, "bob"), _bob()

    async def approval(text: str, audience: list[str]) -> str:
        return await outbox._approval(bob, step, Outgoing(text), audience, "turn", 1)

    assert await approval("The merger will not close at 450 million.", ["alice", "carol"]) == "approved"
    assert len(gate.asked) == 1
    # The same sentence, written otherwise (case, look-alike letters, spacing, a citation id), to fewer people.
    assert await approval("the  mеrger will NOT close at 450 million [m0000007]", ["alice"]) == "approved"
    assert len(gate.asked) == 1
    # Substrings of the approved text say something else: asked again.
    await approval("The merger will. Close at 45", ["alice"])
    assert gate.asked[-1] == "The merger will. Close at 45" and len(gate.asked) == 2
    # The same sentence to someone the first prompt did not name: asked again.
    await approval("The merger will not close at 450 million.", ["alice", "dave"])
    assert len(gate.asked) == 3


def test_every_audience_names_the_readers_of_the_agents_thread() -> None:
    audience = Audience("alice", ("bob",), "#general")
    assert audience.of("bob", partner="alice")[-1] == audience.of("alice", partner="dave")[-1] != "#general"
    assert "agents' thread" in names_list(audience.of("bob", partner="alice"))


def _world(policies: dict[str, MemberPolicy]) -> World:
    world = two_fact_world(policies=policies)
    world.add_message(world.dm("alice", "dave").id, "dave", "Alice, coffee?", ts=datetime(2026, 3, 2, 9, tzinfo=UTC))
    return world


def _relaying_to_dave(request: LLMRequest) -> str:
    """The scripted model, except that alice's agent, once bob's agent has spoken, puts bob's words to dave's."""
    text = scripted_model(request)
    view = PromptView.of(request)
    if request.purpose == "think" and view.me == "alice" and any(who == "bob" for who, _ in view.heard):
        data = json.loads(text)
        said = " ".join(u for who, u in view.heard if who == "bob")
        data["recruit"] = [{"member": "dave", "question": f"Bob's agent told me: {said} Is that right?"}]
        text = json.dumps(data)
    return text


RELAY_QUESTION = "1) What is the project code name? 2) When is the launch date? 3) Who caters the launch party?"


async def test_a_relayed_line_asks_its_owner_again_for_a_member_brought_in(db: Database, settings: Settings) -> None:
    """Bob approves his turn for alice; alice's agent then puts his words to dave's: bob is asked again, naming dave,
    and when he denies, the question never leaves (dave's agent never reads the launch date)."""
    asked: list[ApprovalRequest] = []

    async def bob_keeps_it_to_alice(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.DENIED if "dave" in request.context["audience"] else ApprovalDecision.APPROVED

    world = _world({"bob": MemberPolicy(share=SharePolicy.ASK)})
    h = await build(db, world, settings=settings, script=_relaying_to_dave, approvals=bob_keeps_it_to_alice)

    await h.service.ask(AskRequest("alice", ["bob"], RELAY_QUESTION))

    own = [r for r in asked if "dave" not in r.context["audience"]]
    assert own and own[0].member_id == "bob" and "14 March" in own[0].body  # his turn, for alice
    relays = [r for r in asked if "dave" in r.context["audience"]]
    assert relays and relays[0].member_id == "bob" and "14 March" in relays[0].body  # his words, for dave
    assert "passed on" in relays[0].title and "passed on" not in own[0].title  # not "your agent can answer"
    to_dave = [r for r in h.backend.requests if PromptView.of(r).me == "dave"]
    assert not any("14 March" in m["content"] for r in to_dave for m in r.messages)


async def test_a_recruit_question_equal_to_the_question_is_approved_under_ask(
    db: Database, settings: Settings
) -> None:
    def same_words(request: LLMRequest) -> str:
        text = scripted_model(request)
        if request.purpose == "think" and PromptView.of(request).me == "bob":
            data = json.loads(text)
            data["recruit"] = [{"member": "carol", "question": QUESTION}]  # the ask's own words
            text = json.dumps(data)
        return text

    asked: list[ApprovalRequest] = []

    async def deny(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.DENIED

    world = two_fact_world(launch_with="carol", policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    h = await build(db, world, settings=settings, script=same_words, approvals=deny, fuzzy=True)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    questions = [r for r in asked if LEADS["recruit"] in r.body]
    assert questions and questions[0].member_id == "bob" and "carol" in questions[0].context["audience"]
    assert not [p for p in h.backend.requests if PromptView.of(p).me == "carol"]  # denied: carol never asked
    assert "14 March" not in outcome.final_text


SECRET = "Just between us: the launch date moved to 14 March."


def _dm_world(erin: SharePolicy) -> World:
    """Erin DMs alice the launch date; alice asks bob from #general (which carol reads too)."""
    world = two_fact_world(launch_with="dave", policies={"erin": MemberPolicy(share=erin)})
    world.add_channel(Channel("C-general", "general", ChannelKind.PUBLIC, ("alice", "bob", "carol", "dave", "erin")))
    world.add_message(world.dm("alice", "erin").id, "erin", SECRET, ts=datetime(2026, 3, 2, 9, tzinfo=UTC))
    return world


async def test_a_never_dm_partners_line_reaches_no_colleague_nor_the_channel(db: Database, settings: Settings) -> None:
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.APPROVED

    world = _dm_world(SharePolicy.NEVER)
    h = await build(db, world, settings=settings.replace(whole_history=True), approvals=approve)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION, origin_channel_id="C-general"))

    alice_read_it = [r for r in h.backend.requests if PromptView.of(r).me == "alice"]
    assert any("14 March" in m["content"] for r in alice_read_it for m in r.messages)  # hers to read
    to_bob = [r for r in h.backend.requests if PromptView.of(r).me == "bob"]
    assert to_bob and not any("14 March" in m["content"] for r in to_bob for m in r.messages)
    posted = [m.text for m in world.messages["C-general"]]
    assert posted and not any("14 March" in text for text in posted)
    hidden = [m.text for cid, chat in world.messages.items() if cid != "C-general" for m in chat if "agents" in cid]
    assert not any("14 March" in text for text in hidden)
    assert "14 March" not in outcome.final_text and not [r for r in asked if r.member_id == "erin"]


async def test_an_ask_dm_partner_is_asked_before_their_line_leaves(db: Database, settings: Settings) -> None:
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.APPROVED

    world = _dm_world(SharePolicy.ASK)
    h = await build(db, world, settings=settings.replace(whole_history=True), approvals=approve)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION, origin_channel_id="C-general"))

    erin = [r for r in asked if r.member_id == "erin"]
    assert erin and "14 March" in erin[0].body and "Your words" in erin[0].body
    assert {"bob", "#general"} <= set(erin[0].context["audience"].split(", "))
    assert "14 March" in outcome.final_text  # approved for bob and #general: it may reach the answer


def _telling_carol(request: LLMRequest) -> str:
    """The scripted model, except that alice's agent tells carol's everything the blackboard holds (what bob's
    told it in the other talk)."""
    text = scripted_model(request)
    view = PromptView.of(request)
    board = " ".join(line for line in view.block("BLACKBOARD") if "agent, talking with" in line)
    if request.purpose == "act" and view.me == "alice" and board and _with_carol(request):
        data = json.loads(text)
        data["utterance"] = f"{data['utterance']} Bob's agent says: {board}"
        text = json.dumps(data)
    return text


def _with_carol(request: LLMRequest) -> bool:
    return "talking with carol" in request.messages[0]["content"].lower()


class _AfterBob(ScriptedBackend):
    """Alice's agent thinks in its talk with carol only once bob's turn is in the hidden thread (and so what his
    agent found is on the blackboard): the two talks run side by side, in no fixed order."""

    def __init__(self, world: World) -> None:
        super().__init__(_telling_carol)
        self.world = world

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        if request.purpose == "think" and PromptView.of(request).me == "alice" and _with_carol(request):
            deadline = time.monotonic() + 30
            while not any("14 March" in m.text for m in self.world.messages.get(HIDDEN_CHANNEL_ID, [])):
                assert time.monotonic() < deadline, "bob's turn never reached the agents' thread"
                await asyncio.sleep(0.02)
        return await super().complete(request, response_format=response_format)


async def test_words_passed_on_to_a_colleague_who_was_shown_them_ask_nothing_again(
    db: Database, settings: Settings
) -> None:
    """Bob approved his words for alice and carol (both asked); alice's agent repeating them to carol's asks nothing:
    carol was named in the prompt bob answered."""
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.APPROVED

    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    h = await build(db, world, settings=settings, backend=_AfterBob(world), approvals=approve)

    await h.service.ask(AskRequest("alice", ["bob", "carol"], QUESTION))

    to_carol = [r for r in h.backend.requests if PromptView.of(r).me == "carol"]
    assert any("14 March" in m["content"] for r in to_carol for m in r.messages)  # it was passed on
    assert asked and all("carol" in r.context["audience"] for r in asked)
    assert not [r for r in asked if "Your words" in r.body]


def test_a_turn_held_for_others_words_blames_no_one_by_name() -> None:
    """Held because a relayed owner said no (their own member let it go): the agent's words name no one; held by its
    own member's denial or policy: it says so, as before."""
    relayed = Sent("alice", "turn", 1, "requester", Verdict.HELD, "", ["dave"], owners={"bob": "denied"})
    denied = Sent("bob", "turn", 1, "ask", Verdict.HELD, "", ["alice"], approval="denied")
    never = Sent("bob", "turn", 1, "never", Verdict.HELD, "", ["alice"])
    approved_but_relay = Sent("carol", "turn", 1, "ask", Verdict.HELD, "", ["dave"], approval="approved",
                              owners={"bob": "unasked"})  # fmt: skip
    sent = Sent("alice", "turn", 1, "requester", Verdict.SENT, "x", ["dave"], owners={"bob": "approved"})
    assert relayed.held_for_others and approved_but_relay.held_for_others
    assert not denied.held_for_others and not never.held_for_others and not sent.held_for_others
    text = conversation_texts.agent_withholds("Alice Chen", for_others=True)
    assert "Alice" not in text and "Bob" not in text and "approve" not in text
    assert "Bob Okafor did not approve" in conversation_texts.agent_withholds("Bob Okafor")


@pytest.mark.parametrize("whole_history", [True, False])  # the product's default reads each whole history
async def test_the_closing_statement_repeating_an_approved_turn_asks_once(
    db: Database, settings: Settings, whole_history: bool
) -> None:
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.APPROVED

    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    h = await build(db, world, settings=settings.replace(whole_history=whole_history), approvals=approve)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert outcome.answer is not None and "14 March" in outcome.answer
    assert len(asked) == 1, "\n\n".join(r.body for r in asked)  # his turn's facts; the statement says them again
