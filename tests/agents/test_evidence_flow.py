"""Evidence to the answer: what a colleague's agent shared reaches the requester's consensus prompt as lines it can
cite, what it did not share never does; the stand-in splits questions, recruits when a part stays unfilled, and
stops when its plan is complete."""

from __future__ import annotations

import json

from bot.asks.read_models.transcripts import load_transcript
from bot.asks.service import AskRequest
from bot.base.prompts import render_prompt
from bot.llm.standin.model import needs_of, scripted_model
from bot.llm.types import LLMRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import LAUNCH, QUESTION, build, two_fact_world
from tests.fakes.records import conversations, turns


def _message_id(world, text: str) -> str:  # noqa: ANN001
    return next(m.id for msgs in world.messages.values() for m in msgs if m.text == text)


# ---------------------------------------------------------------------- the consensus prompt
async def test_consensus_prompt_carries_shared_cited_lines_and_never_unshared_ones(
    db: Database, settings: Settings
) -> None:
    world = two_fact_world()  # bob's memory: the launch date (DM with erin), and a lunch with carol
    h = await build(db, world, settings=settings.replace(whole_history=True))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    consensus = [r for r in h.backend.requests if r.purpose == "consensus"]  # type: ignore[attr-defined]
    prompt = consensus[-1].messages[-1]["content"]
    launch_id = _message_id(world, LAUNCH)
    evidence = prompt.split("EVIDENCE:", 1)[1]
    assert f"[{launch_id}]" in evidence and LAUNCH in evidence  # the line itself, not only a summary of it
    assert "lunch on Friday" not in prompt  # bob's agent read it (whole history) but never shared it
    claims = (await load_transcript(db, outcome.ask_id)).consensus.data["claims"]
    assert any(launch_id in claim["sources"] for claim in claims)  # and the answer cites it
    top = (await conversations(db, outcome.ask_id))[0]
    bob_released = {i for t in await turns(db, top.id) if t.agent == "bob" for i in t.data["released"]}
    assert launch_id in bob_released  # it reached the prompt because it left bob's agent


# ---------------------------------------------------------------------- the stand-in
def test_the_stand_in_splits_a_question_into_the_questions_it_contains() -> None:
    composed = (
        "Two things were said in one scene, and the answer needs both. First: When did Dr. Lee call? "
        "Second: Where is the key? Reply with both answers."
    )
    assert needs_of(composed) == ["When did Dr. Lee call", "Where is the key"]
    assert needs_of("Tell me: 1) who owns the budget 2) when is the review.") == [
        "who owns the budget",
        "when is the review",
    ]
    assert needs_of("What is the code name and when is the launch? Answer briefly.") == [
        "What is the code name",
        "when is the launch",
    ]
    assert needs_of("How many hours overlap for Ann and Bo today? Sleep does not count.") == [
        "How many hours overlap for Ann and Bo today"
    ]


def _think_request(*, plan: list[dict[str, str]], notebook: list[dict[str, str]], searches: list[str]) -> LLMRequest:
    system = render_prompt("agent", "system", me="bob", grounding="", privacy_prompt=False)
    task = render_prompt("agent", "task", question="When is the launch date?", asker="alice", me="bob")
    heard = render_prompt("agent", "heard", speaker="alice", utterance="I found nothing yet.")
    think = render_prompt(
        "agent", "think", turn=3, me="bob", plan=json.dumps(plan), notebook=notebook, cut=0, whole_history=False,
        searches=searches, people=["dave", "carol", "erin"], max_recruits=3, blackboard=[], error=None,
    )  # fmt: skip
    messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]
    messages += [{"role": "user", "content": heard}, {"role": "user", "content": think}]
    return LLMRequest(messages, purpose="think")


def _line(line_id: str, channel: str, sender: str, text: str) -> dict[str, str]:
    return {"id": line_id, "channel": channel, "sender": sender, "text": text}


def test_the_stand_in_recruits_whom_its_lines_point_to_once_its_own_search_left_a_part_unfilled() -> None:
    plan = [{"id": "r1", "need": "When is the launch date", "status": "unknown", "value": "", "source": ""}]
    searched = ['fuzzy {"text":"When is the launch date","top_k":3} -> 1 hits']
    notebook = [
        _line("m1", "bob-carol", "carol", "Erin keeps the launch plan, ask her"),
        _line("m2", "x", "dave", "hi"),
    ]

    before = json.loads(scripted_model(_think_request(plan=plan, notebook=notebook, searches=[])))
    assert before["recruit"] == [] and before["fuzzy"]  # not searched yet: it searches its own memory first

    after = json.loads(scripted_model(_think_request(plan=plan, notebook=notebook, searches=searched)))
    [erin] = after["recruit"]
    assert erin["member"] == "erin"  # named by its line on the matter (not the first listed, dave)
    assert erin["question"] == "When is the launch date?" and not after["done"]


def test_the_stand_in_stops_when_every_part_is_filled() -> None:
    plan = [{"id": "r1", "need": "When is the launch date", "status": "known", "value": "14 March", "source": "m9"}]
    reply = json.loads(scripted_model(_think_request(plan=plan, notebook=[], searches=[])))
    assert reply["done"] and reply["recruit"] == [] and not reply["clear"] and not reply["fuzzy"]


async def test_the_talk_ends_once_the_asking_side_has_every_part(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], "What is the project code name?"))

    assert outcome.status == "done" and "Bluebird" in (outcome.answer or "")
    (top,) = await conversations(db, outcome.ask_id)
    assert [t.agent for t in await turns(db, top.id)] == ["alice", "bob"]  # each spoke once; no third turn
    assert top.stop_reason == "plans_complete"
