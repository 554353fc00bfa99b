"""Gateway events. Each module holds one event and exposes `register(client)`."""

from __future__ import annotations

import discord

from adapters.discord.events import guilds, message, message_delete, message_edit, visibility


def register(client: discord.Client) -> None:
    message.register(client)
    message_edit.register(client)
    message_delete.register(client)
    visibility.register(client)
    guilds.register(client)
