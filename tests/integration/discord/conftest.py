"""Fixtures for the Discord app tests: a Discord-shaped world (snowflake ids), the fake Discord API serving it, and
the real discord.py client logged in against it with askwith's port, services, commands and ask worker."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from adapters.discord.bot import DiscordRuntime, start_discord
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.platform.port import Channel, ChannelKind, Member
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from tests.fakes.asks import CODE_NAME, LAUNCH, ask_factory
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_gateway import FakeGateway
from tests.fakes.discord_shapes import snowflake


START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
GUILD_ID = snowflake(START - timedelta(days=30))
HANDLES = ("alice", "bob", "carol", "dave", "erin")


@dataclass
class People:
    """The world's members by handle (their ids are snowflakes)."""

    world: World

    def __getattr__(self, handle: str) -> Member:
        return self.world.member_by_name(handle)

    def id(self, handle: str) -> str:
        return self.world.member_by_name(handle).id


def discord_world() -> World:
    """alice's private notes hold the code name; the launch date is in #launch, private to bob and erin (and the
    bot); #general is public; olga owns the server (so reads everything). Ids are snowflakes, increasing with time."""
    world = World(id=GUILD_ID, name="Acme")
    for offset, handle in enumerate(HANDLES, start=1):
        member_id = snowflake(START - timedelta(days=20), offset)
        world.add_member(Member(member_id, handle, handle.title()), MemberPolicy(opted_in=False))
    world.add_member(Member(snowflake(START - timedelta(days=30)), "olga", "Olga"), MemberPolicy(opted_in=False))
    bot = world.add_member(Member(snowflake(START - timedelta(days=25)), "askwith", "askwith", is_bot=True))
    world.bot_id = bot.id
    ids = {h: world.member_by_name(h).id for h in HANDLES}
    created = START - timedelta(days=10)
    world.add_channel(Channel(snowflake(created, 1), "general", ChannelKind.PUBLIC, (*ids.values(), bot.id)))
    world.add_channel(Channel(snowflake(created, 2), "alice-notes", ChannelKind.PRIVATE, (ids["alice"], bot.id)))
    world.add_channel(Channel(snowflake(created, 3), "launch", ChannelKind.PRIVATE, (ids["bob"], ids["erin"], bot.id)))
    channels = {c.name: c.id for c in world.channels.values()}
    say = _sayer(world)
    say(channels["alice-notes"], "alice", CODE_NAME)
    say(channels["alice-notes"], "alice", "Remember to water the plants.")
    say(channels["general"], "alice", "Hi all, shall we meet next week about the project?")
    say(channels["general"], "bob", "Sure, Tuesday works.")
    say(channels["launch"], "erin", LAUNCH)
    say(channels["launch"], "bob", "Thanks Erin, noted.")
    return world


def _sayer(world: World):  # noqa: ANN202
    count = [0]

    def say(channel_id: str, handle: str, text: str, *, thread_id: str | None = None) -> str:
        count[0] += 1
        ts = START + timedelta(minutes=count[0])
        sender = world.member_by_name(handle).id
        return world.add_message(channel_id, sender, text, ts=ts, thread_id=thread_id, message_id=snowflake(ts)).id

    return say


@pytest.fixture
def world() -> World:
    return discord_world()


@pytest.fixture
def people(world: World) -> People:
    return People(world)


@pytest.fixture
async def fake_discord(world: World) -> AsyncIterator[FakeDiscordApi]:
    api = FakeDiscordApi(world, guild_id=GUILD_ID, owner_id=world.member_by_name("olga").id)
    await api.start()
    try:
        yield api
    finally:
        await api.stop()


@pytest.fixture
def discord_settings(settings: Settings, fake_discord: FakeDiscordApi) -> Settings:
    # Memory holds everything said where an opted-in member reads, so that asks find what members who never opted
    # in said; keeping only opted-in authors' messages (the default) is tested in test_discord_retention.py.
    return settings.replace(
        discord_bot_token=fake_discord.bot_token, approval_timeout_seconds=5.0, discord_keep_messages="all"
    )


@dataclass
class DiscordHarness:
    runtime: DiscordRuntime
    api: FakeDiscordApi
    gateway: FakeGateway
    world: World
    db: Database

    @property
    def port(self):  # noqa: ANN201 - DiscordPort
        return self.runtime.services.port


@pytest.fixture
async def discord_bot(
    sqlite_db: Database, discord_settings: Settings, fake_discord: FakeDiscordApi, world: World
) -> AsyncIterator[DiscordHarness]:
    llm = LLMClient.from_settings(discord_settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)
    runtime = await start_discord(
        discord_settings, db=sqlite_db, ask_service=ask_factory(discord_settings, sqlite_db, llm, memory)
    )
    try:
        gateway = FakeGateway(runtime.client, fake_discord, db=sqlite_db)
        yield DiscordHarness(runtime, fake_discord, gateway, world, sqlite_db)
        # Discord's 3 seconds: no interaction's handling awaited REST or database work before its first answer
        assert not fake_discord.late_interactions, fake_discord.late_interactions
    finally:
        await runtime.close()
