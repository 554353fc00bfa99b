"""Gateway events. Each module holds one event and exposes `register(client)`."""

from __future__ import annotations

import discord

from adapters.discord.events import message


def register(client: discord.Client) -> None:
    message.register(client)
