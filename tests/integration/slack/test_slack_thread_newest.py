"""A member asks about a long thread in an app held to Slack's 2025 limits (one `conversations.replies` a minute, 15
messages a page, oldest first): the context holds the thread's *newest* replies, read from the mirror past Slack's one
page, and when a backfill holds the minute the mirror answers at once instead of the member waiting or being refused.
Time is a fake clock shared by the fake Slack and the client's pacing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from adapters.slack import thread_ask
from adapters.slack.client import web_client
from adapters.slack.port import SlackPort
from adapters.slack.rate_limits import InstallLimits, MethodBudgets
from adapters.slack.services import SlackServices
from adapters.slack.thread_ask import thread_context
from bot.errors import PlatformRateLimitedError
from bot.platform.port import Channel, ChannelKind
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.user_tokens import UserTokenStore
from bot.store.world import World
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_history_limits import HistoryLimits
from tests.fakes.slack_search import FakeClock


REPLIES = 40
LATE = "CLATE"  # a channel askwith has not mirrored


@pytest.fixture
def world(world: World) -> World:
    general = next(c.id for c in world.channels.values() if c.name == "general")
    start = datetime(2024, 6, 1, tzinfo=UTC)
    parent = world.add_message(general, "UBOB", "Where do we hold the offsite?", ts=start)
    for i in range(REPLIES):
        at = start + timedelta(minutes=i + 1)
        world.add_message(general, "UALICE", f"idea number {i}", ts=at, thread_id=parent.id)
    world.add_channel(Channel(LATE, "late", ChannelKind.PUBLIC, ("UALICE", "UBOB", world.bot_id)))
    return world


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def port(
    slack_settings: Settings, user_tokens: UserTokenStore, fake_slack: FakeSlackApi, clock: FakeClock
) -> SlackPort:
    """askwith as a distributed app not approved for the Marketplace, on a fake Slack that enforces the limits."""
    HistoryLimits.install(fake_slack, clock)

    async def sleep(seconds: float) -> None:
        clock.advance(seconds)

    limited = InstallLimits.for_settings(slack_settings.replace(slack_distribution="oauth"))
    budgets = MethodBudgets(clock=lambda: clock.now, sleep=sleep)
    return SlackPort(web_client(slack_settings), limits=limited, budgets=budgets, user_tokens=user_tokens)


@pytest.fixture
async def mirrored(services: SlackServices, fake_slack: FakeSlackApi) -> SlackServices:
    await services.port.identity()
    await services.ingest.mirror()
    for member in ("UALICE", "UBOB"):
        await services.member_settings.set_opted_in(WorkspaceKey("slack", fake_slack.world.id), member, True)
    await services.ingest.run()
    return services


def _thread(fake: FakeSlackApi) -> tuple[str, str]:
    general = next(c.id for c in fake.world.channels.values() if c.name == "general")
    parent = next(m for m in fake.world.messages[general] if m.text == "Where do we hold the offsite?")
    return general, fake.timeline.message_json(parent)["ts"]


async def test_a_long_thread_is_read_to_its_newest_reply_past_slacks_one_page(
    mirrored: SlackServices, fake_slack: FakeSlackApi, clock: FakeClock
) -> None:
    channel, thread_ts = _thread(fake_slack)
    clock.advance(120)  # the backfill's minute is over
    context = await thread_context(mirrored, "UALICE", channel, thread_ts)
    assert context is not None
    lines = context.splitlines()
    assert lines[0].endswith("Where do we hold the offsite?")
    assert lines[-1].endswith(f"idea number {REPLIES - 1}")  # the newest reply, not page one's last
    assert [line.split(": ", 1)[1] for line in lines[1:]] == [f"idea number {i}" for i in range(REPLIES)]


async def test_a_thread_asked_about_while_a_backfill_holds_the_minute_is_read_from_the_mirror_at_once(
    mirrored: SlackServices, fake_slack: FakeSlackApi, clock: FakeClock
) -> None:
    channel, thread_ts = _thread(fake_slack)
    clock.advance(120)
    await mirrored.port.read_replies(channel, f"{channel}:{thread_ts}")  # a backfill's call: the next is a minute away
    before = clock.now
    context = await thread_context(mirrored, "UALICE", channel, thread_ts)
    assert clock.now == before  # nobody waited
    assert context is not None and context.splitlines()[-1].endswith(f"idea number {REPLIES - 1}")


async def test_only_the_newest_replies_of_a_very_long_thread_are_kept_and_the_rest_is_said(
    mirrored: SlackServices, fake_slack: FakeSlackApi, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(thread_ask, "THREAD_REPLIES_KEPT", 10)
    channel, thread_ts = _thread(fake_slack)
    clock.advance(120)
    lines = (await thread_context(mirrored, "UALICE", channel, thread_ts) or "").splitlines()
    assert lines[1] == f"({REPLIES - 10} earlier replies not read)"
    assert [line.split(": ", 1)[1] for line in lines[2:]] == [f"idea number {i}" for i in range(REPLIES - 10, REPLIES)]


async def test_a_thread_the_mirror_does_not_hold_is_refused_when_slack_would_make_the_member_wait(
    mirrored: SlackServices, fake_slack: FakeSlackApi, clock: FakeClock
) -> None:
    ts = fake_slack.timeline.add(LATE, "UBOB", "Posted where askwith has not read yet", None)
    fake_slack.timeline.add(LATE, "UALICE", "a reply", ts)
    channel, thread_ts = _thread(fake_slack)
    clock.advance(120)
    await mirrored.port.read_replies(channel, f"{channel}:{thread_ts}")  # a backfill's call holds the minute
    with pytest.raises(PlatformRateLimitedError):
        await thread_context(mirrored, "UALICE", LATE, ts)


async def test_each_member_of_a_thread_is_looked_up_once(
    mirrored: SlackServices, fake_slack: FakeSlackApi, clock: FakeClock
) -> None:
    """An author who is also mentioned costs one `users.info`, not one per role (Slack rate-limits the method)."""
    ts = fake_slack.timeline.add(LATE, "UBOB", "Who books the room, <@UALICE>?", None)
    fake_slack.timeline.add(LATE, "UALICE", "I do, <@UBOB>", ts)
    clock.advance(120)
    before = len(fake_slack.calls_to("users.info"))
    context = await thread_context(mirrored, "UALICE", LATE, ts)
    assert context is not None and "Who books the room, @" in context
    looked_up = [c.params.get("user") for c in fake_slack.calls_to("users.info")[before:]]
    assert sorted(looked_up) == ["UALICE", "UBOB"]
