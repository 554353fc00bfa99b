"""The rich answer of an ask, as one viewer may see it: claims with their sources, who contributed what.

    view = await answer_view(db, ask_id, viewer="alice", settings=settings)   # AskNotAllowedError if not theirs
    for claim in view.claims:
        for source in claim.sources:
            if source.visible_to_viewer:   # the viewer can open it: adapters render a permalink
                url = await port.permalink(source.channel_id, source.message_id)
            else:                           # only the line the share screen released, attributed to the agent
                quote = source.text         # None: nothing was released to show (render `source.withheld_text`)

Privacy: everything here comes from the viewer's `AskView` (`ask_view`): the answer and its claims only when the
viewer read every outbox record it rests on, "who contributed" from the records that left to the viewer. A source
the viewer cannot see carries no message or channel id, and its text only when that very line left the colleague's
agent to the viewer in this ask; otherwise no text at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sqlalchemy import select

from bot.agents.roster import Roster
from bot.asks import models
from bot.asks.access import may_view
from bot.asks.read_models.ask_view import AskView, view_for, viewer_of
from bot.asks.read_models.contributions import Contribution, SharedLine, contributions
from bot.asks.read_models.transcripts import Transcript, load_transcript
from bot.errors import AskNotAllowedError, AskNotFoundError, UnknownMemberError
from bot.memory.history import WholeHistory
from bot.settings import Settings
from bot.store import models as store_models
from bot.store.db import Database
from bot.texts import answer_texts


TranscriptLink = Callable[[int, str], str]  # (ask id, member handle) -> that member's web link
RELAYED = "'s agent"  # an evidence line's `via` ending: relayed by that member's agent (theirs, not the reader's)


@dataclass(frozen=True)
class SourceView:
    via: str  # the requester for a line of her own memory, else the first member whose agent passed it on ("": none)
    via_name: str  # their display name ("shared by <via_name>'s agent")
    visible_to_viewer: bool  # True: the viewer can open the message (render a permalink)
    text: str | None  # the quoted line; for an invisible source only what the share screen released, else None
    channel_name: str | None  # None when invisible and nothing was released
    sender: str | None
    when: str | None  # "YYYY-MM-DD HH:MM", as the agents saw it
    channel_id: str | None = None  # platform ids: only for a visible source
    message_id: str | None = None
    requester_own: bool = False  # a line of the requester's own memory: hers, whoever else passed it on
    credits: tuple[str, ...] = ()  # names of every other agent whose outbox record let this line out to the viewer

    @property
    def withheld_text(self) -> str:
        return answer_texts.source_withheld(self.via_name)


@dataclass(frozen=True)
class ClaimView:
    text: str
    sources: list[SourceView]


@dataclass(frozen=True)
class ContributorView:
    handle: str
    name: str
    shared: list[str]  # what their agent let out that carried facts, message ids removed (`contributions`)
    sources: list[SourceView]  # the lines of their own member's memory it shared (relayed ids credit their holder)
    brought_in: bool  # brought into a sub-conversation, not asked directly
    withheld: str | None = None  # "denied" | "timeout": their member was asked and nothing of it was shared

    @property
    def source_count(self) -> int:
        return len(self.sources)


@dataclass
class AnswerView:
    ask_id: int
    status: str  # queued | running | waiting | done | unsupported | failed | cancelled | interrupted
    question: str
    requester: str
    answer: str | None
    failure: str | None
    claims: list[ClaimView] = field(default_factory=list)
    contributors: list[ContributorView] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)  # what the agents tried, as the viewer may read it (unsupported)
    tried_shared: list[str] = field(default_factory=list)  # the same where others read it too: who searched, no more
    transcript_url: str | None = None
    final_text: str | None = None  # the plain-text final post (fallback rendering)
    follow_up_of: int | None = None
    cancelled_by: str | None = None
    readable: bool = True  # False: the answer rests on what went to others than the viewer (not shown to them)

    @property
    def sources(self) -> list[SourceView]:
        """Every claim's sources, each message once (two claims may rest on the same message)."""
        every = [source for claim in self.claims for source in claim.sources]
        return list({id(source): source for source in every}.values())

    @property
    def linked_sources(self) -> list[SourceView]:
        """Every source the view shows (claims' and contributors'), once each: what a renderer looks links up for."""
        every = [*self.sources, *(source for c in self.contributors for source in c.sources)]
        return list({(s.via, s.message_id, s.text): s for s in every}.values())

    @property
    def released_quotes(self) -> list[SourceView]:
        """The lines colleagues' agents released that the viewer cannot open: in a shared place they go to the
        viewer alone (their own visible sources need no copy, the links open them)."""
        return [source for source in self.sources if source.text and not source.visible_to_viewer]

    def for_shared_place(self) -> AnswerView:
        """This view as it may be posted where others than the viewer read it (a channel or thread): what the
        colleagues' agents released went to the viewer alone, and a message the viewer may open may still be
        private to them, so no source keeps its text, sender or channel name; visible ones keep their link."""
        every = [*self.sources, *(source for c in self.contributors for source in c.sources)]
        copies = {id(source): _without_quote(source) for source in every}  # one copy a message, as in this view
        claims = [ClaimView(claim.text, [copies[id(s)] for s in claim.sources]) for claim in self.claims]
        contributors = [replace(c, sources=[copies[id(s)] for s in c.sources]) for c in self.contributors]
        return replace(self, claims=claims, contributors=contributors, tried=self.tried_shared)


