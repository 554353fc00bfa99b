"""`on_raw_message_delete` and `on_raw_bulk_message_delete`: a deleted message leaves memory at once, and a
tombstone keeps a later backfill from bringing it back."""

from __future__ import annotations

import logging

import discord

from bot.errors import AskwithError


log = logging.getLogger(__name__)


def register(client: discord.Client) -> None:
    @client.event
    async def on_raw_message_delete(payload: discord.RawMessageDeleteEvent) -> None:
        await _forget(client, payload.guild_id, payload.channel_id, {payload.message_id})

    @client.event
    async def on_raw_bulk_message_delete(payload: discord.RawBulkMessageDeleteEvent) -> None:
        await _forget(client, payload.guild_id, payload.channel_id, payload.message_ids)


async def _forget(client: discord.Client, guild_id: int | None, channel_id: int, message_ids: set[int]) -> None:
    if guild_id is None or (svc := client.services_for(guild_id)) is None:  # type: ignore[attr-defined]
        return  # a DM with the bot: never memory
    try:
        await svc.live.messages_deleted(str(channel_id), sorted(str(m) for m in message_ids))
    except AskwithError as exc:
        log.warning("deletion of %d message(s) in %s not applied: %s", len(message_ids), channel_id, exc)
