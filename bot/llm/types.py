"""Plain data passed through the LLM seam."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


Messages = list[dict[str, str]]  # OpenAI chat format: [{"role": "system"|"user"|"assistant", "content": "..."}]


@dataclass(frozen=True)
class LLMRequest:
    messages: Messages
    purpose: str  # what the call is for ("think", "act", "summarize_session", ...): recorded with the call
    json_schema: dict[str, Any] | None = None  # ask for JSON matching this schema
    schema_name: str = "output"
    temperature: float | None = None
    max_tokens: int | None = None


@dataclass(frozen=True)
class LLMReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str


@dataclass
class LLMCallRecord:
    """Everything worth knowing about one logical call (all its attempts)."""

    purpose: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 0
    cached: bool = False
    json_mode: str = "text"  # text | json_schema | json_object_schema | json_object | prompt_only
    repaired: bool = False
    error: str | None = None
    # Each unusable reply met on the way, by kind (empty | invalid_json | wrong_schema), in order: with `repaired`
    # and `error` this says how every malformed output was handled.
    problems: list[str] = field(default_factory=list)
    # The rendered messages the model was sent, set by callers that keep them for transcripts (what the model saw).
    prompt: Messages = field(default_factory=list)

    def dict(self) -> dict[str, Any]:
        return {**self.__dict__, "problems": list(self.problems), "prompt": [dict(m) for m in self.prompt]}


@dataclass
class LLMResult:
    text: str
    call: LLMCallRecord
    data: dict[str, Any] | None = None  # parsed JSON when a schema was asked for


@dataclass
class LLMTotals:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0
    by_purpose: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    cached: int = 0
    repaired: int = 0
    latency_s: float = 0.0
    # Calls that met an unusable reply, by its kind and what became of the call: "invalid_json -> repaired",
    # "wrong_schema -> failed after repair", ...
    malformed: dict[str, int] = field(default_factory=dict)

    def add(self, record: LLMCallRecord) -> None:
        self.calls += 1
        self.prompt_tokens += record.prompt_tokens
        self.completion_tokens += record.completion_tokens
        self.failures += record.error is not None
        self.by_purpose[record.purpose] = self.by_purpose.get(record.purpose, 0) + 1
        self.attempts += record.attempts
        self.cached += record.cached
        self.repaired += record.repaired
        self.latency_s += record.latency_s
        if record.problems:
            key = f"{record.problems[0]} -> {'failed after repair' if record.error else 'repaired'}"
            self.malformed[key] = self.malformed.get(key, 0) + 1


class LLMBackend(Protocol):
    """Where requests go: an OpenAI-compatible endpoint, or a scripted stand-in in tests and benchmarks.

    `response_format` is the OpenAI `response_format` value to send (None for plain text). Transient failures raise
    `LLMTransientError`; a request the endpoint refuses because of its response_format raises
    `LLMFormatRejectedError`; a request refused for good (bad key, unknown model) raises `LLMRejectedError`.
    `endpoint` names where the model lives in error messages (a base URL; never a key).
    """

    model: str
    endpoint: str

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply: ...
