"""What the Discord handlers call: the core's entry points, bundled once at start-up and reached from any
interaction through the client (`services_of(interaction)`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import discord

from adapters.discord.port import DiscordPort
from bot.asks.service import AskService
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
    member_settings: MemberSettingsStore = field(init=False)

    def __post_init__(self) -> None:
        self.member_settings = MemberSettingsStore(self.db)


def services_of(interaction: discord.Interaction[Any]) -> DiscordServices:
    return interaction.client.services  # type: ignore[attr-defined, no-any-return]
