"""The one LLM client. Every LLM call in askwith goes through `LLMClient`.

It owns structured output, retries, token and latency accounting, the concurrency limit and the optional response
cache; the backend behind it is an OpenAI-compatible endpoint (`OpenAIBackend`) or a scripted stand-in.

    client = LLMClient.from_settings(settings)
    result = await client.complete(LLMRequest(messages, purpose="think", json_schema=schema))
    result.data, result.call.prompt_tokens
"""

from __future__ import annotations

import asyncio
import json
import time

from bot.errors import LLMOutputError
from bot.llm.types import LLMBackend, LLMCallRecord, LLMRequest, LLMResult, LLMTotals


class LLMClient:
    def __init__(self, backend: LLMBackend, *, concurrency: int = 8) -> None:
        self.backend = backend
        self.totals = LLMTotals()
        self._slots = asyncio.Semaphore(concurrency)

    @property
    def model(self) -> str:
        return self.backend.model

    async def complete(self, request: LLMRequest) -> LLMResult:
        # PLACEHOLDER (foundation skeleton): no retries, cache or repair yet.
        record = LLMCallRecord(purpose=request.purpose, model=self.backend.model)
        response_format = None
        if request.json_schema is not None:
            record.json_mode = "json_schema"
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.json_schema},
            }
        started = time.perf_counter()
        async with self._slots:
            reply = await self.backend.complete(request, response_format=response_format)
        record.latency_s = time.perf_counter() - started
        record.attempts = 1
        record.prompt_tokens, record.completion_tokens = reply.prompt_tokens, reply.completion_tokens
        self._account(record)
        data = None
        if request.json_schema is not None:
            try:
                data = json.loads(reply.text)
            except json.JSONDecodeError as exc:
                raise LLMOutputError(f"The model's answer to {request.purpose!r} was not valid JSON.") from exc
        return LLMResult(reply.text, record, data)

    def _account(self, record: LLMCallRecord) -> None:
        self.totals.calls += 1
        self.totals.prompt_tokens += record.prompt_tokens
        self.totals.completion_tokens += record.completion_tokens
        self.totals.by_purpose[record.purpose] = self.totals.by_purpose.get(record.purpose, 0) + 1
