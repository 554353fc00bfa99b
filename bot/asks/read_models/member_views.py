"""A member's own pages: the asks they made, and what their agent shared (the audit log of their own agent).

One query function each, used by Slack's App Home, Discord's panel, the web settings page and the CLI; a page that
shows both reads them in one session:

    asks = await recent_asks(db, workspace_id, "alice", limit=10)   # [RecentAsk], newest first
    log = await shared_by(db, workspace_id, "bob", limit=20)         # [SharedItem], newest first
    async with db.session() as session:
        asks, log = await read_recent_asks(session, ...), await read_shared_by(session, ...)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.asks import models
from bot.asks.read_models.contributions import without_ids
from bot.store.db import Database
from bot.texts import conversation_texts


@dataclass(frozen=True)
class RecentAsk:
    ask_id: int
    question: str
    colleagues: list[str]  # handles
    status: str
    stage: str | None  # the latest progress stage (bot.asks.progress.Stage value)
    answer: str | None
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class SharedItem:
    ask_id: int
    requester: str  # handle of the member whose question it answered
    with_agent: str  # handle of the member whose agent it was said to (the requester's, or the one who brought it in)
    question: str
    text: str  # what the agent said, its message ids removed (they are the member's own, not for reading)
    at: datetime
    approval: str  # "auto" (policy auto), or the member's decision: "approved"


async def recent_asks(db: Database, workspace_id: int, member: str, limit: int = 10) -> list[RecentAsk]:
    """The asks `member` (handle) made, newest first."""
    async with db.session() as session:
        return await read_recent_asks(session, workspace_id, member, limit)


async def read_recent_asks(session: AsyncSession, workspace_id: int, member: str, limit: int) -> list[RecentAsk]:
    """`recent_asks` in a session the caller holds."""
    ask = models.Ask
    stmt = (
        select(ask.id, ask.question, ask.colleagues, ask.status, ask.stage, ask.answer, ask.created_at)
        .add_columns(ask.finished_at)
        .where(ask.workspace_id == workspace_id, ask.requester == member)
        .order_by(ask.id.desc())
        .limit(limit)
    )
    return [
        RecentAsk(ask_id, question, list(colleagues), status, stage, answer, created_at, finished_at)
        for ask_id, question, colleagues, status, stage, answer, created_at, finished_at in await session.execute(stmt)
    ]


SCAN_PER_ITEM = 25  # turns read for each line "What my agent shared" may show


async def shared_by(db: Database, workspace_id: int, member: str, limit: int = 20) -> list[SharedItem]:
    """What `member`'s agent shared (turns that carried facts and were not withheld), with whom, when, and whether
    the member approved it or their policy let it through; newest first, among the agent's newest
    `limit * SCAN_PER_ITEM` turns in others' asks (a member whose agent mostly declines would otherwise have every
    turn they ever took read, decoded and dropped on each visit to their settings)."""
    async with db.session() as session:
        return await read_shared_by(session, workspace_id, member, limit)


async def read_shared_by(session: AsyncSession, workspace_id: int, member: str, limit: int) -> list[SharedItem]:
    """`shared_by` in a session the caller holds."""
    turn, conversation, ask = models.Turn, models.Conversation, models.Ask
    newest = (  # the turns to scan, by id: what is read of them is read of these alone
        select(turn.id)
        .join(conversation, conversation.id == turn.conversation_id)
        .join(ask, ask.id == conversation.ask_id)
        .where(ask.workspace_id == workspace_id, turn.agent == member, conversation.status != "abandoned")
        .where(ask.requester != member)  # their own asks share nothing of theirs with anyone else
        .order_by(turn.created_at.desc(), turn.id.desc())
        .limit(limit * SCAN_PER_ITEM)
        .subquery()
    )
    sqlite = session.get_bind().dialect.name == "sqlite"
    stmt = (
        select(*(_SHARING_FIELDS if sqlite else (turn.data,)), turn.utterance, turn.created_at)
        .add_columns(conversation.participants, ask.id, ask.requester, ask.question)
        .join(newest, newest.c.id == turn.id)
        .join(conversation, conversation.id == turn.conversation_id)
        .join(ask, ask.id == conversation.ask_id)
        .order_by(turn.created_at.desc(), turn.id.desc())
    )
    items: list[SharedItem] = []
    async for row in await session.stream(stmt):
        if sqlite:
            sent, shared_facts, declined, approval, utterance, at, participants, ask_id, requester, question = row
        else:
            data, utterance, at, participants, ask_id, requester, question = row
            sent, shared_facts = (data.get("sharing") or {}).get("sent"), data.get("shared_facts")
            declined, approval = data.get("declined"), data.get("approval")
        if sent is not None:  # the outbox's record: exactly what left
            if item := _sent_item(sent, bool(shared_facts), ask_id, requester, question, at):
                items.append(item)
            if len(items) >= limit:
                break
            continue
        if not shared_facts or declined:
            continue
        if approval not in (None, "approved"):
            continue  # denied, timed out, unreachable: nothing left the agent
        partner = next((p for p in participants if p != member), requester)
        decided = "approved" if approval == "approved" else "auto"
        items.append(SharedItem(ask_id, requester, partner, question, without_ids(utterance), at, decided))
        if len(items) >= limit:
            break
    return items


# On SQLite the four fields of a turn's `data` the log reads are picked out by the database (`json_extract`): the
# rest of it (the prompts the model saw, the evidence, the think output) is most of its size, and decoding all of it
# for up to 500 turns a visit was most of the settings page's work. A missing field, or a JSON null, reads as None, as
# `dict.get` gives it; a JSON true or false reads as 1 or 0, which the log only ever tests for truth. PostgreSQL keeps
# `data` as `json` text and parses it whole for each field picked out: four fields cost more there than decoding
# `data` once here, so there the log decodes it.
_SHARING_FIELDS = (
    models.Turn.data[("sharing", "sent")],
    models.Turn.data["shared_facts"],
    models.Turn.data["declined"],
    models.Turn.data["approval"],
)


def _sent_item(
    sent: dict, shared_facts: bool, ask_id: int, requester: str, question: str, at: datetime
) -> SharedItem | None:
    """An outbox record as a sharing-log line: what left (without message ids), to its whole audience."""
    if sent.get("verdict") != "sent" or not (shared_facts or sent.get("approval")):
        return None
    approval = "approved" if str(sent.get("approval") or "").startswith("approved") else "auto"
    audience = ", ".join(sent.get("audience") or [requester])
    return SharedItem(
        ask_id, requester, audience, question, conversation_texts.without_ids(str(sent["text"])), at, approval
    )