async def answer_view(
    db: Database,
    ask_id: int,
    *,
    viewer: str,
    settings: Settings,
    workspace_id: int | None = None,
    transcript_link: TranscriptLink | None = None,
    roster: Roster | None = None,
    record: Transcript | None = None,
) -> AnswerView:
    """`viewer`: handle or platform id. AskNotFoundError (or another workspace's ask), AskNotAllowedError when
    the viewer may not see this ask (bot.asks.access). Built from the viewer's `AskView` (`ask_view`): the answer,
    its claims and "who contributed" from what the agents let out to the viewer. `roster`: the caller's, whose
    remembered names are used again (policies are read afresh either way). `record`: the ask's stored record, when
    the caller has just read it (`load_transcript`; not read again)."""
    if record is None or record.ask.id != ask_id:
        record = None
        async with db.session() as session:
            ask = await session.get(models.Ask, ask_id)
    else:
        ask = record.ask
    if ask is None or (workspace_id is not None and ask.workspace_id != workspace_id):
        raise AskNotFoundError(ask_id)
    if roster is None or roster.workspace_id != ask.workspace_id:  # the caller's keeps the names it read already
        roster = Roster(db, ask.workspace_id)
    try:
        profile = await roster.profile(viewer)
    except UnknownMemberError as exc:
        raise AskNotAllowedError(answer_texts.answer_not_allowed()) from exc
    if not await may_view(db, settings, ask, profile):
        raise AskNotAllowedError(answer_texts.answer_not_allowed())
    record = record if record is not None else await load_transcript(db, ask_id, ask=ask)
    view = view_for(record, await viewer_of(db, ask.workspace_id, profile.handle))
    released = {message_id for _, message_id in view.released_ids()}  # lines that left to the viewer
    evidence = view.evidence
    lines = [SharedLine(s.member, s.text) for s in view.sent if s.kind != "recruit" and s.text and s.verdict == "sent"]
    shared = contributions(lines, requester=ask.requester, known=evidence)
    passed = {i: members for i, members in view.passed_on().items() if i in evidence}  # the outbox's word on credit
    claimed = [i for c in view.claims for i in c.get("sources", []) if i in evidence]
    cited = list(dict.fromkeys([*claimed, *passed]))
    visible = await WholeHistory(db).visible_ids(profile.viewer, [i for i in cited if not i.startswith("session:")])
    channels = await _channel_ids(db, ask.workspace_id, sorted(visible))
    sources: dict[str, SourceView] = {}
    for message_id in cited:
        line = evidence[message_id]
        credit = await _credit(roster, line, passed.get(message_id, []), ask.requester)
        sources[message_id] = _source(line, message_id, credit, message_id in visible, released, channels)
    claims = [
        ClaimView(c["text"], [sources[i] for i in dict.fromkeys(c.get("sources", [])) if i in sources])
        for c in view.claims
    ]
    withheld = {r.member: str(r.approval) for r in view.held if r.approval in ("denied", "timeout")}
    return AnswerView(
        ask_id=ask.id, status=ask.status, question=ask.question, requester=ask.requester, answer=view.answer,
        failure=ask.failure, claims=claims,
        contributors=await _contributors(roster, ask, view, shared, _own_passed(passed, evidence), sources, withheld),
        disagreements=view.disagreements, tried=view.tried, tried_shared=view.tried_shared,
        transcript_url=transcript_link(ask.id, profile.handle) if transcript_link else None,
        final_text=view.final_text, follow_up_of=ask.follow_up_of, cancelled_by=ask.cancelled_by,
        readable=view.answer_readable,
    )  # fmt: skip


