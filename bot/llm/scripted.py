"""Scripted LLM backends for tests and offline benchmarks: a Python function plays the model.

They sit behind the real `LLMClient`, so retries, parsing, repair and accounting are exercised exactly as with a real
endpoint. Answers they give are whatever the script says: never evidence of answer quality.

    backend = ScriptedBackend(lambda request: '{"answer": "42"}')
    flaky = FaultyBackend(backend, [Fault.RATE_LIMIT, Fault.SERVER_ERROR, None, Fault.INVALID_JSON])
    chaos = FaultyBackend(backend, random_faults(0.3, seed=7))
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from enum import Enum
from typing import Any

from bot.errors import LLMFormatRejectedError, LLMTransientError
from bot.llm.tokens import count_tokens
from bot.llm.types import LLMBackend, LLMReply, LLMRequest


Script = Callable[[LLMRequest], str | Awaitable[str]]
RECORDED_REQUESTS = 1_000


class ScriptedBackend:
    def __init__(
        self,
        script: Script,
        *,
        model: str = "scripted",
        latency_s: float = 0.0,
        recorded: int | None = RECORDED_REQUESTS,  # requests kept for reading back; None = every one
    ) -> None:
        self.script = script
        self.model = model
        self.endpoint = f"scripted:{model}"
        self.latency_s = latency_s
        # The latest requests, for tests to read: bounded, as the offline demo model serves as long as askwith runs.
        self.requests: deque[LLMRequest] = deque(maxlen=recorded)
        self.response_formats: deque[dict[str, Any] | None] = deque(maxlen=recorded)

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        self.requests.append(request)
        self.response_formats.append(response_format)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        text = self.script(request)
        if inspect.isawaitable(text):
            text = await text
        return scripted_reply(request, text, self.model)


def scripted_reply(request: LLMRequest, text: str, model: str) -> LLMReply:
    """A reply with token counts estimated the way `ScriptedBackend` does (about four characters a token)."""
    prompt = "".join(m["content"] for m in request.messages)
    return LLMReply(text, count_tokens(prompt), count_tokens(text) if text else 0, model)


# ---------------------------------------------------------------------- fault injection
class Fault(Enum):
    """What can go wrong with one model request."""

    RATE_LIMIT = "rate_limit"  # HTTP 429
    SERVER_ERROR = "server_error"  # HTTP 500
    UNAVAILABLE = "unavailable"  # HTTP 503
    TIMEOUT = "timeout"  # the endpoint's own time-out, raised at once
    HANG = "hang"  # no answer at all: the client's per-attempt time-out must end it
    FORMAT_REJECTED = "format_rejected"  # the endpoint refuses the response_format sent
    EMPTY = "empty"  # "" as the answer
    INVALID_JSON = "invalid_json"  # cut-off JSON
    WRONG_SCHEMA = "wrong_schema"  # valid JSON, wrong shape


TRANSIENT_FAULTS = (Fault.RATE_LIMIT, Fault.SERVER_ERROR, Fault.UNAVAILABLE, Fault.TIMEOUT)
OUTPUT_FAULTS = (Fault.EMPTY, Fault.INVALID_JSON, Fault.WRONG_SCHEMA)
_FAULTY_TEXT = {Fault.EMPTY: "", Fault.INVALID_JSON: '{"answer": "half of it', Fault.WRONG_SCHEMA: '{"unexpected": 1}'}
_TRANSIENT_REASON = {
    Fault.RATE_LIMIT: "HTTP 429",
    Fault.SERVER_ERROR: "HTTP 500",
    Fault.UNAVAILABLE: "HTTP 503",
    Fault.TIMEOUT: "no reply within the time-out",
}

FaultPlan = Callable[[LLMRequest, int], Fault | None]  # (request, 0-based call number) -> fault or None


class FaultyBackend:
    """Wraps a backend and injects faults, so tests can simulate a misbehaving model without HTTP.

    `faults` is either a sequence (one entry per call, in order, `None` = pass through; after the last entry every
    call passes through) or a function `(request, call_number) -> Fault | None`. `injected` lists what was injected.
    """

    def __init__(
        self, inner: LLMBackend, faults: Sequence[Fault | None] | FaultPlan, *, hang_s: float = 3600.0
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self.endpoint = getattr(inner, "endpoint", inner.model)
        self.hang_s = hang_s
        self.injected: list[Fault] = []
        self.calls = 0
        self._plan = faults if callable(faults) else _sequence_plan(list(faults))

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        fault = self._plan(request, self.calls)
        self.calls += 1
        if fault is None:
            return await self.inner.complete(request, response_format=response_format)
        self.injected.append(fault)
        return await self._inject(fault, request)

    async def _inject(self, fault: Fault, request: LLMRequest) -> LLMReply:
        if fault in _TRANSIENT_REASON:
            retry_after = 0.0 if fault is Fault.RATE_LIMIT else None
            raise LLMTransientError(_TRANSIENT_REASON[fault], retry_after=retry_after)
        if fault is Fault.HANG:
            await asyncio.sleep(self.hang_s)
            raise LLMTransientError("no reply")
        if fault is Fault.FORMAT_REJECTED:
            raise LLMFormatRejectedError("HTTP 500: response_format not supported")
        return scripted_reply(request, _FAULTY_TEXT[fault], self.model)


def _sequence_plan(faults: list[Fault | None]) -> FaultPlan:
    def plan(request: LLMRequest, call_number: int) -> Fault | None:
        return faults[call_number] if call_number < len(faults) else None

    return plan


def random_faults(
    rate: float, *, kinds: Iterable[Fault] = (*TRANSIENT_FAULTS, *OUTPUT_FAULTS), seed: int = 0
) -> FaultPlan:
    """A plan that injects one of `kinds` into a `rate` share of calls, reproducibly for a given seed."""
    rng, choices = random.Random(seed), list(kinds)

    def plan(request: LLMRequest, call_number: int) -> Fault | None:
        return rng.choice(choices) if rng.random() < rate else None

    return plan


def always(fault: Fault) -> FaultPlan:
    """A plan that injects `fault` into every call (e.g. an endpoint that is down)."""
    return lambda request, call_number: fault
