"""What Discord's gateway events change in memory, within seconds: a new message is stored, an edit rewrites it, a
deletion forgets it (clear memory at once, fuzzy memory on the indexer pass that follows), and anything that changes
who can read what recomputes visibility. Bursts of visibility events (a role edit touches every member) coalesce
into one recomputation; an event never reads history.

Once the server is mirrored, a visibility event changes only what it touches (`adapters.discord.guild_visibility`):
a member's roles, what that member reads; a role, what its holders read; a channel's overwrites or a private thread's
members, who reads that channel. The work runs in a thread, so interactions are answered meanwhile; the full
recomputation is the scheduled mirror's.

    sync = GatewaySync(port, ingest)
    await sync.message_edited(message, channel_id)
    await sync.member_roles(member_id, role_ids)
    await sync.settled()      # every requested change applied (tests, benchmarks)
"""

from __future__ import annotations

import asyncio
import logging

import discord

from adapters.discord.guild_visibility import GuildVisibility
from adapters.discord.port import DiscordPort
from bot.errors import AskwithError
from bot.store.channel_refs import workspace_channel_ids
from bot.store.message_places import thread_reply_ids
from memory_ingest.worker import IngestWorker


log = logging.getLogger(__name__)


class GatewaySync:
    def __init__(self, port: DiscordPort, ingest: IngestWorker) -> None:
        self.port = port
        self.ingest = ingest
        self.memory = ingest.live  # the core's live-memory API
        self._visibility_wanted = False
        self._visibility: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ messages
    async def message_created(self, message: discord.Message) -> None:
        """Stored at once; the core re-indexes fuzzy memory right after, not only on the next scheduled run."""
        if (chat_message := await self.port.message_from_event(message)) is not None:
            await self.ingest.ingest_message(chat_message)

    async def message_edited(self, message: discord.Message, channel_id: str) -> None:
        """The message's new text replaces the old everywhere memory holds it (not stored yet: the new version is);
        an edit that leaves nothing memory-worthy forgets it."""
        if (chat_message := await self.port.message_from_event(message)) is None:
            await self.messages_deleted(channel_id, [str(message.id)])
            return
        await self.ingest.apply_edit(chat_message)

    async def messages_deleted(self, channel_id: str, message_ids: list[str]) -> None:
        if deleted := await self.memory.delete_messages(await self._workspace_id(), message_ids):
            log.info("forgot %d deleted message(s) of %s", deleted, channel_id)

    # ------------------------------------------------------------------ who can read what
    def visibility_changed(self, reason: str) -> None:
        log.debug("visibility recomputation wanted: %s", reason)
        self._visibility_wanted = True
        if self._visibility is None or self._visibility.done():
            self._visibility = asyncio.create_task(self._visibility_loop(), name="askwith-discord-visibility")

    async def member_left(self, member_id: str) -> None:
        """A member who left the server reads nothing any more, at once."""
        await self.memory.set_member_deactivated(await self._workspace_id(), member_id, True)
        if (model := self.port.visibility) is None:
            self.visibility_changed(f"member {member_id} left")
            return
        async with model.lock:
            model.set_roles(member_id, None)

    async def member_roles(self, member_id: str, role_ids: list[str], *, joined: bool = False) -> None:
        """A member joined or their roles changed: what they read now, worked out for them alone, off the loop."""
        if (model := self.port.visibility) is None:
            self.visibility_changed(f"member {member_id} changed")
            return
        known = member_id in (self.ingest._mirror or await self.ingest.mirror()).member_ids
        # One who joined is looked up alone (one who left and came back is active again).
        if (joined or not known) and not await self.ingest.learn_member(member_id):
            return
        async with model.lock:
            model.set_roles(member_id, role_ids)
            readable = await asyncio.to_thread(model.readable, [member_id])
            await self._write(readable, model)

    async def role_changed(self, role_id: str, permissions: int | None) -> None:
        """A role created, changed or deleted: its holders' reads, worked out per role set, off the loop."""
        if (model := self.port.visibility) is None:
            self.visibility_changed(f"role {role_id} changed")
            return
        async with model.lock:
            holders = model.set_role(role_id, permissions)
            readable = await asyncio.to_thread(model.readable, holders)
            await self._write(readable, model)

    async def channel_changed(self, channel_id: str) -> None:
        """A channel created or its overwrites changed: its readers (and its private threads') looked up alone."""
        if (model := self.port.visibility) is None:
            self.visibility_changed(f"channel {channel_id} changed")
            return
        threads = [t for t, thread in model.private_threads.items() if thread.parent_id == channel_id]
        for scope in [channel_id, *threads]:
            await self.thread_changed(scope)

    async def thread_changed(self, channel_id: str) -> None:
        """A channel or private thread whose readers may have changed: looked up alone (never a whole mirror); one
        askwith can no longer read keeps no readers."""
        if not await self.ingest.learn_channel(channel_id):
            await self.memory.forget_channel_readers(await self._workspace_id(), channel_id)

    async def _write(self, readable: dict[str, set[str]], model: GuildVisibility) -> None:
        scope = [*model.channels, *model.private_threads]
        await self.memory.set_member_reads(await self._workspace_id(), readable, scope=scope)

    async def channel_deleted(self, channel_id: str) -> None:
        """A channel or thread deleted on Discord: everything memory holds of it goes (its messages are gone for
        everyone): a channel or private thread whole, a public thread's replies (filed under its parent)."""
        workspace_id = await self._workspace_id()
        await self.memory.delete_channel(workspace_id, channel_id)
        reply_ids = await thread_reply_ids(self.ingest.db, workspace_id, channel_id)
        await self.memory.delete_messages(workspace_id, reply_ids)
        if (model := self.port.visibility) is None:
            self.visibility_changed(f"channel {channel_id} deleted")
            return
        async with model.lock:
            model.set_channel(channel_id, None)
            model.set_private_thread(channel_id, None)

    async def forget_server(self) -> None:
        """The bot left the server: no channel's readers can be verified any more, so nobody reads any of them."""
        workspace_id = await self._workspace_id()
        channels = await workspace_channel_ids(self.ingest.db, workspace_id)
        for channel_id in channels:
            await self.memory.forget_channel_readers(workspace_id, channel_id)

    async def _visibility_loop(self) -> None:
        while self._visibility_wanted:
            self._visibility_wanted = False
            try:
                await self.ingest.mirror()
            except AskwithError as exc:
                log.warning("visibility not recomputed: %s", exc)

    async def settled(self) -> None:
        """Wait until every change asked for so far is applied (fuzzy memory included)."""
        while self._visibility is not None and not self._visibility.done():
            await asyncio.gather(self._visibility, return_exceptions=True)
        await self.memory.settle()

    async def _workspace_id(self) -> int:
        return self.ingest.workspace_id or (await self.ingest.mirror()).workspace_id
