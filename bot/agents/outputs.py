"""What the think, act, statement and consensus calls return: JSON schemas for the model and tolerant parsers for
its answers.

A parser accepts small slips (a missing optional field, a number as a string) and raises `LLMOutputError` when the
answer has the wrong shape, so a malformed answer becomes a recorded turn error, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from bot.agents.memory_tools import ClearParams, FuzzyParams, parse_clear, parse_fuzzy
from bot.agents.plan import Fact, Rationale
from bot.errors import LLMOutputError


_RATIONALE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "need": {"type": "string"},
        "status": {"type": "string", "enum": ["unknown", "known"]},
        "value": {"type": "string"},
        "source": {"type": "string"},
    },
    "required": ["id", "need", "status"],
}
_CLEAR = {
    "type": "object",
    "properties": {
        "keywords": {"type": "array", "items": {"type": "string"}},
        "sender": {"type": "string"},
        "channel": {"type": "string"},
        "since": {"type": "string"},
        "until": {"type": "string"},
        "context_window": {"type": "integer"},
        "limit": {"type": "integer"},
    },
    "required": ["keywords"],
}
_FUZZY = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "top_k": {"type": "integer"}},
    "required": ["text"],
}
MAX_RECRUITS = 3  # people one think call may bring in at once: their sub-conversations run side by side
_RECRUIT = {
    "type": "object",
    "properties": {
        "member": {"type": "string"},
        "question": {"type": "string"},
        "only_if_not_found": {"type": "boolean"},
    },
}


@cache
def think_schema(*, with_plan: bool) -> dict[str, Any]:
    """The think call's reply schema (one object per variant: callers only read it)."""
    properties: dict[str, Any] = {
        "clear": {"type": "array", "items": _CLEAR},
        "fuzzy": {"type": "array", "items": _FUZZY},
        # A list of requests; one as an object (or null) is a small slip the parser takes as it is.
        "recruit": {
            "anyOf": [{"type": "array", "items": _RECRUIT, "maxItems": MAX_RECRUITS}, _RECRUIT, {"type": "null"}]
        },
        "done": {"type": "boolean"},
        "cannot_progress": {"type": "boolean"},
    }
    if with_plan:
        properties = {"plan": {"type": "array", "items": _RATIONALE}, **properties}
    return {"type": "object", "properties": properties, "required": list(properties)[:1]}


ACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "utterance": {"type": "string"},
        "learned": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "status": {"type": "string", "enum": ["known", "unknown"]},
                    "value": {"type": "string"},
                    "source": {"type": "string"},
                },
                "required": ["id", "value"],
            },
        },
        "answer": {"type": ["string", "null"]},
    },
    "required": ["utterance"],
}

STATEMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "statement": {"type": "string"},
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "text": {"type": "string"},
                    "sources": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["id", "text", "sources"],
            },
        },
    },
    "required": ["statement", "claims"],
}

CONSENSUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "agreed": {"type": "boolean"},
        "cited": {"type": "array", "items": {"type": "string"}},
        "dropped": {"type": "array", "items": {"type": "string"}},
        "answerable": {"type": "boolean"},
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "sources": {"type": "array", "items": {"type": "string"}}},
                "required": ["text", "sources"],
            },
        },
        "disagreements": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["answer", "cited"],
}


@dataclass(frozen=True)
class RecruitRequest:
    member: str
    question: str
    only_if_not_found: bool = False  # decided after this turn's search: recruit only if it found nothing new

    def dict(self) -> dict[str, Any]:
        return {"member": self.member, "question": self.question, "only_if_not_found": self.only_if_not_found}


