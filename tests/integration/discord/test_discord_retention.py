"""Keeping only opted-in authors' messages (DISCORD_KEEP_MESSAGES=opted-in, the default): a message by a member who
has not opted in is never stored, whether it comes from the backfill, a live message or an edit, and a member who
turns memory off (or forgets it) has every message they wrote deleted."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import select

from bot.platform.port import ChatMessage
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from tests.fakes.asks import LAUNCH
from tests.fakes.discord_api import FakeDiscordApi
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import opt_in, settings_answer
from tests.integration.discord.test_discord_threads import channel_id


@pytest.fixture
def discord_settings(settings: Settings, fake_discord: FakeDiscordApi) -> Settings:
    return settings.replace(discord_bot_token=fake_discord.bot_token, approval_timeout_seconds=5.0)


async def stored_texts(db: Database) -> set[str]:
    async with db.session() as session:
        return set((await session.execute(select(models.Message.text))).scalars())


class IngestCalls:
    """Waits until the ingestion worker has finished with given live messages (stored or not)."""

    def __init__(self, bot: DiscordHarness) -> None:
        self.done: dict[str, bool] = {}
        self.changed = asyncio.Event()
        worker = bot.runtime.services.ingest
        original: Callable[[ChatMessage], Awaitable[bool]] = worker.ingest_message

        async def ingest_message(message: ChatMessage) -> bool:
            added = False
            try:
                added = await original(message)
                return added
            finally:
                self.done[message.text] = added
                self.changed.set()

        worker.ingest_message = ingest_message  # type: ignore[method-assign]

    async def handled(self, text: str) -> bool:
        """Whether the message saying `text` was stored, once the worker is done with it."""
        async with asyncio.timeout(10):
            while text not in self.done:
                self.changed.clear()
                await self.changed.wait()
        return self.done[text]


async def test_the_default_keeps_only_opted_in_authors_messages_from_backfill_live_and_edits(
    discord_bot: DiscordHarness, people: People
) -> None:
    assert Settings.model_fields["discord_keep_messages"].default == "opted-in"
    await opt_in(discord_bot, people.bob)
    discord_bot.gateway.connect()
    calls = IngestCalls(discord_bot)

    await discord_bot.runtime.ingest.run()

    texts = await stored_texts(discord_bot.db)
    assert "Thanks Erin, noted." in texts and "Sure, Tuesday works." in texts, "bob opted in: his words are kept"
    assert LAUNCH not in texts, "erin never opted in: the backfill skips her message in a channel bob reads"
    launch = channel_id(discord_bot.world, "launch")
    erins = discord_bot.gateway.message(launch, people.erin, "the budget is 40k")
    assert not await calls.handled("the budget is 40k"), "a live message by erin is not stored"
    discord_bot.gateway.edit(erins, "the budget is 45k")
    assert not await calls.handled("the budget is 45k"), "nor is her edit"
    discord_bot.gateway.message(launch, people.bob, "bob agrees")
    assert await calls.handled("bob agrees")
    assert not {"the budget is 40k", "the budget is 45k"} & await stored_texts(discord_bot.db)


@pytest.mark.parametrize("subcommand", ["off", "forget"])
async def test_a_member_who_turns_memory_off_has_every_message_they_wrote_deleted(
    discord_bot: DiscordHarness, people: People, subcommand: str
) -> None:
    await opt_in(discord_bot, people.alice, people.bob)
    discord_bot.gateway.connect()
    await discord_bot.runtime.ingest.run()
    assert "Hi all, shall we meet next week about the project?" in await stored_texts(discord_bot.db)

    await settings_answer(discord_bot.api, discord_bot.gateway.slash("askwith", people.alice, subcommand=subcommand))

    texts = await stored_texts(discord_bot.db)
    assert "Sure, Tuesday works." in texts, "bob's words stay"
    assert not {"Hi all, shall we meet next week about the project?", "Remember to water the plants."} & texts
    assert (await discord_bot.runtime.ingest.run()).messages_added == 0, "a later run does not bring them back"
