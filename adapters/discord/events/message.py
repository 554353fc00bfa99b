"""`on_message`: a message said in a server channel goes into memory as it arrives (the scheduled backfill catches
anything missed while the bot was offline). DMs with the bot, bots' posts and system notices are never memory;
whether a channel is remembered at all (someone opted in reads it) is the ingestion worker's decision."""

from __future__ import annotations

import logging

import discord

from bot.errors import AskwithError


log = logging.getLogger(__name__)


def register(client: discord.Client) -> None:
    @client.event
    async def on_message(message: discord.Message) -> None:
        svc = client.services  # type: ignore[attr-defined]
        if (chat_message := svc.port.message_from_event(message)) is None:
            return
        try:
            await svc.ingest.ingest_message(chat_message)
        except AskwithError as exc:
            log.warning("message %s not stored: %s", message.id, exc)
