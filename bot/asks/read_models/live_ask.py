"""An ask as its live page shows it: where it stands now (the core's stored progress), and once finished its rich
answer as the viewer may see it (`answer_view`), with links that open each visible source in the workspace.

    live = await load_live_ask(db, settings, port, ask_id, viewer="alice")   # None: no such ask
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import select

from bot.agents.roster import Roster
from bot.asks import models
from bot.asks.feedback import FeedbackTally, feedback_tally, vote_of
from bot.asks.progress import Progress, read_progress
from bot.asks.read_models.answer_view import AnswerView, answer_view
from bot.errors import UnknownMemberError
from bot.platform.port import ChatPort
from bot.settings import Settings
from bot.store.db import Database


FINISHED = frozenset({*models.FINISHED, models.AskStatus.INTERRUPTED})
THREAD_DEPTH = 5  # earlier asks of a follow-up chain shown above the current one


@dataclass(frozen=True)
class EarlierAsk:
    id: int
    question: str
    answer: str | None


@dataclass(frozen=True)
class WaitingApproval:
    """A colleague's approval the ask waits for: whose, and until when (then it counts as a no)."""

    name: str  # the colleague's display name
    deadline: datetime


@dataclass
class LiveAsk:
    id: int
    workspace_id: int
    requester: str
    colleagues: list[str]
    question: str
    status: str
    created_at: datetime
    progress: Progress
    answer: AnswerView | None = None  # once finished, as the viewer may see it
    source_links: dict[str, str] = field(default_factory=dict)  # message id -> where the workspace shows it
    vote: int | None = None  # the viewer's 👍 (+1) / 👎 (-1)
    tally: FeedbackTally = FeedbackTally(0, 0)
    thread: list[EarlierAsk] = field(default_factory=list)  # the follow-up chain, oldest first
    waiting_for: list[WaitingApproval] = field(default_factory=list)  # pending approvals, soonest deadline first
    names: dict[str, str] = field(default_factory=dict)  # handle -> display name of the requester and colleagues

    def name(self, handle: str) -> str:
        return self.names.get(handle, handle)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


async def load_ask_row(db: Database, ask_id: int) -> models.Ask | None:
    async with db.session() as session:
        return await session.get(models.Ask, ask_id)


async def load_live_ask(db: Database, settings: Settings, port: ChatPort, ask: models.Ask, *, viewer: str) -> LiveAsk:
    """`ask` as `viewer` (a handle the caller has checked may follow it) sees it now."""
    progress = await read_progress(db, ask.id)
    assert progress is not None  # the row exists: `ask` was read from it
    live = LiveAsk(
        id=ask.id, workspace_id=ask.workspace_id, requester=ask.requester, colleagues=list(ask.colleagues),
        question=ask.question, status=ask.status, created_at=ask.created_at, progress=progress,
        thread=await _thread(db, ask, viewer), names=await _names(db, ask),
    )  # fmt: skip
    if not live.finished:
        live.waiting_for = await waiting_approvals(db, ask)
        return live
    live.answer = await answer_view(db, ask.id, viewer=viewer, settings=settings, workspace_id=ask.workspace_id)
    for source in live.answer.linked_sources:
        if source.visible_to_viewer and source.channel_id and source.message_id:
            if url := await port.permalink(source.channel_id, source.message_id):
                live.source_links[source.message_id] = url
    live.vote = await vote_of(db, ask.id, viewer)
    live.tally = await feedback_tally(db, ask.id)
    return live


async def _names(db: Database, ask: models.Ask) -> dict[str, str]:
    """Members are shown by their names; a handle no longer known stays a handle."""
    roster, names = Roster(db, ask.workspace_id), {}
    for handle in [ask.requester, *ask.colleagues]:
        try:
            names[handle] = (await roster.profile(handle)).display_name
        except UnknownMemberError:
            pass
    return names


async def waiting_approvals(db: Database, ask: models.Ask) -> list[WaitingApproval]:
    stmt = (
        select(models.Approval.member_id, models.Approval.deadline_at)
        .where(models.Approval.ask_id == ask.id, models.Approval.status == "pending")
        .order_by(models.Approval.deadline_at)
    )
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    roster = Roster(db, ask.workspace_id)
    waiting = []
    for member_id, deadline in rows:
        try:
            name = (await roster.profile(member_id)).display_name
        except UnknownMemberError:
            name = member_id
        waiting.append(WaitingApproval(name, deadline if deadline.tzinfo else deadline.replace(tzinfo=UTC)))
    return waiting


async def _thread(db: Database, ask: models.Ask, viewer: str) -> list[EarlierAsk]:
    """The earlier asks this one follows up, as far as they are the viewer's own (another member's stays out)."""
    earlier: list[EarlierAsk] = []
    next_id = ask.follow_up_of
    while next_id is not None and len(earlier) < THREAD_DEPTH:
        row = await load_ask_row(db, next_id)
        if row is None or row.workspace_id != ask.workspace_id or row.requester != viewer:
            break
        earlier.append(EarlierAsk(row.id, row.question, row.answer or row.failure))
        next_id = row.follow_up_of
    return earlier[::-1]
