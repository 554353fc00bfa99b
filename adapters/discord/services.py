"""What the Discord handlers call: the core's entry points, bundled once at start-up and reached from any
interaction through the client (`services_of(interaction)`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import discord

from adapters.discord.port import DiscordPort
from bot.asks.service import AskService
from bot.negotiation.members import ClientFor, MemberNegotiation, one_client
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
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

    def __post_init__(self) -> None:
        self.member_settings = MemberSettingsStore(self.db)

    def negotiation(self) -> MemberNegotiation:
        """The core's `/negotiate` entry point over this Discord server."""
        clients = self.negotiation_clients or one_client(self.asks.llm)
        timeout_s = self.settings.negotiation_approval_timeout_seconds
        return MemberNegotiation(self.db, self.port, clients, approval_timeout_s=timeout_s)


def services_of(interaction: discord.Interaction[Any]) -> DiscordServices:
    return interaction.client.services  # type: ignore[attr-defined, no-any-return]
