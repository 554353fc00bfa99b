"""Agents v2: the notebook across turns and resumes, the blackboard between branches, grounding in every prompt,
whole-history mode, unsupported answers, and transcripts that keep the prompts the model was sent."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.agents.conversation import Conversation
from bot.asks.service import AskRequest, AskService
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMReply, LLMRequest
from bot.platform.port import Channel, ChannelKind, Member
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import World
from tests.fakes.asks import CODE_NAME, LAUNCH, QUESTION, Harness, build, two_fact_world
from tests.fakes.records import conversations, turns


def _message_id(world: World, text: str) -> str:
    return next(m.id for msgs in world.messages.values() for m in msgs if m.text == text)


def _speaker(request: LLMRequest) -> str:
    return request.messages[0]["content"].split("'s askwith agent", 1)[0].rsplit(" ", 1)[-1]


def _requests(h: Harness) -> list[LLMRequest]:
    return list(h.backend.requests)  # type: ignore[attr-defined]


async def _all_turns(db: Database, ask_id: int) -> list:
    return [t for c in await conversations(db, ask_id) for t in await turns(db, c.id)]


# ---------------------------------------------------------------------- notebook
async def test_notebook_lines_found_early_stay_in_later_prompts(db: Database, settings: Settings) -> None:
    world = two_fact_world(launch_with="dave")  # nobody asked holds the launch date: alice's agent takes more turns
    h = await build(db, world, settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    code_id = _message_id(world, CODE_NAME)

    saved = await _all_turns(db, outcome.ask_id)
    found_in = [
        t.idx for t in saved if t.agent == "alice" and code_id in {i for q in t.data["queries"] for i in q["hit_ids"]}
    ]
    assert found_in == [0]  # found once, on turn 0, never searched for again
    # The notebook is shown once a turn: every later think lists the line; later acts show only new lines in full.
    later_thinks = [r for r in _requests(h) if r.purpose == "think" and _speaker(r) == "alice"][1:]
    assert later_thinks and all(f"- {code_id} #" in r.messages[-1]["content"] for r in later_thinks)
    later_acts = [r for r in _requests(h) if r.purpose == "act" and _speaker(r) == "alice"][1:]
    assert later_acts and not any(f"[{code_id}]" in r.messages[-1]["content"] for r in later_acts)
    # Plan values cite the message ids they rest on.
    plan = saved[-1].plan if saved[-1].agent == "alice" else saved[-2].plan
    assert any(code_id in r["source"] for r in plan)


def _second_worker(h: Harness, settings: Settings) -> AskService:
    s = h.service
    return AskService(
        settings=settings, db=s.db, port=s.port, llm=s.llm, memory=s.memory, workspace_id=s.workspace_id,
        worker_id="worker-b",
    )  # fmt: skip


class _HeldAtAlicesSecondPlan(ScriptedBackend):
    """Holds the first worker at alice's second plan until it is cancelled, so it dies right after her turn 0 and
    bob's reply were saved, however loaded the machine is (polling for saved turns raced the worker under load); the
    test still waits for those two turns' writes, which run behind the model calls."""

    def __init__(self) -> None:
        super().__init__(scripted_model, latency_s=0.05)
        self.holding = True
        self.held = asyncio.Event()

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        alice_plans = [r for r in self.requests if r.purpose == "think" and _speaker(r) == "alice"]
        if self.holding and request.purpose == "think" and _speaker(request) == "alice" and alice_plans:
            self.held.set()
            await asyncio.Event().wait()  # until the worker is cancelled
        return await super().complete(request, response_format=response_format)


async def test_a_resumed_ask_restores_the_notebook_from_the_database(db: Database, settings: Settings) -> None:
    settings = settings.replace(worker_stale_seconds=0.3, worker_heartbeat_seconds=0.1)
    world = two_fact_world(launch_with="carol")  # bob must bring in carol: a longer conversation
    backend = _HeldAtAlicesSecondPlan()
    h = await build(db, world, settings=settings, backend=backend)
    code_id = _message_id(world, CODE_NAME)
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    assert await h.service.claim_next() == ask_id

    first = asyncio.create_task(h.service.process(ask_id))
    await asyncio.wait_for(backend.held.wait(), timeout=30)
    # Turns are written behind the model calls (`AskRecorder._enqueue`): bob's may still be on its way.
    deadline = time.monotonic() + 30
    while len(await _all_turns(db, ask_id)) < 2:
        assert time.monotonic() < deadline, "alice's turn 0 and bob's reply were never saved"
        await asyncio.sleep(0.02)
    first.cancel()  # the worker dies after alice's turn 0 (which found the code name) was saved
    await asyncio.gather(first, return_exceptions=True)
    backend.holding = False
    sent_before = len(_requests(h))

    second = _second_worker(h, settings)
    deadline = time.monotonic() + 30
    while await second.claim_next() != ask_id:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    outcome = await second.process(ask_id)

    assert outcome.status == "done" and "Bluebird" in (outcome.answer or "")
    after = [r for r in _requests(h)[sent_before:] if r.purpose == "think" and _speaker(r) == "alice"]
    assert after and f"- {code_id} #" in after[0].messages[-1]["content"]  # from the restored notebook ...
    resumed_turns = [t for t in await _all_turns(db, ask_id) if t.agent == "alice" and t.idx > 0]
    assert all(code_id not in q["hit_ids"] for t in resumed_turns for q in t.data["queries"])  # ... not re-found


