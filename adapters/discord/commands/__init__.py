"""Application (slash) commands. Each module holds one command and exposes `register(tree, guild)`."""

from __future__ import annotations

import discord
from discord import app_commands

from adapters.discord.commands import ask_with, askwith_settings, negotiate


def register(tree: app_commands.CommandTree[discord.Client], guild: discord.abc.Snowflake) -> None:
    ask_with.register(tree, guild)
    askwith_settings.register(tree, guild)
    negotiate.register(tree, guild)
