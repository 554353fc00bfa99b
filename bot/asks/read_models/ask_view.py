"""What one person may see of an ask, built from records: the outbox's `Sent` records of what each member's agent
let out *to that person* (their handle, or a channel they are in, among its audience), plus their own agent's record.

Every page, JSON body and text about an ask that someone reads is rendered from an `AskView` (the web transcript and
answer, the CLI transcript, "What the agents tried"); renderers never get the stored turns. A member's plan,
searches, errors, think output, prompts and sub-conversation conclusions are in `TurnView.own` /
`ConversationView.conclusion` only when the viewer is that member, or an admin with `ASKWITH_ADMIN_RAW_PROMPTS` on
(the caller logs such a read). Others read that an agent searched, never what for nor what it found.

    record = await load_transcript(db, ask_id)              # bot.asks.read_models.transcripts: the stored ask, whole
    view = view_for(record, await viewer_of(db, record.ask.workspace_id, "carol"))
    view.answer                                             # None unless carol read every record it rests on
    turn = view.conversations[0].turns[0]
    turn.said, turn.own                                     # what bob's agent let out to carol; bob's internals: None
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select

from bot.agents.steps import recruits_of
from bot.asks import models
from bot.asks.read_models.transcripts import StoredConversation, Transcript
from bot.consent.outbox import Sent, Verdict
from bot.store import models as store_models
from bot.store.db import Database
from bot.texts import answer_texts, transcript_texts


_LINE_ID = re.compile(r"^\[([^\]]+)\]")  # "[m0000013] #dm 2026-03-01 09:05 erin: ..." -> "m0000013"
SAID_TO_OTHERS = transcript_texts.said_to_others()


@dataclass(frozen=True)
class Viewer:
    """Who reads: a handle ("" for nobody of this workspace), the channels they are in, and whether they are an admin
    with raw access (`ASKWITH_ADMIN_RAW_PROMPTS`), who alone reads every agent's internals."""

    handle: str
    channels: frozenset[str] = frozenset()  # "#name" of every channel the viewer is in
    raw: bool = False

    def owns(self, member: str) -> bool:
        """The viewer reads `member`'s agent's internals: it is their own agent (or they have raw access)."""
        return self.raw or (bool(self.handle) and member == self.handle)

    def reads(self, record: Sent) -> bool:
        """The outbox let `record` out to the viewer: their handle or one of their channels is in its audience."""
        if self.owns(record.member):
            return True
        return record.verdict is Verdict.SENT and self._among(record.audience)

    def hears_of(self, record: Sent) -> bool:
        """The viewer was among those a record was meant for (sent or held): they may read that it was held."""
        return self.owns(record.member) or self._among(record.audience)

    def _among(self, audience: list[str]) -> bool:
        return (bool(self.handle) and self.handle in audience) or any(a in self.channels for a in audience)


@dataclass
class OwnTurn:
    """A turn's internals: its own member's (and a raw admin's) alone."""

    utterance: str  # what the agent wrote, whether or not it left
    plan: list[dict[str, Any]]
    solved: int
    fake_solved: int
    searches: list[models.MemoryQuery]
    approval: str | None
    declined: bool
    error: dict[str, Any] | None
    recruits: list[dict[str, Any]]
    prompts: list[dict[str, Any]]  # the recorded LLM calls with the messages the model saw
    calls: list[models.LLMCall]  # this turn's calls, errors included


@dataclass
class TurnView:
    turn_id: int
    idx: int
    agent: str
    latency_s: float
    searched: bool  # the agent searched its member's memory in this turn (all anyone else learns of it)
    said: str | None  # what left the agent to the viewer; None: nothing did
    held: bool  # what it would have said to the viewer was held (the viewer was in its audience)
    asked: list[tuple[str, str]]  # (member brought in, the question) that left to the viewer
    own: OwnTurn | None = None  # set only when the viewer owns the agent
    subs: list[ConversationView] = field(default_factory=list)  # sub-conversations this turn opened


@dataclass
class ConversationView:
    id: int
    depth: int
    participants: list[str]
    question: str | None  # a sub-conversation's question: as it left to the viewer, else None
    status: str
    stop_reason: str | None
    conclusion: str | None  # what it brought back to its asker: the asker's (owner's) alone
    turns: list[TurnView] = field(default_factory=list)


