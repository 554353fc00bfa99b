"""Build the Discord bot: a discord.py client with its command tree, askwith's port, services, commands, views and
events; start it; run it until told to stop.

    runtime = await start_discord(settings, db=db, llm=llm, memory=memory)   # log in, mirror, register, sync
    await runtime.connect()                                                 # the gateway: events, interactions
    await runtime.close()

    await run_discord(settings, db=db, llm=llm, memory=memory, stop=stop)   # all of the above until `stop` is set

`askwith serve` starts it through `adapters.discord.serve` when DISCORD_BOT_TOKEN is set; `runtime.ingest` is the
ingestion worker its scheduler runs for this server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

import discord
from discord import app_commands

from adapters.discord import commands, events, texts, views
from adapters.discord.port import DiscordPort
from adapters.discord.services import DiscordServices
from bot.agents.memory_tools import MemoryAccess
from bot.approvals import ApprovalRegistry
from bot.asks.service import AskService
from bot.asks.worker import AskWorker
from bot.errors import AskwithError
from bot.llm.client import LLMClient
from bot.memory.indexer import SessionIndexer
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
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
        super().__init__(intents=intents, allowed_mentions=discord.AllowedMentions.none())
        self.tree = AskwithTree(self)
        self.services: DiscordServices | None = None


def build_client() -> AskwithClient:
    return AskwithClient()


@dataclass
class DiscordRuntime:
    client: AskwithClient
    services: DiscordServices
    worker: AskWorker
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    _worker_task: asyncio.Task[None] | None = None

    @property
    def ingest(self) -> IngestWorker:
        return self.services.ingest

    def start_worker(self) -> None:
        """Run queued asks in the background (the ask worker polls the database)."""
        self._worker_task = asyncio.create_task(self.worker.run(stop=self.stop), name="askwith-discord-asks")

    async def connect(self) -> None:
        """The gateway connection (events, interactions); returns when it closes."""
        await self.client.connect(reconnect=True)

    async def close(self) -> None:
        self.stop.set()
        if self._worker_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker_task
        await self.client.close()


async def start_discord(
    settings: Settings,
    *,
    db: Database,
    llm: LLMClient,
    memory: MemoryAccess,
    client: AskwithClient | None = None,
    indexer: SessionIndexer | None = None,
    worker: bool = True,
) -> DiscordRuntime:
    """Log in, mirror the server, wire the core and the handlers, and sync the commands (no gateway yet).
    `worker=False` when the hosting process runs the ask worker itself (`askwith serve`)."""
    token = settings.require("discord_bot_token")
    client = client or build_client()
    await client.login(token)
    port = DiscordPort(client, settings=settings, approvals=ApprovalRegistry())
    ingest = IngestWorker(port, db, indexer=indexer, page_size=settings.ingest_page_size)
    mirror = await ingest.mirror()
    asks = AskService(settings=settings, db=db, port=port, llm=llm, memory=memory, workspace_id=mirror.workspace_id)
    guild = discord.Object(id=int(await port.guild_id()))
    client.services = DiscordServices(settings, db, port, asks, ingest, WorkspaceKey(port.platform, str(guild.id)))
    register(client, guild)
    await client.tree.sync(guild=guild)
    runtime = DiscordRuntime(client, client.services, AskWorker(asks, poll_seconds=ASK_POLL_SECONDS))
    if worker:
        runtime.start_worker()
    log.info("Discord bot ready for server %s (%s)", mirror.workspace_name, guild.id)
    return runtime


def register(client: AskwithClient, guild: discord.abc.Snowflake) -> None:
    commands.register(client.tree, guild)
    views.register(client)
    events.register(client)


async def run_discord(
    settings: Settings, *, db: Database, llm: LLMClient, memory: MemoryAccess, stop: asyncio.Event
) -> None:
    """Run the Discord bot until `stop` is set (or the gateway gives up)."""
    runtime = await start_discord(settings, db=db, llm=llm, memory=memory)
    gateway = asyncio.create_task(runtime.connect(), name="askwith-discord-gateway")
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({gateway, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        await runtime.close()
        if gateway.done() and not gateway.cancelled() and gateway.exception() is not None:
            raise gateway.exception()  # type: ignore[misc]
