"""Consensus: every agent's stated answer and known rationales go into one LLM call that checks agreement, drops
conflicting rationales and writes the final answer citing the rationales it rests on.

An agent's statement is the answer its last act call gave from its plan (no extra call per agent). Agreement is
also checked in code (normalised statements), so the record shows both the model's and a literal judgement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bot.agents.context import AskContext
from bot.agents.conversation import ConversationResult
from bot.agents.outputs import CONSENSUS_SCHEMA
from bot.errors import LLMOutputError
from bot.llm.types import LLMCallRecord, LLMRequest
from bot.prompts import render_prompt


@dataclass(frozen=True)
class CitedRationale:
    key: str  # "<agent>.<rationale id>"
    agent: str  # handle of the member whose agent holds it
    need: str
    value: str
    source: str

    def line(self) -> str:
        return f"{self.key} | {self.need} | {self.value} | {self.source or '-'}"


@dataclass
class ConsensusOutcome:
    statements: list[tuple[str, str | None]]
    rationales: dict[str, CitedRationale]
    statements_agree: bool
    agreed: bool = False
    answer: str = ""
    answerable: bool = False
    cited: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    llm_call: LLMCallRecord | None = None

    @property
    def ratio(self) -> float | None:
        """The paper's consensus ratio: the share of known rationales the final answer keeps."""
        return len(self.cited) / len(self.rationales) if self.rationales else None

    def citations(self) -> list[tuple[str, str, str, str]]:
        """(need, value, agent, source) of every cited rationale, each fact once: from the agent whose member's
        memory holds it rather than from an agent that only heard it ("bob:m12")."""
        agents = {r.agent for r in self.rationales.values()}
        best: dict[tuple[str, str], CitedRationale] = {}
        for rationale in (self.rationales[k] for k in self.cited):
            key = (rationale.need.lower(), rationale.value.lower())
            relayed = rationale.source.split(":", 1)[0] in agents
            if key not in best or (not relayed and best[key].source.split(":", 1)[0] in agents):
                best[key] = rationale
        return [(r.need, r.value, r.agent, r.source) for r in best.values()]

    def dict(self) -> dict[str, Any]:
        return {
            "statements": [list(s) for s in self.statements],
            "rationales": {k: r.__dict__ for k, r in self.rationales.items()},
            "statements_agree": self.statements_agree,
            "agreed": self.agreed,
            "answer": self.answer,
            "answerable": self.answerable,
            "cited": self.cited,
            "dropped": self.dropped,
            "ratio": self.ratio,
        }


async def reach_consensus(ctx: AskContext, results: list[ConversationResult]) -> ConsensusOutcome:
    outcome = ConsensusOutcome(
        statements=_statements(results, ctx.requester),
        rationales=_rationales(results, ctx.requester),
        statements_agree=False,
    )
    outcome.statements_agree = _agree([s for _, s in outcome.statements if s])
    if not outcome.rationales and not any(s for _, s in outcome.statements):
        return outcome  # nothing to reason over: no LLM call, not answerable
    prompt = render_prompt(
        "agent",
        "consensus",
        question=ctx.question,
        statements=outcome.statements,
        rationales=[r.line() for r in outcome.rationales.values()],
    )
    chat = [
        {"role": "system", "content": render_prompt("agent", "consensus_system")},
        {"role": "user", "content": prompt},
    ]
    result = await ctx.llm.complete(
        LLMRequest(chat, purpose="consensus", json_schema=CONSENSUS_SCHEMA, schema_name="consensus")
    )
    outcome.llm_call = result.call
    _read_answer(outcome, result.data)
    return outcome


def _read_answer(outcome: ConsensusOutcome, data: Any) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
        raise LLMOutputError("the consensus answer has no 'answer' text")
    dropped = [str(k) for k in data.get("dropped") or [] if str(k) in outcome.rationales]
    cited = [str(k) for k in data.get("cited") or [] if str(k) in outcome.rationales and str(k) not in dropped]
    outcome.answer = data["answer"].strip()
    outcome.cited, outcome.dropped = list(dict.fromkeys(cited)), list(dict.fromkeys(dropped))
    outcome.agreed = bool(data.get("agreed", outcome.statements_agree))
    outcome.answerable = bool(data.get("answerable", True)) and bool(outcome.answer)


def _labels(results: list[ConversationResult], requester: str) -> list[tuple[str, ConversationResult, Any]]:
    """(label, conversation, agent) for every agent; the requester's agent has one copy per 1:1 conversation."""
    out = []
    for result in results:
        for agent in result.agents:
            partner = next((a.handle for a in result.agents if a is not agent), "")
            several = agent.handle == requester and len(results) > 1
            out.append((f"{agent.handle}/{partner}" if several else agent.handle, result, agent))
    return out


def _statements(results: list[ConversationResult], requester: str) -> list[tuple[str, str | None]]:
    return [(label, result.statement(agent)) for label, result, agent in _labels(results, requester)]


def _rationales(results: list[ConversationResult], requester: str) -> dict[str, CitedRationale]:
    found: dict[str, CitedRationale] = {}
    for label, _result, agent in _labels(results, requester):
        for r in agent.plan.known:
            key = f"{label}.{r.id}"
            found[key] = CitedRationale(key, agent.handle, r.need, r.value, r.source)
    return found


def _agree(statements: list[str]) -> bool:
    """Literal agreement, ignoring case, punctuation and cited sources ("[m12]")."""
    normalised = {re.sub(r"[^\w]+", " ", re.sub(r"\[[^\]]*\]", "", s.lower())).strip() for s in statements}
    return len(normalised) == 1
