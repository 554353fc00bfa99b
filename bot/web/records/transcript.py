"""One ask's transcript as a viewer may see it: conversations (sub-conversations nested under the turn that opened
them), each turn's plan snapshot, memory queries with parameters and redacted hits, utterances, LLM calls, and the
consensus with its cited rationales."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from bot.asks import models
from bot.store.db import Database
from bot.web.records.asks import AskSummary, ask_summary
from bot.web.records.hits import display_names, member_channels, resolve_hits
from bot.web.redaction import Hit, RedactedHits, redact_hits


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
    recruit: dict[str, Any] | None
    subs: list[ConversationView] = field(default_factory=list)  # sub-conversations this turn opened


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

    def name(self, handle: str) -> str:
        return self.names.get(handle, handle)


async def load_transcript(db: Database, ask_id: int, *, viewer: str) -> TranscriptView | None:
    """The transcript of `ask_id` with hits redacted for `viewer` (a handle). Access is checked by the caller."""
    summary = await ask_summary(db, ask_id)
    if summary is None:
        return None
    async with db.session() as session:
        conversations = list(
            (
                await session.execute(
                    select(models.Conversation)
                    .where(models.Conversation.ask_id == ask_id)
                    .order_by(models.Conversation.id)
                )
            ).scalars()
        )
        turns = await _turns(session, [c.id for c in conversations])
        queries = await _queries(session, [t.id for t in turns])
        calls = list(
            (
                await session.execute(
                    select(models.LLMCall).where(models.LLMCall.ask_id == ask_id).order_by(models.LLMCall.id)
                )
            ).scalars()
        )
        consensus = (
            await session.execute(select(models.Consensus).where(models.Consensus.ask_id == ask_id))
        ).scalar_one_or_none()
    hits = await resolve_hits(db, summary.workspace_id, (h for q in queries for h in q.hit_ids))
    channels = await member_channels(db, summary.workspace_id, viewer)
    turn_views = {t.id: _turn_view(t, queries, calls, hits, viewer, channels) for t in turns}
    tree = _tree(conversations, turns, turn_views)
    names = await display_names(db, summary.workspace_id)
    return TranscriptView(summary, tree, consensus, calls, names)


async def _turns(session: Any, conversation_ids: list[int]) -> list[models.Turn]:
    if not conversation_ids:
        return []
    stmt = (
        select(models.Turn)
        .where(models.Turn.conversation_id.in_(conversation_ids))
        .order_by(models.Turn.conversation_id, models.Turn.idx)
    )
    return list((await session.execute(stmt)).scalars())


async def _queries(session: Any, turn_ids: list[int]) -> list[models.MemoryQuery]:
    if not turn_ids:
        return []
    stmt = select(models.MemoryQuery).where(models.MemoryQuery.turn_id.in_(turn_ids)).order_by(models.MemoryQuery.id)
    return list((await session.execute(stmt)).scalars())


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
        declined=bool(data.get("declined")), error=data.get("error"), recruit=data.get("recruit"),
    )  # fmt: skip


def _tree(
    conversations: list[models.Conversation], turns: list[models.Turn], turn_views: dict[int, TurnView]
) -> list[ConversationView]:
    """Conversations with their turns; each sub-conversation hangs under the parent turn that opened it."""
    views = {
        c.id: ConversationView(c.id, c.depth, list(c.participants), c.question, c.status, c.stop_reason, c.conclusion)
        for c in conversations
    }
    for turn in turns:
        views[turn.conversation_id].turns.append(turn_views[turn.id])
    top: list[ConversationView] = []
    for c in conversations:
        parent = views.get(c.parent_id) if c.parent_id is not None else None
        if parent is None:
            top.append(views[c.id])
            continue
        if c.status == "abandoned":  # its parent turn was never saved; the turn ran again with a new one
            continue
        opener = next((t for t in parent.turns if t.idx == c.parent_turn), None)
        if opener is None:  # still running: the parent turn is not saved yet
            opener = parent.turns[-1] if parent.turns else None
        if opener is not None:
            opener.subs.append(views[c.id])
    return top
