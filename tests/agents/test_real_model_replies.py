"""Malformed replies the real local model (SmolLM2-135M, `benchmarks/real_model_smoke.py`) gave, replayed verbatim.

Each case is the exact text one call got back. It is replayed at the client seam in place of the scripted model's
answer to the first call of that purpose: once (the client's repair re-ask then gets a good answer) and twice (the
repair gets the same text, so the call fails). Either way the ask must end cleanly: an answer or a user-readable
failure, with the problem recorded on the call. Never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from bot.agents.scripted_model import scripted_model
from bot.asks.service import AskRequest
from bot.llm.types import LLMRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION, build, two_fact_world


@dataclass(frozen=True)
class Case:
    name: str
    purpose: str  # the call it answered: think | act | consensus | extract_facts
    kind: str  # how the client classifies it: empty | invalid_json | wrong_schema | ok (schema-valid, unusable)
    text: str  # verbatim


REPAIR_NUDGE = "Your reply"  # how prompts/llm_repair.yaml opens
CASES = [
    Case("think cut off by the reply-length cap", "think", "invalid_json", '{"plan": [{"id": "r1", "need": "When is'),
]


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
    if case.kind != "ok":  # the client saw the problem and says how it was handled
        handled = "repaired" if times == 1 else "failed after repair"
        assert h.llm.totals.malformed == {f"{case.kind} -> {handled}": 1}
    if times == 1 and case.kind != "ok":
        assert outcome.status == "done"  # one bad reply, repaired: the ask still gets its answer
