"""A member's own pages: the asks they made, and what their agent shared (the audit log of their own agent).

One query function each, used by Slack's App Home, Discord's panel, the web settings page and the CLI:

    asks = await recent_asks(db, workspace_id, "alice", limit=10)   # [RecentAsk], newest first
    log = await shared_by(db, workspace_id, "bob", limit=20)         # [SharedItem], newest first
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

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
    ask = models.Ask
    stmt = (
        select(ask)
        .where(ask.workspace_id == workspace_id, ask.requester == member)
        .order_by(ask.id.desc())
        .limit(limit)
    )
    async with db.session() as session:
        rows = list((await session.execute(stmt)).scalars())
    return [
        RecentAsk(r.id, r.question, list(r.colleagues), r.status, r.stage, r.answer, r.created_at, r.finished_at)
        for r in rows
    ]


SCAN_PER_ITEM = 25  # turns read for each line "What my agent shared" may show


async def shared_by(db: Database, workspace_id: int, member: str, limit: int = 20) -> list[SharedItem]:
    """What `member`'s agent shared (turns that carried facts and were not withheld), with whom, when, and whether
    the member approved it or their policy let it through; newest first, among the agent's newest
    `limit * SCAN_PER_ITEM` turns in others' asks (a member whose agent mostly declines would otherwise have every
    turn they ever took read, decoded and dropped on each visit to their settings)."""
    turn, conversation, ask = models.Turn, models.Conversation, models.Ask
    stmt = (
        select(
            turn.data, turn.utterance, turn.created_at, conversation.participants, ask.id, ask.requester, ask.question
        )
        .join(conversation, conversation.id == turn.conversation_id)
        .join(ask, ask.id == conversation.ask_id)
        .where(ask.workspace_id == workspace_id, turn.agent == member, conversation.status != "abandoned")
        .where(ask.requester != member)  # their own asks share nothing of theirs with anyone else
        .order_by(turn.created_at.desc(), turn.id.desc())
        .limit(limit * SCAN_PER_ITEM)
    )
    items: list[SharedItem] = []
    async with db.session() as session:
        async for data, utterance, at, participants, ask_id, requester, question in await session.stream(stmt):
            if (sent := (data.get("sharing") or {}).get("sent")) is not None:  # the outbox's record: exactly what left
                if item := _sent_item(sent, data, ask_id, requester, question, at):
                    items.append(item)
                if len(items) >= limit:
                    break
                continue
            if not data.get("shared_facts") or data.get("declined"):
                continue
            if data.get("approval") not in (None, "approved"):
                continue  # denied, timed out, unreachable: nothing left the agent
            partner = next((p for p in participants if p != member), requester)
            approval = "approved" if data.get("approval") == "approved" else "auto"
            items.append(SharedItem(ask_id, requester, partner, question, without_ids(utterance), at, approval))
            if len(items) >= limit:
                break
    return items


def _sent_item(sent: dict, data: dict, ask_id: int, requester: str, question: str, at: datetime) -> SharedItem | None:
    """An outbox record as a sharing-log line: what left (without message ids), to its whole audience."""
    if sent.get("verdict") != "sent" or not (data.get("shared_facts") or sent.get("approval")):
        return None
    approval = "approved" if str(sent.get("approval") or "").startswith("approved") else "auto"
    audience = ", ".join(sent.get("audience") or [requester])
    return SharedItem(
        ask_id, requester, audience, question, conversation_texts.without_ids(str(sent["text"])), at, approval
    )
