"""One ask's transcript as a viewer may see it, rendered from their `AskView` (`ask_view`): conversations
(sub-conversations nested under the turn that opened them) and the consensus, as the page and its JSON show them.

What an agent said is shown to the audience its outbox named (`bot.consent.outbox`) and to its own member; others in
the ask read that it spoke, not what. An agent's plan, memory searches (their words, hits and counts), errors,
approvals, sub-conversation conclusions and the prompts the model saw are its own member's alone; admins read them
only with `ASKWITH_ADMIN_RAW_PROMPTS` on (each read is logged by the route). Anyone else reads that it searched.

    view = await load_transcript(db, ask_id, viewer="carol")   # None: no such ask
    body = transcript_json(view)                               # the page's JSON, from the same view
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from bot.asks import models
from bot.asks.read_models import ask_view, transcripts
from bot.asks.read_models.ask_summaries import AskSummary, summarize
from bot.asks.read_models.hits import display_names, memberships, resolve_hits
from bot.asks.read_models.jsonable import jsonable
from bot.asks.read_models.redaction import Hit, RedactedHits, redact_hits
from bot.errors import AskNotFoundError
from bot.store.db import Database
from bot.texts import transcript_texts


NOT_YOUR_AUDIENCE = transcript_texts.said_to_others()
HELD = "(nothing of it was shared)"


@dataclass
class QueryView:
    kind: str  # clear | fuzzy | history
    params: dict[str, Any]
    hits: RedactedHits
    latency_s: float
    error: str | None
    skipped: str | None


@dataclass(frozen=True)
class PromptView:
    purpose: str
    model: str
    messages: list[dict[str, str]]


@dataclass(frozen=True)
class CallView:
    """An LLM call's figures (its error text is a raw admin's alone: it may quote what the model was sent)."""

    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int
    json_mode: str
    repaired: bool
    cached: bool
    error: str | None


@dataclass
class TranscriptTurn:
    """A turn as the transcript page shows it: `ask_view.TurnView` with its notes filled in, its own member's
    internals flattened and its memory hits resolved and redacted."""

    idx: int
    agent: str
    utterance: str  # what left to the viewer, or a note that it went to others / was held
    searched: bool  # its agent searched its member's memory (what for is the member's alone)
    latency_s: float
    asked: list[tuple[str, str]]  # (member brought in, the question) as it left to the viewer
    plan: list[dict[str, Any]] = field(default_factory=list)  # the rest: the viewer's own agent only
    solved: int = 0
    fake_solved: int = 0
    queries: list[QueryView] = field(default_factory=list)
    approval: str | None = None
    declined: bool = False
    error: dict[str, Any] | None = None
    recruits: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: list[CallView] = field(default_factory=list)
    prompts: list[PromptView] = field(default_factory=list)
    subs: list[TranscriptConversation] = field(default_factory=list)  # sub-conversations this turn opened


@dataclass
class TranscriptConversation:
    """A conversation as the transcript page shows it: `ask_view.ConversationView` with its turns as
    `TranscriptTurn`s and a note for a question that did not leave to the viewer."""

    id: int
    depth: int
    participants: list[str]
    question: str  # a sub-conversation's: as it left to the viewer, else a note
    status: str
    stop_reason: str | None
    conclusion: str | None  # its asker's alone
    turns: list[TranscriptTurn] = field(default_factory=list)


@dataclass
class TranscriptView:
    ask: AskSummary  # its answer only when the viewer read every record it rests on
    conversations: list[TranscriptConversation]  # the top-level ones, one per colleague
    consensus: ask_view.ConsensusView | None
    llm_calls: list[CallView]
    names: dict[str, str]  # handle -> display name
    consensus_prompt: PromptView | None = None  # the requester and raw admins only
    disagreements: list[str] = field(default_factory=list)  # part of the answer: with it only
    platform_note: str = ""  # a live ask keeps no text (bot.asks.live_record): says so, the answer is in Slack

    def name(self, handle: str) -> str:
        return self.names.get(handle, handle)


def may_see_prompts(viewer: str, agent: str, *, admin: bool) -> bool:
    """Whether `viewer` may read the prompts `agent`'s agent was sent: each member their own; `admin` here means an
    admin with raw prompt access switched on."""
    return ask_view.Viewer(viewer, raw=admin).owns(agent)


async def load_transcript(
    db: Database, ask_id: int, *, viewer: str, admin: bool = False, raw_prompts: bool = False,
    ask: models.Ask | None = None,
) -> TranscriptView | None:  # fmt: skip
    """The transcript of `ask_id` as `viewer` (a handle; "" for nobody of its workspace) may see it. Access is
    checked by the caller. `admin` alone opens no one's internals: `raw_prompts` (an admin with
    ASKWITH_ADMIN_RAW_PROMPTS on) does. `ask`: its row, when the caller has just read it (not read again).
    Everything else is read in one session, a statement for each kind of row."""
    async with db.session() as session:
        try:
            record = await transcripts.read_transcript(session, ask_id, ask=ask, think=False)
        except AskNotFoundError:
            return None
        workspace_id = record.ask.workspace_id
        joined = await memberships(session, workspace_id, viewer)
        who = ask_view.viewer_in(viewer, (name for _, name in joined), raw=admin and raw_prompts)
        channels = frozenset(channel_id for channel_id, _ in joined)
        view = ask_view.view_for(record, who)
        own = [
            s
            for c in ask_view.every_conversation(view.conversations)
            for t in c.turns
            if t.own is not None
            for s in t.own.searches
        ]
        hits = await resolve_hits(session, workspace_id, (h for q in own for h in q.hit_ids))
        names = await display_names(session, workspace_id)

    def query(q: Any) -> QueryView:
        found = redact_hits(viewer, q.agent, (hits.get(i, Hit(i, None)) for i in q.hit_ids), channels)
        return QueryView(q.kind, dict(q.params), found, q.latency_s, q.error, q.skipped)

    def turn(t: ask_view.TurnView) -> TranscriptTurn:
        said = t.said if t.said is not None else (HELD if t.held else NOT_YOUR_AUDIENCE)
        shown = TranscriptTurn(t.idx, t.agent, said, t.searched, t.latency_s, t.asked,
                         subs=[conversation(s) for s in t.subs])  # fmt: skip
        if (o := t.own) is not None:
            shown.plan, shown.solved, shown.fake_solved = o.plan, o.solved, o.fake_solved
            shown.queries = [query(q) for q in o.searches]
            shown.approval, shown.declined, shown.error, shown.recruits = o.approval, o.declined, o.error, o.recruits
            shown.llm_calls = [_call(c, error=True) for c in o.calls]
            shown.prompts = _prompts(o.prompts)
        return shown

    def conversation(c: ask_view.ConversationView) -> TranscriptConversation:
        question = c.question if c.depth == 0 or c.question is not None else NOT_YOUR_AUDIENCE
        return TranscriptConversation(c.id, c.depth, c.participants, question or "", c.status, c.stop_reason,
                                c.conclusion, [turn(t) for t in c.turns])  # fmt: skip

    heading = replace(summarize(record.ask, []), answer=view.answer, participants=view.participants)
    result = TranscriptView(
        heading, [conversation(c) for c in view.conversations], view.consensus,
        [_call(c, error=who.raw) for c in view.calls], names,
    )  # fmt: skip
    result.disagreements = view.disagreements
    result.platform_note = transcript_texts.text_in_platform() if view.text_in_platform else ""
    if view.consensus is not None:
        prompt = view.consensus.prompt
        result.consensus_prompt = PromptView("consensus", "", prompt) if prompt else None
    return result


def transcript_json(view: TranscriptView) -> dict[str, Any]:
    """The transcript page's JSON: the same view, field for field."""
    return jsonable(view)


def _call(call: Any, *, error: bool) -> CallView:
    return CallView(
        call.purpose, call.model, call.prompt_tokens, call.completion_tokens, call.latency_s, call.attempts,
        call.json_mode, call.repaired, call.cached, call.error if error else None,
    )  # fmt: skip


def _prompts(calls: list[dict[str, Any]]) -> list[PromptView]:
    return [
        PromptView(str(c.get("purpose", "")), str(c.get("model", "")), list(c["prompt"]))
        for c in calls
        if c.get("prompt")
    ]
