"""Everything the Slack side of the long-running process needs, built from settings in one place.

    runtime = await SlackRuntime.start(settings, db, ask_service=root.ask_service, memory=memory)
    routes.mount("/slack", runtime.http)         # HTTP mode: Slack's request URL is https://<host>/slack/events
    ...                                          # Socket Mode (SLACK_APP_TOKEN set) is already connected
    await runtime.stop()

The caller (`askwith serve`) owns the database, the memory search, the composition root that builds the workspace's
`AskService` (`ask_service`) and the schedule that runs `runtime.services.ingest.run()` and an
`AskWorker(runtime.services.asks)`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.app import build_app, start_socket_mode
from adapters.slack.client import web_client
from adapters.slack.http import SlackHttpApp
from adapters.slack.install import MemberInstallFlow
from adapters.slack.memory_events import SlackMemoryEvents
from adapters.slack.memory_source import live_memory, member_scopes, slack_memory_source
from adapters.slack.port import SlackPort
from adapters.slack.rate_limits import InstallLimits, budgets_for
from adapters.slack.services import SlackServices
from bot.memory.access import MemoryAccess
from bot.memory.indexer import SessionIndexer
from bot.memory.live import slack_memory_option
from bot.platform.runtime import AskFactory
from bot.settings import Settings
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenStore
from memory_ingest.worker import IngestWorker


logger = logging.getLogger(__name__)


@dataclass
class SlackRuntime:
    services: SlackServices
    app: AsyncApp
    http: SlackHttpApp
    socket_mode: AsyncSocketModeHandler | None = None

    @classmethod
    async def start(
        cls,
        settings: Settings,
        db: Database,
        *,
        ask_service: AskFactory,
        memory: MemoryAccess,
        indexer: SessionIndexer | None = None,
        listen: bool = True,
    ) -> SlackRuntime:
        """Build and connect. A missing SLACK_BOT_TOKEN / SLACK_SIGNING_SECRET raises one line naming it.
        `listen=False` (a standalone ask worker) leaves Socket Mode unconnected, so events reach one process."""
        client = web_client(settings)
        tokens = UserTokenStore(db, TokenCipher.from_settings(settings)) if settings.token_encryption_key else None
        services = await open_workspace(
            settings, db, client, tokens, ask_service=ask_service, memory=memory, indexer=indexer, mirror=listen
        )
        install = services.install
        socket = bool(settings.slack_app_token)
        app = build_app(services, socket_mode=socket)
        http = SlackHttpApp(
            app, install=install, events=not socket, signing_secret=settings.slack_signing_secret,
            max_body_bytes=settings.max_request_bytes,
        )  # fmt: skip
        runtime = cls(services, app, http)
        if socket and listen:
            runtime.socket_mode = await start_socket_mode(app, settings)
        return runtime

    @property
    def ingest(self) -> IngestWorker | None:
        return self.services.ingest  # None with live memory: nothing to ingest

    async def stop(self) -> None:
        if self.socket_mode is not None:
            await self.socket_mode.close_async()
        await self.http.drain()
        await self.services.drain()


async def open_workspace(
    settings: Settings,
    db: Database,
    client: AsyncWebClient,
    tokens: UserTokenStore | None,
    *,
    ask_service: AskFactory,
    memory: MemoryAccess,
    indexer: SessionIndexer | None = None,
    mirror: bool = True,
    installed_at: datetime | None = None,
) -> SlackServices:
    """One workspace's services over its bot's client: its port, its directory in the store (which the core scopes
    every ask, memory read and transcript to), its memory source (mirror: ingestion; live: Slack's search, nothing
    copied) and its asks. `mirror=False` (a process that only runs asks) takes the stored workspace as it is, unless
    it was never mirrored."""
    option, said = slack_memory_option(settings, installed_at)
    limits = InstallLimits.for_settings(settings, installed_at=installed_at)
    port = SlackPort(
        client, user_tokens=tokens, agents_channel=settings.slack_agents_channel, limits=limits,
        budgets=budgets_for(db),  # Slack counts per app and workspace: paced with every process on the database
    )  # fmt: skip
    ingest = IngestWorker(
        port,
        db,
        indexer=indexer,
        page_size=settings.ingest_page_size,
        reconcile_s=settings.member_reconcile_hours * 3600,
        backfill_days=settings.backfill_days,
    )
    port.on_token_refused = SlackMemoryEvents(port, ingest).token_lost  # a refused member token: skipped
    workspace_id = (await ingest.mirror()).workspace_id if mirror else await ingest.known_workspace_id()
    source, live = slack_memory_source(settings), None
    if source == "live":
        memory, live = await live_memory(db, port, tokens, reader_of=memory)
    logger.log(logging.WARNING if option == "none" else logging.INFO, "Slack workspace %s: %s", workspace_id, said)
    asks = ask_service(port, workspace_id, memory=memory)
    install = None
    if tokens is not None and settings.slack_client_id:
        install = MemberInstallFlow(settings, client, tokens, user_scopes=member_scopes(settings))
    services = SlackServices(settings, db, port, asks, ingest=None if live else ingest, install=install)
    services.live_search = live
    return services
