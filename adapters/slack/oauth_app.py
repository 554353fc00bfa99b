"""The bolt app for many workspaces (ASKWITH_SLACK_DISTRIBUTION=oauth): bolt's own OAuth flow installs askwith into
any number of workspaces (`/slack/install` -> Slack -> `/slack/oauth_redirect`), keeps each workspace's bot token in
the project's database (`EncryptedInstallationStore`), and authorizes every request from that store, so a request is
handled with its own team's token; the listeners get that team's services (`SlackWorkspaces`).

    workspaces = SlackWorkspaces(store, open_workspace)
    app = build_oauth_app(settings, db, workspaces)
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_callback_options import AsyncCallbackOptions, AsyncFailureArgs, AsyncSuccessArgs
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncSlackResponse, AsyncWebClient

from adapters.slack.client import web_client
from adapters.slack.install import NO_DEBUG_LOGGER
from adapters.slack.installations import SingleUseStateStore
from adapters.slack.listeners import register_listeners
from adapters.slack.live_search import BOT_SEARCH_SCOPES
from adapters.slack.memory_source import slack_memory_source
from adapters.slack.middleware import AsyncDroppingRedeliveries
from adapters.slack.workspaces import AsyncInjectingTeamServices, SlackWorkspaces
from bot.settings import Settings
from bot.store.db import Database
from bot.store.deliveries import DeliveryLog


logger = logging.getLogger(__name__)

# What the app asks a workspace for on install; the same list as `oauth_config.scopes.bot` in manifest.yml (mirror)
# and manifest.marketplace.yml (live, which adds the one search scope a bot token may hold).
BOT_SCOPES = (
    "commands chat:write users:read channels:read groups:read im:read mpim:read channels:history groups:history "
    "im:history mpim:history im:write groups:write app_mentions:read assistant:write usergroups:read"
).split()


def install_scopes(settings: Settings) -> list[str]:
    """What an install asks for: the manifest's bot scopes, and with live memory `search:read.public` (the guide's
    "Token Type Allowed" for the private, IM and MPIM search scopes is "User": members grant those themselves)."""
    live = slack_memory_source(settings) == "live"
    return [*BOT_SCOPES, *(BOT_SEARCH_SCOPES if live else ())]


def build_oauth_app(settings: Settings, db: Database, workspaces: SlackWorkspaces) -> AsyncApp:
    template = web_client(settings, token="")
    # The code exchange carries the app's secret and returns a bot token: its client never logs at DEBUG.
    exchange = _FormCredentialsClient(
        base_url=template.base_url, retry_handlers=template.retry_handlers, logger=NO_DEBUG_LOGGER
    )
    oauth = AsyncOAuthSettings(
        client_id=settings.require("slack_client_id"),
        client_secret=settings.require("slack_client_secret"),
        scopes=install_scopes(settings),
        installation_store=workspaces.store,
        installation_store_bot_only=True,  # members' tokens have their own flow (`/askwith connect`)
        state_store=SingleUseStateStore(settings.require("slack_client_secret"), db),
        install_page_rendering_enabled=False,  # /slack/install redirects straight to Slack
        callback_options=AsyncCallbackOptions(success=_opened(workspaces), failure=_failed),
    )
    app = AsyncApp(
        client=AsyncWebClient(base_url=template.base_url, retry_handlers=template.retry_handlers),
        signing_secret=settings.require("slack_signing_secret"),
        oauth_flow=AsyncOAuthFlow(client=exchange, settings=oauth),
        installation_store_bot_only=True,
        process_before_response=True,
        logger=logging.getLogger("slack_bolt.AsyncApp"),
    )
    app.use(AsyncInjectingTeamServices(workspaces))
    app.use(AsyncDroppingRedeliveries(DeliveryLog(db)))
    register_listeners(app)
    return app


class _FormCredentialsClient(AsyncWebClient):
    """The code exchange with the app's credentials in the form body (which Slack accepts) rather than HTTP basic
    auth, which slack_sdk builds with a deprecated aiohttp helper."""

    async def oauth_v2_access(  # type: ignore[override]
        self, *, client_id: str, client_secret: str, code: str | None = None, redirect_uri: str | None = None, **_: Any
    ) -> AsyncSlackResponse:
        form = {"client_id": client_id, "client_secret": client_secret, "code": code or ""}
        if redirect_uri:
            form["redirect_uri"] = redirect_uri
        return await self.api_call("oauth.v2.access", data=form)


def _opened(workspaces: SlackWorkspaces):  # noqa: ANN202 - bolt's callback type
    async def success(args: AsyncSuccessArgs) -> BoltResponse:
        """A workspace installed askwith: its services open now (its channels are listed, ingestion starts)."""
        await workspaces.open(args.installation.to_bot())
        logger.info("askwith was installed into Slack workspace %s", args.installation.team_id)
        return await args.default.success(args)

    return success


async def _failed(args: AsyncFailureArgs) -> BoltResponse:
    logger.info("a Slack install was refused: %s", args.reason)
    return await args.default.failure(args)
