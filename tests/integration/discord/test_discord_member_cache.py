"""A role change reaches memory for every member, including one discord.py had not cached: discord.py fires no event
for a GUILD_MEMBER_UPDATE of a member missing from its cache, so the bot keeps that cache whole from its own REST
listing of the members (a large server is not chunked through the gateway as well: members are loaded once). The
roles applied are those the update set, even when a message replayed late rewrites the cached member first."""

from __future__ import annotations

import random

import pytest

from bot.memory.clear import ClearMemory
from bot.memory.types import ClearQuery
from bot.memory.visibility import resolve_viewer
from bot.platform.port import Member
from tests.fakes.asks import LAUNCH
from tests.fakes.discord_chunks import FakeSocket
from tests.fakes.discord_shapes import READ_MESSAGE_HISTORY, ROLE_OVERWRITE, VIEW_CHANNEL, Role, new_id, overwrite
from tests.integration.discord.conftest import GUILD_ID, DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import opt_in
from tests.integration.discord.test_discord_events import eventually
from tests.integration.discord.test_discord_live import becomes, connected, found_by
from tests.integration.discord.test_discord_threads import channel_id


LAUNCH_TEXT = LAUNCH.split(".")[0]


async def finds(bot: DiscordHarness, member_id: str, words: str) -> bool:
    workspace_id = bot.runtime.ingest.workspace_id or 0
    async with bot.db.session() as session:
        viewer = await resolve_viewer(session, workspace_id, member_id)
    return bool(await ClearMemory(bot.db).search(viewer, ClearQuery(keywords=(words,))))


def staff_reads_launch(bot: DiscordHarness) -> Role:
    """A `staff` role whose holders read #launch."""
    api, launch = bot.api, channel_id(bot.world, "launch")
    staff = Role(new_id(), "staff", 0)
    bot.gateway.role_changed(staff)
    allow = overwrite(staff.id, ROLE_OVERWRITE, allow=VIEW_CHANNEL | READ_MESSAGE_HISTORY)
    bot.gateway.set_overwrites(launch, [*api.extras.overwrites_for(api.world.channels[launch]), allow])
    return staff


@pytest.fixture
async def staff(discord_bot: DiscordHarness, people: People) -> Role:
    """The bot connected, and a `staff` role whose holders read #launch (held by nobody yet)."""
    await connected(discord_bot, people)
    return staff_reads_launch(discord_bot)


async def test_a_role_change_of_a_member_the_gateway_never_delivered_changes_what_they_read(
    discord_bot: DiscordHarness, staff: Role
) -> None:
    bot = discord_bot
    fred = Member(new_id(), "fred", "Fred")
    bot.world.add_member(fred)  # joined while the connection was down: no GUILD_MEMBER_ADD reached discord.py
    await bot.runtime.ingest.mirror()  # the reconciliation lists him over HTTP
    assert not await finds(bot, fred.id, LAUNCH_TEXT)

    bot.gateway.set_roles(fred, [staff.id])  # Discord sends the update whether or not the bot cached him

    await eventually(lambda: _found(bot, fred.id), {"found"}, timeout=10.0)
    bot.gateway.set_roles(fred, [])
    await eventually(lambda: _not_found(bot, fred.id), {"gone"}, timeout=10.0)


async def test_a_message_replayed_late_with_its_authors_old_roles_does_not_undo_a_role_change(
    discord_bot: DiscordHarness, people: People, staff: Role
) -> None:
    bot = discord_bot
    bot.gateway.held = []
    bot.gateway.message(channel_id(bot.world, "general"), people.dave, "lunch at noon")  # dave holds no role yet

    bot.gateway.set_roles(people.dave, [staff.id])
    bot.gateway.release(random.Random(1), duplicates=0)  # before the update's handler runs: the cache has no role

    await eventually(lambda: _found(bot, people.id("dave")), {"found"}, timeout=10.0)


async def test_a_large_server_is_listed_once_not_chunked_too_and_its_role_changes_reach_memory(
    discord_bot: DiscordHarness, people: People
) -> None:
    bot = discord_bot
    await opt_in(bot, people.alice, people.bob, people.carol)
    bot.gateway.connect(large=True)  # GUILD_CREATE carries the bot alone
    guild = bot.runtime.client.get_guild(int(GUILD_ID))
    assert guild is not None and guild.get_member(int(people.id("carol"))) is None
    listed = len(bot.api.requests("GET", r"/guilds/\d+/members"))
    await bot.runtime.ingest.mirror()
    assert len(bot.api.requests("GET", r"/guilds/\d+/members")) == listed + 1, "one REST listing per mirror"
    await bot.runtime.ingest.run()
    assert not FakeSocket.install(bot.runtime.client, bot.api).requests, "no member request through the gateway"
    assert guild.get_member(int(people.id("carol"))) is not None, "cached from the listing"
    workspace = bot.runtime.ingest.workspace_id or 0
    staff = staff_reads_launch(bot)

    bot.gateway.set_roles(people.carol, [staff.id])

    await becomes(found_by(bot, workspace, LAUNCH_TEXT), {"bob", "carol", "erin", "olga"})


async def _found(bot: DiscordHarness, member_id: str) -> set[str]:
    return {"found"} if await finds(bot, member_id, LAUNCH_TEXT) else set()


async def _not_found(bot: DiscordHarness, member_id: str) -> set[str]:
    return set() if await finds(bot, member_id, LAUNCH_TEXT) else {"gone"}
