"""`DiscordPort`: askwith's chat port over one Discord server (guild), through discord.py's client and HTTP API.

    port = DiscordPort(client, settings=settings, approvals=ApprovalRegistry())
    members = await port.list_members()
    channels = await port.list_channels()      # each channel's member_ids = who may read its history
    page = await port.read_history(channel_id, cursor=None)   # oldest first, cursor = last message id

Reading lives in `adapters.discord.reader` (the port's mixin); this module writes: posts, follow-ups, DMs, the
agents' hidden threads and approval prompts. discord.py waits out 429s itself (`retry_after`). DMs with the bot
are never listed, so never ingested.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

import discord

from adapters.discord import texts
from adapters.discord.approval_embed import card_embed
from adapters.discord.calls import interaction_gone, platform_call, refused
from adapters.discord.reader import AGENTS_CHANNEL_NAME, GuildReading
from adapters.discord.replies import InteractionReplies
from adapters.discord.status import StatusState
from adapters.discord.threads import ThreadDirectory
from adapters.discord.views.approval import ApprovalClick, approval_view
from bot.consent.pending import ApprovalRegistry, ApprovalStore, Click, PendingApproval, decide_click
from bot.errors import ChatPlatformError, WorkspaceError
from bot.platform.port import (
    ApprovalDecision,
    ApprovalRequest,
    ChatPort,
    FinalAnswer,
    ThreadRef,
)
from bot.settings import Settings


log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 2000  # Discord's limit per message
PRIVATE_THREAD = 12
THREAD_ARCHIVE_MINUTES = 10080
NO_MENTIONS = discord.AllowedMentions.none()  # askwith's posts quote people; they must never ping anyone


class RichAnswers(Protocol):
    """What turns an ask's final post into a rich message (`adapters.discord.answers.AnswerPosts`, above the port:
    the port knows only this much of it)."""

    async def post(self, target: discord.abc.Messageable, answer: FinalAnswer) -> str | None: ...

    async def rendered(self, answer: FinalAnswer) -> StatusState | None: ...


class DiscordPort(GuildReading, ChatPort):
    platform = "discord"

    def __init__(
        self,
        client: discord.Client,
        *,
        settings: Settings,
        approvals: ApprovalRegistry,
        guild_id: str | None = None,  # the server this port speaks for; None: DISCORD_GUILD_ID, or the only one
    ) -> None:
        self.client = client
        self.http = client.http
        self.approvals = approvals
        self.replies = InteractionReplies()
        self._guild_id = guild_id or settings.discord_guild_id
        self._agents_channel_id = settings.discord_agents_channel
        self._admin_role = settings.discord_admin_role
        self._dms: dict[str, str] = {}
        self.threads = ThreadDirectory(self.http)
        self._places: dict[str, tuple[str, str | None]] = {}  # Discord channel/thread id -> askwith (channel, thread)
        self._forum_posts: dict[str, list[dict[str, Any]]] = {}  # forum id -> its posts (threads), oldest first
        self._role_names: dict[str, str] = {}
        self.answers: RichAnswers | None = None  # set once the server's ask service exists
        self._agents_lock = asyncio.Lock()

    # ------------------------------------------------------------------ writing
    async def post_answer(self, channel_id: str, answer: FinalAnswer, *, thread_id: str | None = None) -> str:
        """An ask's final post becomes a rich message (embed and buttons, see `adapters.discord.answers`), edited
        into the ask's status message when it has one here."""
        if self.replies.is_route(channel_id):
            return await self._follow_up(channel_id, answer.text, answer=answer)
        if self.answers is not None:
            target = self.client.get_partial_messageable(int(thread_id or channel_id))
            async with platform_call(f"post an answer in channel {target.id}"):
                if (posted := await self.answers.post(target, answer)) is not None:
                    return posted
        return await self.post(channel_id, answer.text, thread_id=thread_id)

    async def post(self, channel_id: str, text: str, *, thread_id: str | None = None) -> str:
        """Post as the bot (in chunks of Discord's limit)."""
        if self.replies.is_route(channel_id):
            return await self._follow_up(channel_id, text)
        target = self.client.get_partial_messageable(int(thread_id or channel_id))
        ids = []
        for chunk in split_message(text):
            async with platform_call(f"post in channel {target.id}"):
                ids.append(str((await target.send(chunk, allowed_mentions=NO_MENTIONS)).id))
        return ids[0]

    async def _follow_up(self, route: str, text: str, *, answer: FinalAnswer | None = None) -> str:
        interaction, member_id = self.replies.lookup(route)
        if interaction is not None:
            try:
                rich = await self.answers.rendered(answer) if answer is not None and self.answers else None
                if rich is not None:
                    sent = await interaction.followup.send(
                        **rich.kwargs(), ephemeral=True, wait=True, allowed_mentions=NO_MENTIONS
                    )
                    return str(sent.id)  # `/ask-with`'s answer: the same embed, seen only by the asker
                return await _follow_up_on(interaction, text)
            except discord.HTTPException as exc:
                if not interaction_gone(exc):
                    raise refused("follow up on a command", exc) from exc
                log.info(
                    "interaction %s is over (HTTP %s, code %s); answering by DM", interaction.id, exc.status, exc.code
                )
        dm = await self.open_dm(member_id)
        if answer is not None:
            return await self.post_answer(dm, answer)
        return await self.post(dm, text)

    async def post_ephemeral(self, channel_id: str, member_id: str, text: str) -> None:
        """Only the member sees it: a follow-up to their live interaction if there is one, else a DM."""
        if (interaction := self.replies.live_for(member_id)) is not None:
            await self._follow_up(self.replies.route(interaction), text)
            return
        await self.post(await self.open_dm(member_id), text)

    async def open_dm(self, member_id: str) -> str:
        if member_id not in self._dms:
            async with platform_call(f"open a DM with {member_id}"):
                self._dms[member_id] = str((await self.http.start_private_message(int(member_id)))["id"])
        return self._dms[member_id]

    def jump_url(self, channel_id: str, message_id: str) -> str | None:
        """Discord's link to a message (it opens only for who can see the channel)."""
        if not self._guild_id:
            return None
        return f"https://discord.com/channels/{self._guild_id}/{channel_id}/{message_id}"

    async def permalink(self, channel_id: str, message_id: str) -> str | None:
        await self.guild_id()
        return self.jump_url(channel_id, message_id)

    async def create_hidden_thread(self, title: str) -> ThreadRef:
        """A private thread in the agents' channel: only the bot and members who manage threads there see it."""
        channel_id = await self.agents_channel_id()
        async with platform_call("open a private thread for the agents"):
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
        async with platform_call("list the server's channels"):
            payloads = await self.http.get_all_guild_channels(guild.guild_id)
        for payload in payloads:
            if payload.get("name") == AGENTS_CHANNEL_NAME and int(payload["type"]) == 0:
                return str(payload["id"])
        admin_role = guild.role_id(self._admin_role) if self._admin_role else None
        if self._admin_role and admin_role is None:
            raise WorkspaceError(texts.admin_role_unknown(self._admin_role))
        overwrites = agents_channel_overwrites(guild.guild_id, str(self.client.user.id), admin_role)
        async with platform_call(f"create #{AGENTS_CHANNEL_NAME}"):
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
        try:
            channel = self.client.get_partial_messageable(int(await self.open_dm(request.member_id)))
            async with platform_call(f"send {request.member_id} an approval prompt"):
                view = approval_view(request.id, request.kind)
                embed = card_embed(request.card) if request.card is not None else discord.utils.MISSING
                prompt = await channel.send(
                    texts.approval_prompt(request), embed=embed, view=view, allowed_mentions=NO_MENTIONS
                )
        except ChatPlatformError as exc:  # closed DMs (403/50007): nobody can approve, so nothing is approved
            log.warning("approval %s not asked: %s", request.id, exc)
            return ApprovalDecision.UNREACHABLE
        self.approvals.track(PendingApproval(request, f"{channel.id}:{prompt.id}"))
        decision = await self.approvals.wait(request.id, timeout_s=timeout_s)
        if decision is ApprovalDecision.TIMEOUT and self.approvals.take(request.id) is not None:
            async with platform_call("mark an approval prompt as expired"):
                await prompt.edit(content=texts.approval_expired(request), view=None)
        return decision

    async def resolve_approval(
        self, store: ApprovalStore, approval_id: str, decision: ApprovalDecision, *, member_id: str
    ) -> ApprovalClick:
        """A button click: only the member asked may decide, once, while the ask still waits. The decision is
        stored first, so an ask waiting in another process (or resumed after a restart) gets it too."""
        result = await decide_click(store, self.approvals, approval_id, decision, member_id=member_id)
        if result.outcome is Click.NOT_YOURS:
            return ApprovalClick(texts.approval_not_yours(), closes_prompt=False)
        if result.outcome is Click.NOT_PENDING:
            return ApprovalClick(texts.approval_not_pending(), closes_prompt=True)
        if result.pending is None:  # the prompt was posted by another process (or before a restart)
            return ApprovalClick(texts.approval_recorded(decision), closes_prompt=True)
        self.approvals.take(approval_id)
        return ApprovalClick(texts.approval_decided(result.pending.request, decision), closes_prompt=True)


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
