"""Backfill from Slack through the ingestion worker: pagination, 429s mid-way, user-token DMs, nothing twice."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from adapters.slack.services import SlackServices
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_shapes import SlackTimeline


T0 = datetime(2026, 11, 3, 8, 0, tzinfo=UTC)


def _busy_world(world: World) -> list[str]:
    """Many messages in #general, a thread, and bot posts; returns the texts the humans wrote there."""
    said = []
    for i in range(430):
        who = ("UALICE", "UBOB", "UCAROL", "UDAVE", "UERIN")[i % 5]
        said.append(world.add_message("CCGENERAL", who, f"general chatter {i}", ts=T0 + timedelta(seconds=i)).text)
        if i % 100 == 0:
            when = T0 + timedelta(seconds=i, microseconds=5)
            world.add_message("CCGENERAL", world.bot_id, f"bot digest {i}", ts=when)
    parent = world.add_message("CCGENERAL", "UCAROL", "who takes the demo?", ts=T0 + timedelta(hours=1))
    said.append(parent.text)
    for i in range(120):
        who = ("UALICE", "UBOB")[i % 2]
        reply = world.add_message(
            "CCGENERAL", who, f"reply {i}", ts=T0 + timedelta(hours=1, seconds=i + 1), thread_id=parent.id
        )
        said.append(reply.text)
    return said


async def _stored(services: SlackServices) -> list[str]:
    async with services.db.session() as session:
        return list((await session.execute(select(models.Message.text))).scalars())


async def test_backfill_with_pagination_and_429s_gets_every_message_exactly_once(
    services: SlackServices, fake_slack: FakeSlackApi, world: World, user_tokens: UserTokenStore
) -> None:
    said = _busy_world(world)
    fake_slack.timeline = SlackTimeline(world)
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", fake_slack.grant_user_token("UALICE"), ()))
    await services.ingest.mirror()
    for member in ("UALICE", "UBOB"):  # Slack members start opted out; these two opt in
        await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), member, True)
    fake_slack.rate_limit("conversations.history", after=1, times=2, retry_after=0)
    fake_slack.rate_limit("conversations.replies", after=1, times=1, retry_after=0)

    report = await services.ingest.run()

    stored = await _stored(services)
    assert [t for t, n in Counter(stored).items() if n > 1] == []
    readable = ("CCGENERAL", "GCLAUNCH", "DDALICEBOB", "DDALICECAROL", "DDALICEDAVE")
    expected = {m.text for c in readable for m in world.messages[c] if m.sender_id != world.bot_id}
    assert set(said) <= expected
    assert set(stored) == expected  # Bob's DM with Carol: Bob granted no token, the bot can't read it
    assert not any(t.startswith("bot digest") for t in stored)
    assert report.messages_added == len(stored) == 430 + 1 + 120 + 3 + 3 + 5
    verbs = [c.verb for c in fake_slack.calls if c.method in ("conversations.history", "conversations.replies")]
    assert verbs.count("GET -> 429") == 3
    # A second run, and a run after one new message, read only what is new.
    assert (await services.ingest.run()).messages_added == 0
    fake_slack.timeline.add("CCGENERAL", "UBOB", "late news", None)
    assert (await services.ingest.run()).messages_added == 1


async def test_an_idle_run_reads_no_thread_and_a_new_reply_rereads_only_its_thread(
    services: SlackServices, fake_slack: FakeSlackApi, world: World
) -> None:
    await services.ingest.mirror()
    await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), "UALICE", True)
    now = datetime.now(UTC) - timedelta(hours=2)
    parents = []
    for i in range(40):
        parent = world.add_message("CCGENERAL", "UBOB", f"topic {i}", ts=now + timedelta(minutes=i))
        world.add_message(
            "CCGENERAL", "UCAROL", f"answer {i}", ts=now + timedelta(minutes=i, seconds=1), thread_id=parent.id
        )
        parents.append(parent)
    fake_slack.timeline = SlackTimeline(world)
    await services.ingest.run()
    assert len(fake_slack.calls_to("conversations.replies")) == 40  # each new thread read once
    before = len(fake_slack.calls_to("conversations.replies"))
    assert (await services.ingest.run()).messages_added == 0
    assert len(fake_slack.calls_to("conversations.replies")) == before  # idle: no thread re-read
    fake_slack.timeline.add("CCGENERAL", "UDAVE", "late answer", fake_slack.timeline.message_json(parents[7])["ts"])
    assert (await services.ingest.run()).messages_added == 1
    reread = fake_slack.calls_to("conversations.replies")[before:]
    assert [c.params["ts"] for c in reread] == [fake_slack.timeline.message_json(parents[7])["ts"]]


async def test_a_stored_cursor_slack_rejects_restarts_that_channels_sweep(
    services: SlackServices, fake_slack: FakeSlackApi, world: World
) -> None:
    """After a long downtime Slack refuses the stored cursor (`invalid_cursor`): the channel is swept again from
    its newest message, nothing is stored twice, and the channel is not left failing forever."""
    said = _busy_world(world)
    fake_slack.timeline = SlackTimeline(world)
    mirror = await services.ingest.mirror()
    await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), "UALICE", True)
    await services.ingest.run()
    channel = mirror.channel_ids["CCGENERAL"]
    async with services.db.session() as session, session.begin():
        done_up_to = await services.ingest.store.get_cursor(session, channel)
        assert done_up_to and "|" not in done_up_to
        # Mid-sweep when the process stopped; the Slack cursor it kept has expired since.
        await services.ingest.store.set_cursor(session, channel, f"{done_up_to}||expired-cursor")
    for i in range(250):
        fake_slack.timeline.add("CCGENERAL", "UBOB", f"while away {i}", None)
        said.append(f"while away {i}")

    report = await services.ingest.run()
    assert report.problems == []
    stored = await _stored(services)
    assert [t for t, n in Counter(stored).items() if n > 1] == []
    assert set(said) <= set(stored)
    refused = [c for c in fake_slack.calls_to("conversations.history") if c.params.get("cursor") == "expired-cursor"]
    assert len(refused) == 1
