"""A fake OpenAI-compatible HTTP server on 127.0.0.1 (port 0), in-process, for testing the real `openai` client.

`POST /v1/chat/completions` answers from a queue of behaviours (one per request; when the queue is empty, the
default reply). Two endpoint capabilities are settings of the server rather than queue entries, because a real
endpoint has them for every request: `api_key` (any other bearer token gets HTTP 401) and `reject_json_schema`
(HTTP 500 for `response_format.type == "json_schema"`, as llama.cpp's Python server does). Every request is recorded
(body and headers), and the most requests ever in flight at once is tracked.

    server = FakeOpenAIServer()
    await server.start()
    server.enqueue(rate_limited(retry_after="0"), reply_json({"answer": 42}, prompt_tokens=30))

    model_server = FakeOpenAIServer(script=lambda body: ...)  # plays a model: request body -> reply text
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Behaviour:
    status: int = 200
    content: str | None = "ok"
    usage: tuple[int, int] | None = (10, 5)  # (prompt, completion) tokens reported; None = no usage block
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    error_message: str = ""
    error_type: str = "server_error"


def reply(content: str, *, prompt_tokens: int = 10, completion_tokens: int = 5, delay_s: float = 0.0) -> Behaviour:
    return Behaviour(content=content, usage=(prompt_tokens, completion_tokens), delay_s=delay_s)


def reply_json(data: Any, *, prompt_tokens: int = 10, completion_tokens: int = 5, delay_s: float = 0.0) -> Behaviour:
    return reply(json.dumps(data), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, delay_s=delay_s)


def reply_without_usage(content: str) -> Behaviour:
    return Behaviour(content=content, usage=None)


def rate_limited(*, retry_after: str | None = None, retry_after_ms: str | None = None) -> Behaviour:
    headers = {} if retry_after is None else {"retry-after": retry_after}
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    return failure(429, "Rate limit reached", headers=headers, error_type="rate_limit_exceeded")


def failure(
    status: int, message: str = "Internal error", *, headers: dict[str, str] | None = None, error_type: str = ""
) -> Behaviour:
    return Behaviour(status=status, headers=headers or {}, error_message=message, error_type=error_type or "error")


def slow(delay_s: float, content: str = "late") -> Behaviour:
    return reply(content, delay_s=delay_s)


@dataclass(frozen=True)
class RecordedRequest:
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def response_format(self) -> dict[str, Any] | None:
        return self.body.get("response_format")


# What llama-cpp-python 0.3.36's server answers (HTTP 500, error type internal_server_error) when
# `response_format.type` is json_schema, verbatim except the site-packages path, which is the installing machine's.
# tests/integration/test_local_llm_real.py checks it against the real server.
LLAMA_CPP_JSON_SCHEMA_ERROR = (
    "1 validation error:\n"
    "  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
    '  File "/srv/venv/lib/python3.11/site-packages/llama_cpp/server/app.py", line 376, in create_chat_completion\n'
    "    POST /v1/chat/completions"
)


BodyScript = Callable[[dict[str, Any]], str]  # a request body -> the reply text


class FakeOpenAIServer:
    def __init__(
        self,
        *,
        api_key: str | None = None,
        reject_json_schema: bool = False,
        default: Behaviour | None = None,
        script: BodyScript | None = None,
    ) -> None:
        self.api_key = api_key
        self.script = script  # when set, answers every request the queue does not
        self.reject_json_schema = reject_json_schema
        self.default = reply("ok") if default is None else default
        self.queue: deque[Behaviour] = deque()
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *behaviours: Behaviour) -> None:
        self.queue.extend(behaviours)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _chat_completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(RecordedRequest(body, dict(request.headers)))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request, body)
        finally:
            self.in_flight -= 1

    async def _answer(self, request: web.Request, body: dict[str, Any]) -> web.Response:
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Invalid API Key", "authentication_error", {})
        if self.reject_json_schema and (body.get("response_format") or {}).get("type") == "json_schema":
            return _error(500, LLAMA_CPP_JSON_SCHEMA_ERROR, "internal_server_error", {})
        behaviour = self.queue.popleft() if self.queue else self._unqueued(body)
        if behaviour.delay_s:
            await asyncio.sleep(behaviour.delay_s)
        if behaviour.status != 200:
            return _error(behaviour.status, behaviour.error_message, behaviour.error_type, behaviour.headers)
        return web.json_response(_completion(body, behaviour), headers=behaviour.headers)

    def _unqueued(self, body: dict[str, Any]) -> Behaviour:
        return self.default if self.script is None else reply(self.script(body))


def _error(status: int, message: str, kind: str, headers: dict[str, str]) -> web.Response:
    payload = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return web.json_response(payload, status=status, headers=headers)


def _completion(body: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
    completion: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": behaviour.content},
                "finish_reason": "stop",
            }
        ],
    }
    if behaviour.usage is not None:
        prompt, completion_tokens = behaviour.usage
        completion["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        }
    return completion
