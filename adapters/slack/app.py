"""Build the Slack app: bolt `AsyncApp` + askwith's middleware + every listener; serve it over HTTP or Socket Mode.

services = SlackServices(settings, db, port, asks)
app = build_app(services)
asgi = SlackHttpApp(app, install=services.install)      # mount under /slack in the serving process
await start_socket_mode(app, settings)                   # or: no public URL needed
"""

from __future__ import annotations

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from adapters.slack.listeners import register_listeners
from adapters.slack.middleware import AsyncDroppingRedeliveries, AsyncInjectingServices
from adapters.slack.services import SlackServices
from bot.settings import Settings


def build_app(services: SlackServices, *, socket_mode: bool = False) -> AsyncApp:
    settings = services.settings
    app = AsyncApp(
        client=services.port.client,
        # HTTP requests are verified with the signing secret; Socket Mode frames arrive over an authenticated socket.
        signing_secret=settings.slack_signing_secret if socket_mode else settings.require("slack_signing_secret"),
        request_verification_enabled=not socket_mode,
        # Listeners finish before the response goes out; they ack first and hand slow work to `services.spawn`,
        # which tracks it (drained at shutdown) instead of bolt's untracked background tasks.
        process_before_response=True,
    )
    app.use(AsyncInjectingServices(services))
    app.use(AsyncDroppingRedeliveries(services))
    register_listeners(app)
    return app


async def start_socket_mode(app: AsyncApp, settings: Settings) -> AsyncSocketModeHandler:
    handler = AsyncSocketModeHandler(app, settings.require("slack_app_token"), web_client=app.client)
    await handler.connect_async()
    return handler
