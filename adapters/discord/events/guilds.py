"""`on_guild_join`, `on_guild_remove` and `on_ready`: a server the bot is invited to while running is served at once;
a server it is removed from keeps nothing (askwith can no longer verify who may read what there), and one it was
removed from while askwith was not connected is forgotten the same way once the gateway says which servers the bot
is in (READY lists every one, unavailable ones included, so an outage forgets nothing).

    client.dispatch("ready")   # every stored server the bot is no longer in: everything askwith held is deleted
"""

from __future__ import annotations

import logging

import discord

from bot.asks.forget import forget_workspace, workspaces_of
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

    @client.event
    async def on_ready() -> None:
        await forget_servers_left(client)


async def forget_servers_left(client: discord.Client) -> list[str]:
    """Forget every stored server the bot is no longer in (as `on_guild_remove` would have); returns their ids."""
    runtime = client.runtime  # type: ignore[attr-defined]
    present = {str(guild.id) for guild in client.guilds}
    if runtime is None or not present:  # no gateway state to judge by: nothing is deleted on a guess
        return []
    launcher = runtime.launcher
    indexer = launcher.indexer
    indexes = [indexer.index, indexer.index.windows()] if indexer is not None else []
    gone = {g: w for g, w in (await workspaces_of(launcher.db, "discord")).items() if g not in present}
    for guild_id, workspace_id in sorted(gone.items()):
        log.warning("askwith was removed from Discord server %s while not connected: its data is deleted", guild_id)
        if guild_id in client.guild_services:  # type: ignore[attr-defined]
            await runtime.left(guild_id)  # served here: its work stops too
        else:
            await forget_workspace(launcher.db, workspace_id, indexes=indexes)
    return sorted(gone)
