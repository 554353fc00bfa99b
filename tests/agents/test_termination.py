"""Honest termination: a refused endpoint ends the ask at once, a requester's agent giving up on turn 0 still lets
the colleague look, and a model that makes no plan answers directly."""

from __future__ import annotations

import json

from bot.asks.service import AskRequest
from bot.llm.openai_backend import OpenAIBackend
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMRequest
from bot.settings import Settings
from bot.store.db import Database
from bot.texts import conversation_texts, failure_texts
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.records import conversations, llm_calls, turns


async def test_a_401_endpoint_ends_the_ask_in_one_call_with_the_misconfiguration_message(
    db: Database, settings: Settings, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.api_key = "the-right-key"
    backend = OpenAIBackend(base_url=fake_openai.base_url, model="fake-model", api_key="a-wrong-key")
    h = await build(db, two_fact_world(), settings=settings, backend=backend)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    await backend.aclose()

    assert len(fake_openai.requests) == 1
    assert outcome.status == "failed"
    reason = "HTTP 401: the API key was not accepted; check ASKWITH_LLM_API_KEY"
    assert outcome.failure == failure_texts.failure_llm_misconfigured(reason)
    assert "misconfigured" in outcome.final_text and fake_openai.base_url not in outcome.final_text
    (conversation,) = await conversations(db, outcome.ask_id)
    assert conversation.stop_reason == "llm_refused"
    (turn,) = await turns(db, conversation.id)
    assert turn.data["error"]["type"] == "LLMConfigurationError"
    assert len(await llm_calls(db, outcome.ask_id)) == 1
    dm = h.world.dm(h.world.bot_id, "alice").id
    assert [m.text for m in h.world.messages[dm] if "misconfigured" in m.text] == [outcome.final_text]


async def test_a_refused_endpoint_stops_every_branch_of_a_multi_party_ask(
    db: Database, settings: Settings, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.api_key = "the-right-key"
    backend = OpenAIBackend(base_url=fake_openai.base_url, model="fake-model", api_key="a-wrong-key")
    h = await build(db, two_fact_world(), settings=settings, backend=backend)

    outcome = await h.service.ask(AskRequest("alice", ["bob", "carol"], QUESTION))
    await backend.aclose()

    assert outcome.status == "failed" and "misconfigured" in outcome.failure
    assert len(fake_openai.requests) <= 2  # the two branches' first calls may be in flight together, no more
    assert {c.stop_reason for c in await conversations(db, outcome.ask_id)} == {"llm_refused"}


async def test_the_colleague_still_gets_a_turn_when_the_requesters_agent_gives_up_on_turn_0(
    db: Database, settings: Settings
) -> None:
    def alice_gives_up_at_once(request: LLMRequest) -> str:
        reply = json.loads(scripted_model(request))
        if request.purpose == "think" and "YOU ARE: alice's agent" in request.messages[1]["content"]:
            reply["cannot_progress"] = True
        return json.dumps(reply)

    h = await build(db, two_fact_world(), settings=settings, script=alice_gives_up_at_once)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    (conversation,) = await conversations(db, outcome.ask_id)
    recorded = await turns(db, conversation.id)
    assert [t.agent for t in recorded[:2]] == ["alice", "bob"]
    assert "14 March" in recorded[1].utterance  # bob's agent looked, and told alice's
    assert conversation.stop_reason == "colleague_answered"  # it filled what alice's agent missed: no more rounds


async def test_an_empty_plan_falls_back_to_answering_directly(db: Database, settings: Settings) -> None:
    def no_plan(request: LLMRequest) -> str:
        if request.purpose == "think":
            reply = json.loads(scripted_model(request))
            return json.dumps({**reply, "plan": [], "done": True})
        return scripted_model(request)

    h = await build(db, two_fact_world(), settings=settings, script=no_plan)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    acts = [r for r in h.backend.requests if r.purpose == "act"]
    assert acts and all("PLAN:" not in r.messages[-1]["content"] for r in acts)  # the plain act prompt
    assert outcome.status != "failed" and "14 March" in outcome.final_text  # uncited, so possibly "unsupported"
    (conversation,) = await conversations(db, outcome.ask_id)
    assert conversation.stop_reason == "all_done" and len(await turns(db, conversation.id)) == 2


async def test_a_turn_that_ends_the_talk_with_nothing_to_search_or_ask_makes_no_act_call(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(launch_with="dave"), settings=settings)  # nobody reachable holds the date

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    (conversation, *_) = await conversations(db, outcome.ask_id)
    last = (await turns(db, conversation.id))[-1]
    assert conversation.stop_reason == "cannot_progress" and last.agent == "alice"
    assert [c["purpose"] for c in last.data["llm_calls"]] == ["think"]  # nobody would hear an act call's answer
    assert last.utterance == conversation_texts.agent_closes(complete=False)
    assert "Bluebird" in outcome.answer  # what was found still reaches the answer
