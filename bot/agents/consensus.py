"""Consensus, the requester's side: every side's statement, the known rationales, the notebooks and the blackboard go
into one LLM call that checks agreement, writes the final answer and cites, for every claim, the messages it rests on.

A colleague's statement is its closing statement, written on its own side over its own notebook and screened like a
turn (`bot.agents.statements`); without one (nothing new to state, or not approved), the answer its last act call
gave. Agreement is also checked in code (normalised statements), so the record shows both the model's and a literal
judgement. The requester's agents' notebooks are read whole (their own memory); a colleague's only as far as its
shared turns and its closing statement released them. A claim whose sources are no evidence line is unsupported; an
answer with no supported claim is delivered as unsupported, with what was tried. Conflicting values are kept as
disagreements for the requester, never dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bot.agents.context import AskContext
from bot.agents.conversation import ConversationResult
from bot.agents.evidence import EvidenceLine
from bot.agents.notebook import ids_in, select_lines
from bot.agents.outputs import CONSENSUS_SCHEMA
from bot.agents.plan import Plan, Rationale, Status
from bot.agents.steps import StatementStep, sent_plan
from bot.base.prompts import render_prompt
from bot.errors import LLMOutputError
from bot.llm.types import LLMCallRecord, LLMRequest
from bot.texts import answer_texts


@dataclass(frozen=True)
class Claim:
    text: str
    sources: tuple[str, ...]  # message ids it cites that are evidence lines (unsupported when empty)
    cited: tuple[str, ...] = ()  # everything the model cited, evidence or not

    @property
    def supported(self) -> bool:
        return bool(self.sources)


@dataclass(frozen=True)
class Held:
    """An evidence line consensus read, with the agent that holds it."""

    line: EvidenceLine
    agent: str


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
    evidence: dict[str, Held] = field(default_factory=dict)  # id -> line, every line consensus could read
    claims: list[Claim] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)  # what the agents did, said when the answer is unsupported
    visible: set[str] = field(default_factory=set)  # cited ids the requester may open themselves
    sides: list[StatementStep] = field(default_factory=list)  # colleagues' closing statements, as they crossed

    def references(self, claim: Claim) -> list[tuple[EvidenceLine, str, bool]]:
        """(line, holder, the requester may see it) for each evidence line a claim cites."""
        held = [self.evidence[i] for i in claim.sources]
        return [(h.line, _holder(h), h.line.id in self.visible) for h in held]

    @property
    def supported(self) -> bool:
        return any(claim.supported for claim in self.claims)

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
            "claims": [{"text": c.text, "sources": list(c.sources), "cited": list(c.cited)} for c in self.claims],
            "disagreements": list(self.disagreements),
            "supported": self.supported,
            "tried": list(self.tried),
            "evidence": {k: {**h.line.dict(), "agent": h.agent} for k, h in self.evidence.items()},
            "prompt": self.llm_call.prompt if self.llm_call else [],
            "sides": [side.crossed_dict() for side in self.sides],  # the requester's record: what crossed
        }


async def reach_consensus(ctx: AskContext, results: list[ConversationResult]) -> ConsensusOutcome:
    outcome = ConsensusOutcome(
        statements=_statements(results, ctx.requester),
        rationales=_rationales(results, ctx.requester),
        statements_agree=False,
        evidence=_evidence(results, ctx.requester),
        tried=_tried(results, ctx.requester),
        sides=[r.closing for r in results if r.closing is not None],
    )
    outcome.statements_agree = _agree([s for _, s in outcome.statements if s])
    if not outcome.rationales and not outcome.evidence and not any(s for _, s in outcome.statements):
        return outcome  # nothing to reason over: no LLM call, not answerable
    shown, cut = _shown(ctx, outcome)
    prompt = render_prompt(
        "agent",
        "consensus",
        question=ctx.question,
        statements=outcome.statements,
        rationales=[r.line() for r in outcome.rationales.values()],
        blackboard=ctx.blackboard.lines(),
        evidence=[f"{h.line.render()} (held by {h.agent}'s agent)" for h in shown],
        cut=cut,
    )
    grounding = ctx.grounding.render(ctx.requester, None) if ctx.grounding else ""
    chat = [
        {"role": "system", "content": render_prompt("agent", "consensus_system", grounding=grounding)},
        {"role": "user", "content": prompt},
    ]
    result = await ctx.llm.complete(
        LLMRequest(chat, purpose="consensus", json_schema=CONSENSUS_SCHEMA, schema_name="consensus")
    )
    result.call.prompt = chat
    outcome.llm_call = result.call
    _read_answer(outcome, result.data)
    outcome.visible = await _visible_to_requester(ctx, outcome)
    return outcome


async def _visible_to_requester(ctx: AskContext, outcome: ConsensusOutcome) -> set[str]:
    """Cited message ids the requester can open now (linked); the rest are quoted, attributed to their agent."""
    cited = list(dict.fromkeys(i for claim in outcome.claims for i in claim.sources))
    if not cited or ctx.memory.history is None:  # without the history reader: only the requester's own reads
        own = (i for i in cited if outcome.evidence[i].agent == ctx.requester)
        return {i for i in own if outcome.evidence[i].line.via in ("clear", "fuzzy", "history")}
    viewer = (await ctx.roster.identity(ctx.requester)).viewer  # ids only: what they may open is read now
    return await ctx.memory.history.visible_ids(viewer, cited)


def _holder(held: Held) -> str:
    """Whose agent a line comes from: a relayed line names the agent that passed it on."""
    via = held.line.via
    return via.removesuffix("'s agent") if via.endswith("'s agent") else held.agent


def _shown(ctx: AskContext, outcome: ConsensusOutcome) -> tuple[list[Held], int]:
    """The evidence lines that fit the budget: those the rationales and the colleagues' statements cite first (the
    lines themselves, not only their summaries: a line that was shared is a line the answer can cite), then by
    relevance. Only lines in `outcome.evidence` can be shown: the requester's own, and what left a colleague's
    agent."""
    cited = [Rationale(r.key, r.need, Status.KNOWN, r.value, r.source) for r in outcome.rationales.values()]
    for side in outcome.sides:
        if side.crossed and side.act is not None:
            cited += [Rationale(f"{side.agent}.{f.id}", "", Status.KNOWN, f.value, f.source) for f in side.act.learned]
    plan = Plan(cited)
    pool = [h.line for h in outcome.evidence.values()]
    lines, cut = select_lines(pool, plan, ctx.settings.evidence_budget, question=ctx.question)
    return [outcome.evidence[line.id] for line in lines], cut


def _evidence(results: list[ConversationResult], requester: str) -> dict[str, Held]:
    found: dict[str, Held] = {}
    for result in results:
        for agent in result.agents:
            own = agent.handle == requester
            for line in agent.notebook.lines.values() if own else agent.notebook.shared_lines():
                if own or line.id not in found:
                    found[line.id] = Held(line, agent.handle)
    return found


def _tried(results: list[ConversationResult], requester: str) -> list[str]:
    """What the agents tried, as the requester's record keeps it: her own agent's searches and the members it
    brought in, in full; of any other agent only that it searched (its words and hit counts would tell what its
    member's memory holds, and a failed turn's searches never left it)."""
    tried: list[str] = []
    for result in results:
        for turn in result.turns:
            if turn.agent != requester:
                tried += [answer_texts.tried_search(turn.agent)] if turn.queries else []
                continue
            for query in turn.queries:
                outcome = answer_texts.search_outcome(query.skipped, bool(query.error), len(query.hit_ids))
                tried.append(answer_texts.tried_own_search(turn.agent, query.kind, query.params, outcome))
            for recruit in turn.recruits:
                tried.append(f"{answer_texts.tried_recruit(turn.agent, recruit.request.member)}: {recruit.status}")
    return list(dict.fromkeys(tried))


def _read_answer(outcome: ConsensusOutcome, data: Any) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
        raise LLMOutputError("the consensus answer has no 'answer' text")
    dropped = [str(k) for k in data.get("dropped") or [] if str(k) in outcome.rationales]
    cited = [str(k) for k in data.get("cited") or [] if str(k) in outcome.rationales and str(k) not in dropped]
    outcome.answer = data["answer"].strip()
    outcome.cited, outcome.dropped = list(dict.fromkeys(cited)), list(dict.fromkeys(dropped))
    outcome.agreed = bool(data.get("agreed", outcome.statements_agree))
    outcome.answerable = bool(data.get("answerable", True)) and bool(outcome.answer)
    outcome.claims = _claims(outcome, data.get("claims"))
    said = [str(d).strip() for d in data.get("disagreements") or [] if str(d).strip()]
    outcome.disagreements = list(dict.fromkeys([*said, *_conflicts(outcome)]))


def _claims(outcome: ConsensusOutcome, raw: Any) -> list[Claim]:
    """The model's claims with the sources that are evidence lines; an answer given without claims is one claim."""
    items = [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []
    if not items and outcome.answer:
        sources = [s for k in outcome.cited for s in ids_in(outcome.rationales[k].source, outcome.evidence)]
        items = [{"text": outcome.answer, "sources": [*sources, outcome.answer]}]  # ids written in the answer too
    claims = []
    for item in items:
        text = str(item.get("text") or "").strip()
        raw_sources = item.get("sources") or []
        cited = [
            i
            for s in (raw_sources if isinstance(raw_sources, list) else [raw_sources])
            for i in ids_in(str(s), outcome.evidence)
        ]
        cited += [i for i in ids_in(text, outcome.evidence) if i in outcome.evidence]  # "... [m12]" cites inline
        cited = list(dict.fromkeys(cited))  # a message cited in the list and inline is one source
        if text:
            claims.append(Claim(text, tuple(i for i in cited if i in outcome.evidence), tuple(cited)))
    return claims


def _conflicts(outcome: ConsensusOutcome) -> list[str]:
    """Needs the agents gave different values for (what "dropped" would otherwise hide)."""
    by_need: dict[str, dict[str, str]] = {}
    for rationale in outcome.rationales.values():
        by_need.setdefault(rationale.need.lower(), {}).setdefault(rationale.value.strip().lower(), rationale.agent)
    return [
        f"{need}: " + " vs ".join(f"'{value}' ({agent}'s agent)" for value, agent in values.items())
        for need, values in by_need.items()
        if len(values) > 1
    ]


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
    """The known rationales of every side: the requester's agents' plans (their own), and of each colleague's agent
    the plan its latest sent turn let out (a failed or withheld turn's values never left it)."""
    found: dict[str, CitedRationale] = {}
    for label, result, agent in _labels(results, requester):
        plan = agent.plan if agent.handle == requester else sent_plan(result.turns, agent.handle)
        for r in plan.known:
            key = f"{label}.{r.id}"
            found[key] = CitedRationale(key, agent.handle, r.need, r.value, r.source)
    return found


def _agree(statements: list[str]) -> bool:
    """Literal agreement, ignoring case, punctuation and cited sources ("[m12]")."""
    normalised = {re.sub(r"[^\w]+", " ", re.sub(r"\[[^\]]*\]", "", s.lower())).strip() for s in statements}
    return len(normalised) == 1
