"""The Slack side of the process for many workspaces (ASKWITH_SLACK_DISTRIBUTION=oauth): every workspace in the
installation store is opened at start-up, a new one when it installs askwith; HTTP only (mounted at /slack).

    runtime = await SlackOAuthRuntime.start(settings, db, ask_service=root.ask_service, memory=memory)
    routes.mount("/slack", runtime.http)   # /slack/install, /slack/oauth_redirect, /slack/events
    await runtime.stop()
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from slack_bolt.async_app import AsyncApp
from slack_sdk.oauth.installation_store import Bot

from adapters.slack.client import web_client
from adapters.slack.http import SlackHttpApp
from adapters.slack.install import MemberInstallFlow
from adapters.slack.installations import EncryptedInstallationStore
from adapters.slack.leaving import indexes_of, team_left
from adapters.slack.memory_source import member_scopes
from adapters.slack.oauth_app import build_oauth_app
from adapters.slack.runtime import open_workspace
from adapters.slack.services import SlackServices
from adapters.slack.workspaces import SlackWorkspaces
from bot.memory.access import MemoryAccess
from bot.memory.indexer import SessionIndexer
from bot.platform.runtime import AskFactory
from bot.settings import Settings
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenStore


logger = logging.getLogger(__name__)


@dataclass
class SlackOAuthRuntime:
    workspaces: SlackWorkspaces
    app: AsyncApp
    http: SlackHttpApp

    @classmethod
    async def start(
        cls,
        settings: Settings,
        db: Database,
        *,
        ask_service: AskFactory,
        memory: MemoryAccess,
        indexer: SessionIndexer | None = None,
        prepare: Callable[[str, SlackServices], None] | None = None,
    ) -> SlackOAuthRuntime:
        """`prepare(team_id, services)` finishes each workspace's services as it opens (at start-up or install)."""
        cipher = TokenCipher.from_settings(settings)
        tokens = UserTokenStore(db, cipher)

        async def open_bot(bot: Bot) -> SlackServices:
            client = web_client(settings, token=bot.bot_token)
            installed_at = _when(bot.installed_at)
            services = await open_workspace(
                settings,
                db,
                client,
                tokens,
                ask_service=ask_service,
                memory=memory,
                indexer=indexer,
                installed_at=installed_at,
            )
            if prepare is not None:
                prepare(bot.team_id or "", services)
            return services

        async def forget_team(team_id: str) -> None:
            await team_left(db, team_id, indexes=indexes_of(indexer))

        workspaces = SlackWorkspaces(EncryptedInstallationStore(db, cipher), open_bot, forget_team)
        await workspaces.open_installed()
        app = build_oauth_app(settings, db, workspaces)
        # Members' `/askwith connect` links come back to the same redirect; this flow completes them.
        anonymous = web_client(settings, token="")
        members = MemberInstallFlow(settings, anonymous, tokens, user_scopes=member_scopes(settings))
        http = SlackHttpApp(
            app, install=members, signing_secret=settings.require("slack_signing_secret"),
            max_body_bytes=settings.max_request_bytes,
        )  # fmt: skip
        return cls(workspaces, app, http)

    async def stop(self) -> None:
        await self.http.drain()
        await self.workspaces.drain()


def _when(installed_at: float | datetime | None) -> datetime | None:
    """bolt keeps an install's time as Unix seconds."""
    if installed_at is None or isinstance(installed_at, datetime):
        return installed_at
    return datetime.fromtimestamp(float(installed_at), UTC)
