"""`on_raw_message_edit`: an edited message changes memory at once (raw, so it works for messages said before the
bot connected, which discord.py has not cached). An edit that leaves nothing memory-worthy forgets the message."""

from __future__ import annotations

import logging

import discord

from bot.errors import AskwithError


log = logging.getLogger(__name__)


def register(client: discord.Client) -> None:
    @client.event
    async def on_raw_message_edit(payload: discord.RawMessageUpdateEvent) -> None:
        if "content" not in payload.data:
            return  # an embed resolving, a pin: the text did not change
        if (svc := client.services_for(payload.guild_id)) is None or payload.guild_id is None:  # type: ignore[attr-defined]
            return
        try:
            await svc.live.message_edited(payload.message, str(payload.channel_id))
        except AskwithError as exc:
            log.warning("edit of message %s not applied: %s", payload.message_id, exc)
