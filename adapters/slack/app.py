"""Build the Slack app: bolt `AsyncApp` + askwith's middleware + every listener; serve it over HTTP or Socket Mode.

services = SlackServices(settings, db, port, asks)
app = build_app(services)
asgi = SlackHttpApp(app, install=services.install)      # mount under /slack in the serving process
await start_socket_mode(app, settings)                   # or: no public URL needed
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.listeners import register_listeners
from adapters.slack.middleware import AsyncDroppingRedeliveries, AsyncInjectingServices
from adapters.slack.port import SlackPort
from adapters.slack.services import SlackServices
from bot.settings import Settings


def build_app(services: SlackServices, *, socket_mode: bool = False) -> AsyncApp:
    settings, port = services.settings, services.port
    app = AsyncApp(
        # A client without a token: bolt gives each request one with the token `authorize` returned.
        client=AsyncWebClient(base_url=port.client.base_url, retry_handlers=port.client.retry_handlers),
        # Explicit, so bolt never switches to its own OAuth mode because SLACK_CLIENT_ID / SLACK_CLIENT_SECRET are
        # in the environment (they serve the member install flow here): one workspace, one bot token.
        authorize=single_workspace_authorize(port),
        # HTTP requests are verified with the signing secret; Socket Mode frames arrive over an authenticated socket.
        signing_secret=settings.slack_signing_secret if socket_mode else settings.require("slack_signing_secret"),
        request_verification_enabled=not socket_mode,
        # Listeners finish before the response goes out; they ack first and hand slow work to `services.spawn`,
        # which tracks it (drained at shutdown) instead of bolt's untracked background tasks.
        process_before_response=True,
        # A base logger of no level of its own: every logger bolt derives from it (request verification, listener
        # runner, ...) takes its level from the `slack_bolt` logger, which askwith's logging set-up quiets, instead of
        # the root level bolt would otherwise copy into each of them.
        logger=logging.getLogger("slack_bolt.AsyncApp"),
    )
    app.use(AsyncInjectingServices(services))
    app.use(AsyncDroppingRedeliveries(services.deliveries))
    register_listeners(app)
    return app


def single_workspace_authorize(port: SlackPort) -> Callable[..., Awaitable[AuthorizeResult | None]]:
    """bolt's `authorize` for the one workspace the bot token belongs to; requests from any other are refused."""

    async def authorize(enterprise_id: str | None, team_id: str | None, user_id: str | None) -> AuthorizeResult | None:
        me = await port.identity()
        if team_id is not None and team_id != me.team_id:
            return None
        return AuthorizeResult(
            enterprise_id=enterprise_id,
            team_id=me.team_id,
            bot_user_id=me.bot_user_id,
            bot_id=me.bot_id,
            bot_token=port.client.token,
            user_id=user_id,
        )

    return authorize


async def start_socket_mode(app: AsyncApp, settings: Settings) -> AsyncSocketModeHandler:
    handler = AsyncSocketModeHandler(app, settings.require("slack_app_token"), web_client=app.client)
    await handler.connect_async()
    return handler
