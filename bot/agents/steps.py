"""A conversation's memory as typed steps (smolagents style). Each step has `to_messages()` and `dict()`.

The LLM message list is derived from the steps, never kept separately: `history_messages(steps, viewpoint)` is the
whole derivation. Steps serialise to the record (`dict()`) and load back (`from_dict()`), so a conversation can be
replayed and a killed ask resumed from its last saved turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.agents.memory_tools import QueryRecord
from bot.agents.outputs import ActOutput, RecruitRequest, ThinkOutput
from bot.agents.plan import Fact, Plan, PlanUpdate, Rationale
from bot.llm.types import LLMCallRecord, Messages
from bot.prompts import render_prompt


HISTORY_TURNS = 4  # utterances an agent sees; what older ones said lives on in its plan
UTTERANCE_CHARS = 600  # an utterance is trimmed to this in prompts (compact prompts keep asks cheap)


@dataclass
class TaskStep:
    """The question that opened the conversation."""

    question: str
    asker: str  # handle of the member whose agent asks
    participants: list[str]  # handles of both agents' members, asker first

    def to_messages(self, viewpoint: str) -> Messages:
        text = render_prompt("agent", "task", question=self.question, asker=self.asker, me=viewpoint)
        return [{"role": "user", "content": text}]

    def dict(self) -> dict[str, Any]:
        return {"question": self.question, "asker": self.asker, "participants": list(self.participants)}


@dataclass
class RecruitOutcome:
    """What came of bringing in a third member's agent."""

    request: RecruitRequest
    status: str  # done | refused
    reason: str = ""  # refusal: ablation | depth | cycle | present | not_contact | unknown | unavailable | budget
    conclusion: str = ""
    conversation_id: int | None = None

    def dict(self) -> dict[str, Any]:
        return {**self.__dict__, "request": self.request.dict()}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RecruitOutcome:
        return cls(**{**raw, "request": RecruitRequest(**raw["request"])})


@dataclass
class TurnStep:
    """One agent's turn: observe -> think -> retrieve -> act, and everything that happened in it."""

    index: int
    agent: str  # handle of the member whose agent spoke
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    latency_s: float = 0.0
    think: ThinkOutput | None = None
    queries: list[QueryRecord] = field(default_factory=list)
    facts: list[str] | None = None  # with a private model: what it extracted from the hits for the act call
    recruit: RecruitOutcome | None = None
    act: ActOutput | None = None
    utterance: str = ""  # what the other agents heard (after privacy)
    plan: Plan | None = None  # snapshot after the turn; None in plain prompting
    update: PlanUpdate = field(default_factory=PlanUpdate)
    shared_facts: bool = False  # the utterance carries facts from the member's memory
    approval: str | None = None  # approved | denied | timeout, when the member was asked
    declined: bool = False  # the agent did not take part (policy never, or a share was refused)
    error: dict[str, Any] | None = None
    llm_calls: list[LLMCallRecord] = field(default_factory=list)

    @property
    def answer(self) -> str | None:
        return self.act.answer if self.act and not self.declined else None

    @property
    def cannot_progress(self) -> bool:
        return self.declined or bool(self.think and self.think.cannot_progress)

    def to_messages(self, viewpoint: str) -> Messages:
        if not self.utterance:
            return []
        utterance = _trim(self.utterance)
        if self.agent == viewpoint:
            return [{"role": "assistant", "content": utterance}]
        text = render_prompt("agent", "heard", speaker=self.agent, utterance=utterance)
        return [{"role": "user", "content": text}]

    def dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "agent": self.agent,
            "started_at": self.started_at.isoformat(),
            "latency_s": self.latency_s,
            "think": self.think.dict() if self.think else None,
            "queries": [q.dict() for q in self.queries],
            "facts": self.facts,
            "recruit": self.recruit.dict() if self.recruit else None,
            "act": self.act.dict() if self.act else None,
            "utterance": self.utterance,
            "plan": self.plan.dict() if self.plan is not None else None,
            "update": self.update.dict(),
            "shared_facts": self.shared_facts,
            "approval": self.approval,
            "declined": self.declined,
            "error": self.error,
            "llm_calls": [c.dict() for c in self.llm_calls],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TurnStep:
        """Load a saved turn (enough to resume the conversation; the think output is kept as recorded data)."""
        act = raw.get("act")
        return cls(
            index=raw["index"],
            agent=raw["agent"],
            started_at=datetime.fromisoformat(raw["started_at"]),
            latency_s=raw.get("latency_s", 0.0),
            think=_think_from_dict(raw.get("think")),
            queries=[QueryRecord.from_dict(q) for q in raw.get("queries", [])],
            facts=raw.get("facts"),
            recruit=RecruitOutcome.from_dict(raw["recruit"]) if raw.get("recruit") else None,
            act=ActOutput(act["utterance"], [Fact(**f) for f in act["learned"]], act["answer"]) if act else None,
            utterance=raw.get("utterance", ""),
            plan=Plan.from_dicts(raw["plan"]) if raw.get("plan") is not None else None,
            update=PlanUpdate(**raw.get("update", {})),
            shared_facts=raw.get("shared_facts", False),
            approval=raw.get("approval"),
            declined=raw.get("declined", False),
            error=raw.get("error"),
            llm_calls=[LLMCallRecord(**c) for c in raw.get("llm_calls", [])],
        )


def _think_from_dict(raw: dict[str, Any] | None) -> ThinkOutput | None:
    if raw is None:
        return None
    plan = None if raw.get("plan") is None else [Rationale.from_dict(r) for r in raw["plan"]]
    recruit = RecruitRequest(**raw["recruit"]) if raw.get("recruit") else None
    # Queries are kept in TurnStep.queries; the think output only needs its decisions to resume.
    return ThinkOutput(plan, [], [], recruit, raw.get("done", False), raw.get("cannot_progress", False))


def _trim(text: str) -> str:
    return text if len(text) <= UTTERANCE_CHARS else text[: UTTERANCE_CHARS - 1] + "…"


def history_messages(task: TaskStep, turns: list[TurnStep], viewpoint: str) -> Messages:
    """The conversation as `viewpoint`'s agent sees it: the task, then the last HISTORY_TURNS utterances."""
    messages = task.to_messages(viewpoint)
    for step in turns[-HISTORY_TURNS:]:
        messages.extend(step.to_messages(viewpoint))
    return messages
