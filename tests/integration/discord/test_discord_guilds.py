"""Every server the bot is in is its own askwith workspace: memory, settings and live messages are partitioned per
server, and a member of one server (even one who is in both) never reads another's, through the real client; then a
property test of the partition over random pairs of workspaces sharing members."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from adapters.discord import texts
from adapters.discord.bot import DiscordRuntime, start_discord
from adapters.local.registry import LocalWorkspaces
from bot.asks.forget import count_workspace_rows
from bot.cli.memory import viewer_for
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.types import ClearQuery
from bot.memory.visibility import resolve_viewer
from bot.platform.port import Channel, ChannelKind, Member
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from bot.store.world_mirror import mirror_world
from tests.fakes.asks import ask_factory
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_gateway import FakeGateway
from tests.fakes.discord_shapes import snowflake
from tests.integration.discord.conftest import GUILD_ID, START, discord_world
from tests.integration.discord.test_discord_ask_with import opt_in, settings_answer
from tests.integration.discord.test_discord_events import eventually


BETA_ID = snowflake(START - timedelta(days=40))
SECRET = "the beta password is swordfish"


def beta_world(first: World) -> World:
    """A second server: alice (the same Discord user as in the first) and zoe; the bot is the same user too."""
    world = World(id=BETA_ID, name="Beta")
    alice = first.member_by_name("alice")
    world.add_member(alice, MemberPolicy(opted_in=False))
    world.add_member(Member(snowflake(START - timedelta(days=39), 7), "zoe", "Zoe"), MemberPolicy(opted_in=False))
    world.add_member(first.members[first.bot_id])
    world.bot_id = first.bot_id
    channel = world.add_channel(Channel(snowflake(START - timedelta(days=35), 8), "beta", ChannelKind.PUBLIC, ()))
    world.add_message(channel.id, alice.id, SECRET, ts=START, message_id=snowflake(START, 99))
    return world


class Servers:
    def __init__(self, runtime: DiscordRuntime, first: FakeGateway, second: FakeGateway, db: Database) -> None:
        self.runtime, self.first, self.second, self.db = runtime, first, second, db

    def workspace(self, guild_id: str) -> int:
        return self.runtime.client.guild_services[guild_id].ingest.workspace_id or 0

    async def found(self, guild_id: str | int, handle: str, words: str) -> list[str]:
        """What `handle` finds in a server's memory (a workspace id when the bot no longer serves the server)."""
        workspace_id = guild_id if isinstance(guild_id, int) else self.workspace(guild_id)
        async with self.db.session() as session:
            viewer = await resolve_viewer(session, workspace_id, handle)
        hits = await ClearMemory(self.db).search(viewer, ClearQuery(keywords=(words,)))
        return [h.message.text for h in hits]


@pytest.fixture
async def servers(sqlite_db: Database, settings: Settings) -> AsyncIterator[Servers]:
    first_world = discord_world()
    api = FakeDiscordApi(first_world, guild_id=GUILD_ID, owner_id=first_world.member_by_name("olga").id)
    second = FakeDiscordApi(beta_world(first_world), guild_id=BETA_ID, guild_name="Beta")
    await api.start()
    api.add_guild(second)
    settings = settings.replace(discord_bot_token=api.bot_token, discord_keep_messages="all")  # zoe never opts in
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)
    runtime = await start_discord(settings, db=sqlite_db, ask_service=ask_factory(settings, sqlite_db, llm, memory))
    try:
        yield Servers(runtime, FakeGateway(runtime.client, api), FakeGateway(runtime.client, second), sqlite_db)
    finally:
        await runtime.close()
        await api.stop()


def _command_syncs(api: FakeDiscordApi) -> tuple[list[str], list[str]]:
    """The applications whose global commands were synced, and the servers whose own commands were, one per call."""
    calls = api.requests("PUT", r"/applications/\d+(/guilds/\d+)?/commands")
    ids = [c.path.split("/") for c in calls]
    return [p[2] for p in ids if len(p) == 4], [p[4] for p in ids if len(p) == 6]


async def test_commands_are_synced_once_globally_and_not_by_a_process_that_only_runs_asks(
    servers: Servers, sqlite_db: Database, settings: Settings
) -> None:
    api = servers.first.api
    assert _command_syncs(api) == ([api.application_id], []), "one global sync for both servers"
    synced = api.requests("PUT", r"/applications/\d+/commands")[0].body
    assert {c["name"]: c["dm_permission"] for c in synced} == {
        "ask-with": False,
        "askwith": False,
        "negotiate": False,
        texts.ASK_ABOUT_THREAD: False,
    }, "offered in servers only: a DM could not tell which server is meant"
    settings = settings.replace(discord_bot_token=api.bot_token)
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)
    asks_only = await start_discord(
        settings, db=sqlite_db, ask_service=ask_factory(settings, sqlite_db, llm, memory), worker=False, mirror=False
    )
    try:
        assert set(asks_only.client.guild_services) == {GUILD_ID, BETA_ID}
    finally:
        await asks_only.client.close()
    assert _command_syncs(api) == ([api.application_id], []), "`askwith worker` syncs no commands"


