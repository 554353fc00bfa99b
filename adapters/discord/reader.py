"""Reading a Discord server for askwith: its members, the channels and threads the bot can read with who may read
each (roles, permission overwrites, thread membership), and their history, oldest first.

Reads go through the REST API (no gateway cache needed, so a backfill works before the bot has connected). Threads
are channels on Discord; askwith files a public thread under its parent with the thread's id, and a private thread
as a channel of its own (see `adapters.discord.threads`). A forum's top level is its posts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from datetime import datetime
from typing import Any

import discord

from adapters.discord import convert, texts
from adapters.discord.calls import platform_call
from adapters.discord.guild_visibility import GuildVisibility, PrivateThread
from adapters.discord.member_cache import cache_listed_members
from adapters.discord.permissions import GuildPermissions
from adapters.discord.threads import FORUM_TYPES, ThreadDirectory, is_private, is_thread
from bot.errors import ChatPlatformError, PlatformObjectGoneError, WorkspaceError
from bot.platform.port import Channel, ChatMessage, HistoryPage, Member, WorkspaceInfo


log = logging.getLogger(__name__)

MAX_PAGE = 100  # Discord's largest page of channel messages
MEMBERS_PAGE = 1000
JUST_LISTED_S = 60.0  # a member listing this recent serves the channel listing that follows it in a mirror
AGENTS_CHANNEL_NAME = "askwith-agents"
_MEMORY_TYPES = {discord.MessageType.default, discord.MessageType.reply}


class GuildReading:
    """The reading half of `DiscordPort` (a mixin: the port holds the state)."""

    client: discord.Client
    http: discord.http.HTTPClient
    threads: ThreadDirectory
    replies: Any
    _guild_id: str | None
    _agents_channel_id: str | None
    _places: dict[str, tuple[str, str | None]]
    _forum_posts: dict[str, list[dict[str, Any]]]
    _role_names: dict[str, str]  # role id -> name, refreshed whenever the server is read (readable role mentions)
    _just_listed: tuple[float, list[dict[str, Any]]] | None = None  # (when, members) of the last member listing
    visibility: GuildVisibility | None = None  # who reads what as of the last listing, kept current by events

    # ------------------------------------------------------------------ the server
    async def guild_id(self) -> str:
        """The configured server, or the only one the bot is in."""
        if not self._guild_id:
            async with platform_call("list the bot's servers"):
                guilds = await self.http.get_guilds(limit=2)
            if len(guilds) != 1:
                raise WorkspaceError(texts.guild_ambiguous(len(guilds)))
            self._guild_id = str(guilds[0]["id"])
        return self._guild_id

    async def _guild_payload(self) -> dict[str, Any]:
        async with platform_call("read the server"):
            guild = dict(await self.http.get_guild(await self.guild_id(), with_counts=False))
        self._role_names = {str(r["id"]): str(r["name"]) for r in guild.get("roles", []) if r["id"] != guild["id"]}
        return guild

    async def _member_payloads(self, *, just_listed: bool = False) -> list[dict[str, Any]]:
        """Every member object, over REST. `just_listed`: the listing `list_members` made moments ago, if any (a
        mirror lists the members, then the channels: one listing serves both, taken once)."""
        listed, self._just_listed = self._just_listed, None
        if just_listed and listed is not None and time.monotonic() - listed[0] < JUST_LISTED_S:
            return listed[1]
        guild_id = await self.guild_id()
        members: list[dict[str, Any]] = []
        after: str | None = None
        while True:
            async with platform_call("list the server's members"):
                page = await self.http.get_members(guild_id, MEMBERS_PAGE, after)
            members.extend(page)
            if len(page) < MEMBERS_PAGE:
                self._just_listed = (time.monotonic(), members)
                return members
            after = str(page[-1]["user"]["id"])

    async def permissions(self, *, just_listed: bool = False) -> GuildPermissions:
        members = await self._member_payloads(just_listed=just_listed)
        # discord.py's cache gets the members it lacks from this listing (no gateway chunking: loaded once)
        cache_listed_members(self.client, await self.guild_id(), members)
        return GuildPermissions.from_payloads(await self._guild_payload(), members)

    # ------------------------------------------------------------------ reading
    async def workspace_info(self) -> WorkspaceInfo:
        guild = await self._guild_payload()
        return WorkspaceInfo(str(guild["id"]), str(guild["name"]))

    async def list_members(self) -> list[Member]:
        return [convert.member(m) for m in await self._member_payloads()]

    async def list_channels(self) -> list[Channel]:
        """Channels the bot can read, each with the members who can read its history (not the agents' one), and
        each private thread as a channel of its own (its readers: its members and the parent's moderators)."""
        guild = await self.permissions(just_listed=True)
        self.threads.forget_members()
        async with platform_call("list the server's channels"):
            payloads = await self.http.get_all_guild_channels(guild.guild_id)
        parents: dict[str, dict[str, Any]] = {}
        channels = []
        for payload in payloads:
            if int(payload["type"]) not in convert.TEXT_CHANNEL_TYPES or self._is_agents_channel(payload):
                continue
            readers = guild.readers(payload)
            if self._bot_id() not in readers:
                continue  # the bot cannot read it, so it can hold no memory of it
            parents[str(payload["id"])] = payload
            self._places[str(payload["id"])] = (str(payload["id"]), None)
            channels.append(convert.channel(payload, public=guild.everyone_reads(payload), readers=readers))
        async with platform_call("list the server's threads"):
            threads = await self.threads.scan(guild.guild_id, parents)
        private: dict[str, PrivateThread] = {}
        scopes = await self._thread_scopes(guild, parents, threads, private)
        self.visibility = GuildVisibility(guild, parents, private)  # what gateway events change from here on
        return channels + scopes

    async def list_channel_ids(self) -> list[str]:
        """Between full listings: the channels and private threads the server's model holds (events keep it
        current), plus any top-level channel the server lists that the model does not know (one call)."""
        if (model := self.visibility) is None:
            return [c.id for c in await self.list_channels()]
        async with platform_call("list the server's channels"):
            payloads = await self.http.get_all_guild_channels(await self.guild_id())
        listed = {
            str(p["id"])
            for p in payloads
            if int(p["type"]) in convert.TEXT_CHANNEL_TYPES and not self._is_agents_channel(p)
        }
        known = [c for c in model.channels if c in listed]
        threads = [t for t, thread in model.private_threads.items() if thread.parent_id in listed]
        fresh = listed - set(model.channels)  # looked up alone by the worker (one the bot cannot read is skipped)
        return sorted({*known, *threads, *fresh})

    async def _thread_scopes(
        self,
        guild: GuildPermissions,
        parents: dict[str, dict[str, Any]],
        threads: list[dict[str, Any]],
        private: dict[str, PrivateThread],
    ) -> list[Channel]:
        """Record where each thread's messages go; private threads become channels of their own."""
        self._forum_posts = {p: [] for p, payload in parents.items() if int(payload["type"]) in FORUM_TYPES}
        scopes = []
        for thread in threads:
            thread_id, parent = str(thread["id"]), parents[str(thread["parent_id"])]
            if not is_private(thread):
                self._places[thread_id] = (str(parent["id"]), thread_id)
                if int(parent["type"]) in FORUM_TYPES:
                    self._forum_posts.setdefault(str(parent["id"]), []).append(thread)
                continue
            try:
                async with platform_call(f"list the members of thread {thread_id}"):
                    members = await self.threads.members(thread_id)
            except ChatPlatformError as exc:  # deleted since it was listed, or closed to the bot: skip it alone
                log.warning("private thread %s left out: %s", thread_id, exc)
                continue
            readers = guild.private_thread_readers(parent, members)
            if self._bot_id() in readers:
                self._places[thread_id] = (thread_id, None)
                private[thread_id] = PrivateThread(str(parent["id"]), frozenset(members))
                scopes.append(convert.private_thread(thread, parent_name=str(parent.get("name")), readers=readers))
        return scopes

    def _addresses_bot(self, message: discord.Message) -> bool:
        me = self._bot_id()
        if any(str(user.id) == me for user in message.mentions):
            return True
        replied = message.reference.resolved if message.reference else None
        return isinstance(replied, discord.Message) and str(replied.author.id) == me

    def _bot_id(self) -> str:
        return str(self.client.user.id) if self.client.user else ""

    def _is_agents_channel(self, payload: dict[str, Any]) -> bool:
        return str(payload["id"]) == self._agents_channel_id or payload.get("name") == AGENTS_CHANNEL_NAME

    def cursor_since(self, when: datetime) -> str:
        """The message id Discord would give at `when`: history read after it starts there."""
        return str(discord.utils.time_snowflake(when))

    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        if channel_id in self._forum_posts:
            return await self._forum_page(channel_id, cursor, limit)
        return await self._page(channel_id, channel_id, None, cursor, limit)

    async def read_replies(
        self, channel_id: str, thread_id: str, *, cursor: str | None = None, limit: int = 200
    ) -> HistoryPage:
        # Every reply's id is above the thread's: starting there skips a forum post's own first message.
        return await self._page(thread_id, channel_id, thread_id, cursor or thread_id, limit)

    async def _forum_page(self, forum_id: str, cursor: str | None, limit: int) -> HistoryPage:
        """A forum's top level is its posts: each post's first message, oldest post first; replies are threads."""
        wanted = max(1, min(limit, MAX_PAGE))
        posts = [p for p in self._forum_posts[forum_id] if int(p["id"]) > int(cursor or 0)]
        page, messages = posts[:wanted], []
        for post in page:
            try:
                async with platform_call(f"read forum post {post['id']}"):
                    first = await self.http.get_message(post["id"], post["id"])
            except ChatPlatformError as exc:
                log.info("forum post %s has no readable first message: %s", post["id"], exc)
                continue
            if convert.is_memory(first, bot_id=self._bot_id()):
                message = convert.message(first, channel_id=forum_id, thread_id=None, roles=self._role_names)
                # a post is a thread even before anyone replies, so ingestion keeps reading it
                messages.append(replace(message, reply_count=max(1, int(post.get("message_count") or 0))))
        next_cursor = str(page[-1]["id"]) if page else (cursor or "")
        return HistoryPage(messages, next_cursor, len(posts) > wanted)

    async def _page(
        self, source_id: str, channel_id: str, thread_id: str | None, cursor: str | None, limit: int
    ) -> HistoryPage:
        """One page after the message id `cursor`, oldest first. Discord answers newest first."""
        if self.replies.is_route(source_id):
            return HistoryPage([], cursor or "", False)  # interaction follow-ups cannot be read back
        wanted = max(1, min(limit, MAX_PAGE))
        async with platform_call(f"read the history of channel {source_id}"):
            payloads = await self.http.logs_from(source_id, wanted, after=cursor or 0)
        payloads = sorted(payloads, key=lambda p: int(p["id"]))
        messages = [
            convert.message(p, channel_id=channel_id, thread_id=thread_id, roles=self._role_names)
            for p in payloads
            if convert.is_memory(p, bot_id=self._bot_id())
        ]
        next_cursor = str(payloads[-1]["id"]) if payloads else (cursor or "")
        return HistoryPage(messages, next_cursor, len(payloads) == wanted)

    async def message_from_event(self, message: discord.Message) -> ChatMessage | None:
        """A live message as the port's type; None for DMs, bots and anything that is not somebody talking."""
        guild_id = message.guild.id if message.guild else getattr(message.channel, "guild_id", None)
        if guild_id is None or message.author.bot or message.type not in _MEMORY_TYPES or not message.content:
            return None
        if self._addresses_bot(message):
            return None  # an ask to askwith, not knowledge (see `convert.addresses_bot`)
        if (place := await self.place(str(message.channel.id))) is None:
            return None
        channel_id, thread_id = place
        if thread_id == str(message.id):
            thread_id = None  # a forum post's own first message: the post, at the forum's top level
        sender = str(message.author.id)
        users = {str(m.id): m.display_name for m in message.mentions}
        roles = {str(r.id): r.name for r in message.role_mentions}
        text = convert.readable(message.content, users, roles)
        return ChatMessage(
            str(message.id), channel_id, sender, message.created_at, text, thread_id, edited_at=message.edited_at
        )

    async def lookup_member(self, member_id: str) -> Member | None:
        """One member, looked up alone (a live event named someone new); None when not in the server."""
        try:
            async with platform_call(f"look up member {member_id}"):
                payload = await self.http.get_member(await self.guild_id(), member_id)
        except PlatformObjectGoneError:
            return None
        return convert.member(payload)

    async def lookup_channel(self, channel_id: str) -> Channel | None:
        """One channel or private thread with its readers, looked up alone; None when askwith cannot read it (or
        it is a public thread, whose messages belong to its parent)."""
        try:
            async with platform_call(f"look up channel {channel_id}"):
                payload = await self.http.get_channel(channel_id)
                parent = await self.http.get_channel(payload["parent_id"]) if is_thread(payload) else None
        except ChatPlatformError as exc:
            log.info("channel %s not looked up: %s", channel_id, exc)
            return None
        if str(payload.get("guild_id")) != await self.guild_id() or (is_thread(payload) and not is_private(payload)):
            return None
        if int((parent or payload)["type"]) not in convert.TEXT_CHANNEL_TYPES or self._is_agents_channel(
            parent or payload
        ):
            return None
        guild = await self.permissions() if self.visibility is None else self.visibility.permissions()
        if parent is not None:
            members = await self.threads.members(channel_id)
            readers = await self._readers(channel_id, parent, PrivateThread(str(parent["id"]), frozenset(members)))
            channel = convert.private_thread(payload, parent_name=str(parent.get("name")), readers=readers)
        else:
            readers = await self._readers(channel_id, payload, None)
            channel = convert.channel(payload, public=guild.everyone_reads(payload), readers=readers)
            if int(payload["type"]) in FORUM_TYPES:
                self._forum_posts.setdefault(channel_id, [])
        if self._bot_id() not in readers:
            return None
        self._places[channel_id] = (channel_id, None)
        return channel

    async def _readers(
        self, channel_id: str, payload: dict[str, Any], thread: PrivateThread | None
    ) -> tuple[str, ...]:
        """Who reads a channel (or, with `thread`, a private thread of `payload`), worked out off the event loop;
        the server's model learns the channel, or forgets it when the bot cannot read it."""
        model = self.visibility
        if model is None:
            guild = await self.permissions()
            if thread is None:
                return guild.readers(payload)
            return guild.private_thread_readers(payload, set(thread.member_ids))
        async with model.lock:
            if thread is None:
                model.set_channel(channel_id, payload)
            else:
                model.set_channel(thread.parent_id, payload)
                model.set_private_thread(channel_id, thread)
            readers = tuple(sorted(await asyncio.to_thread(model.readers, channel_id)))
            if self._bot_id() not in readers:
                (model.set_channel if thread is None else model.set_private_thread)(channel_id, None)
        return readers

    async def place(self, discord_channel_id: str) -> tuple[str, str | None] | None:
        """Where messages said in a Discord channel or thread belong in askwith: (channel, thread id or None).
        One the bot has not listed yet is looked up alone (never a whole mirror); None when it cannot be read."""
        if discord_channel_id not in self._places:
            try:
                async with platform_call(f"look up channel {discord_channel_id}"):
                    payload = await self.http.get_channel(discord_channel_id)
            except ChatPlatformError as exc:
                log.info("channel %s not placed: %s", discord_channel_id, exc)
                return None
            if is_thread(payload) and not is_private(payload):
                self._places[discord_channel_id] = (str(payload["parent_id"]), discord_channel_id)
            else:
                self._places[discord_channel_id] = (discord_channel_id, None)
        return self._places[discord_channel_id]
