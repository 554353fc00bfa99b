"""One bad Discord object never stops a run: a vanished thread (404/10003) is retired, a channel the bot may no
longer read (403/50001) backs off with its error recorded, a long rate limit (429, retry_after beyond what askwith
waits inline) backs that channel off for at least retry_after; every other channel is still ingested."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from adapters.discord.port import DiscordPort
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.ingest_status import ObjectStatus
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import World
from memory_ingest.worker import IngestWorker
from tests.fakes.discord_api import FakeDiscordApi
from tests.integration.discord.conftest import GUILD_ID, People
from tests.integration.discord.test_discord_ingest import PAGE, port  # noqa: F401 - the fixture
from tests.integration.discord.test_discord_threads import channel_id


async def ready_worker(db: Database, discord_port: DiscordPort, people: People) -> IngestWorker:
    worker = IngestWorker(discord_port, db, page_size=PAGE)
    await worker.mirror()
    for handle in ("alice", "bob"):
        await MemberSettingsStore(db).set_opted_in(WorkspaceKey("discord", GUILD_ID), people.id(handle), True)
    return worker


async def stored_texts(db: Database) -> set[str]:
    async with db.session() as session:
        return set((await session.execute(select(models.Message.text))).scalars())


async def statuses(worker: IngestWorker) -> dict[str, tuple[ObjectStatus, str]]:
    return {s.object_id: (s.status, s.last_error) for s in await worker.status.listing(worker.workspace_id or 0)}


async def test_a_vanished_thread_is_retired_and_a_forbidden_channel_backs_off_while_the_rest_is_ingested(
    db: Database,
    port: tuple[DiscordPort, FakeDiscordApi],  # noqa: F811 - the fixture imported above
    world: World,
    people: People,
) -> None:
    discord_port, api = port
    worker = await ready_worker(db, discord_port, people)
    await worker.run()  # the thread in #general becomes known
    general, launch = channel_id(world, "general"), channel_id(world, "launch")
    thread_id = next(m.thread_id for m in world.messages[general] if m.thread_id)
    api.vanish_thread(thread_id)
    api.forbid(launch)
    world.add_message(general, people.id("bob"), "still ingested after the failures", message_id="9" * 19)
    notes = channel_id(world, "alice-notes")
    world.add_message(notes, people.id("alice"), "notes still ingested too", message_id="9" * 18 + "8")

    await worker.run()

    assert {"still ingested after the failures", "notes still ingested too"} <= await stored_texts(db)
    state = await statuses(worker)
    assert state[thread_id][0] is ObjectStatus.RETIRED and "10003" in state[thread_id][1]
    assert state[launch][0] is ObjectStatus.BACKOFF and "HTTP 403, code 50001" in state[launch][1]
    reads = len(api.requests("GET", rf"/channels/{thread_id}/messages"))
    await worker.run()
    assert len(api.requests("GET", rf"/channels/{thread_id}/messages")) == reads, "a retired thread is not read"
    assert not api.requests("GET", rf"/channels/{launch}/messages")[2:], "a channel backing off waits"


async def test_a_long_rate_limit_backs_the_channel_off_for_at_least_retry_after(
    db: Database,
    port: tuple[DiscordPort, FakeDiscordApi],  # noqa: F811 - the fixture imported above
    world: World,
    people: People,
) -> None:
    discord_port, api = port
    worker = await ready_worker(db, discord_port, people)
    general = channel_id(world, "general")
    api.rate_limit("GET", rf"/channels/{general}/messages", retry_after=600.0, times=1)
    started = datetime.now(UTC)

    await worker.run()  # returns at once: askwith does not sleep ten minutes inline

    assert datetime.now(UTC) - started < timedelta(seconds=30)
    status, error = (await statuses(worker))[general]
    retry_at = next(
        s.retry_at for s in await worker.status.listing(worker.workspace_id or 0) if s.object_id == general
    )
    assert status is ObjectStatus.BACKOFF and "retry after 600s" in error
    assert retry_at is not None and retry_at >= started + timedelta(seconds=600)


async def test_a_short_rate_limit_is_waited_out_for_its_retry_after_and_nothing_is_lost(
    db: Database,
    port: tuple[DiscordPort, FakeDiscordApi],  # noqa: F811 - the fixture imported above
    world: World,
    people: People,
) -> None:
    discord_port, api = port
    worker = await ready_worker(db, discord_port, people)
    general = channel_id(world, "general")
    api.rate_limit("GET", rf"/channels/{general}/messages", retry_after=0.4, times=1)
    started = datetime.now(UTC)

    report = await worker.run()

    assert datetime.now(UTC) - started >= timedelta(seconds=0.4), "discord.py slept retry_after before retrying"
    assert len(api.rate_limited) == 1 and report.messages_added > 0
    assert general not in await statuses(worker) or (await statuses(worker))[general][0] is ObjectStatus.OK