@dataclass
class ConsensusView:
    agreed: bool
    statements_agree: bool
    ratio: float | None
    statements: list[tuple[str, str]]  # (agent, statement) as it left to the viewer; the requester's to them alone
    rationales: list[dict[str, Any]]  # cited rationales of the viewer's own agent (every one with raw access)
    dropped: list[str]  # likewise
    prompt: list[dict[str, str]]  # the consensus prompt: the requester's (and a raw admin's)


@dataclass
class AskView:
    ask_id: int
    workspace_id: int
    viewer: Viewer
    requester: str
    colleagues: list[str]
    participants: list[str]  # requester first, then everyone whose agent took part
    question: str
    status: str
    created_at: datetime
    cost: dict[str, Any]  # calls, tokens, wall time: counts, no text
    ablations: list[str]
    answer_readable: bool  # the viewer read every record the answer rests on (or asked, or has raw access)
    answer: str | None
    failure: str | None
    final_text: str | None
    consensus: ConsensusView | None
    claims: list[dict[str, Any]]  # the answer's claims with their source ids (when the answer is readable)
    evidence: dict[str, dict[str, Any]]  # the lines those claims cite (when the answer is readable)
    disagreements: list[str]
    conversations: list[ConversationView]
    sent: list[Sent]  # every outbox record the viewer read, in order (held ones only of their own agent)
    held: list[Sent]  # records meant for the viewer that were held (their member said no, or did not answer)
    calls: list[models.LLMCall]  # the calls of the viewer's own agent (all with raw access; errors only then)
    tried: list[str]  # what the agents tried, as the viewer may read it
    tried_shared: list[str]  # the same for a place others read too: no keywords, no counts, of anyone
    text_in_platform: bool = False  # a live-memory ask's record keeps ids only: its text is in the platform alone

    def released_ids(self) -> set[tuple[str, str]]:
        """(member, message id) of every memory line that left to the viewer with a record they read."""
        return _released(self.sent)

    def passed_on(self) -> dict[str, list[str]]:
        """Message id -> the members whose agent's outbox record (one the viewer read) let that line out, in the
        order they did: whom a source may be credited to, and no one else."""
        by_line: dict[str, list[str]] = {}
        for record in (s for s in self.sent if s.verdict is Verdict.SENT):
            for line_id in (m[1] for line in record.sources if (m := _LINE_ID.match(line))):
                if record.member not in (members := by_line.setdefault(line_id, [])):
                    members.append(record.member)
        return by_line


def _released(records: list[Sent]) -> set[tuple[str, str]]:
    sent = [s for s in records if s.verdict is Verdict.SENT]
    return {(s.member, m[1]) for s in sent for line in s.sources if (m := _LINE_ID.match(line))}


async def viewer_of(db: Database, workspace_id: int, handle: str, *, raw: bool = False) -> Viewer:
    """`handle` with the channels they are in (by "#name", as audiences name them)."""
    if not handle:
        return viewer_in(handle, (), raw=raw)
    stmt = (
        select(store_models.Channel.name)
        .join(store_models.Membership, store_models.Membership.channel_id == store_models.Channel.id)
        .join(store_models.Member, store_models.Member.id == store_models.Membership.member_id)
        .where(store_models.Member.workspace_id == workspace_id, store_models.Member.name == handle)
    )
    async with db.session() as session:
        return viewer_in(handle, (await session.execute(stmt)).scalars(), raw=raw)


def viewer_in(handle: str, channel_names: Iterable[str | None], *, raw: bool = False) -> Viewer:
    """`handle` in the channels of these store names (`viewer_of`, from names a caller read already): audiences name
    them "#name"; nobody of the workspace ("") is in none."""
    if not handle:
        return Viewer("", frozenset(), raw)
    return Viewer(handle, frozenset(f"#{name}" for name in channel_names if name), raw)


def records_of(data: dict[str, Any] | None) -> list[Sent]:
    """The outbox records kept with one stored turn or statement (sent and held), recruit questions first."""
    sharing = (data or {}).get("sharing") or {}
    found = []
    for key in ("recruit_sent", "sent"):
        kept = sharing.get(key)
        found += [Sent.from_dict(r) for r in (kept if isinstance(kept, list) else [kept]) if isinstance(r, dict)]
    return found


