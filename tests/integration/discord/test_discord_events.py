"""`on_message`: messages said in server channels reach memory as they arrive; DMs with the bot, bots' posts and
channels nobody opted in to never do."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sqlalchemy import select

from bot.store import models
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import opt_in


async def stored_texts(bot: DiscordHarness) -> list[str]:
    async with bot.db.session() as session:
        return list((await session.execute(select(models.Message.text))).scalars())


async def test_live_messages_go_to_memory_but_dms_and_bots_never_do(
    discord_bot: DiscordHarness, people: People
) -> None:
    await opt_in(discord_bot, people.alice)
    channels = {c.name: c.id for c in discord_bot.world.channels.values()}
    dm = discord_bot.api.dm_with(people.id("alice")).id
    before = await stored_texts(discord_bot)

    discord_bot.gateway.message(channels["general"], people.bob, "Standup moves to 10:30 tomorrow.")
    discord_bot.gateway.message(dm, people.alice, "psst, bot: my password is hunter2", in_guild=False)
    discord_bot.gateway.message(channels["general"], people.askwith, "I am the bot talking.")
    discord_bot.gateway.message(channels["launch"], people.erin, "Nobody opted in reads this channel.")
    discord_bot.gateway.message(channels["alice-notes"], people.alice, "Buy oat milk.")

    wanted = {"Standup moves to 10:30 tomorrow.", "Buy oat milk."}
    await eventually(lambda: _new(discord_bot, before), wanted)
    await asyncio.sleep(0.2)  # let the other three events' handlers finish too
    assert set(await stored_texts(discord_bot)) - set(before) == wanted


async def _new(bot: DiscordHarness, before: list[str]) -> set[str]:
    return set(await stored_texts(bot)) - set(before)


async def eventually(check: Callable[[], Awaitable[set[str]]], wanted: set[str], *, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not wanted <= await check():
        assert loop.time() < deadline, f"never stored: {wanted - await check()}"
        await asyncio.sleep(0.02)
