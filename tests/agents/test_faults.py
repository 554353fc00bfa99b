"""A misbehaving model never crashes an ask: it ends with an answer or a recorded, user-readable failure."""

from __future__ import annotations

import pytest

from bot.asks.service import AskRequest
from bot.llm.scripted import (
    OUTPUT_FAULTS,
    TRANSIENT_FAULTS,
    Fault,
    FaultyBackend,
    ScriptedBackend,
    always,
    random_faults,
)
from bot.llm.standin.model import scripted_model
from bot.settings import Settings
from bot.store.db import Database
from bot.texts import failure_texts
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.records import conversations, turns


@pytest.fixture
def fast(settings: Settings) -> Settings:
    return settings.replace(llm_backoff_seconds=0.0, llm_max_retries=2, llm_timeout_seconds=0.3)


def faulty(plan) -> FaultyBackend:  # noqa: ANN001
    return FaultyBackend(ScriptedBackend(scripted_model), plan, hang_s=5.0)


async def _one_final_post(h, ask_id: int) -> str:  # noqa: ANN001
    dm = h.world.dm(h.world.bot_id, "alice").id
    finals = [m.text for m in h.world.messages[dm] if f"transcripts show {ask_id}" in m.text]
    assert len(finals) == 1
    return finals[0]


@pytest.mark.parametrize("fault", [*TRANSIENT_FAULTS, *OUTPUT_FAULTS, Fault.HANG])
async def test_one_bad_reply_is_retried_or_repaired(db: Database, fast: Settings, fault: Fault) -> None:
    h = await build(db, two_fact_world(), settings=fast, backend=faulty([fault, None, fault]))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done" and "14 March" in outcome.answer
    assert h.backend.injected == [fault, fault]
    await _one_final_post(h, outcome.ask_id)


async def test_endpoint_down_fails_the_ask_with_a_readable_reason(db: Database, fast: Settings) -> None:
    h = await build(db, two_fact_world(), settings=fast, backend=faulty(always(Fault.SERVER_ERROR)))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "failed" and outcome.failure == failure_texts.failure_llm_unavailable()
    assert outcome.result.conversations[0].stop_reason == "llm_unavailable"
    assert failure_texts.failure_llm_unavailable() in await _one_final_post(h, outcome.ask_id)
    (conversation,) = await conversations(db, outcome.ask_id)
    (turn,) = await turns(db, conversation.id)
    assert turn.data["error"]["type"] == "LLMUnavailableError" and turn.data["llm_calls"][0]["attempts"] == 3


@pytest.mark.parametrize("fault", OUTPUT_FAULTS)
async def test_a_model_that_never_answers_in_shape_fails_readably(db: Database, fast: Settings, fault: Fault) -> None:
    h = await build(db, two_fact_world(), settings=fast, backend=faulty(always(fault)))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "failed" and outcome.failure == failure_texts.failure_llm_output()
    assert outcome.result.conversations[0].stop_reason == "llm_output"
    (conversation,) = await conversations(db, outcome.ask_id)
    recorded = await turns(db, conversation.id)
    assert len(recorded) == 3 and all(t.data["error"]["type"] == "LLMOutputError" for t in recorded)
    await _one_final_post(h, outcome.ask_id)


@pytest.mark.parametrize("seed", range(6))
async def test_random_faults_always_end_in_an_answer_or_a_recorded_failure(
    db: Database, fast: Settings, seed: int
) -> None:
    h = await build(db, two_fact_world(), settings=fast, backend=faulty(random_faults(0.35, seed=seed)))

    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))

    ask = await h.service.load(outcome.ask_id)
    assert ask.status in ("done", "failed") and ask.final_post == "posted"
    assert (ask.answer is not None) or (ask.failure is not None)
    await _one_final_post(h, outcome.ask_id)
