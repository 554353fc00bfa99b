"""A conversation's memory as typed steps (smolagents style). Each step has `to_messages()` and `dict()`.

The LLM message list is derived from the steps, never kept separately: `history_messages(steps, viewpoint)` is the
whole derivation. Steps serialise to the record (`dict()`) and load back (`from_dict()`), so a conversation can be
replayed and a killed ask resumed from its last saved turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.agents.evidence import EvidenceLine
from bot.agents.memory_tools import QueryRecord
from bot.agents.outputs import ActOutput, RecruitRequest, ThinkOutput, parse_recruits
from bot.agents.plan import Fact, Plan, PlanUpdate, Rationale
from bot.base.prompts import render_prompt
from bot.llm.tokens import count_tokens
from bot.llm.types import LLMCallRecord, Messages


WHOLE_MESSAGES = 2  # the latest utterances of a talk every prompt shows whole
BRIEF_CHARS = 160  # how much of an older utterance it shows


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
    evidence: list[EvidenceLine] = field(default_factory=list)  # the lines the third agent passed on

    def dict(self) -> dict[str, Any]:
        return {**self.__dict__, "request": self.request.dict(), "evidence": [e.dict() for e in self.evidence]}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RecruitOutcome:
        evidence = [EvidenceLine.from_dict(e) for e in raw.get("evidence", [])]
        return cls(**{**raw, "request": RecruitRequest(**raw["request"]), "evidence": evidence})


@dataclass
class TurnStep:
    """One agent's turn: observe -> think -> retrieve -> act, and everything that happened in it."""

    index: int
    agent: str  # handle of the member whose agent spoke
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    latency_s: float = 0.0
    think: ThinkOutput | None = None
    queries: list[QueryRecord] = field(default_factory=list)
    evidence: list[EvidenceLine] = field(default_factory=list)  # lines this turn added to the agent's notebook
    released: list[str] = field(default_factory=list)  # notebook ids this turn passed on to the other agents
    published: list[dict[str, str]] = field(default_factory=list)  # what it put on the ask's blackboard
    whole_history: bool = False  # the agent read its member's whole history in this turn
    cuts: dict[str, int] = field(default_factory=dict)  # prompt -> lines the budget left out (said in the prompt)
    facts: list[str] | None = None  # with a private model: what it extracted from the hits for the act call
    recruits: list[RecruitOutcome] = field(default_factory=list)  # sub-conversations it opened, side by side
    act: ActOutput | None = None
    utterance: str = ""  # what the other agents heard (after privacy)
    plan: Plan | None = None  # snapshot after the turn; None in plain prompting
    update: PlanUpdate = field(default_factory=PlanUpdate)
    shared_facts: bool = False  # the utterance carries facts from the member's memory
    approval: str | None = None  # approved | denied | timeout, when the member was asked
    sharing: dict[str, Any] | None = None  # what the share screen dropped, cut and counted (bot.consent.screen)
    declined: bool = False  # the agent did not take part (policy never, or a share was refused)
    error: dict[str, Any] | None = None
    llm_calls: list[LLMCallRecord] = field(default_factory=list)

    @property
    def answer(self) -> str | None:
        return self.act.answer if self.act and not self.declined else None

    @property
    def approval_key(self) -> str:
        return f"t{self.index}"

    @property
    def sent(self) -> bool:
        """Its outbox let it out (its record says so): the only turns others may read anything of."""
        record = (self.sharing or {}).get("sent")
        return isinstance(record, dict) and record.get("verdict") == "sent"

    @property
    def cannot_progress(self) -> bool:
        return self.declined or bool(self.think and self.think.cannot_progress)

    def forget_unsent(self, placeholder: str) -> None:
        """Strip from the record what the agent wrote or read in this turn but did not let out (a withheld or failed
        turn): plan values, search words (in the think output and the search records), the private model's facts,
        the lines it read, the prompts (`placeholder` instead), and the questions for members it did not bring in.
        What did leave stays: the questions sent to members brought in, and what their agents passed back."""
        self.facts = None if self.facts is None else []
        if self.think is not None:
            if self.think.plan is not None:
                self.think.plan = [Rationale(r.id, r.need) for r in self.think.plan]
            self.think.clear, self.think.fuzzy = [], []  # the searches ran: their records are `queries`
            self.think.recruits = [outcome.request for outcome in self.recruits]  # as sent ("" when not)
        for query in self.queries:  # its words may come from a line read: only the search's shape and counts stay
            query.params = {k: v for k, v in query.params.items() if v is None or isinstance(v, (bool, int, float))}
        self.evidence = []  # the lines stay in the agent's own notebook (its member's memory), not in the record
        for call in self.llm_calls:
            call.prompt = [{"role": "system", "content": placeholder}] if call.prompt else []

    def to_messages(self, viewpoint: str, *, brief: bool = False) -> Messages:
        if not self.utterance:
            return []
        # Kept whole, or (an older message, `brief`) its opening: its facts are in the plans by now.
        utterance = self.utterance if not brief or len(self.utterance) <= BRIEF_CHARS else self.utterance[:BRIEF_CHARS]
        if utterance != self.utterance:
            utterance += "…"
        if self.agent == viewpoint:  # its own words may quote chat text too: data as well
            return [{"role": "assistant", "content": render_prompt("agent", "said", utterance=utterance)}]
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
            "evidence": [e.dict() for e in self.evidence],
            "released": list(self.released),
            "published": list(self.published),
            "whole_history": self.whole_history,
            "cuts": dict(self.cuts),
            "facts": self.facts,
            "recruits": [r.dict() for r in self.recruits],
            "act": self.act.dict() if self.act else None,
            "utterance": self.utterance,
            "plan": self.plan.dict() if self.plan is not None else None,
            "update": self.update.dict(),
            "shared_facts": self.shared_facts,
            "approval": self.approval,
            "sharing": self.sharing,
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
            evidence=[EvidenceLine.from_dict(e) for e in raw.get("evidence", [])],
            released=list(raw.get("released", [])),
            published=list(raw.get("published", [])),
            whole_history=raw.get("whole_history", False),
            cuts=dict(raw.get("cuts", {})),
            facts=raw.get("facts"),
            recruits=[RecruitOutcome.from_dict(r) for r in recruits_of(raw)],
            act=ActOutput(act["utterance"], [Fact(**f) for f in act["learned"]], act["answer"]) if act else None,
            utterance=raw.get("utterance", ""),
            plan=Plan.from_dicts(raw["plan"]) if raw.get("plan") is not None else None,
            update=PlanUpdate(**raw.get("update", {})),
            shared_facts=raw.get("shared_facts", False),
            approval=raw.get("approval"),
            sharing=raw.get("sharing"),
            declined=raw.get("declined", False),
            error=raw.get("error"),
            llm_calls=[LLMCallRecord(**c) for c in raw.get("llm_calls", [])],
        )


