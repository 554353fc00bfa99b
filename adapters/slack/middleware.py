"""Global bolt middleware: hand the listeners askwith's services, and drop Slack's redeliveries.

Slack redelivers a request it thinks failed (header `X-Slack-Retry-Num`). Every delivery that starts work has a
stable key (a command's `trigger_id`, an event's `event_id`, a click's `trigger_id`); the first delivery records it
in the database and runs, any later one is acknowledged and dropped — across processes too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from adapters.slack.services import CONTEXT_KEY, SlackServices
from bot.store.deliveries import DeliveryLog


logger = logging.getLogger(__name__)


class AsyncInjectingServices(AsyncMiddleware):
    def __init__(self, services: SlackServices) -> None:
        self.services = services

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        req.context[CONTEXT_KEY] = self.services
        return await next()


class AsyncDroppingRedeliveries(AsyncMiddleware):
    def __init__(self, deliveries: DeliveryLog) -> None:
        self.deliveries = deliveries

    @classmethod
    def delivery_key(cls, body: dict[str, Any]) -> str | None:
        """The stable key of a delivery that starts work, or None for the rest."""
        team = (body.get("team") or {}).get("id") if isinstance(body.get("team"), dict) else body.get("team_id")
        if body.get("command") and body.get("trigger_id"):
            return f"command:{team}:{body['trigger_id']}"
        if body.get("type") == "event_callback" and body.get("event_id"):
            return f"event:{team}:{body['event_id']}"
        if body.get("type") == "block_actions" and body.get("trigger_id"):
            return f"action:{team}:{body['trigger_id']}"
        return None

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        key = self.delivery_key(req.body)
        if key is None or await self.deliveries.first_time("slack", key):
            return await next()
        retry = req.headers.get("x-slack-retry-num", ["?"])
        logger.info("dropping a redelivery of %s (retry %s)", key, retry[0] if retry else "?")
        return BoltResponse(status=200, body="")
