"""A distributed app not approved for the Marketplace backfills at Slack's posted pace (one history call a minute,
15 messages a page) and finishes, instead of stopping at the first long Retry-After; an internal app is unpaced; a
member's own read of a thread waits for its turn a bounded time.
Time is a fake clock shared by the fake Slack and the client's pacing: nothing waits real minutes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from adapters.slack.client import web_client
from adapters.slack.port import SlackPort
from adapters.slack.rate_limits import INTERACTIVE_WAIT_S, LIMITED_INTERVAL_S, InstallLimits, MethodBudgets
from bot.errors import PlatformRateLimitedError
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import World
from memory_ingest.worker import IngestWorker
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_history_limits import HistoryLimits
from tests.fakes.slack_search import FakeClock


MESSAGES = 40


@pytest.fixture
def world(world: World) -> World:
    general = next(c.id for c in world.channels.values() if c.name == "general")
    start = datetime(2024, 6, 1, tzinfo=UTC)
    for i in range(MESSAGES):
        world.add_message(general, "UBOB", f"status update number {i}", ts=start + timedelta(minutes=i))
    last = world.messages[general][-1]
    world.add_message(general, "UALICE", "noted, thanks", ts=last.ts + timedelta(seconds=30), thread_id=last.id)
    return world


async def _backfill(
    settings: Settings, db: Database, fake: FakeSlackApi, limits: InstallLimits
) -> tuple[HistoryLimits, float]:
    """The fake's record of history calls, and the simulated seconds the backfill took."""
    clock = FakeClock()
    started = clock.now
    fake_limits = HistoryLimits.install(fake, clock)

    async def sleep(seconds: float) -> None:
        clock.advance(seconds)

    budgets = MethodBudgets(clock=lambda: clock.now, sleep=sleep)
    port = SlackPort(web_client(settings), limits=limits, budgets=budgets)
    worker = IngestWorker(port, db, page_size=200)
    await worker.mirror()
    for member in ("UALICE", "UBOB"):
        await MemberSettingsStore(db).set_opted_in(WorkspaceKey("slack", fake.world.id), member, True)
    await worker.run()
    return fake_limits, clock.now - started


async def _stored(db: Database) -> int:
    async with db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(models.Message)))


async def test_a_non_marketplace_distributed_app_paces_its_backfill_to_the_posted_limit(
    slack_settings: Settings, sqlite_db: Database, fake_slack: FakeSlackApi
) -> None:
    limited = InstallLimits.for_settings(slack_settings.replace(slack_distribution="oauth"))
    assert limited.page_cap == 15
    result, elapsed_s = await _backfill(slack_settings, sqlite_db, fake_slack, limited)
    assert result.refused == 0 and result.largest_page <= 15
    assert await _stored(sqlite_db) >= MESSAGES  # the whole channel, not one page
    assert elapsed_s >= 60 * (MESSAGES // 15)  # at most one history call a minute


async def test_without_pacing_the_same_limits_stop_the_backfill_at_the_first_long_retry_after(
    slack_settings: Settings, sqlite_db: Database, fake_slack: FakeSlackApi
) -> None:
    unpaced = InstallLimits(page_cap=15)  # page sizes capped, calls not paced (what askwith did before)
    result, _ = await _backfill(slack_settings, sqlite_db, fake_slack, unpaced)
    assert result.refused > 0 and await _stored(sqlite_db) < MESSAGES


async def test_a_members_thread_read_waits_a_bounded_time_behind_paced_reads(
    slack_settings: Settings, fake_slack: FakeSlackApi
) -> None:
    messages = [m for channel in fake_slack.world.messages.values() for m in channel]
    reply = next(m for m in messages if m.thread_id)
    parent = next(m for m in messages if m.id == reply.thread_id)
    thread = [parent, *(m for m in messages if m.thread_id == parent.id)]
    thread_ts = fake_slack.timeline.message_json(parent)["ts"]
    clock = FakeClock()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    limited = InstallLimits.for_settings(slack_settings.replace(slack_distribution="oauth"))
    budgets = MethodBudgets(clock=lambda: clock.now, sleep=sleep)
    port = SlackPort(web_client(slack_settings), limits=limited, budgets=budgets)
    await port.identity()
    page, more = await port.thread_messages(parent.channel_id, thread_ts)
    assert ([m["text"] for m in page], more) == ([m.text for m in thread], False)
    # The minute's call is spent (a backfill's, say): the member is told now instead of waiting a minute.
    with pytest.raises(PlatformRateLimitedError):
        await port.thread_messages(parent.channel_id, thread_ts)
    assert slept == []
    clock.advance(LIMITED_INTERVAL_S - INTERACTIVE_WAIT_S)  # the next turn is near enough to wait for
    assert len((await port.thread_messages(parent.channel_id, thread_ts))[0]) == len(thread)
    assert slept == [pytest.approx(INTERACTIVE_WAIT_S)]
