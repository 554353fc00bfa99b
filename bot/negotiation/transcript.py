"""What a negotiation leaves behind: typed turn records and the result.

The LLM message list of each agent is derived from these records (`Turn.to_messages`), never kept on the side, so a
stored negotiation can be replayed and shown exactly as each agent saw it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.base.prompts import render_prompt
from bot.llm.types import LLMCallRecord, Messages
from bot.negotiation.model import Allocation, Proposal, Scenario
from bot.negotiation.protocol import Move


class Phase(StrEnum):
    CONSIDER = "consider"  # turn 1: private reflection
    MOVE = "move"  # turns 2..: proposal, accept or reject


class Outcome(StrEnum):
    AGREEMENT = "agreement"
    NO_AGREEMENT = "no_agreement"
    ERROR = "error"


@dataclass(frozen=True)
class NegotiationOptions:
    utility_aware: bool = True  # the utility-aware prompt (baseline: off)
    validate: bool = True  # per-turn proposal validation (baseline: off)
    max_turns: int = 10
    max_invalid_per_turn: int = 5  # the 5th invalid proposal within one turn ends the run as Error

    @property
    def variant(self) -> str:
        if not self.utility_aware:
            return "no-utility-prompt" if self.validate else "no-utility-prompt+no-validation"
        return "proposed" if self.validate else "no-validation"

    def dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Attempt:
    """One answer of an agent within a turn (a turn has several when proposals are invalid and retried)."""

    reply: str  # what the model wrote (the JSON answer), shown back to it as its own message
    message: str  # the tagged move inside the reply: the only part the counterpart may see
    estimate: float | None  # the agent's estimate of the counterpart's utility
    estimate_target: float | None  # the counterpart's true utility of the allocation the estimate is about
    call: LLMCallRecord
    move: Move | None = None  # parsed, ids made canonical; None when it did not parse
    feedback: str = ""  # validation feedback; empty = valid (or not checked)

    @property
    def valid(self) -> bool:
        return not self.feedback

    def dict(self) -> dict[str, Any]:
        return {
            "reply": self.reply,
            "message": self.message,
            "estimate": self.estimate,
            "estimate_target": self.estimate_target,
            "move": self.move.dict() if self.move else None,
            "feedback": self.feedback,
            "call": self.call.dict(),
        }


@dataclass
class Turn:
    number: int
    agent: str
    phase: Phase
    instruction: str  # the user message that opened the turn
    attempts: list[Attempt] = field(default_factory=list)
    delivered: bool = False

    @property
    def final(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def invalid_attempts(self) -> int:
        return sum(1 for attempt in self.attempts if not attempt.valid)

    def to_messages(self, viewer: str) -> Messages:
        """This turn as `viewer` saw it: all of it for the agent who moved, the delivered move for the other."""
        if viewer != self.agent:
            if not self.delivered or self.final is None:
                return []
            text = render_prompt(
                "negotiation", "counterpart_move", counterpart=self.agent, utterance=self.final.message
            )
            return [{"role": "user", "content": text}]
        messages: Messages = [{"role": "user", "content": self.instruction}]
        for attempt in self.attempts:
            messages.append({"role": "assistant", "content": attempt.reply})
            if attempt.feedback:
                messages.append({"role": "user", "content": attempt.feedback})
        return messages

    def dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "agent": self.agent,
            "phase": self.phase.value,
            "instruction": self.instruction,
            "delivered": self.delivered,
            "attempts": [attempt.dict() for attempt in self.attempts],
        }


@dataclass
class NegotiationResult:
    scenario: Scenario
    options: NegotiationOptions
    turns: list[Turn]
    outcome: Outcome
    allocation: Allocation  # the final allocation: the agreed trade applied, or the initial allocation
    turns_played: int
    agreed: Proposal | None = None
    proposer: str | None = None  # who made the agreed proposal
    error: str = ""
    utilities: tuple[float, float] = (0.0, 0.0)
    l2_to_pareto: float = 0.0
    model: str = ""

    @property
    def social_welfare(self) -> float:
        return sum(self.utilities)

    @property
    def calls(self) -> list[LLMCallRecord]:
        return [attempt.call for turn in self.turns for attempt in turn.attempts]

    def tokens(self) -> tuple[int, int]:
        return sum(c.prompt_tokens for c in self.calls), sum(c.completion_tokens for c in self.calls)

    def metrics(self) -> dict[str, Any]:
        prompt_tokens, completion_tokens = self.tokens()
        return {
            "outcome": self.outcome.value,
            "turns": self.turns_played,
            "u_a": self.utilities[0],
            "u_b": self.utilities[1],
            "sw": self.social_welfare,
            "l2": self.l2_to_pareto,
            "error": self.error,
            "llm_calls": len(self.calls),
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        }

    def dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.id,
            "variant": self.options.variant,
            "options": self.options.dict(),
            "agreed": self.agreed.dict() if self.agreed else None,
            "proposer": self.proposer,
            "allocation": self.allocation.dict(),
            "model": self.model,
            **self.metrics(),
            "turns_log": [turn.dict() for turn in self.turns],
        }
