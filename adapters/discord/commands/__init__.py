"""Application (slash) commands. Each module holds one command and exposes `register(tree, guilds)`."""

from __future__ import annotations

import discord
from discord import app_commands

from adapters.discord.commands import ask_thread, ask_with, askwith_settings, negotiate


def register(tree: app_commands.CommandTree[discord.Client], guilds: list[discord.abc.Snowflake]) -> None:
    """The commands in every server askwith serves (synced per server, so they appear at once)."""
    ask_with.register(tree, guilds)
    ask_thread.register(tree, guilds)
    askwith_settings.register(tree, guilds)
    negotiate.register(tree, guilds)
