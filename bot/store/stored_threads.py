"""A thread as the mirror holds it: the parent, then its replies oldest first, newer than a given time.

    stored = await stored_thread(db, WorkspaceKey("slack", "T1"), "C1:1700000000.000100", after=page_end)
    [(m.platform_id, m.author_id, m.text) for m in stored.messages]

Events keep the mirror's threads current without any paced API call, so a surface that may read only one short page
of a long thread (Slack's 2025 limits: 15 messages a minute) takes the newer replies from here. Only channels askwith
mirrors are here; callers check that the reader is in the conversation before they show any of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import or_, select

from bot.store import models
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database


MAX_STORED_REPLIES = 1_000  # the newest this many replies of a thread are read; more is never context


@dataclass(frozen=True)
class StoredMessage:
    platform_id: str  # as the platform names it ("C1:1700000000.000100" on Slack)
    author_id: str  # the author's platform id
    text: str
    ts: datetime


@dataclass(frozen=True)
class StoredThread:
    parent: StoredMessage | None  # None: the parent is not mirrored (the thread may still have stored replies)
    replies: list[StoredMessage]  # oldest first, the newest `MAX_STORED_REPLIES` at most

    @property
    def messages(self) -> list[StoredMessage]:
        return [*([self.parent] if self.parent else []), *self.replies]


async def stored_thread(
    db: Database, workspace: WorkspaceKey, parent_id: str, *, after: datetime | None = None
) -> StoredThread:
    """The parent `parent_id` and its replies posted after `after` (all when None), as the mirror holds them now."""
    async with db.session() as session:
        workspace_id = await ChatStore(db).find_workspace(session, workspace)
        if workspace_id is None:
            return StoredThread(None, [])
        in_thread = or_(models.Message.platform_id == parent_id, models.Message.thread_parent_platform_id == parent_id)
        query = (
            select(models.Message, models.Member.platform_id)
            .join(models.Member, models.Member.id == models.Message.sender_id)
            .where(models.Message.workspace_id == workspace_id, in_thread)
            .order_by(models.Message.ts.desc(), models.Message.id.desc())
            .limit(MAX_STORED_REPLIES + 1)
        )
        rows = (await session.execute(query)).all()
    parent, replies = None, []
    for message, author in reversed(rows):
        stored = StoredMessage(message.platform_id, author, message.text, message.ts)
        if message.platform_id == parent_id:
            parent = stored
        elif after is None or _aware(message.ts) > _aware(after):
            replies.append(stored)
    return StoredThread(parent, replies[-MAX_STORED_REPLIES:])


def _aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes for UTC columns; compare as UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
