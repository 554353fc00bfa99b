"""Starting askwith in a Discord server: each server the bot is in becomes its own askwith workspace, mirrored,
with its own port, ingestion worker and ask service; one that fails to start is logged and left out.

    launcher = GuildLauncher(client, settings, db, root.ask_service, indexer)
    services = await launcher.start(guild_id)      # None when that server could not start
"""

from __future__ import annotations

import logging

import discord

from adapters.discord import texts
from adapters.discord.calls import platform_call
from adapters.discord.port import DiscordPort
from adapters.discord.services import DiscordServices
from bot.consent.pending import ApprovalRegistry
from bot.errors import AskwithError, WorkspaceError
from bot.memory.indexer import SessionIndexer
from bot.platform.runtime import AskFactory
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from memory_ingest.worker import IngestWorker


log = logging.getLogger(__name__)
GUILDS_PAGE = 200


class GuildLauncher:
    def __init__(
        self,
        client: discord.Client,
        settings: Settings,
        db: Database,
        ask_service: AskFactory,  # the composition root's: builds the server's asks
        indexer: SessionIndexer | None,
    ) -> None:
        self.client = client
        self.settings = settings
        self.db = db
        self.ask_service = ask_service
        self.indexer = indexer
        self.approvals = ApprovalRegistry()  # one registry: a click in a DM resolves whichever server asked
        self.mirror = True  # False in a process that runs asks but no sync and no gateway (`askwith worker`)

    async def start(self, guild_id: str) -> DiscordServices | None:
        port = DiscordPort(self.client, settings=self.settings, approvals=self.approvals, guild_id=guild_id)
        try:
            return await self._services(port)
        except AskwithError as exc:
            log.error("Discord server %s left out: %s", guild_id, exc)
            return None

    async def _services(self, port: DiscordPort) -> DiscordServices:
        settings = self.settings
        ingest = IngestWorker(
            port,
            self.db,
            indexer=self.indexer,
            page_size=settings.ingest_page_size,
            reconcile_s=settings.member_reconcile_hours * 3600,
            backfill_days=settings.backfill_days,
            opted_in_authors_only=settings.discord_keep_messages == "opted-in",
        )
        # A process that only runs asks (`askwith worker`) takes the stored server as it is.
        workspace_id = (await ingest.mirror()).workspace_id if self.mirror else await ingest.known_workspace_id()
        asks = self.ask_service(port, workspace_id)
        key = WorkspaceKey(port.platform, await port.guild_id())
        log.info("Discord server %s started (mirrored: %s)", key.external_id, self.mirror)
        return DiscordServices(settings, self.db, port, asks, ingest, key)


async def served_guilds(client: discord.Client, settings: Settings) -> list[str]:
    """DISCORD_GUILD_ID when set, else every server the bot is in."""
    if settings.discord_guild_id:
        return [settings.discord_guild_id]
    ids: list[str] = []
    after: str | None = None
    while True:
        async with platform_call("list the bot's servers"):
            page = await client.http.get_guilds(GUILDS_PAGE, after=after)
        ids.extend(str(g["id"]) for g in page)
        if len(page) < GUILDS_PAGE:
            break
        after = ids[-1]
    if not ids:
        raise WorkspaceError(texts.guild_ambiguous(0))
    return ids
