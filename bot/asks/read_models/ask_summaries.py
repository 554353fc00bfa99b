"""Asks as the web app lists them: who took part, status, question, answer, cost."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from sqlalchemy import select

from bot.asks import models
from bot.store.db import Database


LIST_LIMIT = 500  # newest asks shown on one admin page
PAGE = 50  # a member's asks on one page of "My conversations"
SCAN_BATCH, SCAN_LIMIT = 100, 2_000  # the workspace's asks read at a time, and at most, to fill a member's page


@dataclass
class AskSummary:
    id: int
    workspace_id: int
    status: str
    requester: str
    participants: list[str]  # requester first, then everyone whose agent took part
    question: str
    answer: str | None
    failure: str | None
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    wall_s: float
    created_at: datetime
    ablations: list[str] = field(default_factory=list)
    withheld: bool = False  # a colleague said no to a share (or let it time out)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def seen_by(self, member: str, *, raw: bool = False) -> AskSummary:
        """As a list shows it to `member`: the answer is the requester's (anyone else reads it on the transcript,
        which shows it only when everything it rests on was let out to them); `raw`: an admin with raw access."""
        return self if raw or member == self.requester else replace(self, answer=None)

    @property
    def shown_status(self) -> str:
        """The status as a list shows it: an ask that found nothing because a colleague kept it back did not fail."""
        return "withheld" if self.withheld and self.status in ("failed", "unsupported") else self.status


def summarize(ask: models.Ask, conversation_participants: list[list[str]]) -> AskSummary:
    people = [ask.requester, *ask.colleagues]
    for participants in conversation_participants:
        people.extend(participants)
    return AskSummary(
        id=ask.id, workspace_id=ask.workspace_id, status=ask.status, requester=ask.requester,
        participants=list(dict.fromkeys(people)), question=ask.question, answer=ask.answer, failure=ask.failure,
        llm_calls=ask.llm_calls, prompt_tokens=ask.prompt_tokens, completion_tokens=ask.completion_tokens,
        wall_s=ask.wall_s, created_at=ask.created_at, ablations=list(ask.ablations or []),
    )  # fmt: skip


async def recent_asks(
    db: Database, *, workspace_id: int | None = None, status: str | None = None, before: int | None = None,
    limit: int = LIST_LIMIT,
) -> list[AskSummary]:  # fmt: skip
    """The newest asks (of one workspace, of one status, older than ask `before`), newest first, with everyone who
    took part."""
    stmt = select(models.Ask).order_by(models.Ask.id.desc()).limit(limit)
    if before is not None:
        stmt = stmt.where(models.Ask.id < before)
    if workspace_id is not None:
        stmt = stmt.where(models.Ask.workspace_id == workspace_id)
    if status is not None:
        stmt = stmt.where(models.Ask.status == status)
    async with db.session() as session:
        asks = list((await session.execute(stmt)).scalars())
        ids = [a.id for a in asks]
        rows = await session.execute(
            select(models.Conversation.ask_id, models.Conversation.participants).where(
                models.Conversation.ask_id.in_(ids)
            )
        )
        by_ask: dict[int, list[list[str]]] = {}
        for ask_id, participants in rows:
            by_ask.setdefault(ask_id, []).append(list(participants))
        said_no = models.Approval.status.in_(("denied", "timeout"))
        refused = select(models.Approval.ask_id).where(models.Approval.ask_id.in_(ids), said_no)
        withheld = set((await session.execute(refused)).scalars())
    return [replace(summarize(a, by_ask.get(a.id, [])), withheld=a.id in withheld) for a in asks]


async def asks_of_member(
    db: Database, workspace_id: int, member: str, *, before: int | None = None, page: int = PAGE
) -> list[AskSummary]:
    """The newest `page` asks `member` started or whose agent took part in (older than ask `before`), newest first,
    as they may see it in a list. The workspace's asks are read in batches until the page is full, at most
    `SCAN_LIMIT` of them a page: a page costs the same however long the workspace's history."""
    found: list[AskSummary] = []
    scanned = 0
    while len(found) < page and scanned < SCAN_LIMIT:
        batch = await recent_asks(db, workspace_id=workspace_id, before=before, limit=min(SCAN_BATCH, SCAN_LIMIT))
        found += [a.seen_by(member) for a in batch if member in a.participants]
        if len(batch) < SCAN_BATCH:
            break
        scanned, before = scanned + len(batch), batch[-1].id
    return found[:page]


async def ask_and_summary(db: Database, ask_id: int) -> tuple[models.Ask, AskSummary] | None:
    """The ask's row and its summary (everyone who took part in any of its conversations): a page checks who may
    read it with the summary, then hands the row on to what it reads next (`transcript_page.load_transcript`)."""
    async with db.session() as session:
        ask = await session.get(models.Ask, ask_id)
        if ask is None:
            return None
        rows = await session.execute(
            select(models.Conversation.participants).where(models.Conversation.ask_id == ask_id)
        )
        return ask, summarize(ask, [list(p) for p in rows.scalars()])