# ---------------------------------------------------------------------- blackboard
async def test_the_second_branch_does_not_search_what_the_first_published(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = two_fact_world()  # bob can see the launch date; carol cannot
    h = await build(db, world, settings=settings)
    observe = Conversation._observe

    async def carol_branch_waits(self: Conversation, agent, index):  # noqa: ANN001, ANN202
        if self.branch == "carol" and self.depth == 0 and index == 0:
            deadline = time.monotonic() + 30
            while not self.ctx.blackboard.postings and time.monotonic() < deadline:
                await asyncio.sleep(0.01)  # the carol branch is the slower one: bob's has published by now
        return await observe(self, agent, index)

    monkeypatch.setattr(Conversation, "_observe", carol_branch_waits)
    outcome = await h.service.ask(AskRequest("alice", ["bob", "carol"], "When is the launch date?"))

    assert outcome.status == "done" and "14 March" in (outcome.answer or "")
    by_branch = {c.participants[1]: c for c in await conversations(db, outcome.ask_id) if c.parent_id is None}
    carol_turns = await turns(db, by_branch["carol"].id)
    searched = [q for t in carol_turns for q in t.data["queries"] if q["kind"] in ("clear", "fuzzy")]
    assert searched == []  # neither agent of the second branch hunted for the launch date
    bob_turns = await turns(db, by_branch["bob"].id)
    assert any(t.data["published"] for t in bob_turns)
    # Each branch's requester agent is told everyone being asked.
    assert all("EVERYONE ASKED: Bob (@bob), Carol (@carol)" in r.messages[0]["content"] for r in _requests(h))


# ---------------------------------------------------------------------- grounding
async def test_every_prompt_is_grounded(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings.replace(timezone="Europe/Paris"))
    await h.service.ask(AskRequest("alice", ["bob"], QUESTION, origin_channel_id="C-notes", origin_thread_id="t1"))

    requests = _requests(h)
    assert {r.purpose for r in requests} >= {"think", "act", "consensus"}
    today = datetime.now(UTC).strftime("%Y-%m-")
    for request in requests:
        system = request.messages[0]["content"]
        assert "TODAY: " in system and today in system and "(Europe/Paris)" in system
        assert "ASKED BY: Alice (@alice), who typed the question in a thread in #alice-notes" in system
        assert "EVERYONE ASKED: Bob (@bob)" in system
    sub = [r for r in requests if "YOU ACT FOR: @carol; talking with Bob (@bob)'s agent" in r.messages[0]["content"]]
    assert sub  # bob's agent brought in carol's: that talk is grounded too, naming its partner


# ---------------------------------------------------------------------- whole-history mode
async def test_whole_history_mode_reads_everything_and_is_recorded(db: Database, settings: Settings) -> None:
    world = two_fact_world()
    h = await build(db, world, settings=settings.replace(whole_history=True))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done" and "Bluebird" in (outcome.answer or "") and "14 March" in outcome.answer
    saved = await _all_turns(db, outcome.ask_id)
    first = {t.agent: t for t in reversed(saved)}
    history = [q for q in first["alice"].data["queries"] if q["kind"] == "history"]
    assert history and history[0]["params"]["messages"] == 4 and first["alice"].data["whole_history"]
    assert _message_id(world, CODE_NAME) in history[0]["hit_ids"]
    assert not [q for t in saved for q in t.data["queries"] if q["kind"] == "clear"]  # nothing left to search

    off = await build(db, two_fact_world(), settings=settings.replace(whole_history=False))
    outcome = await off.service.ask(AskRequest("alice", ["bob"], QUESTION))
    queries = [q for t in await _all_turns(db, outcome.ask_id) for q in t.data["queries"]]
    assert queries and not [q for q in queries if q["kind"] == "history"]


async def test_whole_history_that_exceeds_the_budget_falls_back_to_search(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings.replace(whole_history=True, evidence_budget_tokens=40))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    queries = [q for t in await _all_turns(db, outcome.ask_id) for q in t.data["queries"]]
    assert [q["skipped"] for q in queries if q["kind"] == "history"] == ["exceeds_budget", "exceeds_budget"]
    assert any(q["kind"] == "clear" and q["hit_ids"] for q in queries)


# ---------------------------------------------------------------------- consensus with evidence
def _uncited(request: LLMRequest) -> str:
    if request.purpose == "consensus":
        return json.dumps({"answer": "2018-04-30", "cited": [], "claims": [{"text": "2018-04-30", "sources": []}]})
    return scripted_model(request)


async def test_an_uncited_answer_is_delivered_as_unsupported(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings, script=_uncited)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "unsupported"
    assert outcome.final_text.startswith("Unsupported:") and "2018-04-30" in outcome.final_text
    assert "What the agents tried:" in outcome.final_text
    assert "bob's agent searched bob's messages" in outcome.final_text
    assert " results" not in outcome.final_text  # the words searched for and how much was found are each agent's


async def test_cited_claims_link_what_the_requester_sees_and_quote_the_rest(db: Database, settings: Settings) -> None:
    world = two_fact_world()
    h = await build(db, world, settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done"
    code_id = _message_id(world, CODE_NAME)
    assert "#alice-notes" in outcome.final_text and f"(message {code_id})" in outcome.final_text
    # Alice cannot open bob's DM with erin: the line is quoted, attributed to bob's agent, not linked.
    assert f"\u201c{LAUNCH}\u201d \u2014 shared by bob's agent" in outcome.final_text
    assert f"(message {_message_id(world, LAUNCH)})" not in outcome.final_text


# ---------------------------------------------------------------------- transcripts keep the prompts
async def test_turns_record_the_prompts_the_model_was_sent(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    sent = [r.messages for r in _requests(h) if r.purpose in ("think", "act")]
    recorded = [c["prompt"] for t in await _all_turns(db, outcome.ask_id) for c in t.data["llm_calls"]]
    assert recorded == sent


# ---------------------------------------------------------------------- recruiting the right people
def _recruit_world() -> World:
    """alice: a DM with dave (small talk), a 3-person #design room with erin, and a busy #general with everyone."""
    world = World(id="T2", name="recruit")
    for handle in ("alice", "bob", "carol", "dave", "erin", "frank"):
        world.add_member(Member(handle, handle, handle.title()))
    world.add_channel(Channel("C-general", "general", ChannelKind.PUBLIC, tuple(world.members)))
    world.add_channel(Channel("C-design", "design", ChannelKind.PRIVATE, ("alice", "erin", "frank")))
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    for n in range(30):  # frank talks a lot, about nothing in particular
        world.add_message("C-general", "frank", f"Lunch poll number {n}", ts=start + timedelta(minutes=n))
    world.add_message("C-design", "erin", "The mockup review is with the vendor, ask me", ts=start)
    world.add_message(world.dm("alice", "dave").id, "dave", "Nice weekend?", ts=start)
    return world


async def test_recruit_candidates_rank_by_evidence_then_dms_then_small_channels(
    db: Database, settings: Settings
) -> None:
    h = await build(db, _recruit_world(), settings=settings.replace(whole_history=True))
    assert (await h.service.roster.contacts("alice"))[:3] == ["dave", "erin", "frank"]  # not by volume

    await h.service.ask(AskRequest("alice", ["bob"], "When is the mockup review?"))
    thinks = [r.messages[-1]["content"] for r in _requests(h) if r.purpose == "think" and _speaker(r) == "alice"]
    people = next(line for line in thinks[0].splitlines() if line.startswith("PEOPLE alice TALKS WITH:"))
    assert people.endswith("erin, dave, frank, carol")  # erin's message bears on the question: erin first


def _recruits_carol_if_not_found(request: LLMRequest) -> str:
    """The scripted model, but bob's agent (talking with alice's) asks for carol's help only if its search fails."""
    reply = scripted_model(request)
    system = request.messages[0]["content"]
    if request.purpose == "think" and _speaker(request) == "bob" and "talking with Alice (@alice)" in system:
        data = json.loads(reply)
        data["recruit"] = [{"member": "carol", "question": "When is the launch date?", "only_if_not_found": True}]
        reply = json.dumps(data)
    return reply


@pytest.mark.parametrize(("launch_with", "recruited"), [("carol", True), ("bob", False)])
async def test_recruiting_is_decided_after_the_search_in_the_same_turn(
    db: Database, settings: Settings, launch_with: str, recruited: bool
) -> None:
    h = await build(
        db, two_fact_world(launch_with=launch_with), settings=settings, script=_recruits_carol_if_not_found
    )
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert "14 March" in (outcome.answer or "")
    top = next(c for c in await conversations(db, outcome.ask_id) if c.parent_id is None)
    bob_first = next(t for t in await turns(db, top.id) if t.agent == "bob")
    [recruit] = bob_first.data["recruits"]
    assert recruit["status"] == ("done" if recruited else "refused")
    if not recruited:  # the search found the launch date itself: no sub-conversation, no extra LLM call
        assert recruit["reason"] == "found_locally"
        assert len(bob_first.data["llm_calls"]) == 2
