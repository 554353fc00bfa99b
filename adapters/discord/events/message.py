"""`on_message`: a message said in a server channel goes into memory as it arrives (the scheduled backfill catches
anything missed while the bot was offline), and a message that is an ask (a mention of the bot, a DM to it, a
follow-up; see `adapters.discord.events.asks`) starts one. DMs with the bot, bots' posts and system notices are
never memory; whether a channel is remembered at all (someone opted in reads it) is the ingestion worker's
decision."""

from __future__ import annotations

import logging

import discord

from adapters.discord.events import asks
from bot.errors import AskwithError


log = logging.getLogger(__name__)


def register(client: discord.Client) -> None:
    @client.event
    async def on_message(message: discord.Message) -> None:
        await _remember(client, message)
        try:
            await asks.handle(client, message)
        except AskwithError as exc:
            log.warning("ask in message %s not taken: %s", message.id, exc)


async def _remember(client: discord.Client, message: discord.Message) -> None:
    guild_id = message.guild.id if message.guild else getattr(message.channel, "guild_id", None)
    if guild_id is None or (svc := client.services_for(guild_id)) is None:  # type: ignore[attr-defined]
        return  # a DM with the bot is never memory; a server askwith does not serve has none
    try:
        await svc.live.message_created(message)
    except AskwithError as exc:
        log.warning("message %s not stored: %s", message.id, exc)
