"""Discord UI components. Each module exposes `register(client)`."""

from __future__ import annotations

import discord

from adapters.discord.views import approval


def register(client: discord.Client) -> None:
    approval.register(client)
