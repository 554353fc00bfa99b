"""Application (slash) commands. Each module holds one command and exposes `register(tree)`."""

from __future__ import annotations

import discord
from discord import app_commands

from adapters.discord.commands import ask_thread, ask_with, askwith_settings, negotiate


def register(tree: app_commands.CommandTree[discord.Client]) -> None:
    """Global commands: synced once per process start, they reach every server, joined later ones too."""
    ask_with.register(tree)
    ask_thread.register(tree)
    askwith_settings.register(tree)
    negotiate.register(tree)
