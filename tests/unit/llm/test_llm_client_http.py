"""The LLM client through the real `openai` library against a fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.errors import (
    LLMConfigurationError,
    LLMNotConfiguredError,
    LLMOutputError,
    LLMRejectedError,
    LLMUnavailableError,
)
from bot.llm.cache import ResponseCache
from bot.llm.client import LLMClient
from bot.llm.openai_backend import OpenAIBackend
from bot.llm.retry import RetryPolicy
from bot.llm.structured import JsonMode
from bot.llm.types import LLMRequest
from bot.settings import Settings
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    failure,
    rate_limited,
    reply,
    reply_json,
    reply_without_usage,
    slow,
)


API_KEY = "sk-test-very-secret-0123456789"
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "known": {"type": "boolean"}},
    "required": ["answer", "known"],
}
GOOD = {"answer": "Tuesday", "known": True}
MakeClient = Callable[..., LLMClient]


def ask(*, schema: dict | None = SCHEMA, text: str = "When is the launch?", temperature: float | None = None):
    messages = [{"role": "user", "content": text}]
    return LLMRequest(messages, purpose="think", json_schema=schema, temperature=temperature)


@pytest.fixture
async def make_client(fake_openai: FakeOpenAIServer) -> AsyncIterator[MakeClient]:
    """Clients on the fake server with ~0 backoff; `client.slept` records every wait between retries."""
    clients: list[LLMClient] = []

    def make(*, timeout_s: float = 5.0, max_retries: int = 3, api_key: str = API_KEY, **options) -> LLMClient:
        slept: list[float] = []

        async def sleep(seconds: float) -> None:
            slept.append(seconds)

        backend = OpenAIBackend(
            base_url=fake_openai.base_url, model="fake-model", api_key=api_key, timeout_s=timeout_s
        )
        retry = RetryPolicy(max_retries=max_retries, backoff_s=0.0)
        client = LLMClient(backend, retry=retry, attempt_timeout_s=timeout_s, sleep=sleep, **options)
        client.slept = slept  # type: ignore[attr-defined]
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


# ---------------------------------------------------------------------- retries
async def test_retries_429_500_and_timeout_then_succeeds(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(
        rate_limited(retry_after_ms="250"),
        failure(500),
        slow(2.0),
        reply_json(GOOD, prompt_tokens=40, completion_tokens=9),
    )
    client = make_client(timeout_s=1.0)
    result = await client.complete(ask())
    assert result.data == GOOD
    assert result.call.attempts == 4
    assert (result.call.prompt_tokens, result.call.completion_tokens) == (40, 9)  # failed attempts report no usage
    assert result.call.error is None and not result.call.repaired
    assert client.slept[0] == pytest.approx(0.25)  # the server's retry-after-ms was honoured
    assert len(fake_openai.requests) == 4
    assert client.totals.attempts == 4 and client.totals.calls == 1


async def test_retry_after_seconds_header_is_honoured(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(rate_limited(retry_after="3"), reply("fine"))
    client = make_client()
    assert (await client.complete(ask(schema=None))).text == "fine"
    assert client.slept == [3.0]


async def test_gives_up_after_max_retries_with_a_readable_message(
    fake_openai: FakeOpenAIServer, make_client: MakeClient
):
    fake_openai.enqueue(*[failure(503, "overloaded")] * 10)
    client = make_client(max_retries=2)
    with pytest.raises(LLMUnavailableError) as info:
        await client.complete(ask())
    message = str(info.value)
    assert message.startswith(f"The language model at {fake_openai.base_url} is not answering")
    assert "(HTTP 503 after 3 attempts)" in message
    assert len(fake_openai.requests) == 3
    assert info.value.call.attempts == 3 and info.value.call.error == message
    assert client.totals.failures == 1


async def test_a_dead_endpoint_is_unavailable_not_a_crash(make_client: MakeClient, fake_openai: FakeOpenAIServer):
    await fake_openai.stop()  # nothing listens on the port any more
    client = make_client(max_retries=1)
    with pytest.raises(LLMUnavailableError, match=r"\(could not connect after 2 attempts\)"):
        await client.complete(ask(schema=None))


# ---------------------------------------------------------------------- permanent refusals
async def test_bad_key_is_permanent_and_never_shown(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.api_key = "the-right-key"
    client = make_client(api_key=API_KEY)
    with pytest.raises(LLMRejectedError) as info:
        await client.complete(ask())
    assert len(fake_openai.requests) == 1  # no retries
    assert client.slept == []
    message = str(info.value)
    assert "HTTP 401" in message and "ASKWITH_LLM_API_KEY" in message and fake_openai.base_url in message
    assert API_KEY not in message and API_KEY not in repr(info.value.call) and API_KEY not in repr(client.backend)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # the library's text is not chained


async def test_the_key_is_sent_as_a_bearer_token(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.api_key = API_KEY
    fake_openai.enqueue(reply("hello"))
    result = await make_client().complete(ask(schema=None, temperature=0.3))
    assert result.text == "hello"
    sent = fake_openai.requests[0]
    assert sent.headers["Authorization"] == f"Bearer {API_KEY}"
    assert sent.body["model"] == "fake-model"
    assert sent.body["temperature"] == 0.3
    assert sent.body["messages"] == [{"role": "user", "content": "When is the launch?"}]
    assert "response_format" not in sent.body


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (404, "model not found", "check ASKWITH_LLM_MODEL"),
        (400, "messages: too long", "messages: too long"),
        (429, "You exceeded your current quota", "out of quota"),
    ],
)
async def test_other_refusals_are_permanent(
    fake_openai: FakeOpenAIServer, make_client: MakeClient, status: int, message: str, expected: str
):
    fake_openai.enqueue(failure(status, message))
    with pytest.raises(LLMRejectedError, match=expected):
        await make_client().complete(ask(schema=None))
    assert len(fake_openai.requests) == 1


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (400, "messages: too long", "HTTP 400: messages: too long"),
        (401, "Invalid API Key", "HTTP 401: the API key was not accepted; check ASKWITH_LLM_API_KEY"),
        (403, "forbidden", "HTTP 403: access denied"),
        (404, "model not found", "HTTP 404: no such model or route"),
        (429, "You exceeded your current quota", "HTTP 429: the account is out of quota"),
    ],
)
async def test_a_refused_setup_is_a_configuration_error_with_a_reason_members_may_read(
    fake_openai: FakeOpenAIServer, make_client: MakeClient, status: int, message: str, expected: str
):
    fake_openai.enqueue(failure(status, message))
    with pytest.raises(LLMConfigurationError) as info:
        await make_client().complete(ask(schema=None))
    assert info.value.reason.startswith(expected)
    assert fake_openai.base_url not in info.value.reason and API_KEY not in info.value.reason


async def test_a_refusal_that_is_not_about_the_setup_is_not_a_configuration_error(
    fake_openai: FakeOpenAIServer, make_client: MakeClient
):
    fake_openai.enqueue(failure(413, "request entity too large"))
    with pytest.raises(LLMRejectedError) as info:
        await make_client().complete(ask(schema=None))
    assert not isinstance(info.value, LLMConfigurationError)


async def test_server_message_echoing_the_key_is_scrubbed(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(failure(400, f"bad request from key {API_KEY}"))
    with pytest.raises(LLMConfigurationError) as info:
        await make_client().complete(ask(schema=None))
    assert API_KEY not in str(info.value) and "***" in str(info.value)
    assert API_KEY not in info.value.reason and "***" in info.value.reason


# ---------------------------------------------------------------------- structured output
async def test_malformed_json_is_repaired_by_one_reask(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(
        reply('Sure! {"answer": "Tuesday", "known": tru', prompt_tokens=30, completion_tokens=12),
        reply_json(GOOD, prompt_tokens=55, completion_tokens=10),
    )
    result = await make_client().complete(ask())
    assert result.data == GOOD and result.call.repaired
    assert (result.call.prompt_tokens, result.call.completion_tokens) == (85, 22)
    repair = fake_openai.requests[1].body["messages"]
    assert repair[0] == {"role": "user", "content": "When is the launch?"}
    assert repair[1] == {"role": "assistant", "content": 'Sure! {"answer": "Tuesday", "known": tru'}
    assert "no complete JSON object" in repair[2]["content"] and '"required"' in repair[2]["content"]


async def test_wrong_schema_is_repaired_with_the_validation_error(
    fake_openai: FakeOpenAIServer, make_client: MakeClient
):
    fake_openai.enqueue(reply_json({"answer": "Tuesday"}), reply_json(GOOD))
    result = await make_client().complete(ask())
    assert result.data == GOOD and result.call.repaired
    assert "'known' is a required property" in fake_openai.requests[1].body["messages"][-1]["content"]


async def test_fenced_json_needs_no_repair(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(reply(f"```json\n{json.dumps(GOOD)}\n```"))
    result = await make_client().complete(ask())
    assert result.data == GOOD and not result.call.repaired and len(fake_openai.requests) == 1


async def test_still_malformed_after_repair_fails_cleanly(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(reply("not json"), reply('{"answer": 3, "known": true}'))
    client = make_client()
    with pytest.raises(LLMOutputError) as info:
        await client.complete(ask())
    assert "'think'" in str(info.value) and "at answer: must be of type 'string'" in str(info.value)
    assert info.value.call.repaired and info.value.call.attempts == 2
    assert len(fake_openai.requests) == 2 and client.totals.failures == 1


async def test_empty_reply_counts_as_malformed(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(reply(""), reply_json(GOOD))
    result = await make_client().complete(ask())
    assert result.data == GOOD and result.call.repaired
    repair = fake_openai.requests[1].body["messages"]
    assert [m["role"] for m in repair] == ["user", "user"]  # no empty assistant turn
    assert "Your reply was empty." in repair[-1]["content"]


async def test_empty_text_reply_gets_one_reask_then_fails(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(reply("  "), reply("Tuesday"), reply(""), reply(""))
    client = make_client()
    first = await client.complete(ask(schema=None))
    assert first.text == "Tuesday" and first.call.repaired
    with pytest.raises(LLMOutputError, match="empty answer"):
        await client.complete(ask(schema=None, text="again"))


async def test_llama_cpp_style_json_schema_refusal_falls_back_and_is_remembered(
    fake_openai: FakeOpenAIServer, make_client: MakeClient
):
    fake_openai.reject_json_schema = True
    fake_openai.enqueue(reply_json(GOOD), reply_json(GOOD))
    client = make_client()
    first = await client.complete(ask())
    second = await client.complete(ask(text="and again?"))
    assert first.data == second.data == GOOD
    assert first.call.json_mode == second.call.json_mode == "json_object_schema"
    assert client.json_mode is JsonMode.JSON_OBJECT_SCHEMA
    formats = [r.response_format for r in fake_openai.requests]
    assert formats[0]["type"] == "json_schema" and formats[0]["json_schema"]["schema"] == SCHEMA
    assert formats[1] == formats[2] == {"type": "json_object", "schema": SCHEMA}
    assert client.slept == []  # a refused format is not a transient failure: no backoff


async def test_json_object_refusal_falls_back_to_plain_json_object(
    fake_openai: FakeOpenAIServer, make_client: MakeClient
):
    fake_openai.enqueue(
        failure(400, "response_format json_schema is not supported", error_type="invalid_request_error"),
        failure(400, "Unrecognized request argument: response_format.schema"),
        reply_json(GOOD),
    )
    client = make_client()
    result = await client.complete(ask())
    assert result.data == GOOD and result.call.json_mode == "json_object" and result.call.attempts == 3
    assert fake_openai.requests[-1].response_format == {"type": "json_object"}


# ---------------------------------------------------------------------- accounting, concurrency, cache
async def test_token_accounting_matches_the_reported_usage(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.enqueue(
        reply_json(GOOD, prompt_tokens=120, completion_tokens=15),
        reply("plain", prompt_tokens=80, completion_tokens=4),
        reply_without_usage("no usage reported here"),
    )
    client = make_client()
    one = await client.complete(ask())
    two = await client.complete(ask(schema=None))
    three = await client.complete(ask(schema=None))
    assert (one.call.prompt_tokens, one.call.completion_tokens) == (120, 15)
    assert (two.call.prompt_tokens, two.call.completion_tokens) == (80, 4)
    assert three.call.prompt_tokens == 5 and three.call.completion_tokens == 6  # estimated: ~4 characters a token
    assert (client.totals.prompt_tokens, client.totals.completion_tokens) == (205, 25)
    assert client.totals.calls == 3 and client.totals.by_purpose == {"think": 3}
    assert all(r.call.latency_s > 0 for r in (one, two, three))


async def test_concurrency_limit_is_respected(fake_openai: FakeOpenAIServer, make_client: MakeClient):
    fake_openai.default = slow(0.15, "done")
    client = make_client(concurrency=2)
    started = time.perf_counter()
    results = await asyncio.gather(*(client.complete(ask(schema=None, text=f"q{i}")) for i in range(6)))
    elapsed = time.perf_counter() - started
    assert [r.text for r in results] == ["done"] * 6
    assert fake_openai.max_in_flight == 2
    assert elapsed >= 0.15 * 3 * 0.9  # six requests, two at a time


async def test_cache_hit_skips_the_server(fake_openai: FakeOpenAIServer, make_client: MakeClient, tmp_path: Path):
    fake_openai.enqueue(reply_json(GOOD, prompt_tokens=50, completion_tokens=8), reply_json(GOOD))
    client = make_client(cache=ResponseCache(tmp_path / "cache"))
    first = await client.complete(ask(temperature=0.2))
    second = await client.complete(ask(temperature=0.2))
    assert len(fake_openai.requests) == 1
    assert second.data == first.data == GOOD and second.text == first.text
    assert second.call.cached and (second.call.prompt_tokens, second.call.completion_tokens) == (0, 0)
    assert second.call.attempts == 0 and second.call.json_mode == first.call.json_mode
    assert (client.totals.prompt_tokens, client.totals.cached) == (50, 1)
    await client.complete(ask(temperature=0.7))  # a different request is a miss
    assert len(fake_openai.requests) == 2
    assert not list((tmp_path / "cache").rglob(".tmp-*"))  # atomic writes leave no temporary files


async def test_failures_are_not_cached(fake_openai: FakeOpenAIServer, make_client: MakeClient, tmp_path: Path):
    fake_openai.enqueue(reply("nope"), reply("still nope"), reply_json(GOOD))
    client = make_client(cache=ResponseCache(tmp_path / "cache"))
    with pytest.raises(LLMOutputError):
        await client.complete(ask())
    assert (await client.complete(ask())).data == GOOD


# ---------------------------------------------------------------------- settings
async def test_from_settings_needs_a_base_url() -> None:
    with pytest.raises(LLMNotConfiguredError, match="ASKWITH_LLM_BASE_URL"):
        LLMClient.from_settings(Settings.load(env={}, env_file=None))


async def test_from_settings_talks_to_the_configured_endpoint(fake_openai: FakeOpenAIServer, tmp_path: Path):
    fake_openai.api_key = API_KEY
    fake_openai.enqueue(reply_json(GOOD))
    env = {
        "ASKWITH_LLM_BASE_URL": fake_openai.base_url,
        "ASKWITH_LLM_MODEL": "local-model",
        "ASKWITH_LLM_API_KEY": API_KEY,
        "ASKWITH_LLM_TEMPERATURE": "0.1",
        "ASKWITH_LLM_CACHE_DIR": str(tmp_path / "cache"),
    }
    client = LLMClient.from_settings(Settings.load(env=env, env_file=None))
    try:
        result = await client.complete(ask())
    finally:
        await client.aclose()
    assert result.data == GOOD and result.call.model == "local-model"
    assert fake_openai.requests[0].body["temperature"] == 0.1
    assert client.cache is not None and client.retry.max_retries == 4
