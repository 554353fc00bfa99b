"""The backend for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server), via `openai.AsyncOpenAI`.

One `AsyncOpenAI` per backend, with the library's own retries off: `LLMClient` owns retries, so attempts are
counted and accounted in one place. Errors are translated into askwith's: transient (429, 5xx, time-out,
connection) → `LLMTransientError`; a refused `response_format` → `LLMFormatRejectedError`; anything else →
`LLMConfigurationError` when the endpoint refuses the setup itself (400, 401, 403, 404, out of quota: the ask
cannot go on), anything else → `LLMRejectedError`; both name the endpoint and model. A reply the library cannot read
(a body cut off mid-JSON, a dropped stream, an unexpected shape) is transient too: it is retried, and an ask that
never gets a readable reply fails with the "model unavailable" text instead of a traceback. The API key never
appears in a message.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import openai

from bot.errors import (
    LLMConfigurationError,
    LLMError,
    LLMFormatRejectedError,
    LLMRejectedError,
    LLMTransientError,
)
from bot.llm.local_server import stopped_server
from bot.llm.tokens import count_tokens
from bot.llm.types import LLMReply, LLMRequest
from bot.settings import Settings


# A refusal that names one of these is about the response_format we sent, so a simpler form may work. llama.cpp's
# Python server answers HTTP 500 (a wrapped validation error naming response_format) where others answer 400/422.
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|schema|grammar", re.IGNORECASE)
_FORMAT_STATUSES = {400, 422, 500, 501}
_TRANSIENT_STATUSES = {408, 409, 425, 429}
# The endpoint refuses how it is called (request shape, key, permissions, model or route): every call will fail alike.
_CONFIGURATION_STATUSES = {400, 401, 403, 404}
# What the library lets through when a 200 reply cannot be read: a truncated or non-JSON body (ValueError), a stream
# cut mid-body (httpx), a body of another shape (pydantic's errors are ValueErrors; attribute and type errors).
_UNREADABLE = (ValueError, TypeError, AttributeError, KeyError, IndexError, httpx.HTTPError)
# Request text a server quotes back in its refusal: pydantic's "input_value=...", or any long quoted string.
_INPUT_VALUE = re.compile(r"input_value=.*?(?=, input_type=|\]|$)", re.DOTALL)
_LONG_QUOTE = re.compile(r"""(['"])(?:(?!\1).){40,}?\1""", re.DOTALL)
# Local servers accept any key, but the openai library insists on one.
_PLACEHOLDER_KEY = "no-key"


class OpenAIBackend:
    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout_s: float = 60.0) -> None:
        self.endpoint = base_url
        self.model = model
        self.timeout_s = timeout_s
        self._secret = api_key  # kept only to scrub it from server messages
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or _PLACEHOLDER_KEY, timeout=timeout_s, max_retries=0
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIBackend:
        return cls(
            base_url=settings.require("llm_base_url"),
            model=settings.llm_model,
            api_key=settings.llm_api_key,
            timeout_s=settings.llm_timeout_seconds,
        )

    def __repr__(self) -> str:
        return f"OpenAIBackend(endpoint={self.endpoint!r}, model={self.model!r})"

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        try:
            response = await self._client.chat.completions.create(**self._arguments(request, response_format))
        except openai.OpenAIError as exc:
            # `from None`: the library's exception text may quote request details; ours is scrubbed.
            raise self._translate(exc) from None
        except _UNREADABLE as exc:
            raise self._unreadable(exc) from None
        try:
            return self._reply(request, response)
        except _UNREADABLE as exc:
            raise self._unreadable(exc) from None

    def _unreadable(self, exc: Exception) -> LLMTransientError:
        return LLMTransientError(f"unreadable reply from {self.endpoint} ({type(exc).__name__})")

    def _arguments(self, request: LLMRequest, response_format: dict[str, Any] | None) -> dict[str, Any]:
        arguments: dict[str, Any] = {"model": self.model, "messages": request.messages}
        if request.temperature is not None:
            arguments["temperature"] = request.temperature
        if request.max_tokens is not None:
            arguments["max_tokens"] = request.max_tokens
        if response_format is not None:
            arguments["response_format"] = response_format
        return arguments

    def _reply(self, request: LLMRequest, response: Any) -> LLMReply:
        choices = getattr(response, "choices", None) or []
        text = (choices[0].message.content or "") if choices else ""
        usage = getattr(response, "usage", None)
        if usage is not None and usage.prompt_tokens is not None:
            return LLMReply(text, usage.prompt_tokens, usage.completion_tokens or 0, self.model)
        prompt = "".join(str(message.get("content", "")) for message in request.messages)
        return LLMReply(text, count_tokens(prompt), count_tokens(text) if text else 0, self.model)

    # ------------------------------------------------------------------ errors
    def _translate(self, exc: openai.OpenAIError) -> LLMError:
        if isinstance(exc, openai.APITimeoutError):
            return LLMTransientError(f"no reply within {self.timeout_s:g} s")
        if isinstance(exc, openai.APIConnectionError):
            if (stopped := stopped_server(self.endpoint)) is not None:  # no retry can help: say why, name the log
                return LLMConfigurationError(f"The language model is unavailable: {stopped}.", reason=stopped)
            return LLMTransientError("could not connect")
        if isinstance(exc, openai.APIStatusError):
            return self._translate_status(exc.status_code, self._detail(exc), exc.response.headers)
        return LLMRejectedError(f"The language model at {self.endpoint} gave an unusable response for {self.model!r}.")

    def _translate_status(self, status: int, detail: str, headers: Any) -> LLMError:
        if status in _FORMAT_STATUSES and _FORMAT_WORDS.search(detail):
            return LLMFormatRejectedError(f"HTTP {status}: {detail}")
        if status == 429 and "quota" in detail.lower():  # out of credit: waiting will not help
            return self._misconfigured(status, "the account is out of quota")
        if status in _TRANSIENT_STATUSES or status >= 500:
            return LLMTransientError(f"HTTP {status}", retry_after=retry_after_seconds(headers))
        if status in _CONFIGURATION_STATUSES:
            return self._misconfigured(status, _hint(status, detail))
        return LLMRejectedError(self._refused(status, _hint(status, detail)))

    def _refused(self, status: int, hint: str) -> str:
        model = f"model {self.model!r}"
        return f"The language model at {self.endpoint} refused the request for {model} (HTTP {status}: {hint})."

    def _misconfigured(self, status: int, hint: str) -> LLMConfigurationError:
        return LLMConfigurationError(self._refused(status, hint), reason=f"HTTP {status}: {hint}")

    def _detail(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        text = str(message if message is not None else (body if body is not None else exc.message))
        if self._secret:
            text = text.replace(self._secret, "***")
        return _without_request_text(text)[:300]


def _without_request_text(detail: str) -> str:
    """A server's refusal without the parts of the request it quotes back (validation errors print the offending
    input, which may be a member's messages): the detail reaches the turn's error, the log and the requester."""
    detail = _INPUT_VALUE.sub("input_value=…", detail)
    return _LONG_QUOTE.sub(lambda m: f"{m[1]}…{m[1]}", detail)


def _hint(status: int, detail: str) -> str:
    if status == 401:
        return "the API key was not accepted; check ASKWITH_LLM_API_KEY"
    if status == 403:
        return "access denied for this key; check ASKWITH_LLM_API_KEY and the model's permissions"
    if status == 404:
        return "no such model or route; check ASKWITH_LLM_MODEL and that ASKWITH_LLM_BASE_URL ends in /v1"
    return detail or "no details given"


def retry_after_seconds(headers: Any) -> float | None:
    """The server's requested wait: `retry-after-ms`, else `retry-after` in seconds; None when absent or a date."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name) if headers is not None else None
        if raw is None:
            continue
        try:
            return max(float(raw) * scale, 0.0)
        except ValueError:
            continue
    return None
