"""One bad Slack object never stops a run or start-up: a vanished thread is retired, a refused member token is
disabled (and its member told), a long Retry-After is waited out by that object alone."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.slack.runtime import SlackRuntime
from adapters.slack.services import SlackServices
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.ingest_status import IngestStatusStore, ObjectKind, ObjectStatus
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from tests.fakes.asks import ask_factory
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_changes import SlackChanges


HUMANS = ("UALICE", "UBOB", "UCAROL", "UDAVE", "UERIN")


@pytest.fixture
async def ingested(services: SlackServices, world: World) -> AsyncIterator[SlackServices]:
    assert services.ingest is not None
    await services.ingest.mirror()
    for member in HUMANS:
        await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), member, True)
    await services.ingest.run()
    yield services


async def status_of(services: SlackServices, kind: ObjectKind, object_id: str) -> ObjectStatus | None:
    assert services.ingest is not None
    state = await IngestStatusStore(services.db).get(services.ingest.workspace_id or 0, kind, object_id)
    return None if state is None else state.status


async def test_a_vanished_thread_is_retired_and_later_runs_go_on(
    ingested: SlackServices, fake_slack: FakeSlackApi
) -> None:
    changes = SlackChanges(fake_slack)
    parent = changes.post("CCGENERAL", "UCAROL", "thread about the offsite venue")
    changes.post("CCGENERAL", "UDAVE", "the venue is booked", thread_ts=parent["ts"])
    assert ingested.ingest is not None
    await ingested.ingest.run()
    timeline = fake_slack.timeline
    for message in [m for m in fake_slack.world.messages["CCGENERAL"] if m.text.startswith(("thread", "the venue"))]:
        timeline.remove("CCGENERAL", f"{timeline.ts(message) // 1_000_000}.{timeline.ts(message) % 1_000_000:06d}")
    changes.post("GCLAUNCH", "UALICE", "still ingested after the vanished thread")
    report = await ingested.ingest.run()
    assert report.messages_added == 1
    thread_id = f"CCGENERAL:{parent['ts']}"
    assert await status_of(ingested, ObjectKind.THREAD, thread_id) == ObjectStatus.RETIRED
    replies_calls = len(fake_slack.calls_to("conversations.replies"))
    assert (await ingested.ingest.run()).messages_added == 0
    assert all(
        c.params.get("ts") != parent["ts"] for c in fake_slack.calls_to("conversations.replies")[replies_calls:]
    )


async def test_an_invalid_member_token_is_disabled_and_the_member_told(
    ingested: SlackServices, fake_slack: FakeSlackApi, world: World, user_tokens: UserTokenStore
) -> None:
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", "xoxp-not-a-token-slack-knows", ()))
    assert ingested.ingest is not None
    SlackChanges(fake_slack).post("CCGENERAL", "UBOB", "news after the bad token")
    report = await ingested.ingest.run()  # the run neither fails nor skips the other channels
    assert report.messages_added == 1
    assert await status_of(ingested, ObjectKind.MEMBER_TOKEN, "UALICE") == ObjectStatus.DISABLED
    told = fake_slack.posts(fake_slack.world.dm(world.bot_id, "UALICE").id)
    assert len(told) == 1 and "stopped reading your DMs" in told[0]
    await ingested.ingest.run()
    assert len(fake_slack.posts(fake_slack.world.dm(world.bot_id, "UALICE").id)) == 1  # told once


async def test_a_long_retry_after_backs_that_channel_off_without_sleeping(
    ingested: SlackServices, fake_slack: FakeSlackApi
) -> None:
    assert ingested.ingest is not None
    fake_slack.rate_limit("conversations.history", times=1, retry_after=900)
    await ingested.ingest.run()  # returns at once instead of sleeping 15 minutes
    limited = [c for c in fake_slack.calls_to("conversations.history") if c.verb.endswith("429")]
    assert len(limited) == 1
    assert ingested.ingest.workspace_id is not None
    states = await IngestStatusStore(ingested.db).listing(ingested.ingest.workspace_id, problems_only=True)
    assert len(states) == 1 and states[0].status == ObjectStatus.BACKOFF
    assert states[0].retry_at is not None and (states[0].retry_at - states[0].updated_at).total_seconds() >= 900


async def test_start_up_survives_a_revoked_member_token(
    slack_settings: Settings, sqlite_db: Database, fake_slack: FakeSlackApi, world: World, user_tokens: UserTokenStore
) -> None:
    first = await SlackRuntime.start(slack_settings, sqlite_db, **_parts(slack_settings, sqlite_db))
    await first.stop()
    await user_tokens.save(UserTokenGrant("slack", world.id, "UBOB", fake_slack.grant_user_token("UBOB"), ()))
    await first.services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), "UBOB", True)
    fake_slack.revoke_user_token("UBOB")
    runtime = await SlackRuntime.start(slack_settings, sqlite_db, **_parts(slack_settings, sqlite_db))
    try:
        report = await runtime.ingest.run()
        assert report.channels_ingested >= 1
        state = await IngestStatusStore(sqlite_db).get(report.workspace_id, ObjectKind.MEMBER_TOKEN, "UBOB")
        assert state is not None and state.status == ObjectStatus.DISABLED
    finally:
        await runtime.stop()


def _parts(settings: Settings, db: Database) -> dict:
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None)
    return {"ask_service": ask_factory(settings, db, llm, memory), "memory": memory}


async def test_start_up_survives_a_channel_whose_members_cannot_be_read(
    slack_settings: Settings, sqlite_db: Database, fake_slack: FakeSlackApi
) -> None:
    fake_slack.failing_channels["GCLAUNCH"] = "missing_scope"
    runtime = await SlackRuntime.start(slack_settings, sqlite_db, **_parts(slack_settings, sqlite_db))
    try:
        channels = {c.id for c in (await runtime.ingest.mirror()).channels}
        assert "CCGENERAL" in channels and "GCLAUNCH" not in channels
    finally:
        await runtime.stop()