def view_for(record: Transcript, viewer: Viewer) -> AskView:
    """The ask as `viewer` may see it. The only reader of stored turns for anyone to see."""
    ask = record.ask
    kept = [c for c in record.all_conversations() if c.row.status != "abandoned"]
    sides = list((record.consensus.data or {}).get("sides", [])) if record.consensus is not None else []
    every = [r for c in kept for t in c.turns for r in records_of(t.data)] + [r for s in sides for r in records_of(s)]
    answer_records = [r for r in every if r.kind != "recruit" and r.verdict is Verdict.SENT]
    readable = viewer.raw or viewer.handle == ask.requester or (
        bool(answer_records) and all(viewer.reads(r) for r in answer_records)
    )  # fmt: skip
    stored = (record.consensus.data or {}) if record.consensus is not None else {}
    data = stored if readable else {}
    claims = [c for c in data.get("claims", []) if isinstance(c, dict)]
    sent = [r for r in every if viewer.reads(r)]
    # the lines the answer's claims cite (with the answer), and every line that left to the viewer
    shown = {i for c in claims for i in c.get("sources", [])} | {i for _, i in _released(sent)}
    evidence = {i: line for i, line in (stored.get("evidence") or {}).items() if i in shown}
    brought_in = [p for c in kept for p in c.row.participants]
    participants = list(dict.fromkeys([ask.requester, *ask.colleagues, *brought_in]))
    calls = sorted(record.calls, key=lambda c: c.id)
    view = AskView(
        ask_id=ask.id, workspace_id=ask.workspace_id, viewer=viewer, requester=ask.requester,
        colleagues=list(ask.colleagues), participants=participants, question=ask.question, status=ask.status,
        created_at=ask.created_at, cost=_cost(record), ablations=list(ask.ablations or []), answer_readable=readable,
        answer=ask.answer if readable else None, failure=ask.failure,
        final_text=ask.final_text if readable else None, consensus=_consensus(record, viewer, readable),
        claims=claims, evidence=evidence, disagreements=list(data.get("disagreements", [])),
        conversations=[], sent=sent,
        held=[r for r in every if r.verdict is not Verdict.SENT and viewer.hears_of(r)],
        calls=[], tried=[], tried_shared=[], text_in_platform=ask.final_text == "",  # bot.asks.live_record
    )  # fmt: skip
    view.conversations = [_conversation(c, viewer, calls) for c in record.conversations if c.row.status != "abandoned"]
    # An agent's calls (how many, how long its prompts were) tell how much its memory gave it: its member's.
    own = {t.turn_id for c in every_conversation(view.conversations) for t in c.turns if t.own is not None}
    mine = [c for c in calls if c.turn_id in own or (c.purpose == "consensus" and viewer.owns(ask.requester))]
    view.calls = calls if viewer.raw else [_without_error(c) for c in mine]
    view.tried, view.tried_shared = _tried(view)
    return view


def _cost(record: Transcript) -> dict[str, Any]:
    cost = record.cost()
    return {"llm_calls": cost.llm_calls, "prompt_tokens": cost.prompt_tokens,
            "completion_tokens": cost.completion_tokens, "wall_s": cost.wall_s}  # fmt: skip


def _without_error(call: models.LLMCall) -> models.LLMCall:
    """A call as anyone but a raw admin reads it: an error text may quote what the model was sent."""
    copy = models.LLMCall(**{c.key: getattr(call, c.key) for c in models.LLMCall.__table__.columns})
    copy.error = "failed" if call.error else None
    return copy


def _consensus(record: Transcript, viewer: Viewer, readable: bool) -> ConsensusView | None:
    row = record.consensus
    if row is None:
        return None
    data = row.data or {}
    statements: list[tuple[str, str]] = []
    for agent, text in data.get("statements", []):
        if agent == record.ask.requester:  # the requester's own agent's view: theirs alone
            if viewer.owns(agent) and text:
                statements.append((agent, text))
            continue
        side = next((s for s in data.get("sides", []) if s.get("agent") == agent), None)
        said = [r.text for r in records_of(side) if r.kind == "statement" and viewer.reads(r) and r.text]
        if said:  # its closing statement, as it left; without one, what its turns let out is in the turns
            statements.append((agent, said[-1]))
    rationales = [r for r in (data.get("rationales") or {}).values() if viewer.owns(str(r.get("agent", "")))]
    own_keys = {r.get("key") for r in rationales}
    return ConsensusView(
        agreed=readable and bool(row.agreed), statements_agree=readable and bool(row.statements_agree),
        ratio=row.ratio if readable else None, statements=statements,
        rationales=[r for r in rationales if r.get("key") in data.get("cited", [])],
        dropped=[k for k in data.get("dropped", []) if k in own_keys],
        prompt=list(data.get("prompt") or []) if viewer.owns(record.ask.requester) else [],
    )  # fmt: skip


