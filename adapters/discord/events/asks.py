"""Messages that are asks: a mention of the bot in a server channel or thread, any message in a DM with the bot,
and a follow-up in the place of an earlier ask (a reply to the bot there, or a mention in the same thread), which
continues that ask with the same colleagues unless it names others.

    @askwith ask @bob @carol when is the launch?        # in #general: answered as a reply in #general
    @askwith and what about the rehearsal?              # in that thread, later: a follow-up of the same ask
"""

from __future__ import annotations

import logging
import re

import discord

from adapters.discord import texts
from adapters.discord.chat_asks import (
    ChatAsk,
    PendingGroup,
    ReplyTo,
    ask_in_chat,
    group_view,
    role_members,
)
from adapters.discord.command_text import parse_ask
from adapters.discord.port import NO_MENTIONS
from adapters.discord.services import DiscordServices
from bot.asks.requests import GROUP_CONFIRM_ABOVE


log = logging.getLogger(__name__)
MENTION = re.compile(r"<@(!|&)?(\d+)>")


async def handle(client: discord.Client, message: discord.Message) -> None:
    """Ask, if this message is one; anything else is left alone (memory has already taken it)."""
    me = client.user
    if (
        me is None
        or message.author.bot
        or message.type not in (discord.MessageType.default, discord.MessageType.reply)
    ):
        return
    svc: DiscordServices | None = client.services_for(message.guild.id if message.guild else None)  # type: ignore[attr-defined]
    if svc is None:
        return
    mentioned = message.guild is None or any(user.id == me.id for user in message.mentions)
    previous = await _continues(svc, client, message)
    if not mentioned and previous is None:
        return
    parsed = parse_ask(message.content, bot_id=str(me.id))
    where = ReplyTo(message)
    if not parsed.question and not parsed.colleagues and not parsed.roles:
        await where.say(texts.ask_usage(me.mention))
        return
    question = _names_only(parsed.question, message)
    members = role_members(message.guild, parsed.roles, message.author.id)
    colleagues = (*parsed.colleagues, *(str(m.id) for m in members))
    ask = ChatAsk(message.author, question, colleagues, follow_up_of=previous)

    async def go() -> None:
        await ask_in_chat(svc, ask, where)

    if len(members) > GROUP_CONFIRM_ABOVE:  # counted on the roles' members alone
        key = str(message.id)
        svc.pending_groups[key] = PendingGroup(message.author.id, go)
        groups = [r.name for r in message.role_mentions]
        await message.reply(
            texts.group_confirm(len(members), groups), view=group_view(key),
            allowed_mentions=NO_MENTIONS, mention_author=False,
        )  # fmt: skip
        return
    if parsed.roles and not members and not parsed.colleagues and previous is None:
        await where.say(texts.group_empty(", ".join(r.name for r in message.role_mentions) or "?"))
        return
    await go()


async def _continues(svc: DiscordServices, client: discord.Client, message: discord.Message) -> int | None:
    """The ask this message follows up: the one whose answer it replies to, or, for a mention in a thread, the
    latest ask asked in that thread."""
    replied = _replied_bot_message(client, message)
    in_thread = isinstance(message.channel, discord.Thread)
    mentioned = any(user.id == client.user.id for user in message.mentions)  # type: ignore[union-attr]
    if replied is None and not (in_thread and mentioned):
        return None
    if message.guild is None:
        place: tuple[str, str | None] | None = (str(message.channel.id), None)
    else:
        place = await svc.port.place(str(message.channel.id))
    if place is None:
        return None
    channel_id, thread_id = place
    if replied is not None and (found := await svc.asks.ask_in_thread(channel_id, replied)) is not None:
        return found
    if in_thread and mentioned:
        return await svc.asks.ask_in_thread(channel_id, thread_id)  # type: ignore[arg-type]
    return None


def _replied_bot_message(client: discord.Client, message: discord.Message) -> str | None:
    """The id of the bot's message this one replies to (None when it replies to nothing, or to someone else)."""
    reference = message.reference
    if reference is None or reference.message_id is None:
        return None
    resolved = reference.resolved
    if isinstance(resolved, discord.Message) and resolved.author.id != client.user.id:  # type: ignore[union-attr]
        return None
    return str(reference.message_id)


def _names_only(text: str, message: discord.Message) -> str:
    """Mentions inside the question as the names people see (`<@123>` -> `@Bob`): the agents read names."""
    users = {str(u.id): u.display_name for u in message.mentions}
    roles = {str(r.id): r.name for r in message.role_mentions}

    def named(match: re.Match[str]) -> str:
        name = (roles if match.group(1) == "&" else users).get(match.group(2))
        return f"@{name}" if name else match.group(0)

    return MENTION.sub(named, text)
