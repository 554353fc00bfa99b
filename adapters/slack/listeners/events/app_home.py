"""The App Home tab: published when the member opens it, and again after each control they change."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.app_home import CONNECT_ACTION, apply_home_action, publish_home
from adapters.slack.services import services


async def app_home_opened_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    if event.get("tab", "home") != "home":
        return
    svc = services(context)
    svc.spawn(publish_home(svc, event["user"]))


async def home_action_callback(
    ack: AsyncAck, action: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext, logger: Logger
) -> None:
    await ack()
    if action["action_id"] == CONNECT_ACTION:
        return  # a link: Slack opens the install flow itself
    svc = services(context)
    user_id = body["user"]["id"]

    async def change() -> None:
        await apply_home_action(svc, user_id, action)
        logger.info("App Home: %s changed %s", user_id, action["action_id"])
        await publish_home(svc, user_id)

    svc.spawn(change())
