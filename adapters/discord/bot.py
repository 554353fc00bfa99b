"""Build the Discord bot: a discord.py client with its command tree, askwith's port, services, commands, views and
events; start it and connect it to the gateway.

    runtime = await start_discord(settings, db=db, ask_service=root.ask_service)  # log in, mirror, sync if changed
    await runtime.connect()                                                        # the gateway: events, interactions
    await runtime.close()

`askwith serve` starts it through `adapters.discord.serve` when DISCORD_BOT_TOKEN is set; `runtime.ingest` is the
ingestion worker its scheduler runs for this server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import discord
from discord import app_commands

from adapters.discord import chat_asks, commands, events, texts, views
from adapters.discord.calls import MAX_INLINE_RATE_LIMIT_S
from adapters.discord.command_sync import sync_if_changed
from adapters.discord.guilds import GuildLauncher, served_guilds
from adapters.discord.services import DiscordServices
from bot.asks.forget import forget_workspace
from bot.asks.worker import AskWorker
from bot.errors import AskwithError, WorkspaceError
from bot.memory.indexer import SessionIndexer
from bot.platform.runtime import AskFactory
from bot.settings import Settings
from bot.store.db import Database
from memory_ingest.worker import IngestWorker


log = logging.getLogger(__name__)
ASK_POLL_SECONDS = 0.5


class AskwithTree(app_commands.CommandTree["AskwithClient"]):
    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        """A command failed: the member reads why (askwith's own errors are worded for them), the log has the rest."""
        cause = error.original if isinstance(error, app_commands.CommandInvokeError) else error
        log.error("/%s failed", interaction.command.name if interaction.command else "?", exc_info=cause)
        text = str(cause) if isinstance(cause, AskwithError) else texts.command_failed()
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)


class AskwithClient(discord.Client):
    """A discord.py client with a command tree and askwith's services (set once logged in)."""

    def __init__(self) -> None:
        intents = discord.Intents.none()
        intents.guilds = True
        intents.members = True  # privileged: the member list decides who can see what
        intents.guild_messages = True
        intents.dm_messages = True
        intents.message_content = True  # privileged: without it, message text arrives empty and memory stays blank
        super().__init__(
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            max_ratelimit_timeout=MAX_INLINE_RATE_LIMIT_S,  # longer waits: that object backs off, the run goes on
            # Members come from askwith's REST listing (`adapters.discord.member_cache`), not also from the gateway.
            chunk_guilds_at_startup=False,
        )
        self.tree = AskwithTree(self)
        self.guild_services: dict[str, DiscordServices] = {}  # server id -> its askwith workspace's services
        self.runtime: DiscordRuntime | None = None  # set once started: servers joined or left while running

    def dispatch(self, event: str, /, *args: Any, **kwargs: Any) -> None:
        super().dispatch(event, *args, **kwargs)
        if event in ("member_join", "member_update"):
            # The roles as this event set them, read now: the handlers run later, and the cached member they are
            # handed may change meanwhile (a message replayed late carries its author's roles as they were then).
            member: discord.Member = args[-1]
            roles = [str(role.id) for role in member.roles]
            super().dispatch("member_roles", member, roles, event == "member_join")

    def services_for(self, guild_id: int | str | None) -> DiscordServices | None:
        """A server's services; with no server (a DM), any one: approvals are one registry for the whole bot."""
        if guild_id is None:
            return next(iter(self.guild_services.values()), None)
        return self.guild_services.get(str(guild_id))


def _worker_name(workspace_id: int) -> str:
    return f"askwith-discord-asks-{workspace_id}"


def build_client() -> AskwithClient:
    return AskwithClient()


