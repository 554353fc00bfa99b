"""Scheduled runs on Slack with the product's default reconciliation interval: the second run with nothing changed
reads no member list and no channel's members (only the list of channels); a channel the bot joined meanwhile is
looked up alone; once the interval has passed, everything is listed again."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from adapters.slack.port import SlackPort
from adapters.slack.services import SlackServices
from bot.platform.port import Channel, ChannelKind, Member
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.world import World
from memory_ingest.worker import IngestWorker
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_shapes import SlackTimeline, member_json
from tests.integration.slack.conftest import Slack


STRUCTURE = ("users.list", "users.conversations", "conversations.members", "conversations.info", "users.info")


def _structure_calls(api: FakeSlackApi, since: int) -> list[str]:
    return [c.method for c in api.calls[since:] if c.method in STRUCTURE]


def _worker(port: SlackPort, db: Database) -> IngestWorker:
    reconcile_s = Settings().member_reconcile_hours * 3600  # the product's default
    return IngestWorker(port, db, page_size=50, reconcile_s=reconcile_s)


async def _readers(db: Database, channel_platform_id: str) -> set[str]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.Member.platform_id)
            .join(models.Membership, models.Membership.member_id == models.Member.id)
            .join(models.Channel, models.Channel.id == models.Membership.channel_id)
            .where(models.Channel.platform_id == channel_platform_id)
        )
        return set(rows.scalars())


async def test_a_second_run_lists_only_the_channels(
    fake_slack: FakeSlackApi, port: SlackPort, sqlite_db: Database, world: World
) -> None:
    worker = _worker(port, sqlite_db)
    await worker.run()
    first = _structure_calls(fake_slack, 0)
    assert "users.list" in first and "conversations.members" in first
    mark = len(fake_slack.calls)
    await worker.run()
    assert set(_structure_calls(fake_slack, mark)) == {"users.conversations"}
    assert len(_structure_calls(fake_slack, mark)) < len(first)


async def test_a_channel_joined_between_runs_is_looked_up_alone(
    fake_slack: FakeSlackApi, port: SlackPort, sqlite_db: Database, world: World
) -> None:
    worker = _worker(port, sqlite_db)
    await worker.run()
    world.add_channel(Channel("CCNEW", "new", ChannelKind.PUBLIC, (world.bot_id, "UALICE", "UBOB")))
    mark = len(fake_slack.calls)
    await worker.run()
    assert sorted(set(_structure_calls(fake_slack, mark))) == [
        "conversations.info",
        "conversations.members",
        "users.conversations",
    ]
    assert await _readers(sqlite_db, "CCNEW") == {world.bot_id, "UALICE", "UBOB"}


async def test_after_the_interval_everything_is_listed_again(
    fake_slack: FakeSlackApi, port: SlackPort, sqlite_db: Database
) -> None:
    worker = _worker(port, sqlite_db)
    await worker.run()
    worker.reconcile_s = 0.0  # the interval has passed
    mark = len(fake_slack.calls)
    await worker.run()
    assert "users.list" in _structure_calls(fake_slack, mark)


async def test_team_join_and_user_change_are_stored_from_the_event(
    services: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World
) -> None:
    """A new member and a renamed one are stored as the events describe them: no member listing, no lookup."""
    assert services.ingest is not None
    await services.ingest.mirror()
    newcomer = Member("UNEWBIE", "newbie", "New Bie")
    world.add_member(newcomer)
    renamed = dataclasses.replace(world.members["UBOB"], display_name="Robert")
    world.members["UBOB"] = renamed
    mark = len(fake_slack.calls)
    for event in (
        {"type": "team_join", "user": member_json(newcomer, world.id)},
        {"type": "user_change", "user": member_json(renamed, world.id)},
    ):
        assert (await slack.event(event)).status == 200
    await services.drain()
    assert _structure_calls(fake_slack, mark) == []
    async with services.db.session() as session:
        rows = await session.execute(
            select(models.Member.platform_id, models.Member.display_name).where(
                models.Member.platform_id.in_(["UNEWBIE", "UBOB"])
            )
        )
        assert dict(rows.all()) == {"UNEWBIE": "New Bie", "UBOB": "Robert"}


async def test_a_bounded_first_backfill_reads_only_its_days(
    services: SlackServices, fake_slack: FakeSlackApi, port: SlackPort, sqlite_db: Database, world: World
) -> None:
    """ASKWITH_BACKFILL_DAYS=30: a channel's first read stops at 30 days back; later runs read on from there."""
    now = datetime.now(UTC)
    world.add_channel(Channel("CCOLD", "old", ChannelKind.PUBLIC, (world.bot_id, "UALICE", "UBOB")))
    world.add_message("CCOLD", "UBOB", "from last winter", ts=now - timedelta(days=200))
    world.add_message("CCOLD", "UBOB", "from last week", ts=now - timedelta(days=7))
    fake_slack.timeline = SlackTimeline(world)
    worker = IngestWorker(port, sqlite_db, page_size=50, backfill_days=30)
    await worker.mirror()
    await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), "UALICE", True)
    await worker.run()
    fake_slack.timeline.add("CCOLD", "UBOB", "from today", None)
    await worker.run()
    async with sqlite_db.session() as session:
        stored = set((await session.execute(select(models.Message.text))).scalars())
    assert {"from last week", "from today"} <= stored
    assert "from last winter" not in stored


async def test_a_reply_to_an_old_thread_missed_while_down_is_read_after_a_restart(
    services: SlackServices, fake_slack: FakeSlackApi, port: SlackPort, sqlite_db: Database, world: World
) -> None:
    """Replies to threads older than the 30-day watch window arrive as events; while askwith was down none arrived,
    so the first run of the restarted process reads those threads once more."""
    now = datetime.now(UTC)
    world.add_channel(Channel("CCOLDT", "oldt", ChannelKind.PUBLIC, (world.bot_id, "UALICE", "UBOB")))
    parent = world.add_message("CCOLDT", "UBOB", "old plan", ts=now - timedelta(days=40))
    world.add_message("CCOLDT", "UALICE", "old answer", ts=now - timedelta(days=40, seconds=-1), thread_id=parent.id)
    fake_slack.timeline = SlackTimeline(world)
    running = _worker(port, sqlite_db)
    await running.mirror()
    await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), "UALICE", True)
    await running.run()
    parent_ts = fake_slack.timeline.message_json(parent)["ts"]
    fake_slack.timeline.add("CCOLDT", "UBOB", "said while askwith was down", parent_ts)
    await running.run()
    assert "said while askwith was down" not in await _texts(sqlite_db)  # a live process leaves it to the event

    await _worker(port, sqlite_db).run()  # the process restarted
    assert "said while askwith was down" in await _texts(sqlite_db)


async def _texts(db: Database) -> set[str]:
    async with db.session() as session:
        return set((await session.execute(select(models.Message.text))).scalars())
