"""Pull one channel's history through the port into the store, page by page, resumably.

Every page is stored together with the cursor that follows it in ONE transaction: a process killed at any point
either stored a page and its cursor or neither, so the next run resumes exactly where the last committed page
ended; messages are unique by platform id, so even a page read twice adds nothing. Thread replies have a cursor per
thread; a thread becomes known (cursor '') in the same transaction as the page holding its parent, and every known
thread is polled on every run, since new replies to an old thread do not bring its parent back into the history.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.port import ChatMessage, ChatPort, HistoryPage
from bot.store.chat_store import ChatStore
from bot.store.db import Database
from memory_ingest.mirror import Mirror


logger = logging.getLogger(__name__)

# Reads the page after a cursor (None = from the beginning).
PageReader = Callable[[str | None], Awaitable[HistoryPage]]


@dataclass
class PullCounts:
    added: int = 0
    skipped: int = 0

    def __iadd__(self, other: PullCounts) -> PullCounts:
        self.added += other.added
        self.skipped += other.skipped
        return self


class HistoryPuller:
    def __init__(
        self,
        port: ChatPort,
        db: Database,
        store: ChatStore,
        *,
        page_size: int,
        refresh_members: Callable[[Mirror], Awaitable[None]],
    ) -> None:
        self.port = port
        self.db = db
        self.store = store
        self.page_size = page_size
        self.refresh_members = refresh_members  # called once when a page names a sender the store lacks

    async def pull_channel(self, mirror: Mirror, channel_id: str) -> PullCounts:
        """Everything new in a channel: top-level messages after its cursor, then replies in every known thread."""
        db_channel = mirror.channel_ids[channel_id]

        async def top_level(cursor: str | None) -> HistoryPage:
            return await self.port.read_history(channel_id, cursor=cursor, limit=self.page_size)

        counts = await self._pull(mirror, db_channel, "", top_level)
        async with self.db.session() as session:
            threads = await self.store.thread_cursors(session, db_channel)
        for thread_id in sorted(threads):
            counts += await self._pull(mirror, db_channel, thread_id, self._replies_reader(channel_id, thread_id))
        return counts

    def _replies_reader(self, channel_id: str, thread_id: str) -> PageReader:
        async def replies(cursor: str | None) -> HistoryPage:
            return await self.port.read_replies(channel_id, thread_id, cursor=cursor, limit=self.page_size)

        return replies

    async def _pull(self, mirror: Mirror, db_channel: int, thread_id: str, read: PageReader) -> PullCounts:
        async with self.db.session() as session:
            cursor = await self.store.get_cursor(session, db_channel, thread_id) or None
        counts = PullCounts()
        while True:
            page = await read(cursor)
            if page.messages or page.cursor != (cursor or ""):
                counts += await self._store_page(mirror, db_channel, thread_id, page)
            cursor = page.cursor or cursor
            if not page.has_more or not page.messages:
                return counts

    async def _store_page(self, mirror: Mirror, db_channel: int, thread_id: str, page: HistoryPage) -> PullCounts:
        keep = await self._memory_worthy(mirror, page.messages)
        parents = [m.id for m in page.messages if m.reply_count > 0] if not thread_id else []
        async with self.db.session() as session, session.begin():
            added = await self.store.add_messages(
                session, mirror.workspace_id, keep, mirror.channel_ids, mirror.member_ids
            )
            await self.store.ensure_thread_cursors(session, db_channel, parents)
            await self.store.set_cursor(session, db_channel, page.cursor, thread_id)
        return PullCounts(added=added, skipped=len(page.messages) - len(keep))

    async def _memory_worthy(self, mirror: Mirror, messages: list[ChatMessage]) -> list[ChatMessage]:
        """Drop bots' posts (askwith's own included) and posts by senders the platform does not list."""
        if any(m.sender_id not in mirror.member_ids for m in messages):
            await self.refresh_members(mirror)
        keep = []
        for message in messages:
            if message.sender_id in mirror.bot_ids:
                continue
            if message.sender_id not in mirror.member_ids:
                logger.warning("Skipping message %s: sender %s is not a member", message.id, message.sender_id)
                continue
            keep.append(message)
        return keep
