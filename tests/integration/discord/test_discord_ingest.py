"""Ingestion through `DiscordPort`: history backfill paged by message id (with a 429 in the middle) stores every
message exactly once, and each member's visibility is what Discord's roles and permission overwrites say."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import select

from adapters.discord.bot import AskwithClient, build_client
from adapters.discord.port import DiscordPort
from bot.consent.pending import ApprovalRegistry
from bot.platform.port import Channel, ChannelKind
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import World
from memory_ingest.worker import IngestWorker
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_shapes import (
    MEMBER_OVERWRITE,
    READ_MESSAGE_HISTORY,
    ROLE_OVERWRITE,
    VIEW_CHANNEL,
    Role,
    overwrite,
    snowflake,
)
from tests.integration.discord.conftest import GUILD_ID, START, People


PAGE = 4


def busy_world(world: World, people: People) -> World:
    """#general gets 21 more messages and a thread of 5 replies; #launch is open to a `staff` role (carol);
    dave may view #general but not read its history; alice has a DM with the bot."""
    general = next(c.id for c in world.channels.values() if c.name == "general")
    for i in range(21):
        ts = START + timedelta(hours=1, minutes=i)
        world.add_message(
            general, people.id(("alice", "bob", "carol")[i % 3]), f"chat {i}", ts=ts, message_id=snowflake(ts)
        )
    parent = world.messages[general][5].id
    for i in range(5):
        ts = START + timedelta(hours=2, minutes=i)
        world.add_message(general, people.id("erin"), f"reply {i}", ts=ts, thread_id=parent, message_id=snowflake(ts))
    dm = world.add_channel(Channel(snowflake(START, 9), "dm", ChannelKind.DM, (world.bot_id, people.id("alice"))))
    world.add_message(
        dm.id, people.id("alice"), "a private word to the bot", ts=START, message_id=snowflake(START, 10)
    )
    return world


@pytest.fixture
async def port(world: World, people: People, settings: Settings) -> AsyncIterator[tuple[DiscordPort, FakeDiscordApi]]:
    busy_world(world, people)
    api = FakeDiscordApi(world, guild_id=GUILD_ID, owner_id=people.id("olga"))
    staff = Role(snowflake(START, 20), "staff", 0)
    api.extras.roles[staff.id] = staff
    api.extras.member_roles[people.id("carol")] = [staff.id]
    launch = next(c for c in world.channels.values() if c.name == "launch")
    api.extras.overwrites[launch.id] = [
        *api.extras.overwrites_for(launch),
        overwrite(staff.id, ROLE_OVERWRITE, allow=VIEW_CHANNEL | READ_MESSAGE_HISTORY),
    ]
    general = next(c for c in world.channels.values() if c.name == "general")
    api.extras.overwrites[general.id] = [overwrite(people.id("dave"), MEMBER_OVERWRITE, deny=READ_MESSAGE_HISTORY)]
    await api.start()
    client: AskwithClient = build_client()
    await client.login(api.bot_token)
    try:
        yield DiscordPort(client, settings=settings, approvals=ApprovalRegistry()), api
    finally:
        await client.close()
        await api.stop()


async def stored(db: Database) -> tuple[list[str], dict[str, set[str]]]:
    """(platform ids of stored messages, channel name -> names of the members who can see it)."""
    async with db.session() as session:
        ids = list((await session.execute(select(models.Message.platform_id))).scalars())
        rows = await session.execute(
            select(models.Channel.name, models.Member.name)
            .join(models.Membership, models.Membership.channel_id == models.Channel.id)
            .join(models.Member, models.Member.id == models.Membership.member_id)
        )
        seen: dict[str, set[str]] = {}
        for channel, member in rows.all():
            seen.setdefault(channel, set()).add(member)
    return ids, seen


async def test_backfill_pages_through_a_429_and_stores_every_message_once_with_discord_visibility(
    db: Database, port: tuple[DiscordPort, FakeDiscordApi], world: World, people: People
) -> None:
    discord_port, api = port
    worker = IngestWorker(discord_port, db, page_size=PAGE)
    await worker.mirror()
    for handle in ("alice", "bob"):
        await MemberSettingsStore(db).set_opted_in(WorkspaceKey("discord", GUILD_ID), people.id(handle), True)
    api.rate_limit("GET", r"/channels/\d+/messages", retry_after=0.05, times=2)

    report = await worker.run()

    guild_messages = [
        m.id for c in world.channels.values() if c.kind is not ChannelKind.DM for m in world.messages[c.id]
    ]
    ids, visibility = await stored(db)
    # every server message (thread replies included) exactly once; the DM with the bot never
    assert sorted(ids) == sorted(guild_messages) and len(ids) == len(set(ids)) == 6 + 21 + 5
    assert report.messages_added == len(guild_messages)
    assert len(api.rate_limited) == 2, "the 429s were answered and waited out"
    pages = api.requests("GET", r"/channels/\d+/messages")
    assert {int(c.query["limit"]) for c in pages} == {PAGE} and all("after" in c.query for c in pages)
    assert visibility == {
        "general": {"alice", "bob", "carol", "erin", "olga", "askwith"},  # dave may not read its history
        "alice-notes": {"alice", "olga", "askwith"},
        "launch": {"bob", "erin", "carol", "olga", "askwith"},  # carol through the staff role; olga owns the server
    }

    assert (await worker.run()).messages_added == 0, "a second run adds nothing"
