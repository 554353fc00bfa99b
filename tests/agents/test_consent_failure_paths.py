"""Failure paths are sends too: a turn whose model call fails, and a question that was not approved, leave nothing.

Bob's policy is `ask` and he denies every prompt. His agent's think call fills its plan from a private line of his
(the prompt asks it to fill values from the notebook); then its act call fails: the endpoint is down, the reply is
malformed twice (quoting the private line), or it never comes. The outbox never ran, so nothing of the turn left:
the private text must reach no answer, no consensus prompt, no other agent, no post, no turn record, no error
(turn or call) and no log line at INFO or above. Likewise a question his agent wrote to bring in a third member,
when he did not approve it, stays nowhere at rest.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime

import pytest

from bot.agents.outputs import ACT_SCHEMA, STATEMENT_SCHEMA, think_schema
from bot.asks.service import AskRequest
from bot.errors import LLMConfigurationError, LLMOutputError
from bot.llm.client import LLMClient
from bot.llm.openai_backend import OpenAIBackend
from bot.llm.retry import RetryPolicy
from bot.llm.scripted import Fault, FaultyBackend, ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.llm.standin.reading import PromptView
from bot.llm.structured import ReplyProblem, check_reply
from bot.llm.types import LLMRequest
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from bot.texts import answer_texts
from tests.fakes.asks import QUESTION, Harness, build, two_fact_world
from tests.fakes.openai_server import FakeOpenAIServer, failure
from tests.fakes.records import consensus_data, conversations, llm_calls, turns


PRIVATE = "Between us: my salary is 91,000, interviewing at Quorvex."
SECRETS = ("Quorvex", "91,000", "salary")  # any of these anywhere but Bob's own side is a leak


def _world() -> World:
    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    world.add_message(world.dm("bob", "erin").id, "bob", PRIVATE, ts=datetime(2026, 3, 1, 10, 0, tzinfo=UTC))
    return world


class Bob:
    """The scripted model, except for Bob's agent: its think call fills every rationale with Bob's private line
    (read from the notebook its prompt shows); `act` says what its act call answers ("" = the scripted answer)."""

    def __init__(self, *, act: str = "", recruit: bool = False) -> None:
        self.act, self.recruit = act, recruit
        self.filled = 0  # think replies that carried the private line
        self.others: list[LLMRequest] = []  # what every other agent and consensus were sent

    def __call__(self, request: LLMRequest) -> str:
        view = PromptView.of(request)
        if view.me != "bob":
            self.others.append(request)
            return scripted_model(request)
        reply = json.loads(scripted_model(request))
        if request.purpose == "think":
            noted = re.search(r"^- (\S+) [^:\n]+: (.*Quorvex.*)$", view.instruction, re.M)
            if noted and self.recruit:
                reply["recruit"] = [{"member": "carol", "question": f"Carol, did you know? {noted[2]}"}]
                reply["clear"] = reply["fuzzy"] = []
            elif noted:
                reply["plan"] = [
                    {**r, "status": "known", "value": noted[2], "source": noted[1]} for r in reply["plan"]
                ]
            self.filled += bool(noted)
        elif request.purpose == "act" and self.act:
            return self.act
        return json.dumps(reply)


def _denying(seen: list[ApprovalRequest]):  # noqa: ANN202
    async def respond(request: ApprovalRequest) -> ApprovalDecision:
        seen.append(request)
        return ApprovalDecision.DENIED

    return respond


@pytest.fixture
def fast(settings: Settings) -> Settings:
    return settings.replace(
        whole_history=True, llm_backoff_seconds=0.0, llm_max_retries=1, llm_timeout_seconds=0.3, max_turns=4
    )


def _bob_acts(fault: Fault):  # noqa: ANN202
    def plan(request: LLMRequest, call_number: int) -> Fault | None:
        return fault if request.purpose == "act" and PromptView.of(request).me == "bob" else None

    return plan


async def _everything_others_can_read(h: Harness, db: Database, ask_id: int, caplog: pytest.LogCaptureFixture) -> dict:
    """Every sink but Bob's own side, as text by where it was found."""
    ask = await h.service.load(ask_id)
    found = {
        "answer": f"{ask.answer} {ask.failure} {ask.final_text}",
        "consensus": json.dumps(await consensus_data(db, ask_id)),
    }
    for conversation in await conversations(db, ask_id):
        found[f"conversation {conversation.id}"] = f"{conversation.question} {conversation.conclusion}"
        for turn in await turns(db, conversation.id):
            record = {"plan": turn.plan, "think": turn.think, "utterance": turn.utterance, "data": turn.data}
            found[f"turn {conversation.id}/{turn.idx} ({turn.agent})"] = json.dumps(record, ensure_ascii=False)
    found["llm_call errors"] = json.dumps([c.error for c in await llm_calls(db, ask_id)])
    found["log"] = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)
    bob_and_bot = {"bob", h.world.bot_id}
    for channel_id, chat in h.world.messages.items():
        channel = h.world.channels.get(channel_id)
        if channel is not None and set(channel.member_ids) <= bob_and_bot:
            continue  # his approval prompts: his own text, to him
        found[f"posts in {channel_id}"] = "\n".join(m.text for m in chat if m.sender_id == h.world.bot_id)
    return found


