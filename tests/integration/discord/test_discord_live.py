"""Gateway events change memory within seconds, through the real discord.py client: edits, deletions and bulk
deletions; members joining, leaving and changing roles; roles, permission overwrites and thread members changing.
No event reads history or lists the server's messages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.platform.port import Member
from tests.fakes.asks import LAUNCH
from tests.fakes.discord_shapes import (
    ADMINISTRATOR,
    MEMBER_OVERWRITE,
    READ_MESSAGE_HISTORY,
    ROLE_OVERWRITE,
    VIEW_CHANNEL,
    Role,
    new_id,
    overwrite,
)
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import opt_in
from tests.integration.discord.test_discord_events import eventually
from tests.integration.discord.test_discord_threads import channel_id, finders


async def connected(bot: DiscordHarness, people: People) -> int:
    await opt_in(bot, people.alice, people.bob, people.carol)
    bot.gateway.connect()
    await bot.runtime.ingest.run()
    return bot.runtime.ingest.workspace_id or 0


def found_by(bot: DiscordHarness, workspace_id: int, words: str) -> Callable[[], Awaitable[set[str]]]:
    async def check() -> set[str]:
        return await finders(bot.db, workspace_id, words)

    return check


async def becomes(check: Callable[[], Awaitable[set[str]]], wanted: set[str]) -> None:
    """`check()` equals `wanted` within a generous deadline."""
    await eventually(lambda: _equal(check, wanted), {"equal"}, timeout=10.0)


async def _equal(check: Callable[[], Awaitable[set[str]]], wanted: set[str]) -> set[str]:
    return {"equal"} if await check() == wanted else set()


async def test_an_edit_replaces_the_text_and_a_deletion_forgets_it(
    discord_bot: DiscordHarness, people: People
) -> None:
    workspace = await connected(discord_bot, people)
    general = channel_id(discord_bot.world, "general")
    said = discord_bot.gateway.message(general, people.alice, "my password is hunter2")
    everyone = {"alice", "bob", "carol", "dave", "erin", "olga"}
    await becomes(found_by(discord_bot, workspace, "hunter2"), everyone)
    reads_before = len(discord_bot.api.requests("GET", r"/channels/\d+/messages"))

    edited = discord_bot.gateway.edit(said, "my password is in the vault")

    await becomes(found_by(discord_bot, workspace, "hunter2"), set())
    assert await finders(discord_bot.db, workspace, "vault") == everyone
    discord_bot.gateway.delete(edited)
    await becomes(found_by(discord_bot, workspace, "vault"), set())
    assert len(discord_bot.api.requests("GET", r"/channels/\d+/messages")) == reads_before, "no history read"


async def test_a_bulk_deletion_forgets_every_message(discord_bot: DiscordHarness, people: People) -> None:
    workspace = await connected(discord_bot, people)
    general = channel_id(discord_bot.world, "general")
    said = [discord_bot.gateway.message(general, people.bob, f"purge me {i}") for i in range(3)]
    await becomes(found_by(discord_bot, workspace, "purge"), {"alice", "bob", "carol", "dave", "erin", "olga"})

    discord_bot.gateway.bulk_delete(said)

    await becomes(found_by(discord_bot, workspace, "purge"), set())


async def test_roles_and_overwrites_change_who_finds_what_at_once(discord_bot: DiscordHarness, people: People) -> None:
    workspace = await connected(discord_bot, people)
    api, gateway = discord_bot.api, discord_bot.gateway
    launch, general = channel_id(discord_bot.world, "launch"), channel_id(discord_bot.world, "general")
    launch_text = LAUNCH.split(".")[0]
    await becomes(found_by(discord_bot, workspace, launch_text), {"bob", "erin", "olga"})

    staff = Role(new_id(), "staff", 0)
    gateway.role_changed(staff)
    allow_staff = overwrite(staff.id, ROLE_OVERWRITE, allow=VIEW_CHANNEL | READ_MESSAGE_HISTORY)
    gateway.set_overwrites(launch, [*api.extras.overwrites_for(api.world.channels[launch]), allow_staff])
    gateway.set_roles(people.carol, [staff.id])
    await becomes(found_by(discord_bot, workspace, launch_text), {"bob", "carol", "erin", "olga"})
    gateway.set_roles(people.carol, [])
    await becomes(found_by(discord_bot, workspace, launch_text), {"bob", "erin", "olga"})

    admins = Role(new_id(), "admins", 0)
    gateway.role_changed(admins)
    gateway.set_roles(people.dave, [admins.id])
    admins.permissions = ADMINISTRATOR  # the role itself changes: dave now reads every channel
    gateway.role_changed(admins)
    await becomes(found_by(discord_bot, workspace, launch_text), {"bob", "dave", "erin", "olga"})

    gateway.set_overwrites(general, [overwrite(people.id("erin"), MEMBER_OVERWRITE, deny=VIEW_CHANNEL)])
    await becomes(found_by(discord_bot, workspace, "Tuesday works"), {"alice", "bob", "carol", "dave", "olga"})
    assert await finders(discord_bot.db, workspace, launch_text) == {"bob", "dave", "erin", "olga"}


async def test_thread_members_joins_and_leaves_change_who_finds_what(
    discord_bot: DiscordHarness, people: People
) -> None:
    workspace = await connected(discord_bot, people)
    api, gateway = discord_bot.api, discord_bot.gateway
    general = channel_id(discord_bot.world, "general")
    thread = api.open_private_thread(general, "offers", [people.id("alice")])
    gateway.thread_created(thread)
    gateway.message(general, people.alice, "my salary offer is 200k", thread_id=thread.id)
    await becomes(found_by(discord_bot, workspace, "salary"), {"alice", "olga"})

    gateway.thread_members(thread, added=[people.id("bob")])
    await becomes(found_by(discord_bot, workspace, "salary"), {"alice", "bob", "olga"})
    gateway.thread_members(thread, removed=[people.id("alice")])
    await becomes(found_by(discord_bot, workspace, "salary"), {"bob", "olga"})

    gateway.member_leaves(people.bob)
    await becomes(found_by(discord_bot, workspace, "Tuesday works"), {"alice", "carol", "dave", "erin", "olga"})
    assert await finders(discord_bot.db, workspace, "salary") == {"olga"}

    newcomer = Member(new_id(), "fred", "Fred")
    gateway.member_joins(newcomer)
    await discord_bot.api.wait_for(lambda: True)
    await eventually(lambda: _has_member(discord_bot, "fred"), {"fred"})


async def _has_member(bot: DiscordHarness, handle: str) -> set[str]:
    from sqlalchemy import select

    from bot.store import models

    async with bot.db.session() as session:
        names = set((await session.execute(select(models.Member.name))).scalars())
    return {handle} & names


async def test_deleted_channels_and_threads_leave_memory(discord_bot: DiscordHarness, people: People) -> None:
    workspace = await connected(discord_bot, people)
    api, gateway = discord_bot.api, discord_bot.gateway
    general, notes = channel_id(discord_bot.world, "general"), channel_id(discord_bot.world, "alice-notes")
    starter = discord_bot.world.messages[general][0]
    gateway.message(general, people.bob, "a public thread reply to vanish", thread_id=starter.id)
    private = api.open_private_thread(general, "secret", [people.id("alice")])
    gateway.thread_created(private)
    gateway.message(general, people.alice, "a private thread line to vanish", thread_id=private.id)
    await becomes(found_by(discord_bot, workspace, "vanish"), {"alice", "bob", "carol", "dave", "erin", "olga"})

    gateway.thread_deleted(api.public_threads()[starter.id])
    gateway.thread_deleted(private)
    gateway.channel_deleted(notes)

    await becomes(found_by(discord_bot, workspace, "vanish"), set())
    await becomes(found_by(discord_bot, workspace, "plants"), set())
    assert await finders(discord_bot.db, workspace, "Tuesday works"), "the parent channel itself stays"


async def test_an_unknown_thread_or_member_is_looked_up_alone_never_with_a_full_mirror(
    discord_bot: DiscordHarness, people: People
) -> None:
    workspace = await connected(discord_bot, people)
    api, gateway = discord_bot.api, discord_bot.gateway
    general = channel_id(discord_bot.world, "general")
    listings = len(api.requests("GET", r"/guilds/\d+/channels"))
    thread = api.open_private_thread(general, "missed", [people.id("alice")])  # its THREAD_CREATE never arrived
    newcomer = Member(new_id(), "gus", "Gus")
    api.world.add_member(newcomer)  # nor did the newcomer's GUILD_MEMBER_ADD
    thread.member_ids.add(newcomer.id)

    gateway.message(general, newcomer, "gus says the private plan is ready", thread_id=thread.id)

    await becomes(found_by(discord_bot, workspace, "private plan"), {"alice", "olga"})
    assert len(api.requests("GET", r"/guilds/\d+/channels")) == listings, "no channel listing, no full mirror"
    assert api.requests("GET", rf"/channels/{thread.id}") and api.requests(
        "GET", rf"/guilds/\d+/members/{newcomer.id}"
    )
