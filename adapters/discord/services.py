"""What the Discord handlers call: the core's entry points for one server (guild), bundled at start-up and reached
from any interaction or event through the client (`services_of(interaction)`, `client.services_for(guild_id)`).
Each server is its own askwith workspace: its own memory, settings, asks and transcripts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import discord

from adapters.discord import texts
from adapters.discord.answers import AnswerPosts
from adapters.discord.gateway_sync import GatewaySync
from adapters.discord.port import DiscordPort
from bot.asks.service import AskService
from bot.errors import WorkspaceError
from bot.negotiation.members import ClientFor, MemberNegotiation, one_client
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettings, MemberSettingsStore
from memory_ingest.worker import IngestWorker


@dataclass
class DiscordServices:
    settings: Settings
    db: Database
    port: DiscordPort
    asks: AskService
    ingest: IngestWorker
    workspace: WorkspaceKey
    negotiation_clients: ClientFor | None = None  # who plays the agents in `/negotiate`; None = the asks' LLM
    member_settings: MemberSettingsStore = field(init=False)
    pending_groups: dict[str, Any] = field(default_factory=dict)  # asks naming a big role, awaiting confirmation
    live: GatewaySync = field(init=False)  # what gateway events change in memory
    answers: AnswerPosts = field(init=False)  # the asks' final posts as embeds with buttons (the port posts them)

    def __post_init__(self) -> None:
        self.member_settings = MemberSettingsStore(self.db)
        self.live = GatewaySync(self.port, self.ingest)
        self.answers = AnswerPosts(self.port, self.asks)
        self.port.answers = self.answers

    async def set_memory(self, member_id: str, on: bool) -> MemberSettings:
        """Turn a member's memory on or off; off, where only opted-in authors are kept (DISCORD_KEEP_MESSAGES),
        also deletes every message they wrote."""
        settings = await self.member_settings.set_opted_in(self.workspace, member_id, on)
        if not on:
            await self.ingest.member_opted_out(member_id)
        return settings

    def negotiation(self) -> MemberNegotiation:
        """The core's `/negotiate` entry point over this Discord server."""
        clients = self.negotiation_clients or one_client(self.asks.llm)
        timeout_s = self.settings.negotiation_approval_timeout_seconds
        return MemberNegotiation(self.db, self.port, clients, approval_timeout_s=timeout_s)


def services_of(interaction: discord.Interaction[Any]) -> DiscordServices:
    """The services of the server the interaction came from (a DM's button click: any server's, since approvals
    are one registry for the whole bot)."""
    found = interaction.client.services_for(interaction.guild_id)  # type: ignore[attr-defined]
    if found is None:
        raise WorkspaceError(texts.guild_not_served())
    return found  # type: ignore[no-any-return]