def _leaks(found: dict[str, str]) -> list[str]:
    return sorted(where for where, text in found.items() if any(s.lower() in text.lower() for s in SECRETS))


@pytest.mark.parametrize(
    ("failure", "fault", "act"),
    [
        ("endpoint down", Fault.SERVER_ERROR, ""),
        ("no reply", Fault.HANG, ""),
        ("malformed twice, quoting the line", None, json.dumps({"utterance": PRIVATE, "learned": PRIVATE})),
    ],
)
async def test_a_turn_that_fails_after_think_leaves_nothing_of_its_plan(
    db: Database, fast: Settings, caplog: pytest.LogCaptureFixture, failure: str, fault: Fault | None, act: str
) -> None:
    caplog.set_level(logging.INFO)
    model = Bob(act=act)
    backend = ScriptedBackend(model)
    if fault is not None:
        backend = FaultyBackend(backend, _bob_acts(fault), hang_s=5.0)
    seen: list[ApprovalRequest] = []
    h = await build(db, _world(), settings=fast, backend=backend, approvals=_denying(seen))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert model.filled >= 1  # Bob's think call did put his private line in the plan
    assert outcome.status in ("done", "failed") and outcome.final_text
    assert not any(s in json.dumps(r.messages) for r in model.others for s in SECRETS)  # no other agent, no consensus
    assert _leaks(await _everything_others_can_read(h, db, outcome.ask_id, caplog)) == []
    (talk,) = outcome.result.conversations
    assert talk.stop_reason not in ("plans_complete", "all_done", "colleague_answered")  # nothing answered it
    failed = [t for t in talk.turns if t.agent == "bob" and t.error]
    assert failed and all(t.plan is not None and not t.plan.known for t in failed)  # the plan went back


