"""Malformed replies the real local model (SmolLM2-135M, `benchmarks/real_model_smoke.py`) gave, replayed verbatim.

Each case in data/real_model_replies.jsonl is the exact text one call got back (from the smoke run's
malformed.jsonl). It is replayed at the client seam in place of the scripted model's answer to the first call of
that purpose: once (the client's repair re-ask then gets a good answer) and twice (the repair gets the same text, so
the call fails). Either way the ask must end cleanly: an answer or a user-readable failure, with the problem
recorded. Never a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.asks import models
from bot.asks.service import AskRequest
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION, build, two_fact_world


@dataclass(frozen=True)
class Case:
    name: str
    purpose: str  # the call it answered: think | act | consensus | extract_facts
    kind: str  # how the client classifies it: empty | invalid_json | wrong_schema | unusable (right shape, unusable)
    text: str  # verbatim


REPAIR_NUDGE = "Your reply"  # how prompts/llm_repair.yaml opens
CASES_FILE = Path(__file__).parent / "data" / "real_model_replies.jsonl"
CASES = [Case(**{k: v for k, v in json.loads(line).items() if k != "seen"}) for line in CASES_FILE.open()]


class Replayer:
    """The scripted model, except that the first `times` calls of `case.purpose` get the case's text."""

    def __init__(self, case: Case, times: int) -> None:
        self.case = case
        self.left = times

    def __call__(self, request: LLMRequest) -> str:
        if request.purpose == self.case.purpose and self.left:
            self.left -= 1
            return self.case.text
        return scripted_model(original(request))


def original(request: LLMRequest) -> LLMRequest:
    """A repair re-ask without its tail (the bad reply and the nudge): the scripted model answers the request."""
    messages = request.messages
    if messages[-1]["role"] == "user" and messages[-1]["content"].startswith(REPAIR_NUDGE):
        messages = messages[:-2] if messages[-2]["role"] == "assistant" else messages[:-1]
    return replace(request, messages=messages)


@pytest.mark.parametrize("times", [1, 2], ids=["then-good", "twice"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_a_real_malformed_reply_never_breaks_an_ask(
    sqlite_db: Database, settings: Settings, case: Case, times: int
) -> None:
    replayer = Replayer(case, times)
    h = await build(sqlite_db, two_fact_world(), settings=settings, script=replayer)

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert replayer.left == 0  # the case was replayed
    assert outcome.status in ("done", "failed") and outcome.final_text
    assert outcome.answer or outcome.failure
    if case.kind != "unusable":  # the client saw the problem and says how it was handled
        handled = "repaired" if times == 1 else "failed after repair"
        assert h.llm.totals.malformed == {f"{case.kind} -> {handled}": 1}
    if times == 1 and case.kind != "unusable":
        assert outcome.status == "done"  # one bad reply, repaired: the ask still gets its answer
    errors = [turn.data["error"] for turn in await turns_of(sqlite_db) if turn.data["error"]]
    # Each failed turn records that its answer was unusable, and how long it was, never the answer (it may quote
    # memory). The client repairs what it can see is wrong (one failed call per two bad replies); an answer of the
    # right shape fails its turn each time it is given.
    failed_turns = times if case.kind == "unusable" else times // 2
    assert [e.get("reply_chars") or 0 for e in errors] == [len(case.text)] * failed_turns


async def test_an_answer_of_the_right_shape_that_cannot_be_used_is_named_by_the_turn_error(
    sqlite_db: Database, settings: Settings
) -> None:
    empty_utterance = Case("act with an empty utterance", "act", "unusable", '{"utterance": "", "learned": []}')
    h = await build(sqlite_db, two_fact_world(), settings=settings, script=Replayer(empty_utterance, 1))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status in ("done", "failed") and outcome.final_text
    errors = [turn.data["error"] for turn in await turns_of(sqlite_db) if turn.data["error"]]
    assert errors == [
        {
            "type": "LLMOutputError",
            "message": "the act answer has no 'utterance' text",
            "reply_chars": len(empty_utterance.text),
        }
    ]
    assert h.llm.totals.malformed == {}  # the client saw valid JSON: only the agent could tell


async def turns_of(db: Database) -> list[models.Turn]:
    async with db.session() as session:
        return list((await session.execute(select(models.Turn).order_by(models.Turn.id))).scalars())
