"""Privacy in action: `never` declines, `ask` waits for approval (approve, deny, timeout), excluded channels."""

from __future__ import annotations

import json
import re

from bot.asks.service import AskRequest
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMRequest
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from bot.texts import approval_texts, conversation_texts
from tests.fakes.asks import QUESTION, build, never, two_fact_world
from tests.fakes.records import conversations, turns


ASK_BOB = {"bob": MemberPolicy(share=SharePolicy.ASK)}


def answering(decision: ApprovalDecision, seen: list[ApprovalRequest]):  # noqa: ANN201
    async def respond(request: ApprovalRequest) -> ApprovalDecision:
        seen.append(request)
        return decision

    return respond


async def _all_turns(db: Database, ask_id: int) -> list:
    return [t for c in await conversations(db, ask_id) for t in await turns(db, c.id)]


async def test_never_declines_without_thinking_or_searching(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(policies=never("bob")), settings=settings)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    bob = [t for t in await _all_turns(db, outcome.ask_id) if t.agent == "bob"]
    assert len(bob) == 1 and bob[0].utterance == conversation_texts.agent_declines("Bob")
    assert bob[0].data["queries"] == [] and bob[0].data["llm_calls"] == []
    assert outcome.result.conversations[0].stop_reason == "cannot_progress"
    assert "Bluebird" in outcome.final_text and "14 March" not in outcome.final_text


async def test_ask_policy_approved_shares_and_notifies(db: Database, settings: Settings) -> None:
    seen: list[ApprovalRequest] = []
    world = two_fact_world(policies=ASK_BOB)
    h = await build(db, world, settings=settings, approvals=answering(ApprovalDecision.APPROVED, seen))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert "14 March" in outcome.answer
    assert len(seen) == 1 and seen[0].member_id == "bob" and "14 March" in seen[0].body
    assert seen[0].title == approval_texts.approval_title("Alice")  # the asker by display name
    bob = [t for t in await _all_turns(db, outcome.ask_id) if t.agent == "bob"]
    assert bob[0].data["approval"] == "approved"
    bob_dm = world.dm(world.bot_id, "bob").id
    assert any("14 March" in m.text for m in world.messages[bob_dm])


async def _withheld(db: Database, settings: Settings, **build_args) -> None:  # noqa: ANN003
    world = two_fact_world(policies=ASK_BOB)
    h = await build(db, world, settings=settings, **build_args)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    everything = await _all_turns(db, outcome.ask_id)
    bob = [t for t in everything if t.agent == "bob"]
    assert bob[0].utterance == conversation_texts.agent_withholds("Bob")
    assert all("14 March" not in str(t.plan) and "14 March" not in t.utterance for t in everything)
    assert "14 March" not in outcome.final_text and "Bluebird" in outcome.final_text
    bob_dm = world.dm(world.bot_id, "bob").id
    assert not any("14 March" in m.text for m in world.messages.get(bob_dm, []))
    return bob[0].data["approval"]


async def test_ask_policy_denied_withholds_the_facts(db: Database, settings: Settings) -> None:
    seen: list[ApprovalRequest] = []
    assert await _withheld(db, settings, approvals=answering(ApprovalDecision.DENIED, seen)) == "denied"
    assert len(seen) == 1


async def test_ask_policy_timeout_counts_as_deny(db: Database, settings: Settings) -> None:
    # No responder: the local workspace waits for a decision that never comes.
    assert await _withheld(db, settings.replace(approval_timeout_seconds=0.2)) == "timeout"


async def test_excluded_channels_are_never_searched(db: Database, settings: Settings) -> None:
    policies = {"alice": MemberPolicy(excluded_channels=["C-notes"])}
    h = await build(db, two_fact_world(policies=policies), settings=settings)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    everything = await _all_turns(db, outcome.ask_id)
    assert all("Bluebird" not in t.utterance and "Bluebird" not in str(t.plan) for t in everything)
    assert "Bluebird" not in outcome.final_text
    assert any(q["kind"] == "clear" for t in everything if t.agent == "alice" for q in t.data["queries"])


async def test_the_approval_shows_the_facts_not_only_the_words(db: Database, settings: Settings) -> None:
    """The reported bug: Bob approved "nothing sensitive" and "14 March" reached Alice's answer."""

    def nothing_sensitive(request: LLMRequest) -> str:
        reply = json.loads(scripted_model(request))
        if request.purpose == "act":
            reply["utterance"] = "Nothing sensitive here."
        return json.dumps(reply)

    seen: list[ApprovalRequest] = []
    world = two_fact_world(policies=ASK_BOB)
    approve = answering(ApprovalDecision.APPROVED, seen)
    h = await build(db, world, settings=settings, script=nothing_sensitive, approvals=approve)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert "14 March" in outcome.answer
    request = seen[0]
    assert "Nothing sensitive here." in request.body
    assert "launch date" in request.body and "14 March" in request.body  # the fact it passes on
    # where the line comes from, as bob reads it (the workspace's zone is UTC here), never its id or channel name
    assert re.search(r"Erin's message in your DM with Erin, 1 Mar( 2026)? 09:07", request.body)
    assert world.dm("bob", "erin").name not in request.body
    assert "m0000007" not in request.body and request.body.count("14 March") == 1  # no internal id; the text once
    assert "Who will see it: Alice" in request.body and "Answer by" in request.body and " UTC (" in request.body
    assert request.card is not None and request.card.asker == "Alice" and request.card.zone == "UTC"