@dataclass
class StatementStep:
    """A colleague's side of the consensus: its agent's closing statement over its own notebook (one LLM call, after
    the talk), screened and approved like a turn before it crosses (`bot.agents.statements`)."""

    index: int  # the conversation's turn count when it was written (keys its approval)
    agent: str  # handle of the member whose agent states it
    act: ActOutput | None = None  # the statement (utterance) and its claims (facts), after the share screen
    utterance: str = ""  # what crosses to the requester's side
    shown: list[str] = field(default_factory=list)  # notebook ids its prompt showed
    cut: int = 0  # notebook lines the budget left out (said in the prompt)
    shared_facts: bool = False  # it carries facts from the member's memory (an "ask me" member approves it)
    approval: str | None = None  # approved | denied | timeout, when the member was asked
    sharing: dict[str, Any] | None = None  # what the share screen dropped, cut and counted
    released: list[str] = field(default_factory=list)  # notebook ids it passed on to consensus
    declined: bool = False  # not approved: nothing of it crosses
    crossed: bool = False  # screened (a claim kept) and, for an "ask me" member, approved: it reaches consensus
    error: dict[str, Any] | None = None
    llm_calls: list[LLMCallRecord] = field(default_factory=list)
    recruits: list[RecruitOutcome] = field(default_factory=list)  # always empty: a statement brings nobody in
    approval_key: str = "statement"

    def text(self) -> str | None:
        """The statement as the final consensus reads it (its kept claims' lines reach consensus as evidence)."""
        return self.utterance if self.crossed else None

    def dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "agent": self.agent, "act": self.act.dict() if self.act else None,
            "utterance": self.utterance, "shown": list(self.shown), "cut": self.cut, "shared_facts": self.shared_facts,
            "approval": self.approval, "sharing": self.sharing, "released": list(self.released),
            "declined": self.declined, "crossed": self.crossed, "error": self.error,
            "llm_calls": [c.dict() for c in self.llm_calls],
        }  # fmt: skip

    def crossed_dict(self) -> dict[str, Any]:
        """The statement as the requester's consensus record keeps it: what crossed and the outbox's record, never its
        prompts (its member's notebook) nor, when it did not cross, its screened text."""
        data = self.dict()
        data["llm_calls"] = [{**call, "prompt": []} for call in data["llm_calls"]]
        if not self.crossed:
            data["act"], data["utterance"] = None, ""
        return data


def _think_from_dict(raw: dict[str, Any] | None) -> ThinkOutput | None:
    if raw is None:
        return None
    plan = None if raw.get("plan") is None else [Rationale.from_dict(r) for r in raw["plan"]]
    recruits = parse_recruits(raw.get("recruit"))
    # Queries are kept in TurnStep.queries; the think output only needs its decisions to resume.
    return ThinkOutput(plan, [], [], recruits, raw.get("done", False), raw.get("cannot_progress", False))


def sent_plan(turns: list[TurnStep], handle: str) -> Plan:
    """The plan `handle`'s agent last let out through its outbox: its snapshot after its latest sent turn (empty when
    none was sent). A failed or withheld turn's plan never left, whatever the agent holds."""
    last = next((t for t in reversed(turns) if t.agent == handle and t.sent and t.plan is not None), None)
    return last.plan.copy() if last is not None and last.plan is not None else Plan()


def recruits_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A saved turn's sub-conversation outcomes (a turn saved before several could run side by side kept one, under
    "recruit")."""
    if isinstance(data.get("recruits"), list):
        return [r for r in data["recruits"] if isinstance(r, dict)]
    return [data["recruit"]] if isinstance(data.get("recruit"), dict) else []


def history_messages(task: TaskStep, turns: list[TurnStep], viewpoint: str, *, budget_tokens: int) -> Messages:
    """The conversation as `viewpoint`'s agent sees it: the task, then the latest `WHOLE_MESSAGES` utterances whole
    and older ones by their opening (compacted, not re-sent whole every call), newest kept first within the budget;
    how many older ones were left out is said (never cut silently)."""
    kept: Messages = []
    used, left_out = 0, 0
    for age, step in enumerate(reversed(turns)):
        messages = step.to_messages(viewpoint, brief=age >= WHOLE_MESSAGES)
        cost = sum(count_tokens(m["content"]) for m in messages)
        if left_out or (kept and used + cost > budget_tokens):
            left_out += bool(messages)
            continue
        kept[:0], used = messages, used + cost
    head = task.to_messages(viewpoint)
    if left_out:
        head.append({"role": "user", "content": render_prompt("agent", "history_cut", count=left_out)})
    return head + kept