async def test_a_malformed_reply_quoting_memory_is_named_by_its_field_not_its_value(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    quoting = json.dumps({"utterance": "Noted.", "learned": [{"id": "r1", "value": "x", "status": PRIVATE}]})
    client = LLMClient(ScriptedBackend(lambda request: quoting), retry=None)

    with pytest.raises(LLMOutputError) as info:
        await client.complete(LLMRequest([{"role": "user", "content": "act"}], purpose="act", json_schema=ACT_SCHEMA))

    stored = [str(info.value), info.value.call.error or "", *(r.getMessage() for r in caplog.records)]
    assert all("learned/0/status" in text for text in stored[:2])
    assert "must be one of ['known', 'unknown']" in str(info.value)
    assert not any(s in text for text in stored for s in SECRETS)


@pytest.mark.parametrize(
    ("schema", "reply", "where", "rule"),
    [
        (ACT_SCHEMA, {"utterance": PRIVATE, "learned": PRIVATE}, "learned", "must be of type 'array'"),
        (
            ACT_SCHEMA,
            {"utterance": "x", "answer": ["91,000", "Quorvex"]},
            "answer",
            "must be of type 'string' or 'null'",
        ),
        (
            think_schema(with_plan=True),
            {"plan": [], "recruit": PRIVATE},
            "recruit",
            "matches none of the allowed forms",
        ),
        (
            STATEMENT_SCHEMA,
            {"Quorvex salary 91,000": 1},
            "the top level",
            "'statement', 'claims' are required properties",
        ),
    ],
)
def test_a_schema_problem_says_where_and_which_rule(schema: dict, reply: dict, where: str, rule: str) -> None:
    with pytest.raises(ReplyProblem) as info:
        check_reply(json.dumps(reply), schema)
    assert str(info.value) == f"at {where}: {rule}"


def test_a_key_the_reply_made_up_is_not_repeated() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    with pytest.raises(ReplyProblem) as info:
        check_reply(json.dumps({PRIVATE: "x"}), schema)
    assert str(info.value) == "at ?: must be of type 'integer'"
    closed = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False}
    with pytest.raises(ReplyProblem) as info:
        check_reply(json.dumps({"a": 1, PRIVATE: 2}), closed)
    assert str(info.value) == "at the top level: has a property the schema does not allow"


async def test_a_denied_question_to_bring_someone_in_is_kept_nowhere(
    db: Database, fast: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    model = Bob(recruit=True)
    seen: list[ApprovalRequest] = []
    h = await build(db, _world(), settings=fast, script=model, approvals=_denying(seen))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert model.filled >= 1 and seen  # his agent wrote the question; he was asked and said no
    bob = [t for t in outcome.result.conversations[0].turns if t.agent == "bob"]
    withheld = [r for t in bob for r in t.recruits if r.reason == "withheld"]
    assert withheld and all(r.request.question == "" for r in withheld)
    assert all(r.question == "" for t in bob if t.think for r in t.think.recruits)
    assert _leaks(await _everything_others_can_read(h, db, outcome.ask_id, caplog)) == []


@pytest.mark.parametrize(
    "refusal",
    [
        f"1 validation error: messages.1.content [type=string_type, input_value='{PRIVATE}', input_type=str]",
        f'Invalid value "{PRIVATE}" in messages',
    ],
)
async def test_an_endpoint_refusal_quoting_the_request_back_is_not_repeated(
    fake_openai: FakeOpenAIServer, refusal: str
) -> None:
    fake_openai.enqueue(failure(400, refusal))
    backend = OpenAIBackend(base_url=fake_openai.base_url, model="fake-model", timeout_s=5.0)
    client = LLMClient(backend, retry=RetryPolicy(max_retries=0, backoff_s=0.0))
    try:
        with pytest.raises(LLMConfigurationError) as info:
            await client.complete(LLMRequest([{"role": "user", "content": PRIVATE}], purpose="act"))
    finally:
        await client.aclose()
    shown = [str(info.value), info.value.reason, info.value.call.error or ""]
    assert all("HTTP 400" in text for text in shown)
    assert not any(s in text for text in shown for s in SECRETS)


async def test_the_requesters_record_keeps_only_that_a_colleague_searched(db: Database, settings: Settings) -> None:
    """The consensus row (the requester's record, and "What the agents tried" in an unsupported answer) keeps her own
    agent's searches in full and of a colleague's only that it searched: its keywords are made of what it read."""
    h = await build(db, two_fact_world(), settings=settings.replace(whole_history=False))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    tried = (await consensus_data(db, outcome.ask_id))["tried"]
    assert answer_texts.tried_search("bob") in tried
    assert [t for t in tried if t.startswith("bob's")] == [answer_texts.tried_search("bob")]
    assert any(t.startswith("alice's agent: ") for t in tried)  # her own, in full