async def test_each_server_is_its_own_workspace_and_a_member_of_both_reads_each_only_there(servers: Servers) -> None:
    assert set(servers.runtime.client.guild_services) == {GUILD_ID, BETA_ID}
    assert servers.workspace(GUILD_ID) != servers.workspace(BETA_ID)
    first_people = servers.first.api.world
    alice = first_people.member_by_name("alice")
    # /askwith on in Beta opts alice in there only
    await opt_in_at(servers.second, alice, answers=servers.first.api)
    for services in servers.runtime.guilds:
        await services.ingest.run()

    assert await servers.found(BETA_ID, "alice", "swordfish") == [SECRET]
    cli_viewer = await viewer_for(servers.db, LocalWorkspaces(Settings()), f"discord:{BETA_ID}", "alice")
    assert cli_viewer.workspace_id == servers.workspace(BETA_ID), "askwith memory search -w discord:<id> finds it"
    assert await servers.found(GUILD_ID, "alice", "swordfish") == [], "Acme's alice never reads Beta"
    assert await servers.found(GUILD_ID, "olga", "swordfish") == []
    assert await servers.found(BETA_ID, "alice", "Tuesday") == [], "nor does Beta's alice read Acme"

    await opt_in(_harness(servers), first_people.member_by_name("bob"))
    beta = next(iter(servers.second.api.world.channels))
    servers.second.message(beta, servers.second.api.world.member_by_name("zoe"), "zoe says: ship it friday")

    async def in_beta() -> set[str]:
        return {"beta"} if await servers.found(BETA_ID, "zoe", "friday") else set()

    await eventually(in_beta, {"beta"})
    assert await servers.found(GUILD_ID, "bob", "friday") == []


async def opt_in_at(gateway: FakeGateway, member: Member, *, answers: FakeDiscordApi) -> None:
    """`/askwith on` in the gateway's server; interaction answers go to the fake's own address (`answers`)."""
    token = gateway.slash("askwith", member, subcommand="on")
    answer = await settings_answer(answers, token)
    assert "on" in answer.content.lower()


async def test_a_server_joined_while_running_is_served_and_one_left_is_forgotten(
    sqlite_db: Database, settings: Settings
) -> None:
    first_world = discord_world()
    api = FakeDiscordApi(first_world, guild_id=GUILD_ID, owner_id=first_world.member_by_name("olga").id)
    await api.start()
    settings = settings.replace(discord_bot_token=api.bot_token)
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)
    runtime = await start_discord(settings, db=sqlite_db, ask_service=ask_factory(settings, sqlite_db, llm, memory))
    try:
        servers = Servers(runtime, FakeGateway(runtime.client, api), None, sqlite_db)  # type: ignore[arg-type]
        assert set(runtime.client.guild_services) == {GUILD_ID}
        second = FakeDiscordApi(beta_world(first_world), guild_id=BETA_ID, guild_name="Beta")
        api.add_guild(second)
        beta = FakeGateway(runtime.client, second)
        announced: list[str] = []  # what `askwith serve` hears of (to schedule its ingestion and run its asks)
        runtime.on_joined = lambda services: announced.append(services.workspace.external_id)

        beta.connect(invited=True)  # the bot is invited to Beta: GUILD_CREATE for a server it was not in

        await eventually(lambda: _now(announced), {BETA_ID})
        assert _command_syncs(api) == ([api.application_id], []), "the global commands reach Beta: no sync for it"
        assert len(runtime.workers) == 1, "the hosting process runs the new server's asks"
        await opt_in_at(beta, first_world.member_by_name("alice"), answers=api)
        await runtime.client.guild_services[BETA_ID].ingest.run()
        assert await servers.found(BETA_ID, "alice", "swordfish") == [SECRET]

        beta_workspace, first_workspace = servers.workspace(BETA_ID), servers.workspace(GUILD_ID)
        first_before = await count_workspace_rows(sqlite_db, first_workspace, ("discord", GUILD_ID))
        assert (await count_workspace_rows(sqlite_db, beta_workspace, ("discord", BETA_ID)))["message"] == 1
        beta.removed()  # the bot is removed from Beta: everything askwith held for it is deleted

        async def cleared() -> set[str]:  # "cleared" once no table holds a row of Beta's (an empty set never waits)
            counts = await count_workspace_rows(sqlite_db, beta_workspace, ("discord", BETA_ID))
            return {"cleared"} if not any(counts.values()) else set()

        await eventually(cleared, {"cleared"})
        assert BETA_ID not in runtime.client.guild_services
        assert not [t for t in runtime._worker_tasks if not t.done() and t.get_name().endswith(f"-{beta_workspace}")]
        assert await count_workspace_rows(sqlite_db, first_workspace, ("discord", GUILD_ID)) == first_before
    finally:
        await runtime.close()
        await api.stop()