def _conversation(stored: StoredConversation, viewer: Viewer, calls: list[models.LLMCall]) -> ConversationView:
    row = stored.row
    asker = row.participants[0] if row.participants else ""
    view = ConversationView(
        row.id, row.depth, list(row.participants), None, row.status, row.stop_reason,
        row.conclusion if viewer.owns(asker) else None,
        [_turn(t, stored.queries.get(t.id, []), viewer, calls) for t in sorted(stored.turns, key=lambda t: t.idx)],
    )  # fmt: skip
    for child in stored.children:
        if child.row.status == "abandoned":  # its parent turn was never saved; the turn ran again with a new one
            continue
        sub = _conversation(child, viewer, calls)
        opener = next((t for t in view.turns if t.idx == child.row.parent_turn), None)
        if opener is None and view.turns:  # still running: the parent turn is not saved yet
            opener = view.turns[-1]
        target = child.row.participants[1] if len(child.row.participants) > 1 else ""
        if viewer.owns(child.row.participants[0] if child.row.participants else ""):
            sub.question = child.row.question
        elif opener is not None:
            sub.question = next((q for member, q in opener.asked if member == target), None)
        if opener is not None:
            opener.subs.append(sub)
    return view


def _turn(
    turn: models.Turn, queries: list[models.MemoryQuery], viewer: Viewer, calls: list[models.LLMCall]
) -> TurnView:
    data = turn.data or {}
    records = records_of(data)
    said = next((r for r in records if r.kind != "recruit"), None)
    asked = [(r.audience[0], r.text) for r in records if r.kind == "recruit" and r.audience and viewer.reads(r)]
    view = TurnView(
        turn_id=turn.id, idx=turn.idx, agent=turn.agent, latency_s=float(data.get("latency_s", 0.0)),
        searched=bool(queries or data.get("queries")),
        said=said.text if said is not None and said.verdict is Verdict.SENT and viewer.reads(said) else None,
        held=said is not None and said.verdict is not Verdict.SENT and viewer.hears_of(said), asked=asked,
    )  # fmt: skip
    if viewer.owns(turn.agent):
        view.said = turn.utterance if said is None else (said.text or None)
        view.own = OwnTurn(
            utterance=turn.utterance, plan=list(turn.plan or []), solved=turn.solved, fake_solved=turn.fake_solved,
            searches=list(queries), approval=data.get("approval"), declined=bool(data.get("declined")),
            error=data.get("error"), recruits=recruits_of(data), prompts=list(data.get("llm_calls", [])),
            calls=[c for c in calls if c.turn_id == turn.id],
        )  # fmt: skip
    return view


def _tried(view: AskView) -> tuple[list[str], list[str]]:
    """What the agents tried: the viewer's own agent's searches in full; anyone else's only that it searched; a
    member brought in when the question that brought them in left to the viewer."""
    mine: list[str] = []
    shared: list[str] = []
    for conversation in every_conversation(view.conversations):
        for turn in conversation.turns:
            if turn.searched:
                shared.append(answer_texts.tried_search(turn.agent))
                if turn.own is not None:
                    mine += [
                        answer_texts.tried_own_search(turn.agent, q.kind, q.params, _outcome(q))
                        for q in turn.own.searches
                    ]
                else:
                    mine.append(answer_texts.tried_search(turn.agent))
            for member, _ in turn.asked:
                mine.append(answer_texts.tried_recruit(turn.agent, member))
    return list(dict.fromkeys(mine)), list(dict.fromkeys(shared))


def _outcome(query: models.MemoryQuery) -> str:
    return answer_texts.search_outcome(query.skipped, bool(query.error), len(query.hit_ids))


def every_conversation(conversations: list[ConversationView]) -> list[ConversationView]:
    """The conversations and, depth first, every sub-conversation their turns opened."""
    out: list[ConversationView] = []
    for conversation in conversations:
        out.append(conversation)
        out += every_conversation([sub for turn in conversation.turns for sub in turn.subs])
    return out
