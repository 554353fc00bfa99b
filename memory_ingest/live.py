"""Live memory: what adapters call when the platform says something changed, so memory follows within seconds.

The platform-neutral API every adapter (Slack, Discord, local) uses; ids are platform ids within the store's
workspace `workspace_id` (`IngestWorker.workspace_id`, or `LiveMemory.workspace_id(key)`):

    live = worker.live                                        # one per ingestion worker (or LiveMemory(db, indexer))
    await live.edit_message(ws, "C1:1700.0001", "new text", written_at=edited)  # False: not stored (ingest it)
    await live.delete_messages(ws, ["C1:1700.0001"])          # + tombstones: a later backfill never brings them back
    await live.delete_messages_of(ws, "U1")                   # all U1 wrote (opted out where only opted-in are kept)
    await live.set_channel_readers(ws, "C1", ["U1", "U2"])    # recompute a channel's readers at once
    await live.set_member_reads(ws, {"U3": {"C1"}}, scope=["C1", "C2"])  # what members read, after an event
    await live.add_reader(ws, "C1", "U3"); await live.remove_reader(ws, "C1", "U3")
    await live.forget_channel_readers(ws, "C1")               # the bot left / can't verify: nobody reads it
    await live.delete_channel(ws, "C1")                       # gone on the platform: messages, sessions, vectors
    await live.set_channel_kind(ws, "C1", ChannelKind.PRIVATE)
    await live.set_member_deactivated(ws, "U1", True)         # reads nothing any more
    await live.forget_member(ws, "U1", other_readers={"UBOT"})  # `/askwith forget`: what memory holds for U1
    await live.settle()                                       # wait for the fuzzy re-index these changes queued

Messages keep their newest version whatever order the platform delivers create, edit and delete in: a version
replaces the stored one only when it was written later (`ChatMessage.edited_at`, else its `ts`), and a deletion
leaves a tombstone that a late create or edit never gets past.

Each call is one transaction on the store: clear memory (and its full-text index, which follows the message table)
is right when the call returns. Sessions holding an edited or deleted message are dropped at once with their vectors
(so fuzzy memory never returns the old words) and the session indexer re-sessionizes, re-summarizes and re-embeds the
channel in the background right after (`changed`, also called for every message stored live); summaries no session
uses any more are deleted.

Related core pieces: `bot.store.ingest_status.IngestStatusStore` (per-object status, backoff, last error),
`bot.store.sanitize.db_text` (storable text), `bot.store.truth` (the store functions under this class), and the
`Platform*Error` classes of `bot.errors` that a port raises so ingestion can retire, disable or back off one object.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bot.asks.forget import forget_member
from bot.memory.indexer import SessionIndexer
from bot.platform.port import ChannelKind
from bot.store import member_reads, truth
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database


logger = logging.getLogger(__name__)

REINDEX_DELAY_S = 0.5


class LiveMemory:
    def __init__(
        self, db: Database, indexer: SessionIndexer | None = None, *, reindex_delay_s: float = REINDEX_DELAY_S
    ) -> None:
        self.db = db
        self.indexer = indexer
        self.reindex_delay_s = reindex_delay_s  # a burst of changes is re-indexed once
        self.index_lock = asyncio.Lock()  # one fuzzy index pass at a time (live re-index or a scheduled run)
        self._dirty: set[int] = set()
        self._reindexing: asyncio.Task[None] | None = None

    async def workspace_id(self, key: WorkspaceKey) -> int | None:
        async with self.db.session() as session:
            return await ChatStore(self.db).find_workspace(session, key)

    # ------------------------------------------------------------------ messages
    async def edit_message(
        self, workspace_id: int, message_id: str, text: str, *, written_at: datetime | None = None
    ) -> bool:
        """Apply a version of a message written at `written_at` (None: now) if it is newer than the stored one;
        False when the message is not stored (nothing to edit: ingest the new version)."""
        async with self.db.session() as session, session.begin():
            keys = await truth.edit_message(session, workspace_id, message_id, text, written_at=written_at)
            if keys:
                await truth.purge_orphan_summaries(session)
        if keys is None:
            return False
        await self._drop_vectors(workspace_id, keys)
        self.changed(workspace_id)
        return True

    async def delete_messages(self, workspace_id: int, message_ids: Sequence[str]) -> int:
        """Delete messages (a bulk delete too) and tombstone them; returns how many were stored."""
        if not message_ids:
            return 0
        return await self._delete(workspace_id, lambda s: truth.delete_messages(self.db, s, workspace_id, message_ids))

    async def delete_messages_of(self, workspace_id: int, member_id: str) -> int:
        """Forget every message a member wrote (they opted out where only opted-in authors are kept), with the
        sessions and vectors holding them; no tombstones, so what they write after opting in again is kept."""
        return await self._delete(
            workspace_id, lambda s: truth.delete_messages_of(self.db, s, workspace_id, member_id)
        )

    async def _delete(
        self, workspace_id: int, delete: Callable[[AsyncSession], Awaitable[tuple[int, list[str]]]]
    ) -> int:
        """Run one deletion, drop the summaries and vectors it left without messages, re-index if anything went."""
        async with self.db.session() as session, session.begin():
            deleted, keys = await delete(session)
            if keys:
                await truth.purge_orphan_summaries(session)
        await self._drop_vectors(workspace_id, keys)
        if deleted:
            self.changed(workspace_id)
        return deleted

    # ------------------------------------------------------------------ who reads what
    async def set_channel_readers(self, workspace_id: int, channel_id: str, member_ids: Iterable[str]) -> bool:
        """Make a channel's readers exactly `member_ids` (as the platform lists them now); False if unknown."""
        async with self.db.session() as session, session.begin():
            channel = await truth.channel_id(session, workspace_id, channel_id)
            if channel is None:
                return False
            await truth.set_readers(session, workspace_id, channel, member_ids)
        return True

    async def set_member_reads(self, workspace_id: int, readable: dict[str, set[str]], *, scope: Iterable[str]) -> int:
        """Make what each member reads among the `scope` channels exactly `readable[member]` (member and channel
        platform ids); a deactivated or unknown member is left alone. Returns how many memberships changed."""
        changed = 0
        async with self.db.session() as session, session.begin():
            channels = await ChatStore(self.db).channel_ids(session, workspace_id)
            in_scope = {channels[c] for c in scope if c in channels}
            active = await member_reads.active_member_ids(session, workspace_id, sorted(readable))
            for member_id, reads in readable.items():
                if (member := active.get(member_id)) is None:
                    continue
                wanted = {channels[c] for c in reads if c in channels}
                changed += await member_reads.set_member_channels(
                    self.db, session, member, wanted=wanted, scope=in_scope
                )
        return changed

    async def add_reader(self, workspace_id: int, channel_id: str, member_id: str) -> bool:
        """A member joined a channel: they read its whole history, as on the platform. False if either is unknown."""
        async with self.db.session() as session, session.begin():
            channel = await truth.channel_id(session, workspace_id, channel_id)
            member = await truth.member_id(session, workspace_id, member_id)
            if channel is None or member is None:
                return False
            await truth.add_reader(self.db, session, channel, member)
        return True

    async def remove_reader(self, workspace_id: int, channel_id: str, member_id: str) -> None:
        async with self.db.session() as session, session.begin():
            channel = await truth.channel_id(session, workspace_id, channel_id)
            member = await truth.member_id(session, workspace_id, member_id)
            if channel is not None and member is not None:
                await truth.remove_reader(session, channel, member)

    async def forget_channel_readers(self, workspace_id: int, channel_id: str) -> None:
        """askwith can no longer verify who reads this channel (the bot left it): nobody reads its memory."""
        async with self.db.session() as session, session.begin():
            channel = await truth.channel_id(session, workspace_id, channel_id)
            if channel is not None:
                await truth.forget_readers(session, [channel])

    async def delete_channel(self, workspace_id: int, channel_id: str) -> None:
        """The channel is gone on the platform: everything memory holds of it goes too."""
        async with self.db.session() as session, session.begin():
            channel = await truth.channel_id(session, workspace_id, channel_id)
            if channel is None:
                return
            keys = await truth.delete_channel(session, channel)
            await truth.purge_orphan_summaries(session)
        await self._drop_vectors(workspace_id, keys)

    async def set_channel_kind(self, workspace_id: int, channel_id: str, kind: ChannelKind) -> None:
        async with self.db.session() as session, session.begin():
            channel = await truth.channel_id(session, workspace_id, channel_id)
            if channel is not None:
                await truth.set_channel_kind(session, channel, kind)

    async def set_member_deactivated(self, workspace_id: int, member_id: str, deactivated: bool) -> None:
        """A deactivated member reads nothing; a reactivated one gets their channels back at the next mirror."""
        async with self.db.session() as session, session.begin():
            member = await truth.member_id(session, workspace_id, member_id)
            if member is not None:
                await truth.set_deactivated(session, member, deactivated)

    async def forget_member(
        self, workspace_id: int, member_id: str, *, other_readers: Iterable[str]
    ) -> dict[str, int]:
        """A member's `/askwith forget` (`bot.asks.forget.forget_member`): their tokens, opt-in, conversations only
        they could see (`other_readers`: the bot, members whose own tokens also read them) with their vectors, and
        their asks. Returns rows deleted per kind."""
        return await forget_member(self.db, workspace_id, member_id, other_readers=other_readers, vectors=self.indexer)

    # ------------------------------------------------------------------ fuzzy memory
    async def settle(self) -> None:
        """Wait until the fuzzy re-index that changes queued is done (tests, benchmarks, shutdown)."""
        while self._reindexing is not None and not self._reindexing.done():
            await asyncio.gather(self._reindexing, return_exceptions=True)

    def changed(self, workspace_id: int) -> None:
        """Messages of the workspace changed (stored live, edited, deleted): re-index its fuzzy memory shortly."""
        if self.indexer is None:
            return
        self._dirty.add(workspace_id)
        if self._reindexing is None or self._reindexing.done():
            self._reindexing = asyncio.get_running_loop().create_task(self._reindex())

    async def _drop_vectors(self, workspace_id: int, keys: list[str]) -> None:
        # After the rows are gone: a vector whose session row is gone is never returned (fuzzy search checks the
        # database), and the re-index overwrites or deletes it.
        if keys and self.indexer is not None:
            await self.indexer.drop_vectors(workspace_id, keys)  # summaries and message windows

    async def _reindex(self) -> None:
        """Re-index every workspace marked dirty, until none is (changes arriving meanwhile are picked up)."""
        while self._dirty and self.indexer is not None:
            await asyncio.sleep(self.reindex_delay_s)
            workspace_id = self._dirty.pop()
            try:
                async with self.index_lock:
                    await self.indexer.update(workspace_id)
            except Exception:  # the next scheduled run re-indexes anyway; a live re-index must not die silently
                logger.exception("Live re-index of workspace %s failed", workspace_id)
