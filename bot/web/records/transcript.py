"""One ask's transcript as a viewer may see it: conversations (sub-conversations nested under the turn that opened
them), each turn's plan snapshot, memory queries with parameters and redacted hits, utterances, LLM calls, and the
consensus with its cited rationales.

The rendered prompts of every call (what the model saw) are shown to a member only for their own agent's turns and
closing statement (the requester also sees the final consensus prompt): a member never reads what another member's
agent saw. Admins read them only with `ASKWITH_ADMIN_RAW_PROMPTS` on (each read is logged by the route). What an
agent said is shown to the audience its outbox named (`bot.agents.outbox`), to its own member and to admins; others
in the ask read that it spoke, not what.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot import messages
from bot.agents.steps import recruits_of
from bot.asks import models, transcripts
from bot.store.db import Database
from bot.web.records.asks import AskSummary, ask_summary
from bot.web.records.hits import display_names, member_channels, resolve_hits
from bot.web.redaction import Hit, RedactedHits, redact_hits


NOT_YOUR_AUDIENCE = messages.said_to_others()


@dataclass
class QueryView:
    kind: str  # clear | fuzzy
    params: dict[str, Any]
    hits: RedactedHits
    latency_s: float
    error: str | None
    skipped: str | None


@dataclass
class TurnView:
    idx: int
    agent: str
    utterance: str
    plan: list[dict[str, Any]]
    solved: int
    fake_solved: int
    queries: list[QueryView]
    llm_calls: list[models.LLMCall]
    latency_s: float
    approval: str | None
    declined: bool
    error: dict[str, Any] | None
    recruits: list[dict[str, Any]]
    subs: list[ConversationView] = field(default_factory=list)  # sub-conversations this turn opened
    prompts: list[PromptView] = field(default_factory=list)  # empty unless the viewer may see them


@dataclass(frozen=True)
class PromptView:
    purpose: str
    model: str
    messages: list[dict[str, str]]


@dataclass
class ConversationView:
    id: int
    depth: int
    participants: list[str]
    question: str
    status: str
    stop_reason: str | None
    conclusion: str | None
    turns: list[TurnView] = field(default_factory=list)


@dataclass
class TranscriptView:
    ask: AskSummary
    conversations: list[ConversationView]  # the top-level ones, one per colleague
    consensus: models.Consensus | None
    llm_calls: list[models.LLMCall]
    names: dict[str, str]  # handle -> display name
    consensus_prompt: PromptView | None = None  # admins and the requester only
    side_prompts: list[tuple[str, PromptView]] = field(default_factory=list)  # (agent, its statement's prompt)

    def name(self, handle: str) -> str:
        return self.names.get(handle, handle)


def may_see_prompts(viewer: str, agent: str, *, admin: bool) -> bool:
    """Whether `viewer` may read the prompts `agent`'s agent was sent: each member their own; `admin` here means an
    admin with raw prompt access switched on."""
    return admin or bool(viewer) and viewer == agent


def may_see_turn(viewer: str, agent: str, data: dict[str, Any], *, admin: bool) -> bool:
    """Whether `viewer` may read what `agent`'s agent said in a turn: its member, admins, and the audience its outbox
    named (a turn recorded before audiences were, or one that never left, keeps the participants' view)."""
    audience = ((data.get("sharing") or {}).get("sent") or {}).get("audience")
    return admin or viewer == agent or audience is None or viewer in audience


async def load_transcript(
    db: Database, ask_id: int, *, viewer: str, admin: bool = False, raw_prompts: bool = False
) -> TranscriptView | None:
    """The transcript of `ask_id` with hits redacted for `viewer` (a handle), each turn shown to its audience. Access
    is checked by the caller; `raw_prompts` (an admin with ASKWITH_ADMIN_RAW_PROMPTS on) shows every prompt."""
    summary = await ask_summary(db, ask_id)
    if summary is None:
        return None
    record = await transcripts.load_transcript(db, ask_id)
    everything = record.all_conversations()
    queries = [q for c in everything for t in c.turns for q in c.queries.get(t.id, [])]
    hits = await resolve_hits(db, summary.workspace_id, (h for q in queries for h in q.hit_ids))
    channels = await member_channels(db, summary.workspace_id, viewer)
    calls = sorted(record.calls, key=lambda c: c.id)

    def turn_view(conversation: transcripts.ConversationView, turn: models.Turn) -> TurnView:
        view = _turn_view(turn, conversation.queries.get(turn.id, []), calls, hits, viewer, channels)
        if not may_see_turn(viewer, turn.agent, turn.data or {}, admin=admin):
            view.utterance, view.plan, view.recruits = NOT_YOUR_AUDIENCE, [], []
        if may_see_prompts(viewer, turn.agent, admin=raw_prompts):
            view.prompts = _prompts((turn.data or {}).get("llm_calls", []))
        return view

    top = [_conversation(c, turn_view) for c in record.conversations]
    names = await display_names(db, summary.workspace_id)
    view = TranscriptView(summary, top, record.consensus, calls, names)
    if record.consensus is not None and may_see_prompts(viewer, summary.requester, admin=raw_prompts):
        prompt = (record.consensus.data or {}).get("prompt") or []
        view.consensus_prompt = PromptView("consensus", "", prompt) if prompt else None
    for side in (record.consensus.data or {}).get("sides", []) if record.consensus is not None else []:
        if may_see_prompts(viewer, side["agent"], admin=raw_prompts):
            view.side_prompts += [(side["agent"], p) for p in _prompts(side.get("llm_calls", []))]
    return view


def _prompts(calls: list[dict[str, Any]]) -> list[PromptView]:
    return [
        PromptView(str(c.get("purpose", "")), str(c.get("model", "")), list(c["prompt"]))
        for c in calls
        if c.get("prompt")
    ]


def _turn_view(
    turn: models.Turn,
    queries: list[models.MemoryQuery],
    calls: list[models.LLMCall],
    hits: dict[str, Hit],
    viewer: str,
    viewer_channels: frozenset[int],
) -> TurnView:
    query_views = [
        QueryView(
            kind=q.kind,
            params=dict(q.params),
            hits=redact_hits(viewer, q.agent, (hits.get(i, Hit(i, None)) for i in q.hit_ids), viewer_channels),
            latency_s=q.latency_s,
            error=q.error,
            skipped=q.skipped,
        )
        for q in queries
        if q.turn_id == turn.id
    ]
    data = turn.data or {}
    return TurnView(
        idx=turn.idx, agent=turn.agent, utterance=turn.utterance, plan=list(turn.plan or []), solved=turn.solved,
        fake_solved=turn.fake_solved, queries=query_views, llm_calls=[c for c in calls if c.turn_id == turn.id],
        latency_s=float(data.get("latency_s", 0.0)), approval=data.get("approval"),
        declined=bool(data.get("declined")), error=data.get("error"), recruits=recruits_of(data),
    )  # fmt: skip


def _conversation(
    record: transcripts.ConversationView,
    turn_view: Callable[[transcripts.ConversationView, models.Turn], TurnView],
) -> ConversationView:
    """A conversation with its turns; each sub-conversation hangs under the parent turn that opened it."""
    row = record.row
    view = ConversationView(
        row.id, row.depth, list(row.participants), row.question, row.status, row.stop_reason, row.conclusion,
        [turn_view(record, t) for t in sorted(record.turns, key=lambda t: t.idx)],
    )  # fmt: skip
    for child in record.children:
        if child.row.status == "abandoned":  # its parent turn was never saved; the turn ran again with a new one
            continue
        opener = next((t for t in view.turns if t.idx == child.row.parent_turn), None)
        if opener is None and view.turns:  # still running: the parent turn is not saved yet
            opener = view.turns[-1]
        if opener is not None:
            opener.subs.append(_conversation(child, turn_view))
    return view
