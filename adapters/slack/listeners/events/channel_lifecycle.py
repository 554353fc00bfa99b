"""`channel_archive` / `group_archive` (kept, no longer polled), their `*_unarchive`, and `channel_deleted` /
`group_deleted` (everything memory holds of the channel goes)."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.services import services


async def archive_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.archived(event, archived=True))


async def unarchive_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.archived(event, archived=False))


async def deleted_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.channel_deleted(event))
