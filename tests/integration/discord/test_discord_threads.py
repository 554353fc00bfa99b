"""Threads, forums and voice chats through `DiscordPort` and the real discord.py client: a private thread is its own
scope (its members and the parent's moderators only), whether backfilled or said live; forum posts, archived threads
and a voice channel's text chat are memory with their channel's visibility."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.discord.bot import AskwithClient, build_client
from adapters.discord.port import DiscordPort
from bot.consent.pending import ApprovalRegistry
from bot.memory.clear import ClearMemory
from bot.memory.types import ClearQuery
from bot.memory.visibility import resolve_viewer
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import World
from memory_ingest.worker import IngestWorker
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_shapes import VOICE, new_id
from tests.integration.discord.conftest import GUILD_ID, DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import opt_in
from tests.integration.discord.test_discord_events import eventually


SALARY = "my salary offer is 200k"
EVERYONE = ("alice", "bob", "carol", "dave", "erin", "olga")


async def finders(db: Database, workspace_id: int, words: str) -> set[str]:
    """Handles of the members whose clear memory finds `words`."""
    found = set()
    memory = ClearMemory(db)
    for handle in EVERYONE:
        async with db.session() as session:
            viewer = await resolve_viewer(session, workspace_id, handle)
        if await memory.search(viewer, ClearQuery(keywords=(words,))):
            found.add(handle)
    return found


def channel_id(world: World, name: str) -> str:
    return next(c.id for c in world.channels.values() if c.name == name)


@pytest.fixture
async def api(world: World, people: People) -> AsyncIterator[FakeDiscordApi]:
    fake = FakeDiscordApi(world, guild_id=GUILD_ID, owner_id=people.id("olga"))
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def worker(api: FakeDiscordApi, db: Database, settings: Settings, people: People) -> AsyncIterator[IngestWorker]:
    client: AskwithClient = build_client()
    await client.login(api.bot_token)
    ingest = IngestWorker(DiscordPort(client, settings=settings, approvals=ApprovalRegistry()), db, page_size=3)
    await ingest.mirror()
    for handle in ("alice", "bob", "carol"):
        await MemberSettingsStore(db).set_opted_in(WorkspaceKey("discord", GUILD_ID), people.id(handle), True)
    try:
        yield ingest
    finally:
        await client.close()


async def test_a_private_thread_is_found_only_by_its_members_and_moderators(
    api: FakeDiscordApi, worker: IngestWorker, world: World, people: People
) -> None:
    general = channel_id(world, "general")
    thread = api.open_private_thread(general, "offers", [people.id("alice"), people.id("bob")])
    world.add_message(general, people.id("alice"), SALARY, thread_id=thread.id, message_id=new_id())
    archived = api.open_private_thread(general, "old", [people.id("carol")])
    world.add_message(
        general, people.id("carol"), "archived private words", thread_id=archived.id, message_id=new_id()
    )
    archived.archived = True

    report = await worker.run()

    assert report.messages_added >= 2
    workspace = worker.workspace_id or 0
    # carol and dave read #general, but are not in the thread; olga owns the server, so moderates every thread
    assert await finders(worker.db, workspace, SALARY) == {"alice", "bob", "olga"}
    assert await finders(worker.db, workspace, "archived private words") == {"carol", "olga"}
    assert await finders(worker.db, workspace, "Tuesday works") == set(EVERYONE), "the parent is unchanged"
    assert (await worker.run()).messages_added == 0, "a second run adds nothing"


async def test_forum_posts_archived_threads_and_voice_chat_are_memory_with_their_channels_visibility(
    api: FakeDiscordApi, worker: IngestWorker, world: World, people: People
) -> None:
    launch, general = channel_id(world, "launch"), channel_id(world, "general")
    api.make_forum(launch)  # private to bob and erin (and carol through nothing: she cannot read it)
    post = api.forum_post(launch, people.id("erin"), "Venue", "the venue is the old boathouse")
    world.add_message(launch, people.id("bob"), "boathouse has parking", thread_id=post.id, message_id=new_id())
    api.extras.channel_types[channel_id(world, "alice-notes")] = VOICE
    world.add_message(
        channel_id(world, "alice-notes"), people.id("alice"), "voice chat: bring the slides", message_id=new_id()
    )
    starter = world.messages[general][0]
    world.add_message(general, people.id("bob"), "an archived thread reply", thread_id=starter.id, message_id=new_id())
    api.public_threads()[starter.id].archived = True

    await worker.run()

    workspace = worker.workspace_id or 0
    assert await finders(worker.db, workspace, "old boathouse") == {"bob", "erin", "olga"}
    assert await finders(worker.db, workspace, "boathouse has parking") == {"bob", "erin", "olga"}
    assert await finders(worker.db, workspace, "bring the slides") == {"alice", "olga"}
    assert await finders(worker.db, workspace, "archived thread reply") == set(EVERYONE)


async def test_an_archived_public_thread_of_a_text_channel_is_listed_so_its_place_needs_no_lookup(
    api: FakeDiscordApi, worker: IngestWorker, world: World, people: People
) -> None:
    general = channel_id(world, "general")
    starter = world.messages[general][0]
    world.add_message(general, people.id("bob"), "an archived thread reply", thread_id=starter.id, message_id=new_id())
    api.public_threads()[starter.id].archived = True  # out of the active listing: Discord lists it per channel

    await worker.mirror()

    assert api.requests("GET", rf"/channels/{general}/threads/archived/public")
    assert await worker.port.place(starter.id) == (general, starter.id)  # type: ignore[attr-defined]
    assert not api.requests("GET", rf"/channels/{starter.id}"), "placed from the listing, not looked up alone"


async def test_a_live_private_thread_message_is_filed_in_the_thread_not_the_parent(
    discord_bot: DiscordHarness, people: People
) -> None:
    await opt_in(discord_bot, people.alice, people.carol)
    general = channel_id(discord_bot.world, "general")
    thread = discord_bot.api.open_private_thread(general, "offers", [people.id("alice"), people.id("bob")])
    await discord_bot.runtime.ingest.run()

    discord_bot.gateway.message(general, people.alice, SALARY, thread_id=thread.id)
    discord_bot.gateway.message(general, people.bob, "public words in general")

    workspace = discord_bot.runtime.ingest.workspace_id or 0

    async def found_by() -> set[str]:
        return {"public"} if await finders(discord_bot.db, workspace, "public words") else set()

    await eventually(found_by, {"public"})
    await eventually(lambda: finders(discord_bot.db, workspace, SALARY), {"alice"})
    assert await finders(discord_bot.db, workspace, SALARY) == {"alice", "bob", "olga"}
