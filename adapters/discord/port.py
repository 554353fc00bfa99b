"""`DiscordPort`: askwith's chat port over one Discord server (guild), through discord.py's client and HTTP API.

    port = DiscordPort(client, settings=settings, approvals=ApprovalRegistry())
    members = await port.list_members()
    channels = await port.list_channels()      # each channel's member_ids = who may read its history
    page = await port.read_history(channel_id, cursor=None)   # oldest first, cursor = last message id

Reads go through the REST API (no gateway cache needed, so a backfill works before the bot has connected);
discord.py waits out 429s itself (`retry_after`). Who can read a channel is computed from roles and permission
overwrites (`adapters.discord.permissions`). Threads are channels on Discord; the port speaks of them as a parent
channel plus a thread id, like the rest of askwith. DMs with the bot are never listed, so never ingested.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import discord

from adapters.discord import convert, texts
from adapters.discord.permissions import GuildPermissions
from adapters.discord.replies import InteractionReplies
from adapters.discord.views.approval import ApprovalClick, approval_view
from bot.approvals import ApprovalRegistry, PendingApproval
from bot.errors import ChatPlatformError, WorkspaceError
from bot.port import (
    ApprovalDecision,
    ApprovalRequest,
    Channel,
    ChatMessage,
    ChatPort,
    HistoryPage,
    Member,
    ThreadRef,
    WorkspaceInfo,
)
from bot.settings import Settings


log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 2000  # Discord's limit per message
MAX_PAGE = 100  # Discord's largest page of channel messages
MEMBERS_PAGE = 1000
AGENTS_CHANNEL_NAME = "askwith-agents"
PRIVATE_THREAD = 12
THREAD_ARCHIVE_MINUTES = 10080
NO_MENTIONS = discord.AllowedMentions.none()  # askwith's posts quote people; they must never ping anyone


class DiscordPort(ChatPort):
    platform = "discord"

    def __init__(self, client: discord.Client, *, settings: Settings, approvals: ApprovalRegistry) -> None:
        self.client = client
        self.http = client.http
        self.approvals = approvals
        self.replies = InteractionReplies()
        self._guild_id = settings.discord_guild_id
        self._agents_channel_id = settings.discord_agents_channel
        self._admin_role = settings.discord_admin_role
        self._dms: dict[str, str] = {}
        self._agents_lock = asyncio.Lock()

    # ------------------------------------------------------------------ the server
    async def guild_id(self) -> str:
        """The configured server, or the only one the bot is in."""
        if not self._guild_id:
            async with _platform("list the bot's servers"):
                guilds = await self.http.get_guilds(limit=2)
            if len(guilds) != 1:
                raise WorkspaceError(texts.guild_ambiguous(len(guilds)))
            self._guild_id = str(guilds[0]["id"])
        return self._guild_id

    async def _guild_payload(self) -> dict[str, Any]:
        async with _platform("read the server"):
            return dict(await self.http.get_guild(await self.guild_id(), with_counts=False))

    async def _member_payloads(self) -> list[dict[str, Any]]:
        guild_id = await self.guild_id()
        members: list[dict[str, Any]] = []
        after: str | None = None
        while True:
            async with _platform("list the server's members"):
                page = await self.http.get_members(guild_id, MEMBERS_PAGE, after)
            members.extend(page)
            if len(page) < MEMBERS_PAGE:
                return members
            after = str(page[-1]["user"]["id"])

    async def permissions(self) -> GuildPermissions:
        return GuildPermissions.from_payloads(await self._guild_payload(), await self._member_payloads())

    # ------------------------------------------------------------------ reading
    async def workspace_info(self) -> WorkspaceInfo:
        guild = await self._guild_payload()
        return WorkspaceInfo(str(guild["id"]), str(guild["name"]))

    async def list_members(self) -> list[Member]:
        return [convert.member(m) for m in await self._member_payloads()]

    async def list_channels(self) -> list[Channel]:
        """Text channels the bot can read, each with the members who can read its history (not the agents' one)."""
        guild = await self.permissions()
        async with _platform("list the server's channels"):
            payloads = await self.http.get_all_guild_channels(guild.guild_id)
        bot_id = str(self.client.user.id) if self.client.user else ""
        channels = []
        for payload in payloads:
            if int(payload["type"]) not in convert.TEXT_CHANNEL_TYPES or self._is_agents_channel(payload):
                continue
            readers = guild.readers(payload)
            if bot_id not in readers:
                continue  # the bot cannot read it, so it can hold no memory of it
            channels.append(convert.channel(payload, public=guild.everyone_reads(payload), readers=readers))
        return channels

    def _is_agents_channel(self, payload: dict[str, Any]) -> bool:
        return str(payload["id"]) == self._agents_channel_id or payload.get("name") == AGENTS_CHANNEL_NAME

    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        return await self._page(channel_id, channel_id, None, cursor, limit)

    async def read_replies(
        self, channel_id: str, thread_id: str, *, cursor: str | None = None, limit: int = 200
    ) -> HistoryPage:
        return await self._page(thread_id, channel_id, thread_id, cursor, limit)

    async def _page(
        self, source_id: str, channel_id: str, thread_id: str | None, cursor: str | None, limit: int
    ) -> HistoryPage:
        """One page after the message id `cursor`, oldest first. Discord answers newest first."""
        if self.replies.is_route(source_id):
            return HistoryPage([], cursor or "", False)  # interaction follow-ups cannot be read back
        wanted = max(1, min(limit, MAX_PAGE))
        async with _platform(f"read the history of channel {source_id}"):
            payloads = await self.http.logs_from(source_id, wanted, after=cursor or 0)
        payloads = sorted(payloads, key=lambda p: int(p["id"]))
        messages = [
            convert.message(p, channel_id=channel_id, thread_id=thread_id) for p in payloads if convert.is_memory(p)
        ]
        next_cursor = str(payloads[-1]["id"]) if payloads else (cursor or "")
        return HistoryPage(messages, next_cursor, len(payloads) == wanted)

    def message_from_event(self, message: discord.Message) -> ChatMessage | None:
        """A live message as the port's type; None for DMs, bots and anything that is not somebody talking."""
        guild_id = message.guild.id if message.guild else getattr(message.channel, "guild_id", None)
        if guild_id is None or message.author.bot or message.type not in _MEMORY_TYPES or not message.content:
            return None
        channel, thread_id = str(message.channel.id), None
        if isinstance(message.channel, discord.Thread):
            channel, thread_id = str(message.channel.parent_id), str(message.channel.id)
        sender = str(message.author.id)
        return ChatMessage(str(message.id), channel, sender, message.created_at, message.content, thread_id)

    # ------------------------------------------------------------------ writing
    async def post(self, channel_id: str, text: str, *, thread_id: str | None = None) -> str:
        if self.replies.is_route(channel_id):
            return await self._follow_up(channel_id, text)
        target = self.client.get_partial_messageable(int(thread_id or channel_id))
        ids = []
        for chunk in split_message(text):
            async with _platform(f"post in channel {target.id}"):
                ids.append(str((await target.send(chunk, allowed_mentions=NO_MENTIONS)).id))
        return ids[0]

    async def _follow_up(self, route: str, text: str) -> str:
        interaction, member_id = self.replies.lookup(route)
        if interaction is not None:
            try:
                return await _follow_up_on(interaction, text)
            except discord.NotFound:
                log.info("interaction %s expired; sending the answer by DM", interaction.id)
            except discord.HTTPException as exc:
                raise ChatPlatformError(texts.platform_failed("follow up on a command", exc.status, exc.text)) from exc
        return await self.post(await self.open_dm(member_id), text)

    async def post_ephemeral(self, channel_id: str, member_id: str, text: str) -> None:
        """Only the member sees it: a follow-up to their live interaction if there is one, else a DM."""
        if (interaction := self.replies.live_for(member_id)) is not None:
            await self._follow_up(self.replies.route(interaction), text)
            return
        await self.post(await self.open_dm(member_id), text)

    async def open_dm(self, member_id: str) -> str:
        if member_id not in self._dms:
            async with _platform(f"open a DM with {member_id}"):
                self._dms[member_id] = str((await self.http.start_private_message(int(member_id)))["id"])
        return self._dms[member_id]

    async def create_hidden_thread(self, title: str) -> ThreadRef:
        """A private thread in the agents' channel: only the bot and members who manage threads there see it."""
        channel_id = await self.agents_channel_id()
        async with _platform("open a private thread for the agents"):
            thread = await self.http.start_thread_without_message(
                channel_id, name=title[:100], auto_archive_duration=THREAD_ARCHIVE_MINUTES, type=PRIVATE_THREAD,
                invitable=False,
            )  # fmt: skip
        await self.post(channel_id, title, thread_id=str(thread["id"]))
        return ThreadRef(channel_id, str(thread["id"]))

    async def agents_channel_id(self) -> str:
        """The configured agents' channel, or #askwith-agents, created hidden from everyone but bot and admins."""
        async with self._agents_lock:
            if not self._agents_channel_id:
                self._agents_channel_id = await self._find_or_create_agents_channel()
        return self._agents_channel_id

    async def _find_or_create_agents_channel(self) -> str:
        guild = await self.permissions()
        async with _platform("list the server's channels"):
            payloads = await self.http.get_all_guild_channels(guild.guild_id)
        for payload in payloads:
            if payload.get("name") == AGENTS_CHANNEL_NAME and int(payload["type"]) == 0:
                return str(payload["id"])
        admin_role = guild.role_id(self._admin_role) if self._admin_role else None
        if self._admin_role and admin_role is None:
            raise WorkspaceError(texts.admin_role_unknown(self._admin_role))
        overwrites = agents_channel_overwrites(guild.guild_id, str(self.client.user.id), admin_role)
        async with _platform(f"create #{AGENTS_CHANNEL_NAME}"):
            created = await self.http.create_channel(
                guild.guild_id, 0, name=AGENTS_CHANNEL_NAME, permission_overwrites=overwrites,
                topic="askwith: the agents' private threads",
            )  # fmt: skip
        return str(created["id"])

    # ------------------------------------------------------------------ approvals
    async def request_approval(self, request: ApprovalRequest, *, timeout_s: float) -> ApprovalDecision:
        """A DM with Approve / Deny buttons; the click resolves the wait (see `resolve_approval`)."""
        if (decided := self.approvals.decision(request.id)) is not None:
            return decided
        channel = self.client.get_partial_messageable(int(await self.open_dm(request.member_id)))
        async with _platform(f"send {request.member_id} an approval prompt"):
            view = approval_view(request.id, request.kind)
            prompt = await channel.send(texts.approval_prompt(request), view=view, allowed_mentions=NO_MENTIONS)
        self.approvals.track(PendingApproval(request, f"{channel.id}:{prompt.id}"))
        decision = await self.approvals.wait(request.id, timeout_s=timeout_s)
        if decision is ApprovalDecision.TIMEOUT and self.approvals.take(request.id) is not None:
            async with _platform("mark an approval prompt as expired"):
                await prompt.edit(content=texts.approval_expired(request), view=None)
        return decision

    def resolve_approval(self, approval_id: str, decision: ApprovalDecision, *, member_id: str) -> ApprovalClick:
        """A button click: only the member asked may decide, once, while the ask still waits."""
        pending = self.approvals.pending(approval_id)
        if pending is None:
            return ApprovalClick(texts.approval_not_pending(), closes_prompt=True)
        if pending.request.member_id != member_id:
            return ApprovalClick(texts.approval_not_yours(), closes_prompt=False)
        self.approvals.resolve(approval_id, decision)
        self.approvals.take(approval_id)
        return ApprovalClick(texts.approval_decided(pending.request, decision), closes_prompt=True)


_MEMORY_TYPES = {discord.MessageType.default, discord.MessageType.reply}


async def _follow_up_on(interaction: discord.Interaction, text: str) -> str:
    """Ephemeral follow-ups (only the member sees them); returns the first message's id."""
    ids = []
    for chunk in split_message(text):
        sent = await interaction.followup.send(chunk, ephemeral=True, wait=True, allowed_mentions=NO_MENTIONS)
        ids.append(str(sent.id))
    return ids[0]


def split_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """Discord takes at most 2,000 characters a message: split at line ends where possible."""
    chunks: list[str] = []
    rest = text or "\u200b"
    while len(rest) > limit:
        cut = rest.rfind("\n", 0, limit)
        cut = cut if cut > 0 else limit
        chunks.append(rest[:cut])
        rest = rest[cut:].lstrip("\n")
    return [*chunks, rest]


def agents_channel_overwrites(guild_id: str, bot_id: str, admin_role_id: str | None) -> list[dict[str, Any]]:
    hidden = discord.Permissions(view_channel=True)
    bot = discord.Permissions(
        view_channel=True, send_messages=True, read_message_history=True, create_private_threads=True,
        send_messages_in_threads=True, manage_threads=True,
    )  # fmt: skip
    admins = discord.Permissions(view_channel=True, read_message_history=True, manage_threads=True)
    overwrites = [
        {"id": guild_id, "type": 0, "allow": "0", "deny": str(hidden.value)},
        {"id": bot_id, "type": 1, "allow": str(bot.value), "deny": "0"},
    ]
    if admin_role_id:
        overwrites.append({"id": admin_role_id, "type": 0, "allow": str(admins.value), "deny": "0"})
    return overwrites


@asynccontextmanager
async def _platform(doing: str) -> AsyncIterator[None]:
    """Discord's refusals become one readable ChatPlatformError (discord.py has already retried 429s and 5xx)."""
    try:
        yield
    except discord.HTTPException as exc:
        raise ChatPlatformError(texts.platform_failed(doing, exc.status, exc.text)) from exc
