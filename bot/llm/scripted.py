"""A scripted LLM backend for tests and offline benchmarks: a Python function plays the model.

It sits behind the real `LLMClient`, so retries, parsing and accounting are exercised exactly as with a real
endpoint. Answers it gives are whatever the script says: never evidence of answer quality.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from bot.llm.types import LLMReply, LLMRequest


Script = Callable[[LLMRequest], str | Awaitable[str]]


def count_tokens(text: str) -> int:
    """A stable stand-in for a tokenizer: about four characters a token."""
    return max(1, (len(text) + 3) // 4)


class ScriptedBackend:
    def __init__(self, script: Script, *, model: str = "scripted", latency_s: float = 0.0) -> None:
        self.script = script
        self.model = model
        self.latency_s = latency_s
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        self.requests.append(request)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        text = self.script(request)
        if inspect.isawaitable(text):
            text = await text
        prompt = "".join(m["content"] for m in request.messages)
        return LLMReply(text, count_tokens(prompt), count_tokens(text), self.model)
