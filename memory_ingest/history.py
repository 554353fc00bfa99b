"""Pull channel history through the port into the store, page by page, resumably.

Every page is stored together with the cursor that follows it in ONE transaction: a process killed at any point
either stored a page and its cursor or neither, so the next run resumes exactly where the last committed page
ended, and messages being unique by platform id, a page read twice adds nothing. Small pages (a DM with a handful
of lines) are grouped, several pages with their cursors to a transaction, up to about a page size of messages.

Thread replies have a cursor per thread. A thread becomes known (cursor '') in the same transaction as the page
holding its parent. A new reply to an old thread does not bring its parent back into the channel's history, so
the port reports a marker per known thread (`ChatPort.thread_states`: reply count and latest reply) and only
threads whose marker changed since their last read are read again. Threads the port leaves to live events (Slack:
parents older than 30 days) are read again on a run after downtime (the first of a process), when events were lost.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from bot.platform.port import ChatMessage, ChatPort, HistoryPage
from bot.store.chat_store import ChatStore
from bot.store.db import Database
from memory_ingest.mirror import Mirror


logger = logging.getLogger(__name__)

# Reads the page after a cursor (None = from the beginning).
PageReader = Callable[[str | None], Awaitable[HistoryPage]]
CursorKey = tuple[int, str]  # (channel database id, thread platform id or '' for the channel itself)


@dataclass
class PullCounts:
    added: int = 0
    skipped: int = 0  # posts by bots, or by senders the platform does not list


@dataclass
class _Batch:
    """Pages read but not yet committed: their messages, the cursors that follow them, threads they revealed."""

    messages: list[ChatMessage] = field(default_factory=list)
    cursors: dict[CursorKey, str] = field(default_factory=dict)
    threads: set[CursorKey] = field(default_factory=set)


class HistoryPuller:
    """Reads channels for one run; `cursors` is loaded once and then kept current in memory."""

    def __init__(
        self,
        port: ChatPort,
        db: Database,
        store: ChatStore,
        mirror: Mirror,
        *,
        page_size: int,
        learn_member: Callable[[str], Awaitable[bool]],
        since: datetime | None = None,  # a channel read for the first time starts here (None: at its beginning)
        after_downtime: bool = False,  # events may have been missed: threads left to them are read too, once
        opted_in_authors_only: bool = False,  # a message by a member who has not opted in is skipped
    ) -> None:
        self.port = port
        self.db = db
        self.store = store
        self.mirror = mirror
        self.page_size = page_size
        # Looks up one sender the store lacks (a Slack Connect guest, a member who joined since the mirror) by id.
        self.learn_member = learn_member
        self._not_members: set[str] = set()  # looked up this run and unknown to the platform: not asked again
        self.first_cursor = port.cursor_since(since) if since is not None else None
        self.after_downtime = after_downtime
        self.opted_in_authors_only = opted_in_authors_only
        self.cursors: dict[CursorKey, str] = {}
        self.counts = PullCounts()
        self._batch = _Batch()

    async def start(self) -> None:
        async with self.db.session() as session:
            self.cursors = await self.store.cursors(session, self.mirror.workspace_id)

    async def pull_channel(self, channel_id: str) -> None:
        """Top-level messages of a channel after its cursor (a failure propagates: the caller isolates it)."""
        db_channel = self.mirror.channel_ids[channel_id]

        async def top_level(cursor: str | None) -> HistoryPage:
            return await self.port.read_history(channel_id, cursor=cursor, limit=self.page_size)

        await self._pull((db_channel, ""), top_level)

    def known_threads(self, channel_id: str) -> list[str]:
        db_channel = self.mirror.channel_ids[channel_id]
        return sorted(t for c, t in self.cursors if c == db_channel and t)

    async def changed_threads(self, channel_id: str) -> dict[str, str]:
        """Known threads to read now, each with its new marker ('' when the port gives none): every thread whose
        marker changed since its last read (all of them when the port cannot tell)."""
        known = self.known_threads(channel_id)
        if not known:
            return {}
        states = await self.port.thread_states(channel_id, known)
        if states is None:
            return dict.fromkeys(known, "")
        async with self.db.session() as session:
            seen = await self.store.thread_markers(session, self.mirror.channel_ids[channel_id])
        changed = {t: states[t] for t in known if t in states and states[t] != seen.get(t, "")}
        if self.after_downtime:  # replies to old threads arrive as events, and none arrived while askwith was down
            changed.update({t: "" for t in known if t not in states})
        return changed

    async def pull_thread(self, channel_id: str, thread_id: str, marker: str = "") -> None:
        """New replies in one known thread, then its marker (a failure propagates: the caller isolates it)."""
        key = (self.mirror.channel_ids[channel_id], thread_id)
        await self._pull(key, self._replies_reader(channel_id, thread_id))
        if marker:
            await self._flush()  # the replies first: a marker must never claim replies not stored
            async with self.db.session() as session, session.begin():
                await self.store.set_thread_marker(session, key[0], thread_id, marker)

    async def finish(self) -> PullCounts:
        """Commit what is still pending; returns the run's counts."""
        await self._flush()
        return self.counts

    def _replies_reader(self, channel_id: str, thread_id: str) -> PageReader:
        async def replies(cursor: str | None) -> HistoryPage:
            return await self.port.read_replies(channel_id, thread_id, cursor=cursor, limit=self.page_size)

        return replies

    async def _pull(self, key: CursorKey, read: PageReader) -> None:
        first_read = key not in self.cursors and not key[1]  # a channel never read: its backfill may be bounded
        cursor = self.first_cursor if first_read else (self.cursors.get(key) or None)
        while True:
            page = await read(cursor)
            if page.messages or page.cursor != (cursor or ""):
                await self._add_page(key, page)
            cursor = page.cursor or cursor
            if not page.has_more or not page.messages:
                return

    async def _add_page(self, key: CursorKey, page: HistoryPage) -> None:
        keep = await self._memory_worthy(page.messages)
        self.counts.skipped += len(page.messages) - len(keep)
        self._batch.messages.extend(keep)
        self._batch.cursors[key] = page.cursor
        self.cursors[key] = page.cursor
        if not key[1]:  # a channel page: its thread parents become known threads
            for message in page.messages:
                if message.reply_count > 0 and (key[0], message.id) not in self.cursors:
                    self._batch.threads.add((key[0], message.id))
                    self.cursors[(key[0], message.id)] = ""
        if len(self._batch.messages) >= self.page_size:
            await self._flush()

    async def _flush(self) -> None:
        """One transaction: the pending pages' messages, their cursors and the threads they revealed."""
        batch, self._batch = self._batch, _Batch()
        if not (batch.messages or batch.cursors or batch.threads):
            return
        m = self.mirror
        async with self.db.session() as session, session.begin():
            self.counts.added += await self.store.add_messages(
                session,
                m.workspace_id,
                batch.messages,
                m.channel_ids,
                m.member_ids,
                opted_in_authors_only=self.opted_in_authors_only,
            )
            await self.store.ensure_thread_cursors(session, batch.threads)
            await self.store.set_cursors(session, batch.cursors)

    async def _memory_worthy(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """Drop bots' posts (askwith's own included) and posts by senders the platform does not know."""
        for sender in sorted({m.sender_id for m in messages} - self.mirror.member_ids.keys() - self._not_members):
            if not await self.learn_member(sender):
                self._not_members.add(sender)
        keep = []
        for message in messages:
            if message.sender_id in self.mirror.bot_ids:
                continue
            if message.sender_id not in self.mirror.member_ids:
                logger.warning("Skipping message %s: sender %s is not a member", message.id, message.sender_id)
                continue
            keep.append(message)
        return keep
