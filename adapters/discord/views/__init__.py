"""Discord UI components. Each module exposes `register(client)`."""

from __future__ import annotations

import discord

from adapters.discord.views import approval, ask_controls


def register(client: discord.Client) -> None:
    approval.register(client)
    ask_controls.register(client)