async def test_a_server_left_while_askwith_was_not_connected_is_forgotten_when_the_gateway_is_ready(
    sqlite_db: Database, settings: Settings
) -> None:
    first_world = discord_world()
    api = FakeDiscordApi(first_world, guild_id=GUILD_ID, owner_id=first_world.member_by_name("olga").id)
    second = FakeDiscordApi(beta_world(first_world), guild_id=BETA_ID, guild_name="Beta")
    await api.start()
    api.add_guild(second)
    settings = settings.replace(discord_bot_token=api.bot_token)
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)
    try:
        before = await start_discord(settings, db=sqlite_db, ask_service=ask_factory(settings, sqlite_db, llm, memory))
        beta_workspace = before.client.guild_services[BETA_ID].ingest.workspace_id or 0
        first_workspace = before.client.guild_services[GUILD_ID].ingest.workspace_id or 0
        await before.close()
        api.others.remove(second)  # the bot is removed from Beta while askwith is stopped: no GUILD_DELETE reaches it
        assert (await count_workspace_rows(sqlite_db, beta_workspace, ("discord", BETA_ID)))["member"] > 0

        runtime = await start_discord(
            settings, db=sqlite_db, ask_service=ask_factory(settings, sqlite_db, llm, memory)
        )
        try:
            assert set(runtime.client.guild_services) == {GUILD_ID}
            first_before = await count_workspace_rows(sqlite_db, first_workspace, ("discord", GUILD_ID))
            FakeGateway(runtime.client, api).connect()  # GUILD_CREATE for every server the bot is in
            runtime.client.dispatch("ready")

            async def beta_rows() -> int:
                return sum((await count_workspace_rows(sqlite_db, beta_workspace, ("discord", BETA_ID))).values())

            deadline = asyncio.get_running_loop().time() + 5
            while await beta_rows():
                assert asyncio.get_running_loop().time() < deadline, "Beta's data was never deleted"
                await asyncio.sleep(0.02)
            assert await count_workspace_rows(sqlite_db, first_workspace, ("discord", GUILD_ID)) == first_before
        finally:
            await runtime.close()
    finally:
        await api.stop()


async def _now(values: list[str]) -> set[str]:
    return set(values)


def _harness(servers: Servers):  # noqa: ANN202 - the little of DiscordHarness that `opt_in` uses
    class Harness:
        gateway = servers.first
        api = servers.first.api

    return Harness()


# ---------------------------------------------------------------------- the partition, property-tested
PEOPLE = ["ann", "ben", "cat", "dan"]
WORDS = ["alpha", "bravo", "delta", "echo"]


def random_world(world_id: str, members: list[str], lines: list[tuple[int, int, bool]]) -> World:
    """A workspace whose members are `members` (ids shared across workspaces: the same people), one public and one
    private channel, and messages (author index, word index, in the private channel?)."""
    world = World(id=world_id, name=world_id)
    for handle in members:
        world.add_member(Member(f"U-{handle}", handle, handle.title()), MemberPolicy(opted_in=True))
    public = world.add_channel(Channel(f"{world_id}-pub", "pub", ChannelKind.PUBLIC, tuple(f"U-{m}" for m in members)))
    private = world.add_channel(Channel(f"{world_id}-priv", "priv", ChannelKind.PRIVATE, (f"U-{members[0]}",)))
    for n, (author, word, secret) in enumerate(lines):
        where = private if secret else public
        sender = f"U-{members[0]}" if secret else f"U-{members[author % len(members)]}"
        ts = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=n)
        world.add_message(where.id, sender, f"{world_id} says {WORDS[word]}", ts=ts, message_id=f"{world_id}-{n}")
    return world


members_strategy = st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=4, unique=True)
lines_strategy = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.booleans()), max_size=8)


@hypothesis_settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(members_a=members_strategy, members_b=members_strategy, lines_a=lines_strategy, lines_b=lines_strategy)
async def test_no_member_of_one_workspace_ever_reads_another(
    tmp_path_factory: pytest.TempPathFactory,
    members_a: list[str],
    members_b: list[str],
    lines_a: list[tuple[int, int, bool]],
    lines_b: list[tuple[int, int, bool]],
) -> None:
    base = tmp_path_factory.mktemp("partition")
    db = await Database.open(Settings(data_dir=base), url=f"sqlite+aiosqlite:///{base / 'p.db'}")
    try:
        worlds = {"wsa": random_world("wsa", members_a, lines_a), "wsb": random_world("wsb", members_b, lines_b)}
        ids = {name: await mirror_world(db, world) for name, world in worlds.items()}
        for name, world in worlds.items():
            for handle in [m.name for m in world.members.values()]:
                async with db.session() as session:
                    viewer = await resolve_viewer(session, ids[name], handle)
                hits = await ClearMemory(db).search(viewer, ClearQuery(keywords=tuple(WORDS), limit=100))
                assert all(h.message.id.startswith(f"{name}-") for h in hits), "a read crossed workspaces"
                visible = {m.id for c in world.channels.values() if f"U-{handle}" in c.member_ids
                           for m in world.messages[c.id]}  # fmt: skip
                assert {h.message.id for h in hits} == visible
    finally:
        await db.close()
