"""`user_change` (names follow; a deactivated member reads nothing), `team_join` (a new member stored),
`tokens_revoked` (members' tokens disabled, members told) and
`app_uninstalled` (nobody reads the workspace's memory any more)."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.services import services


async def user_change_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.user_changed(event))


async def team_join_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.team_joined(event))


async def tokens_revoked_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.tokens_revoked(event))
    if svc.uninstall is not None and (event.get("tokens") or {}).get("bot"):
        svc.spawn(svc.uninstall())  # the workspace's bot token is gone: so is its installation


async def app_uninstalled_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.memory_events is not None:
        svc.spawn(svc.memory_events.app_uninstalled())
    if svc.uninstall is not None:
        svc.spawn(svc.uninstall())
