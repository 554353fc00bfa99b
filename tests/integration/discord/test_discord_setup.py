"""Starting the Discord bot: a missing token is one clear line; commands are sent to Discord only when they changed;
the fake speaks JSON exactly as Discord does."""

from __future__ import annotations

import aiohttp
import discord
import pytest
from discord import app_commands

from adapters.discord.bot import AskwithClient, build_client, start_discord
from adapters.discord.port import split_message
from bot.errors import MissingSettingError
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import ask_factory
from tests.fakes.discord_api import FakeDiscordApi


async def test_missing_token_is_one_clear_line(settings: Settings, sqlite_db: Database) -> None:
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(lambda request: "{}"))
    memory = MemoryAccess(clear=None, fuzzy=None)
    with pytest.raises(MissingSettingError) as raised:
        await start_discord(settings, db=sqlite_db, ask_service=ask_factory(settings, sqlite_db, llm, memory))
    assert str(raised.value).startswith("DISCORD_BOT_TOKEN is not set: Discord bot token")
    assert "\n" not in str(raised.value)


async def test_fake_answers_with_exactly_application_json(fake_discord: FakeDiscordApi) -> None:
    headers = {"Authorization": f"Bot {fake_discord.bot_token}"}
    async with aiohttp.ClientSession() as session:
        async with session.get(fake_discord.base_url + "/users/@me", headers=headers) as ok:
            assert ok.status == 200 and ok.headers["Content-Type"] == "application/json"
        async with session.get(fake_discord.base_url + "/users/@me") as refused:
            assert refused.status == 401 and refused.headers["Content-Type"] == "application/json"


def test_long_posts_are_split_at_discords_limit() -> None:
    text = "\n".join(f"line {i} " + "x" * 90 for i in range(60))
    chunks = split_message(text)
    assert all(len(c) <= 2000 for c in chunks) and len(chunks) == 3
    assert "\n".join(chunks) == text


async def test_commands_are_synced_only_when_they_changed(
    discord_settings: Settings, sqlite_db: Database, fake_discord: FakeDiscordApi
) -> None:
    llm = LLMClient.from_settings(discord_settings, backend=ScriptedBackend(lambda request: "{}"))
    memory = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)

    async def start(client: AskwithClient | None = None) -> int:
        runtime = await start_discord(
            discord_settings,
            db=sqlite_db,
            ask_service=ask_factory(discord_settings, sqlite_db, llm, memory),
            client=client,
        )
        await runtime.close()
        return len(fake_discord.requests("PUT", r"/applications/\d+/commands"))

    assert await start() == 1, "the first start sends the commands"
    assert await start() == 1, "a restart with the same commands sends nothing"
    grown = build_client()

    @app_commands.command(name="ping", description="A command added in a new release")
    async def ping(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("pong")

    grown.tree.add_command(ping)
    assert await start(grown) == 2, "a changed command set is sent again"
    assert "ping" in fake_discord.synced_commands[""]
