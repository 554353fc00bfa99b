"""The one LLM client. Every LLM call in askwith goes through `LLMClient`.

It owns structured output (JSON schema, falling back to simpler JSON forms the endpoint accepts, a tolerant parse and
one repair re-ask), retries with backoff, a per-attempt time-out, the concurrency limit, token and latency
accounting and the optional response cache. The backend behind it is an OpenAI-compatible endpoint
(`OpenAIBackend`) or a scripted stand-in; both go through exactly this logic.

    client = LLMClient.from_settings(settings)
    result = await client.complete(LLMRequest(messages, purpose="think", json_schema=schema))
    result.data, result.call.prompt_tokens, client.totals
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from bot.errors import (
    LLMError,
    LLMFormatRejectedError,
    LLMNotConfiguredError,
    LLMOutputError,
    LLMRejectedError,
    LLMTransientError,
    LLMUnavailableError,
)
from bot.llm.cache import CachedAnswer, ResponseCache, cache_key
from bot.llm.retry import RetryPolicy
from bot.llm.structured import (
    FALLBACK_ORDER,
    JsonMode,
    ReplyProblem,
    check_reply,
    json_repair_messages,
    response_format,
    text_repair_messages,
)
from bot.llm.types import LLMBackend, LLMCallRecord, LLMReply, LLMRequest, LLMResult, LLMTotals
from bot.settings import Settings


log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[Any]]


class LLMClient:
    """Args:
    backend (`LLMBackend`): where requests go.
    concurrency (`int`): most requests in flight at once (waiting retries hold no slot).
    retry (`RetryPolicy`): retries and backoff for transient failures.
    attempt_timeout_s (`float`): one attempt taking longer counts as a transient failure.
    cache (`ResponseCache | None`): answer identical requests from disk.
    temperature (`float | None`): used when a request sets none.
    max_tokens (`int | None`): the reply-length cap used when a request sets none (None: the endpoint's own).
    sleep: the wait between retries (tests pass a recorder).
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        concurrency: int = 8,
        retry: RetryPolicy | None = None,
        attempt_timeout_s: float = 60.0,
        cache: ResponseCache | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.backend = backend
        self.retry = RetryPolicy() if retry is None else retry
        self.attempt_timeout_s = attempt_timeout_s
        self.cache = cache
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.totals = LLMTotals()
        self._sleep = sleep
        self._slots = asyncio.Semaphore(concurrency)
        self._json_mode_index = 0  # into FALLBACK_ORDER; only moves forward, when the endpoint refuses a form

    @classmethod
    def from_settings(cls, settings: Settings, *, backend: LLMBackend | None = None) -> LLMClient:
        """The client for the configured endpoint (or for `backend`, e.g. a scripted one, with the same settings).

        Raises LLMNotConfiguredError when no backend is given and ASKWITH_LLM_BASE_URL is empty.
        """
        if backend is None:
            if not settings.llm_configured:
                raise LLMNotConfiguredError()
            from bot.llm.openai_backend import OpenAIBackend

            backend = OpenAIBackend.from_settings(settings)
        retry = RetryPolicy(max_retries=settings.llm_max_retries, backoff_s=settings.llm_backoff_seconds)
        return cls(
            backend,
            concurrency=settings.llm_concurrency,
            retry=retry,
            attempt_timeout_s=settings.llm_timeout_seconds,
            cache=ResponseCache(settings.llm_cache_dir) if settings.llm_cache_dir else None,
            temperature=settings.llm_temperature,
            max_tokens=settings.llm_max_tokens or None,
        )

    @property
    def model(self) -> str:
        return self.backend.model

    @property
    def endpoint(self) -> str:
        return getattr(self.backend, "endpoint", self.backend.model)

    @property
    def json_mode(self) -> JsonMode:
        """The JSON form this client currently uses for structured requests."""
        return FALLBACK_ORDER[self._json_mode_index]

    async def aclose(self) -> None:
        close = getattr(self.backend, "aclose", None)
        if close is not None:
            await close()

    # ------------------------------------------------------------------ one logical call
    async def complete(self, request: LLMRequest) -> LLMResult:
        """Answer `request`. Raises LLMUnavailableError, LLMOutputError or LLMRejectedError, with `.call` set."""
        if request.temperature is None and self.temperature is not None:
            request = replace(request, temperature=self.temperature)
        if request.max_tokens is None and self.max_tokens is not None:
            request = replace(request, max_tokens=self.max_tokens)
        record = LLMCallRecord(purpose=request.purpose, model=self.model)
        started = time.perf_counter()
        try:
            return await self._complete(request, record)
        except LLMError as exc:
            record.error = str(exc)
            exc.call = record
            raise
        finally:
            record.latency_s = time.perf_counter() - started
            self.totals.add(record)

    async def _complete(self, request: LLMRequest, record: LLMCallRecord) -> LLMResult:
        key = cache_key(self.model, request) if self.cache else ""
        if self.cache and (hit := await self.cache.get(key)):
            record.cached, record.json_mode = True, hit.json_mode
            return LLMResult(hit.text, record, hit.data)
        if request.json_schema is None:
            result = await self._complete_text(request, record)
        else:
            result = await self._complete_json(request, record)
        if self.cache:
            await self.cache.put(key, CachedAnswer(result.text, result.data, record.json_mode))
        return result

    async def _complete_text(self, request: LLMRequest, record: LLMCallRecord) -> LLMResult:
        reply = await self._send(request, None, record)
        if reply.text.strip():
            return LLMResult(reply.text, record)
        record.repaired = True
        record.problems.append(ReplyProblem.EMPTY)
        retry = replace(request, messages=text_repair_messages(request, reply.text))
        reply = await self._send(retry, None, record)
        if not reply.text.strip():
            record.problems.append(ReplyProblem.EMPTY)
            raise LLMOutputError(f"The language model gave an empty answer to {request.purpose!r}, twice.")
        return LLMResult(reply.text, record)

    async def _complete_json(self, request: LLMRequest, record: LLMCallRecord) -> LLMResult:
        schema = request.json_schema or {}
        reply = await self._send_json(request, record)
        try:
            return LLMResult(reply.text, record, check_reply(reply.text, schema))
        except ReplyProblem as exc:
            problem = str(exc)
            record.problems.append(exc.kind)
        log.info("LLM %s reply unusable (%s); asking once more", request.purpose, problem)
        record.repaired = True
        repair = replace(request, messages=json_repair_messages(request, reply.text, problem))
        reply = await self._send_json(repair, record)
        try:
            return LLMResult(reply.text, record, check_reply(reply.text, schema))
        except ReplyProblem as exc:
            record.problems.append(exc.kind)
            error = LLMOutputError(
                f"The language model's answer to {request.purpose!r} was not in the shape asked for, "
                f"even after one repair request: {exc}."
            )
            error.reply = reply.text
            raise error from None

    # ------------------------------------------------------------------ JSON form fallback
    async def _send_json(self, request: LLMRequest, record: LLMCallRecord) -> LLMReply:
        while True:
            index = self._json_mode_index
            mode = FALLBACK_ORDER[index]
            record.json_mode = mode.value
            try:
                return await self._send(request, response_format(mode, request), record)
            except LLMFormatRejectedError as exc:
                self._fall_back_from(index, exc)

    def _fall_back_from(self, index: int, exc: LLMFormatRejectedError) -> None:
        if index + 1 >= len(FALLBACK_ORDER):
            raise LLMRejectedError(
                f"The language model at {self.endpoint} refused every form of JSON output ({exc})."
            ) from None
        # max(): concurrent calls may have moved on already; the choice only ever moves forward.
        self._json_mode_index = max(self._json_mode_index, index + 1)
        refused, now = FALLBACK_ORDER[index].value, self.json_mode.value
        log.info("LLM endpoint %s refused %s; using %s", self.endpoint, refused, now)

    # ------------------------------------------------------------------ retries
    async def _send(self, request: LLMRequest, fmt: dict[str, Any] | None, record: LLMCallRecord) -> LLMReply:
        failure: LLMTransientError | None = None
        for retry in range(self.retry.max_retries + 1):
            if failure is not None:
                await self._sleep(self.retry.delay(retry - 1, failure.retry_after))
            record.attempts += 1
            try:
                reply = await self._attempt(request, fmt)
            except LLMTransientError as exc:
                failure = exc
                log.warning("LLM %s attempt %d failed: %s", request.purpose, record.attempts, exc.reason)
                continue
            record.prompt_tokens += reply.prompt_tokens
            record.completion_tokens += reply.completion_tokens
            return reply
        raise LLMUnavailableError(
            f"The language model at {self.endpoint} is not answering ({failure.reason if failure else 'no reply'} "
            f"after {self.retry.max_retries + 1} attempts). Try again later, or check that the server is running."
        )

    async def _attempt(self, request: LLMRequest, fmt: dict[str, Any] | None) -> LLMReply:
        async with self._slots:
            try:
                async with asyncio.timeout(self.attempt_timeout_s):
                    return await self.backend.complete(request, response_format=fmt)
            except TimeoutError:
                raise LLMTransientError(f"no reply within {self.attempt_timeout_s:g} s") from None
