"""`member_joined_channel`, `member_left_channel`, and the bot's own `channel_left` / `group_left`: who reads a
channel's memory changes at once."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.services import services


async def member_joined_channel_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.member_joined(event, context.bot_user_id or ""))


async def member_left_channel_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.member_left(event, context.bot_user_id or ""))


async def bot_left_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.bot_left(event))
