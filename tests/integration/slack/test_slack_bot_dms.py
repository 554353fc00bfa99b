"""What a member says to askwith is a question, never memory: their DM with the bot (and the Assistant panel's threads,
which live there) is neither backfilled (listed with the bot's token or with the member's own) nor stored live, edits
and file shares included."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from adapters.slack.services import SlackServices
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_changes import SlackChanges
from tests.integration.slack import test_slack_live_memory as live_memory
from tests.integration.slack.conftest import Slack


SAID_TO_BOT = "between us, my salary is PAPAYA"


@pytest.fixture
def world(world: World) -> World:
    dm = world.dm(world.bot_id, "UALICE")
    world.add_message(dm.id, "UALICE", SAID_TO_BOT, ts=datetime(2024, 5, 2, tzinfo=UTC))
    return world


@pytest.fixture
async def live(
    services: SlackServices,
    sqlite_db: Database,
    settings: Settings,
    world: World,
    user_tokens: UserTokenStore,
    fake_slack: FakeSlackApi,
) -> AsyncIterator[SlackServices]:
    # Alice granted her own token: her DM list includes her DM with the bot.
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", fake_slack.grant_user_token("UALICE"), ()))
    async for svc in live_memory.live.__wrapped__(services, sqlite_db, settings, world):  # type: ignore[attr-defined]
        yield svc


async def _stored_with(db: Database, word: str) -> int:
    async with db.session() as session:
        query = select(func.count()).select_from(models.Message).where(models.Message.text.contains(word))
        return int((await session.execute(query)).scalar_one())


async def test_a_dm_with_the_bot_is_never_backfilled(live: SlackServices, sqlite_db: Database) -> None:
    assert await _stored_with(sqlite_db, "PAPAYA") == 0
    assert await _stored_with(sqlite_db, "") > 0  # the rest of the workspace was read


async def test_edits_and_file_shares_in_a_dm_with_the_bot_are_never_stored_live(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, sqlite_db: Database
) -> None:
    dm = fake_slack.world.dm(fake_slack.world.bot_id, "UALICE").id
    changes = SlackChanges(fake_slack)
    asked = changes.post(dm, "UALICE", "who owns the rollout?")
    shared = {**changes.post(dm, "UALICE", "the KIWI contract, attached"), "subtype": "file_share"}
    await live_memory.deliver(slack, live, asked, shared, changes.edit(dm, asked["ts"], "my pin is GUAVA"))
    assert await _stored_with(sqlite_db, "GUAVA") == 0
    assert await _stored_with(sqlite_db, "KIWI") == 0
    assert await _stored_with(sqlite_db, "rollout") == 0
    # A member-to-member DM read with the member's own token is memory as before.
    general = changes.post("CCGENERAL", "UBOB", "the MANGO release is friday")
    await live_memory.deliver(slack, live, general)
    assert await _stored_with(sqlite_db, "MANGO") == 1
    assert (await live.member_settings.get(WorkspaceKey("slack", fake_slack.world.id), "UALICE")).opted_in