@dataclass
class ThinkOutput:
    plan: list[Rationale] | None  # None in plain prompting (no InfoNav)
    clear: list[ClearParams] = field(default_factory=list)
    fuzzy: list[FuzzyParams] = field(default_factory=list)
    recruits: list[RecruitRequest] = field(default_factory=list)
    done: bool = False
    cannot_progress: bool = False

    def dict(self) -> dict[str, Any]:
        return {
            "plan": None if self.plan is None else [r.dict() for r in self.plan],
            "clear": [p.dict() for p in self.clear],
            "fuzzy": [p.dict() for p in self.fuzzy],
            "recruit": [r.dict() for r in self.recruits],
            "done": self.done,
            "cannot_progress": self.cannot_progress,
        }


@dataclass
class ActOutput:
    utterance: str
    learned: list[Fact] = field(default_factory=list)
    answer: str | None = None  # the agent's answer from its plan, once it has one

    def dict(self) -> dict[str, Any]:
        return {
            "utterance": self.utterance,
            "learned": [dict(f.__dict__) for f in self.learned],
            "answer": self.answer,
        }


def parse_think(data: Any, *, with_plan: bool) -> ThinkOutput:
    data = _object(data, "think")
    plan = None
    if with_plan:
        raw_plan = data.get("plan")
        if not isinstance(raw_plan, list):
            raise LLMOutputError("the think answer has no 'plan' list")
        plan = [Rationale.from_dict(r) for r in raw_plan if isinstance(r, dict)]
    return ThinkOutput(
        plan=plan,
        clear=[parse_clear(q) for q in _list(data.get("clear"), "clear")],
        fuzzy=[parse_fuzzy(q) for q in _list(data.get("fuzzy"), "fuzzy")],
        recruits=parse_recruits(data.get("recruit")),
        done=bool(data.get("done", False)),
        cannot_progress=bool(data.get("cannot_progress", False)),
    )


def parse_act(data: Any) -> ActOutput:
    data = _object(data, "act")
    utterance = data.get("utterance")
    if not isinstance(utterance, str) or not utterance.strip():
        raise LLMOutputError("the act answer has no 'utterance' text")
    learned = []
    for raw in _list(data.get("learned"), "learned"):
        if isinstance(raw, dict) and raw.get("id") and raw.get("value"):
            status = "unknown" if str(raw.get("status") or "known").lower() == "unknown" else "known"
            learned.append(Fact(str(raw["id"]), str(raw["value"]), str(raw.get("source") or ""), status))
    answer = data.get("answer")
    return ActOutput(utterance.strip(), learned, str(answer).strip() if answer else None)


def _object(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise LLMOutputError(f"the {what} answer must be a JSON object")
    return data


def _list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise LLMOutputError(f"'{name}' must be a list")
    return value


def parse_recruits(raw: Any) -> list[RecruitRequest]:
    """Whom the think call brings in: a list of requests, or one as an object; each member once, the first
    `MAX_RECRUITS` kept."""
    items = raw if isinstance(raw, list) else [raw]
    found: dict[str, RecruitRequest] = {}
    for item in items:
        if not isinstance(item, dict) or not str(item.get("member") or "").strip().lstrip("@"):
            continue
        member = str(item["member"]).strip().lstrip("@")
        question = str(item.get("question") or "").strip()
        found.setdefault(member, RecruitRequest(member, question, bool(item.get("only_if_not_found", False))))
    return list(found.values())[:MAX_RECRUITS]


def parse_statement(data: Any) -> ActOutput:
    """A side's closing statement, shaped like an act answer (so the share screen reads it the same way): the
    statement is the utterance, each claim a fact for its rationale citing its sources."""
    data = _object(data, "statement")
    statement = data.get("statement")
    if not isinstance(statement, str) or not statement.strip():
        raise LLMOutputError("the statement answer has no 'statement' text")
    claims = []
    for raw in _list(data.get("claims"), "claims"):
        if isinstance(raw, dict) and raw.get("id") and raw.get("text"):
            sources = raw.get("sources") or []
            source = ", ".join(str(s) for s in sources) if isinstance(sources, list) else str(sources)
            claims.append(Fact(str(raw["id"]), str(raw["text"]), source))
    return ActOutput(statement.strip(), claims, None)
