"""`on_guild_join` and `on_guild_remove`: a server the bot is invited to while running is served at once; a server
it is removed from keeps no reader of its memory (askwith can no longer verify who may read what there)."""

from __future__ import annotations

import logging

import discord

from bot.errors import AskwithError


log = logging.getLogger(__name__)


def register(client: discord.Client) -> None:
    @client.event
    async def on_guild_join(guild: discord.Guild) -> None:
        if (runtime := client.runtime) is None:  # type: ignore[attr-defined]
            return
        try:
            await runtime.joined(str(guild.id))
        except AskwithError as exc:
            log.error("Discord server %s not served: %s", guild.id, exc)

    @client.event
    async def on_guild_remove(guild: discord.Guild) -> None:
        if (runtime := client.runtime) is not None:  # type: ignore[attr-defined]
            await runtime.left(str(guild.id))
