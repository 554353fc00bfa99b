"""`on_message`: a message said in a server channel goes into memory as it arrives (the scheduled backfill catches
anything missed while the bot was offline). DMs with the bot, bots' posts and system notices are never memory;
whether a channel is remembered at all (someone opted in reads it) is the ingestion worker's decision."""

from __future__ import annotations

import logging

import discord

from bot.errors import AskwithError


log = logging.getLogger(__name__)


def register(client: discord.Client) -> None:
    @client.event
    async def on_message(message: discord.Message) -> None:
        guild_id = message.guild.id if message.guild else getattr(message.channel, "guild_id", None)
        if guild_id is None or (svc := client.services_for(guild_id)) is None:  # type: ignore[attr-defined]
            return  # a DM with the bot is never memory; a server askwith does not serve has none
        try:
            await svc.live.message_created(message)
        except AskwithError as exc:
            log.warning("message %s not stored: %s", message.id, exc)
