"""The LLM client over scripted backends: the same retry, fallback, parse and repair logic, without HTTP."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.errors import LLMError, LLMOutputError, LLMRejectedError, LLMUnavailableError
from bot.llm.client import LLMClient
from bot.llm.retry import RetryPolicy
from bot.llm.scripted import RECORDED_REQUESTS, Fault, FaultyBackend, ScriptedBackend, always, random_faults
from bot.llm.types import LLMRequest


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
GOOD = {"answer": "Tuesday"}


def ask(text: str = "When?", schema: dict | None = SCHEMA) -> LLMRequest:
    return LLMRequest([{"role": "user", "content": text}], purpose="act", json_schema=schema)


def good_model(request: LLMRequest) -> str:
    return json.dumps(GOOD)


def client_over(backend, **options) -> LLMClient:
    options.setdefault("retry", RetryPolicy(max_retries=4, backoff_s=0.0))
    return LLMClient(backend, **options)


@pytest.mark.parametrize("fault", [Fault.RATE_LIMIT, Fault.SERVER_ERROR, Fault.UNAVAILABLE, Fault.TIMEOUT])
async def test_transient_faults_are_retried(fault: Fault) -> None:
    backend = FaultyBackend(ScriptedBackend(good_model), [fault, fault])
    result = await client_over(backend).complete(ask())
    assert result.data == GOOD and result.call.attempts == 3 and backend.injected == [fault, fault]


async def test_a_hanging_model_is_cut_off_by_the_per_attempt_timeout() -> None:
    backend = FaultyBackend(ScriptedBackend(good_model), [Fault.HANG])
    result = await client_over(backend, attempt_timeout_s=0.05).complete(ask())
    assert result.data == GOOD and result.call.attempts == 2


async def test_an_endpoint_that_is_always_down_gives_up_readably() -> None:
    backend = FaultyBackend(ScriptedBackend(good_model), always(Fault.SERVER_ERROR))
    with pytest.raises(LLMUnavailableError, match=r"scripted:scripted is not answering \(HTTP 500 after 5 attempts\)"):
        await client_over(backend).complete(ask())
    assert backend.calls == 5


@pytest.mark.parametrize("fault", [Fault.EMPTY, Fault.INVALID_JSON, Fault.WRONG_SCHEMA])
async def test_output_faults_are_repaired(fault: Fault) -> None:
    inner = ScriptedBackend(good_model)
    client = client_over(FaultyBackend(inner, [fault]))
    result = await client.complete(ask())
    assert result.data == GOOD and result.call.repaired
    assert "JSON schema" in inner.requests[0].messages[-1]["content"]  # the model saw the repair request
    assert result.call.problems == [fault.value]  # the record says what was wrong, and that it was repaired
    assert client.totals.malformed == {f"{fault.value} -> repaired": 1}


@pytest.mark.parametrize("fault", [Fault.EMPTY, Fault.INVALID_JSON, Fault.WRONG_SCHEMA])
async def test_output_faults_twice_are_a_clean_output_error(fault: Fault) -> None:
    backend = FaultyBackend(ScriptedBackend(good_model), [fault, fault])
    client = client_over(backend)
    with pytest.raises(LLMOutputError, match="not in the shape asked for") as info:
        await client.complete(ask())
    assert info.value.call.problems == [fault.value, fault.value]
    assert client.totals.malformed == {f"{fault.value} -> failed after repair": 1}


async def test_an_empty_text_reply_is_asked_again_and_recorded() -> None:
    replies = iter(["", "Tuesday"])
    client = client_over(ScriptedBackend(lambda request: next(replies)))
    result = await client.complete(ask(schema=None))
    assert result.text == "Tuesday" and result.call.problems == ["empty"] and result.call.repaired


async def test_the_reply_length_cap_applies_to_requests_without_their_own() -> None:
    backend = ScriptedBackend(good_model)
    client = client_over(backend, max_tokens=64)
    await client.complete(ask())
    await client.complete(LLMRequest(ask().messages, purpose="act", json_schema=SCHEMA, max_tokens=8))
    assert [r.max_tokens for r in backend.requests] == [64, 8]


async def test_format_refusal_falls_back_and_is_remembered() -> None:
    inner = ScriptedBackend(good_model)
    client = client_over(FaultyBackend(inner, [Fault.FORMAT_REJECTED]))
    await client.complete(ask())
    await client.complete(ask("again"))
    assert [f["type"] if f else None for f in inner.response_formats] == ["json_object", "json_object"]
    assert inner.response_formats[0] == {"type": "json_object", "schema": SCHEMA}


async def test_an_endpoint_refusing_every_json_form_falls_back_to_prompt_only_then_gives_up() -> None:
    inner = ScriptedBackend(good_model)
    faults = [Fault.FORMAT_REJECTED] * 3
    client = client_over(FaultyBackend(inner, faults))
    result = await client.complete(ask())
    assert result.data == GOOD and result.call.json_mode == "prompt_only" and list(inner.response_formats) == [None]
    stubborn = client_over(FaultyBackend(ScriptedBackend(good_model), always(Fault.FORMAT_REJECTED)))
    with pytest.raises(LLMRejectedError, match="refused every form of JSON output"):
        await stubborn.complete(ask())


async def test_scripted_tokens_are_summed_over_attempts_and_repair() -> None:
    backend = FaultyBackend(ScriptedBackend(good_model), [Fault.RATE_LIMIT, Fault.INVALID_JSON])
    result = await client_over(backend).complete(ask("x" * 40))
    # 40 prompt characters = 10 tokens for the bad reply; the repair prompt is longer; the 429 costs nothing.
    assert result.call.attempts == 3 and result.call.prompt_tokens > 20 and result.call.completion_tokens > 0


async def test_random_faults_never_escape_as_anything_but_llm_errors() -> None:
    backend = FaultyBackend(ScriptedBackend(good_model), random_faults(0.5, seed=3))
    client = client_over(backend, retry=RetryPolicy(max_retries=1, backoff_s=0.0))
    outcomes = await asyncio.gather(*(client.complete(ask(f"q{i}")) for i in range(60)), return_exceptions=True)
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    assert all(isinstance(f, LLMError) and f.call is not None for f in failures)
    assert 0 < len(failures) < 60
    assert client.totals.calls == 60 and client.totals.failures == len(failures)


def test_random_faults_are_reproducible() -> None:
    first, second = random_faults(0.4, seed=9), random_faults(0.4, seed=9)
    request = ask()
    assert [first(request, i) for i in range(50)] == [second(request, i) for i in range(50)]


def test_backoff_grows_with_jitter_and_honours_retry_after() -> None:
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=5.0, jitter=0.5)
    for retry, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (8, 5.0)]:
        waits = [policy.delay(retry) for _ in range(50)]
        assert all(ceiling * 0.5 <= w <= ceiling for w in waits)
        assert len(set(waits)) > 1
    assert policy.delay(0, retry_after=7.5) == 7.5
    assert policy.delay(0, retry_after=10_000) == policy.max_retry_after_s
    assert RetryPolicy(backoff_s=0.0).delay(3) == 0.0


async def test_the_scripted_backend_keeps_only_its_latest_requests() -> None:
    backend = ScriptedBackend(good_model)
    for index in range(RECORDED_REQUESTS + 5):
        await backend.complete(ask(f"When? #{index}"), response_format=None)
    assert len(backend.requests) == len(backend.response_formats) == RECORDED_REQUESTS
    assert backend.requests[-1].messages[-1]["content"].endswith(f"#{RECORDED_REQUESTS + 4}")


async def test_a_scripted_backend_asked_to_keep_every_request_keeps_them_all() -> None:
    backend = ScriptedBackend(good_model, recorded=None)
    for index in range(RECORDED_REQUESTS + 5):
        await backend.complete(ask(f"When? #{index}"), response_format=None)
    assert len(backend.requests) == RECORDED_REQUESTS + 5
