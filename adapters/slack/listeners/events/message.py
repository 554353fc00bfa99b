"""Every `message` event: a member's DM to the bot is an ask; a new message into memory, an edit or deletion
applied to it at once, a channel's conversion followed (the bot's own posts and the agents' hidden threads
are never memory)."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.listeners.events.app_mention import dm_ask, is_dm_to_bot
from adapters.slack.services import services
from bot.platform.port import ChannelKind


CONVERSIONS = {"channel_convert_to_private": ChannelKind.PRIVATE, "channel_convert_to_public": ChannelKind.PUBLIC}


async def message_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if is_dm_to_bot(event, context.bot_user_id or ""):
        await dm_ask(event, context)  # an ask, not something the member said to colleagues: not memory
        return
    if svc.port.is_dm_with_bot(event):
        return  # edits, file shares and the bot's own posts in a DM with askwith: never memory either
    memory = svc.memory_events
    if memory is None:
        return
    subtype = event.get("subtype")
    if subtype == "message_changed":
        svc.spawn(memory.message_changed(event))
    elif subtype == "message_deleted":
        svc.spawn(memory.message_deleted(event))
    elif subtype in CONVERSIONS:
        svc.spawn(memory.channel_converted(event, CONVERSIONS[subtype]))
    elif svc.port.is_ingestible(event, context.bot_user_id or ""):
        svc.spawn(memory.message(event))
