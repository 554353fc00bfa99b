"""Asks typed where the member is: a mention of the bot in a channel or thread, a DM to the bot, a follow-up in the
thread of an earlier ask, or the "Ask about this thread" form.

The request is checked first (database look-ups only; a refusal is the reply). Then one status message is posted
where the question was asked, as a reply, visible to whoever could see the question; if Discord refuses the post
there (403, e.g. 50013 Missing Permissions) the status message and the answer go to the member's DM instead. The
ask is queued with that place as its origin, and `AskProgress` edits the status message until the answer.

    await ask_in_chat(svc, ChatAsk(requester, question, colleagues), ReplyTo(message))
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import discord

from adapters.discord import texts
from adapters.discord.port import NO_MENTIONS
from adapters.discord.progress import AskProgress
from adapters.discord.services import DiscordServices
from adapters.discord.status import StatusState
from bot.asks.background import resolve_follow_up
from bot.asks.service import AskRequest
from bot.errors import AskRejectedError
from bot.texts import chat_texts


log = logging.getLogger(__name__)
REFUSED_HERE = 403  # Missing Access / Missing Permissions / cannot send: answer by DM instead


@dataclass(frozen=True)
class ChatAsk:
    requester: discord.abc.User
    question: str
    colleagues: tuple[str, ...]  # platform ids or handles
    follow_up_of: int | None = None
    context: str | None = None  # the thread's text, for "Ask about this thread"


class Where:
    """Where the question was asked: posts the status message there (or raises discord.Forbidden)."""

    channel: discord.abc.Messageable | None

    async def post(self, state: StatusState) -> discord.Message:
        raise NotImplementedError()

    async def say(self, text: str) -> None:
        """A short reply that is not an ask (a refusal, a usage hint)."""
        raise NotImplementedError()


@dataclass
class ReplyTo(Where):
    """A message mentioning the bot, in a channel, thread or DM: the status message replies to it."""

    message: discord.Message

    @property
    def channel(self) -> discord.abc.Messageable:  # type: ignore[override]
        return self.message.channel

    async def post(self, state: StatusState) -> discord.Message:
        return await self.message.reply(**state.kwargs(), allowed_mentions=NO_MENTIONS, mention_author=False)

    async def say(self, text: str) -> None:
        try:
            await self.message.reply(text, allowed_mentions=NO_MENTIONS, mention_author=False)
        except discord.Forbidden:
            await self.message.author.send(text, allowed_mentions=NO_MENTIONS)


async def ask_in_chat(svc: DiscordServices, ask: ChatAsk, where: Where) -> int | None:
    """Check, post the status message, queue the ask, follow it; returns the ask's id (None when refused)."""
    origin = await _origin(svc, where.channel)
    request = AskRequest(
        requester=str(ask.requester.id),
        colleagues=list(ask.colleagues),
        question=ask.question,
        origin_channel_id=origin[0] if origin else None,
        origin_thread_id=origin[1] if origin else None,
        follow_up_of=ask.follow_up_of,
        context=ask.context or None,
    )
    try:
        request = await resolve_follow_up(svc.db, svc.asks.roster, svc.asks.settings, svc.asks.workspace_id, request)
        await svc.asks.validate(request)
    except AskRejectedError as exc:
        await where.say(str(exc))
        return None
    first = StatusState(texts.status_queued(ask.requester.mention))
    try:
        status = await where.post(first)
    except discord.Forbidden as exc:
        if exc.status != REFUSED_HERE or where.channel is None or origin is None:
            raise
        log.info("may not post in %s (code %s): answering by DM", where.channel.id, exc.code)  # type: ignore[union-attr]
        dm = await ask.requester.create_dm()
        await dm.send(texts.posted_by_dm(str(where.channel.id)), allowed_mentions=NO_MENTIONS)  # type: ignore[union-attr]
        status = await dm.send(**first.kwargs(), allowed_mentions=NO_MENTIONS)
        request = replace(request, origin_channel_id=None, origin_thread_id=None)
    try:
        ask_id = await svc.asks.submit(request)
    except AskRejectedError as exc:  # changed since the check (a colleague turned askwith off): say so there
        await status.edit(content=str(exc), view=None)
        return None
    AskProgress.follow(svc, ask_id, status, requester=ask.requester, first=first)
    return ask_id


async def _origin(svc: DiscordServices, channel: Any) -> tuple[str, str | None] | None:
    """Where the answer goes in askwith's terms: (channel, thread) for a server channel or thread, None for a DM
    (the core answers in the requester's DM)."""
    if channel is None or getattr(channel, "guild", None) is None:
        return None
    place = await svc.port.place(str(channel.id))
    return place or (str(channel.id), None)


# ---------------------------------------------------------------------- roles as colleagues
def role_members(guild: discord.Guild | None, role_ids: tuple[str, ...], requester_id: int) -> list[discord.Member]:
    """The people (not bots, not the asker) holding any of the roles, each once."""
    if guild is None:
        return []
    found: dict[int, discord.Member] = {}
    for role_id in role_ids:
        role = guild.get_role(int(role_id))
        for member in role.members if role else []:
            if not member.bot and member.id != requester_id:
                found.setdefault(member.id, member)
    return list(found.values())


@dataclass(frozen=True)
class PendingGroup:
    """An ask naming a big role, waiting for its asker to confirm (keyed by the asking message's id)."""

    requester_id: int
    go: Callable[[], Awaitable[None]]


class GroupButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"askwith:group:(?P<answer>yes|no):(?P<key>\d+)"
):
    """ "@design would ask 12 people's agents. Ask them all?" Only the asker may answer. A dynamic item: the click
    finds the waiting ask by the asking message's id, registered before the prompt is sent."""

    def __init__(self, answer: str, key: str) -> None:
        label = chat_texts.GROUP_CONFIRM_BUTTON if answer == "yes" else chat_texts.CANCEL_BUTTON
        style = discord.ButtonStyle.primary if answer == "yes" else discord.ButtonStyle.secondary
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=f"askwith:group:{answer}:{key}"))
        self.answer = answer
        self.key = key

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button[Any], match: Any, /
    ) -> GroupButton:
        return cls(match["answer"], match["key"])

    async def callback(self, interaction: discord.Interaction) -> None:
        pending_groups = interaction.client.services_for(interaction.guild_id).pending_groups  # type: ignore[attr-defined]
        pending = pending_groups.get(self.key)
        if pending is None:
            await interaction.response.edit_message(view=None)
            return
        if interaction.user.id != pending.requester_id:
            await interaction.response.send_message(texts.group_not_yours(), ephemeral=True)
            return
        del pending_groups[self.key]
        if self.answer == "no":
            await interaction.response.edit_message(content=texts.group_declined(), view=None)
            return
        await interaction.response.edit_message(view=None)
        await pending.go()


def group_view(key: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(GroupButton("yes", key))
    view.add_item(GroupButton("no", key))
    return view


def register(client: discord.Client) -> None:
    client.add_dynamic_items(GroupButton)