@dataclass
class DiscordRuntime:
    """The bot in every server it serves: one set of services (a workspace) and one ask worker per server."""

    client: AskwithClient
    guilds: list[DiscordServices]
    workers: list[AskWorker]
    launcher: GuildLauncher
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    # Set by the hosting process: stops a server's scheduled ingestion and ask worker when the bot is removed.
    on_left: Callable[[str], None] | None = None
    _worker_tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # The hosting process's hook for a server joined while running (`askwith serve`): it schedules the server's
    # ingestion and runs its asks like those of the servers present at start.
    on_joined: Callable[[DiscordServices], None] | None = None

    @property
    def services(self) -> DiscordServices:
        """The first server's services (the only one's, in the usual single-server setup)."""
        return self.guilds[0]

    @property
    def ingest(self) -> IngestWorker:
        return self.services.ingest

    def start_worker(self) -> None:
        """Run queued asks in the background (each server's ask worker polls the database)."""
        for worker in self.workers:
            self._run(worker)

    def _run(self, worker: AskWorker) -> None:
        name = _worker_name(worker.service.workspace_id)
        self._worker_tasks.append(asyncio.create_task(worker.run(stop=self.stop), name=name))

    async def joined(self, guild_id: str) -> None:
        """The bot was invited to another server while running: serve it at once, its history pulled now; the
        hosting process (`on_joined`) schedules its ingestion and runs its asks, or else they run here."""
        if guild_id in self.client.guild_services:
            return
        services = await self.launcher.start(guild_id)
        if services is None:
            return
        self.client.guild_services[guild_id] = services
        self.guilds.append(services)  # the global commands synced at start reach this server too
        if self.on_joined is not None:
            self.on_joined(services)
        else:
            worker = AskWorker(services.asks, poll_seconds=ASK_POLL_SECONDS)
            self.workers.append(worker)
            self._run(worker)
        await services.ingest.run()

    async def left(self, guild_id: str) -> None:
        """The bot was removed from a server: its work stops at once (scheduled ingestion, ask worker) and everything
        askwith holds for it is deleted (`bot.asks.forget`)."""
        services = self.client.guild_services.pop(guild_id, None)
        if services is None:
            return
        if self.on_left is not None:
            self.on_left(guild_id)
        workspace_id = services.asks.workspace_id
        for task in [t for t in self._worker_tasks if t.get_name() == _worker_name(workspace_id)]:
            task.cancel()
        self.guilds = [g for g in self.guilds if g is not services]
        self.workers = [w for w in self.workers if w.service is not services.asks]
        indexer = services.ingest.indexer
        indexes = [indexer.index, indexer.index.windows()] if indexer is not None else []
        await forget_workspace(services.db, workspace_id, indexes=indexes)

    async def connect(self) -> None:
        """The gateway connection (events, interactions); returns when it closes."""
        await self.client.connect(reconnect=True)

    async def close(self) -> None:
        self.stop.set()
        for task in self._worker_tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.client.close()


async def start_discord(
    settings: Settings,
    *,
    db: Database,
    ask_service: AskFactory,
    client: AskwithClient | None = None,
    indexer: SessionIndexer | None = None,
    worker: bool = True,
    mirror: bool = True,
) -> DiscordRuntime:
    """Log in, mirror every server the bot is in (or DISCORD_GUILD_ID alone), wire the core and the handlers, and
    sync the global commands if they changed since the last sync (no gateway yet). A server that fails to start is
    logged and left out; the others start. `worker=False` when the hosting process runs the ask workers itself
    (`askwith serve`); `mirror=False` in a process that only runs asks: no listing and no command sync."""
    token = settings.require("discord_bot_token")
    client = client or build_client()
    await client.login(token)
    launcher = GuildLauncher(client, settings, db, ask_service, indexer)
    launcher.mirror = mirror  # False: servers mirrored before are taken as stored (a process with no gateway)
    for guild_id in await served_guilds(client, settings):
        if (services := await launcher.start(guild_id)) is not None:
            client.guild_services[guild_id] = services
    if not client.guild_services:
        raise WorkspaceError(texts.no_guild_started())
    register(client)
    if mirror:  # global commands, sent when changed; a process that only runs asks (`askwith worker`) takes none
        await sync_if_changed(client.tree, settings.data_dir)
    services = list(client.guild_services.values())
    workers = [AskWorker(s.asks, poll_seconds=ASK_POLL_SECONDS) for s in services]
    runtime = DiscordRuntime(client, services, workers, launcher)
    client.runtime = runtime
    if worker:
        runtime.start_worker()
    log.info(
        "Discord bot ready for %d server(s): %s", len(services), ", ".join(s.workspace.external_id for s in services)
    )
    return runtime


def register(client: AskwithClient) -> None:
    commands.register(client.tree)
    views.register(client)
    chat_asks.register(client)  # its button: the views sit below the asks and know nothing of them
    events.register(client)