@dataclass(frozen=True)
class _Credit:
    via: str
    via_name: str
    requester_own: bool
    credits: tuple[str, ...]


async def _credit(roster: Roster, line: dict, passers: list[str], requester: str) -> _Credit:
    """Whom a source is credited to: the requester when it is a line of her own memory, and each colleague whose
    agent's outbox record let it out to the viewer (`passers`); never an agent that did not pass it on. (The
    requester's agent passing a line on is no credit: it is hers, or it came from one of the colleagues.)"""
    own = str(line.get("agent", "")) == requester and not str(line.get("via", "")).endswith(RELAYED)
    names = tuple([(await _name(roster, m)) or m for m in passers if m != requester])
    if own:
        return _Credit(requester, (await _name(roster, requester)) or requester, True, names)
    via = next((m for m in passers if m != requester), "")
    return _Credit(via, names[0] if names else "", False, names[1:])


def _source(
    line: dict, message_id: str, credit: _Credit, visible: bool, released: set[str], channels: dict[str, str]
) -> SourceView:
    credited = {"requester_own": credit.requester_own, "credits": credit.credits}
    if visible:
        return SourceView(
            credit.via, credit.via_name, True, line.get("text"), line.get("channel"), line.get("sender"),
            line.get("ts"), channel_id=channels.get(message_id), message_id=message_id, **credited,
        )  # fmt: skip
    if message_id in released:  # the very line left an agent to the viewer
        return SourceView(
            credit.via, credit.via_name, False, line.get("text"), line.get("channel"), line.get("sender"),
            line.get("ts"), **credited,
        )  # fmt: skip
    return SourceView(credit.via, credit.via_name, False, None, None, None, None, **credited)


def _without_quote(source: SourceView) -> SourceView:
    return replace(source, text=None, channel_name=None, sender=None)


def _own_passed(passed: dict[str, list[str]], evidence: dict[str, dict]) -> dict[str, list[str]]:
    """Member -> the lines of their own memory their agent let out: a line their agent relays from another member's
    agent (its `via` names that agent) is that member's, not theirs."""
    found: dict[str, list[str]] = {}
    for message_id, members in passed.items():
        via = str(evidence[message_id].get("via", ""))
        for member in members:
            if not via.endswith(RELAYED) or via == f"{member}{RELAYED}":
                found.setdefault(member, []).append(message_id)
    return found


async def _name(roster: Roster, handle: str) -> str | None:
    try:
        return (await roster.identity(handle)).display_name
    except UnknownMemberError:
        return None


async def _channel_ids(db: Database, workspace_id: int, message_ids: list[str]) -> dict[str, str]:
    if not message_ids:
        return {}
    stmt = (
        select(store_models.Message.platform_id, store_models.Channel.platform_id)
        .join(store_models.Channel, store_models.Channel.id == store_models.Message.channel_id)
        .where(store_models.Message.workspace_id == workspace_id, store_models.Message.platform_id.in_(message_ids))
    )
    async with db.session() as session:
        return {message: channel for message, channel in (await session.execute(stmt)).all()}


async def _contributors(
    roster: Roster,
    ask: models.Ask,
    view: AskView,
    shared: dict[str, Contribution],
    own_passed: dict[str, list[str]],
    sources: dict[str, SourceView],
    withheld: dict[str, str],
) -> list[ContributorView]:
    handles = [*ask.colleagues, *(h for h in view.participants if h not in ask.colleagues and h != ask.requester)]
    views = []
    for handle in handles:
        found = shared.get(handle, Contribution(handle))
        own = [sources[i] for i in own_passed.get(handle, []) if i in sources]
        name = (await _name(roster, handle)) or handle
        brought_in = handle not in ask.colleagues
        views.append(ContributorView(handle, name, found.said, own, brought_in, withheld.get(handle)))
    return views
