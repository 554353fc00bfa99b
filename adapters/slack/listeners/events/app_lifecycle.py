"""`user_change` (names follow; a deactivated member reads nothing), `team_join` (a new member stored),
`tokens_revoked` (members' tokens disabled, members told; live memory: their grants deleted; the bot's token: the
workspace leaves) and
`app_uninstalled` (the workspace leaves: everything askwith holds for it is deleted and its work stops,
`adapters.slack.leaving`)."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.leaving import workspace_left
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
    if (event.get("tokens") or {}).get("bot"):
        svc.spawn(workspace_left(svc))  # the bot's token is gone (all tokens are, with it): the workspace left
    elif svc.memory_events is not None:
        svc.spawn(svc.memory_events.tokens_revoked(event))
    elif svc.live_search is not None:  # live memory: the members' grants are deleted, never searched with again
        svc.spawn(svc.live_search.tokens_revoked(event))


async def app_uninstalled_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    services(context).spawn(workspace_left(services(context)))
