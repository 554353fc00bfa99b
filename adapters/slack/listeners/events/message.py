"""A message posted where the bot can see it: into memory as it arrives (the bot's own posts and the agents'
hidden threads never are)."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.services import services


async def message_callback(event: dict[str, Any], context: AsyncBoltContext, logger: Logger) -> None:
    svc = services(context)
    if svc.ingest is None or not svc.port.is_ingestible(event, context.bot_user_id or ""):
        return
    svc.spawn(svc.ingest.ingest_message(svc.port.live_message(event)))
